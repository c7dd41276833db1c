/* Calls from one service to another (seo/rpc_peer.h). */
#include "seo/rpc_peer.h"

#include "seo/config.h"
#include "seo/errors.h"
#include "seo/log.h"
#include "seo/util.h"

#include <stdlib.h>
#include <string.h>

/* The request metadata a call on behalf of a caller carries on. */
static const char *const propagated[] = {
	"x-request-id", "seo-workspace-id", "seo-user-id", "seo-key-id",
	"seo-role",
};

#define N_PROPAGATED (sizeof(propagated) / sizeof(propagated[0]))

struct rpc_peer {
	seo_service to;
	char *addr;
};

int rpc_peer_open(seo_service self, seo_service to, rpc_peer **out)
{
	const char *addr = seo_service_addr(to);
	char host[256];
	unsigned short port;
	rpc_peer *p;

	if (!seo_service_may_call(self, to)) {
		log_error("%s may not call %s: its row of the service registry "
			  "does not list it", seo_service_get(self)->process,
			  seo_service_get(to)->process);
		return SEO_EDENIED;
	}
	if (seo_split_hostport(addr, host, sizeof(host), &port) != 0) {
		log_error("%s: \"%s\" is not host:port",
			  seo_config_def(seo_service_get(to)->addr_key)->name,
			  addr);
		return SEO_EINVAL;
	}
	p = calloc(1, sizeof(*p));
	if (p == NULL || (p->addr = strdup(addr)) == NULL) {
		free(p);
		return SEO_ENOMEM;
	}
	p->to = to;
	*out = p;
	return 0;
}

/* Calls with `n` entries of `meta` and `timeout` ms (logged on failure). */
static int call(rpc_peer *peer, const char *path, ProtobufCMessage *req,
		const ProtobufCMessageDescriptor *resp_desc, seo_arena *arena,
		const rpc_meta *meta, size_t n, int64_t timeout,
		rpc_result *res)
{
	int rc;

	if (timeout <= 0) {
		memset(res, 0, sizeof(*res));
		res->grpc_status = SEO_GRPC_DEADLINE_EXCEEDED;
		res->message = "no time left to call the next service";
		return SEO_ETIMEDOUT;
	}
	rc = rpc_call_sync(peer->addr, path, req, resp_desc, arena,
			   timeout > INT32_MAX ? INT32_MAX : (int)timeout, meta, n,
			   res);
	if (rc != 0)
		log_warn("%s %s: %s %s", seo_service_get(peer->to)->process,
			 path, seo_grpc_status_name(res->grpc_status),
			 res->message);
	return rc;
}

int rpc_peer_call(rpc_peer *peer, rpc_ctx *ctx, const char *path,
		  ProtobufCMessage *req,
		  const ProtobufCMessageDescriptor *resp_desc, seo_arena *arena,
		  rpc_result *res)
{
	rpc_meta meta[N_PROPAGATED];
	size_t n = 0;
	int64_t timeout = seo_config_num(SEO_CFG_RPC_TIMEOUT_MS);

	if (ctx != NULL) {
		int64_t deadline = rpc_ctx_deadline(ctx);

		for (size_t i = 0; i < N_PROPAGATED; i++) {
			const char *v = rpc_ctx_meta(ctx, propagated[i]);
			if (v != NULL)
				meta[n++] = (rpc_meta){propagated[i], v};
		}
		if (deadline != 0)
			timeout = deadline - seo_mono_ms();
	}
	return call(peer, path, req, resp_desc, arena, meta, n, timeout, res);
}

int rpc_peer_call_as(rpc_peer *peer, const rpc_identity *who,
		     const char *path, ProtobufCMessage *req,
		     const ProtobufCMessageDescriptor *resp_desc,
		     seo_arena *arena, rpc_result *res)
{
	const char *values[N_PROPAGATED] = {who->request_id, who->workspace_id,
					    who->user_id, who->key_id,
					    who->role};
	rpc_meta meta[N_PROPAGATED];
	size_t n = 0;

	for (size_t i = 0; i < N_PROPAGATED; i++)
		if (values[i] != NULL)
			meta[n++] = (rpc_meta){propagated[i], values[i]};
	return call(peer, path, req, resp_desc, arena, meta, n,
		    seo_config_num(SEO_CFG_RPC_TIMEOUT_MS), res);
}

int rpc_peer_fail(rpc_ctx *ctx, const rpc_result *res)
{
	const seo_error_def *def =
		res->code != NULL ? seo_error_lookup(res->code) : NULL;

	if (def == NULL)
		return rpc_ctx_fail(ctx, seo_error_for_grpc(res->grpc_status)->code,
				    "%s", res->message);
	rpc_ctx_fail(ctx, def->code, "%s", res->message);
	rpc_ctx_fail_extra(ctx, res->extra_json);
	return -1;
}

void rpc_peer_free(rpc_peer *peer)
{
	if (peer == NULL)
		return;
	free(peer->addr);
	free(peer);
}

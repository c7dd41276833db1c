/*
 * The IndexNow routes: POST /v1/indexnow/key and POST /v1/indexnow
 * (parts.h). The gateway bills the submission (1 credit, refunded on
 * failure and when `billed` is 0).
 */
#include "indexnow_int.h"
#include "parts.h"

#include <string.h>

#include "seo/agent/v1/agent.pb-c.h"
#include "seo/domain.h"
#include "seo/errors.h"
#include "seo/util.h"

#define INSTRUCTIONS \
	"Host a UTF-8 text file at %s containing exactly the key %s " \
	"(surrounding whitespace is ignored) and keep it there. Submissions " \
	"check it on the first call and at most once a day afterwards."

static void *msg_new(rpc_ctx *ctx, const ProtobufCMessageDescriptor *d)
{
	void *m = seo_arena_alloc(rpc_ctx_arena(ctx), d->sizeof_message);

	if (m != NULL)
		protobuf_c_message_init(d, m);
	return m;
}

static int oom(rpc_ctx *ctx)
{
	return rpc_ctx_fail(ctx, "internal_error", "out of memory");
}

static int unavailable(rpc_ctx *ctx)
{
	return rpc_ctx_fail(ctx, "service_unavailable",
			    "the indexnow store is unavailable");
}

/* The website owning `host`, or the call failed. */
static int website(agent_call *call, const char *host, agent_site *site)
{
	agent_err err;
	int rc = agent_indexnow_site_of(call, host, 1, site, &err);

	if (rc == SEO_ENOTFOUND)
		return rpc_ctx_fail(call->ctx, "indexnow_host_not_a_website",
				    "%s is not a website of this workspace or a "
				    "subdomain of one", host);
	return rc == 0 ? 0 : agent__fail(call->ctx, &err);
}

int agent__rpc_indexnow_key(rpc_ctx *ctx, const ProtobufCMessage *req,
			    ProtobufCMessage **resp)
{
	const Seo__Agent__V1__IndexNowKeyRequest *r = (const void *)req;
	Seo__Agent__V1__IndexNowKey *out;
	char host[SEO_DOMAIN_MAX + 1];
	agent_inow_key key;
	agent_call call;
	agent_site site;
	seo_pg_conn *c;
	int created, rc;

	if (agent__call_of(ctx, &call) != 0)
		return -1;
	if (r->domain == NULL ||
	    seo_domain_normalize(r->domain, 0, host, sizeof(host)) != 0)
		return rpc_ctx_fail(ctx, "invalid_domain",
				    "domain must be a host name such as "
				    "www.example.com, or a URL of one");
	if (website(&call, host, &site) != 0)
		return -1;
	if (agent__db_get(call.svc, &c) != 0)
		return unavailable(ctx);
	rc = agent__inow_key_ensure(c->pg, call.workspace_id, host, seo_now_ms(),
				    call.arena, &key, &created);
	agent__db_put(call.svc, c);
	if (rc == SEO_ENOMEM)
		return oom(ctx);
	if (rc != 0)
		return unavailable(ctx);
	out = msg_new(ctx, &seo__agent__v1__index_now_key__descriptor);
	if (out == NULL)
		return oom(ctx);
	out->host = (char *)key.host;
	out->key = (char *)key.key;
	out->key_location = (char *)key.key_location;
	out->has_verified = 1;
	out->verified = key.verified;
	out->instructions = seo_arena_printf(call.arena, INSTRUCTIONS,
					     key.key_location, key.key);
	if (out->instructions == NULL)
		return oom(ctx);
	if (created && rpc_ctx_set_http_status(ctx, 201) != 0)
		return oom(ctx);
	*resp = &out->base;
	return 0;
}

/* The answer of an accepted submission. */
static int accepted(rpc_ctx *ctx, const agent_inow_result *res,
		    const char *proposal_id, ProtobufCMessage **resp)
{
	Seo__Agent__V1__SubmitIndexNowResponse *out =
		msg_new(ctx, &seo__agent__v1__submit_index_now_response__descriptor);
	Seo__Agent__V1__IndexNowSubmission *d =
		msg_new(ctx, &seo__agent__v1__index_now_submission__descriptor);

	if (out == NULL || d == NULL)
		return oom(ctx);
	d->host = (char *)res->host;
	d->has_url_count = 1;
	d->url_count = res->url_count;
	d->key_location = (char *)res->key_location;
	d->status = "accepted";
	d->proposal_id = (char *)proposal_id;
	out->data = d;
	out->has_billed = 1;
	out->billed = 1;
	*resp = &out->base;
	return 0;
}

int agent__rpc_submit_indexnow(rpc_ctx *ctx, const ProtobufCMessage *req,
			       ProtobufCMessage **resp)
{
	const Seo__Agent__V1__SubmitIndexNowRequest *r = (const void *)req;
	agent_inow_submit in;
	agent_inow_result res;
	agent_inow_urls urls;
	agent_call call;
	agent_site site;
	agent_err err;
	size_t bad;
	int reason, rc;

	if (agent__call_of(ctx, &call) != 0)
		return -1;
	rc = agent_indexnow_check_urls(call.svc->fetch,
				       (const char *const *)r->urls, r->n_urls,
				       call.arena, &urls, &reason, &bad);
	if (rc == SEO_ENOMEM)
		return oom(ctx);
	if (rc != 0 && (reason == AGENT_INOW_URLS_NONE ||
			reason == AGENT_INOW_URLS_TOO_MANY))
		return rpc_ctx_fail(ctx, agent_indexnow_reason_code(reason), "%s",
				    agent_indexnow_reason_text(reason));
	if (rc != 0)
		return rpc_ctx_fail(ctx, agent_indexnow_reason_code(reason),
				    "urls[%zu]: %s", bad,
				    agent_indexnow_reason_text(reason));
	if (website(&call, urls.host, &site) != 0)
		return -1;
	in = (agent_inow_submit){
		.workspace_id = call.workspace_id,
		.site_id = site.id,
		.host = urls.host,
		.urls = urls.urls,
		.n_urls = urls.n,
	};
	if (agent_indexnow_submit(call.svc, &in, call.arena, &res, &err) != 0)
		return agent__fail(ctx, &err);
	return accepted(ctx, &res, NULL, resp);
}

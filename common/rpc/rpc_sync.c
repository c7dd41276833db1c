/*
 * rpc_sync.c: rpc_call_sync(), one call on a private event_base.
 *
 * Returns 0 when the call succeeded. Otherwise `*res` still describes the
 * outcome, and the return value is SEO_EUPSTREAM when the server (or the
 * transport) gave a non-OK status, SEO_EINVAL for a malformed address, or
 * SEO_ENOMEM; so `if (rpc_call_sync(...) != 0)` alone is a safe test.
 */
#include "seo/rpc.h"

#include "seo/errors.h"

#include <string.h>

#include <event2/event.h>

struct sync_call {
	struct event_base *base;
	seo_arena *arena;
	rpc_result *res;
	int done;
};

static const char *arena_copy(seo_arena *a, const char *s)
{
	return s != NULL ? seo_arena_strdup(a, s) : NULL;
}

static void sync_done(const rpc_result *res, void *ud)
{
	struct sync_call *sc = ud;
	rpc_meta *meta;

	sc->res->grpc_status = res->grpc_status;
	sc->res->response = res->response;
	sc->res->code = arena_copy(sc->arena, res->code);
	sc->res->extra_json = arena_copy(sc->arena, res->extra_json);
	sc->res->message = arena_copy(sc->arena, res->message);
	if (sc->res->message == NULL)
		sc->res->message = "";
	meta = res->n_meta > 0
		       ? seo_arena_alloc(sc->arena, res->n_meta * sizeof(*meta))
		       : NULL;
	for (size_t i = 0; meta != NULL && i < res->n_meta; i++) {
		meta[i].name = arena_copy(sc->arena, res->meta[i].name);
		meta[i].value = arena_copy(sc->arena, res->meta[i].value);
		if (meta[i].name == NULL || meta[i].value == NULL)
			meta = NULL;
	}
	sc->res->meta = meta;
	sc->res->n_meta = meta != NULL ? res->n_meta : 0;
	sc->done = 1;
	event_base_loopbreak(sc->base);
}

int rpc_call_sync(const char *addr, const char *path, ProtobufCMessage *req,
		  const ProtobufCMessageDescriptor *resp_desc, seo_arena *arena,
		  int timeout_ms, const rpc_meta *meta, size_t n_meta,
		  rpc_result *res)
{
	struct sync_call sc = {NULL, arena, res, 0};
	ProtobufCAllocator alloc;
	rpc_client *client = NULL;
	int rc;

	memset(res, 0, sizeof(*res));
	res->grpc_status = SEO_GRPC_INTERNAL;
	res->message = "cannot start the call";
	seo_arena_pb_allocator(arena, &alloc);
	sc.base = event_base_new();
	if (sc.base == NULL) {
		rc = SEO_ENOMEM;
		goto out;
	}
	rc = rpc_client_new(sc.base, addr, &client);
	if (rc != 0) {
		if (rc == SEO_EINVAL)
			res->message = "malformed address";
		goto out;
	}
	rc = rpc_client_call(client, path, req, resp_desc, &alloc, timeout_ms,
			     meta, n_meta, sync_done, &sc);
	if (rc != 0)
		goto out;
	while (!sc.done && event_base_loop(sc.base, EVLOOP_ONCE) == 0)
		;
	rc = !sc.done ? SEO_EIO
	     : res->grpc_status == SEO_GRPC_OK ? 0
					       : SEO_EUPSTREAM;
out:
	rpc_client_free(client);
	if (sc.base != NULL)
		event_base_free(sc.base);
	return rc;
}

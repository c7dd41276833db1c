/*
 * seo/rpc_peer.h: one service calling another (docs/ARCHITECTURE.md, "Who
 * calls whom").
 *
 * A service opens a peer at start for each service it calls; the address
 * comes from the registry (SEO_<ID>_ADDR), and a peer its registry row does
 * not list under `calls` is refused, so the process stops before serving.
 * A handler then calls the peer on behalf of its own caller: the request
 * id and the caller's identity (x-request-id, seo-workspace-id,
 * seo-user-id, seo-key-id, seo-role) go along, and the call gets what is
 * left of the handler's deadline.
 *
 * A call blocks its thread: make it from a handler running on a worker
 * (rpc_server_new() with workers > 0), never from the loop thread. Each
 * call has its own connection (a loopback connect, tens of microseconds);
 * a hot path that needs more shares a pooled client instead.
 */
#ifndef SEO_RPC_PEER_H
#define SEO_RPC_PEER_H

#include "seo/rpc.h"
#include "seo/services.h"

typedef struct rpc_peer rpc_peer;

/*
 * Opens service `self`'s client of service `to`. Returns 0 and sets *out
 * (free it with rpc_peer_free()), SEO_EDENIED when the registry does not
 * let `self` call `to`, SEO_EINVAL when SEO_<TO>_ADDR is not host:port, or
 * SEO_ENOMEM. Each failure is logged with the service names.
 */
int rpc_peer_open(seo_service self, seo_service to, rpc_peer **out);

/*
 * Calls `path` on the peer and waits for the answer. `ctx` is the handler's
 * call (its metadata and deadline are carried over), or NULL for work of
 * the service's own (no identity; SEO_RPC_TIMEOUT_MS). `req` is completed
 * as rpc_client_call() does. The response and the strings of *res are
 * allocated on `arena`.
 * Returns 0 on success; SEO_EUPSTREAM when the peer answered an error,
 * SEO_ETIMEDOUT when no time was left to call, SEO_EIO when the call could
 * not be made: then *res holds the gRPC status, code and message, ready for
 * rpc_peer_fail().
 */
int rpc_peer_call(rpc_peer *peer, rpc_ctx *ctx, const char *path,
		  ProtobufCMessage *req,
		  const ProtobufCMessageDescriptor *resp_desc, seo_arena *arena,
		  rpc_result *res);

/* An identity a service acts for outside any call of its own (a worker
 * running what a person decided earlier): the metadata a handler's call
 * would carry. Strings are the caller's; NULL fields are not sent. */
typedef struct rpc_identity {
	const char *request_id;   /* x-request-id */
	const char *workspace_id; /* seo-workspace-id */
	const char *user_id;      /* seo-user-id */
	const char *key_id;       /* seo-key-id */
	const char *role;         /* seo-role */
} rpc_identity;

/*
 * As rpc_peer_call(), for work of the service's own done on behalf of
 * `who` (not NULL): its fields go as the call's metadata, and the call
 * has SEO_RPC_TIMEOUT_MS. Returns as rpc_peer_call().
 */
int rpc_peer_call_as(rpc_peer *peer, const rpc_identity *who,
		     const char *path, ProtobufCMessage *req,
		     const ProtobufCMessageDescriptor *resp_desc,
		     seo_arena *arena, rpc_result *res);

/*
 * Fails the handler's call with the peer's failure in `res`: its public
 * code, message and extra fields when it gave a code of seo/errors.h, else
 * the code of its gRPC status (service_unavailable for UNAVAILABLE, ...).
 * Returns -1, as rpc_ctx_fail() does.
 */
int rpc_peer_fail(rpc_ctx *ctx, const rpc_result *res);

/* Frees the peer (NULL is allowed). */
void rpc_peer_free(rpc_peer *peer);

#endif

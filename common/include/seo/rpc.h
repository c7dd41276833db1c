/*
 * seo/rpc.h: gRPC over cleartext HTTP/2 (prior knowledge), with protobuf-c
 * messages. The wire rules are grpc's doc/PROTOCOL-HTTP2.md: 5-byte
 * length-prefixed messages, grpc-status / grpc-message (percent-encoded)
 * trailers, trailers-only responses for errors, grpc-timeout deadlines,
 * 415 for a non-gRPC content-type, a 4 MiB message cap (RESOURCE_EXHAUSTED),
 * RST_STREAM(NO_ERROR) after trailers sent before the request ended, GOAWAY
 * before close. Every server also answers grpc.health.v1.Health/Check.
 *
 * Errors carry one of the public codes of seo/errors.h in the custom
 * trailer `seo-error-code`, and optionally a JSON object of extra error
 * fields (e.g. {"retry_after": 12}) in `seo-error-extra`; stock clients
 * see the plain grpc-status and grpc-message.
 *
 * Metadata: the gateway sends `x-request-id` and the caller identity
 * (`seo-workspace-id`, `seo-user-id`, `seo-key-id`, `seo-role`) as request
 * headers, and what the route forwards (`seo-client-ip`, request headers
 * such as `x-service-client`); handlers read them with rpc_ctx_meta().
 * A handler may answer with metadata of its own (rpc_ctx_set_meta()): sent
 * as response headers, with a success or a failure alike, and read by
 * clients in rpc_result.meta. Stock gRPC clients see it as initial (or,
 * for a failure, trailing) metadata. The gateway makes `seo-http-status`
 * the HTTP status and the other names HTTP headers, where the route row
 * allows them.
 *
 * Internal calls are authenticated by one shared secret, SEO_INTERNAL_TOKEN
 * (seo/config.h): a client sends it as request metadata
 * `seo-internal-token` on every call, and a server refuses a call that
 * lacks it, or carries another value, with UNAUTHENTICATED (public code
 * internal_error: a caller without the secret is a fault of the
 * deployment, not of a user) before the method is looked up or any handler
 * runs. The comparison takes the same time whatever the value.
 * grpc.health.v1.Health/Check stays open, for probes that cannot send
 * metadata (the kubelet's). Both read the secret from the configuration
 * when they are created; an empty one sends and checks nothing (unit tests
 * only: rpc_service_main() and the gateway refuse to start without it).
 *
 * Threading: servers and clients live on one event_base thread. A server
 * created with workers > 0 runs handlers on that many threads, so that a
 * handler may block (on PostgreSQL, say); replies are handed back to the
 * loop thread. All functions return 0 or a negative SEO_E* code.
 */
#ifndef SEO_RPC_H
#define SEO_RPC_H

#include <stddef.h>
#include <stdint.h>

#include <event2/event.h>
#include <protobuf-c/protobuf-c.h>

#include "seo/arena.h"

#define RPC_MAX_MESSAGE (4 * 1024 * 1024)

/* ---- server ------------------------------------------------------------ */

typedef struct rpc_server rpc_server;
typedef struct rpc_ctx rpc_ctx;

/*
 * A handler. `req` was unpacked with the call's arena allocator. On success
 * it sets *resp (allocated on rpc_ctx_arena() or static) and returns 0. On
 * failure it returns the result of rpc_ctx_fail(). Everything on the arena
 * is freed after the reply is written.
 */
typedef int (*rpc_handler_fn)(rpc_ctx *ctx, const ProtobufCMessage *req,
			      ProtobufCMessage **resp);

typedef struct rpc_method {
	const char *path; /* "/seo.account.v1.Account/Authorize" */
	const ProtobufCMessageDescriptor *input;
	const ProtobufCMessageDescriptor *output;
	rpc_handler_fn handler;
} rpc_method;

/*
 * Creates a server on `base` for `methods` (the array must outlive the
 * server). `service` is handed to handlers through rpc_ctx_service().
 * `workers` > 0 runs handlers on a pool of that many threads; 0 runs them on
 * the loop thread (they must not block then).
 */
int rpc_server_new(struct event_base *base, const rpc_method *methods,
		   size_t n_methods, void *service, int workers,
		   rpc_server **out);

/* Listens on "host:port". Returns SEO_EIO when the address cannot be
 * bound. */
int rpc_server_listen(rpc_server *srv, const char *addr);

/* Health status answered by grpc.health.v1.Health/Check (default
 * SERVING). */
void rpc_server_set_serving(rpc_server *srv, int serving);

/* Says whether a request is cheap enough to run on the loop thread; called
 * there with the unpacked request, it must itself be cheap. */
typedef int (*rpc_inline_fn)(const ProtobufCMessage *req);

/* A method run on the loop thread: every call when `when` is NULL, else
 * the calls for which `when` returns non-zero. */
typedef struct rpc_inline {
	const char *path;
	rpc_inline_fn when;
} rpc_inline;

/* Runs the handler of method `path` on the loop thread although the server
 * has workers, for the requests `when` accepts (all when NULL): for
 * handlers that never block and answer in microseconds, where the hand-off
 * to a worker and back costs more than the call itself. Call before
 * rpc_server_listen(). Returns 0, SEO_EINVAL when `path` is not one of the
 * server's methods. */
int rpc_server_run_inline(rpc_server *srv, const char *path,
			  rpc_inline_fn when);

/* Sends GOAWAY on every connection, stops accepting, and lets calls in
 * flight finish. */
void rpc_server_shutdown(rpc_server *srv);

/* Frees the server; calls still running on workers are waited for. */
void rpc_server_free(rpc_server *srv);

/* The call's arena and a protobuf-c allocator on it (valid until the reply
 * is written). */
seo_arena *rpc_ctx_arena(rpc_ctx *ctx);
ProtobufCAllocator *rpc_ctx_allocator(rpc_ctx *ctx);

/* The `service` pointer given to rpc_server_new(). */
void *rpc_ctx_service(rpc_ctx *ctx);

/* Request metadata value by lowercase name, or NULL. Owned by the call. */
const char *rpc_ctx_meta(rpc_ctx *ctx, const char *name);

/* Absolute deadline in seo_mono_ms() terms, 0 when the caller gave none. */
int64_t rpc_ctx_deadline(rpc_ctx *ctx);

/* 1 when the deadline has passed or the caller cancelled. */
int rpc_ctx_cancelled(rpc_ctx *ctx);

/*
 * Records a failure with public code `code` (a row of seo/errors.h; its
 * gRPC status is used on the wire) and a message. Returns -1, so that a
 * handler can `return rpc_ctx_fail(...)`.
 */
int rpc_ctx_fail(rpc_ctx *ctx, const char *code, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

/* Adds extra error fields (a JSON object text, copied) to the failure. */
void rpc_ctx_fail_extra(rpc_ctx *ctx, const char *json_object);

/* The request metadata name of the shared secret. */
#define RPC_META_INTERNAL_TOKEN "seo-internal-token"

/* The response metadata name that carries the HTTP status a handler asks
 * the gateway to answer with (e.g. 202 rather than 200). */
#define RPC_META_HTTP_STATUS "seo-http-status"

/*
 * Sets response metadata `name` (lowercase letters, digits, '-', '_', '.',
 * at most 64; not content-type, te, grpc-* or seo-error-*) to `value`
 * (printable ASCII, at most 1024 bytes), both copied on the call's arena;
 * a second call for a name replaces its value. At most 16 names per call.
 * Call from the handler, before it returns. Returns 0, SEO_EINVAL for a
 * name or value not allowed, SEO_ETOOBIG past 16 names, SEO_ENOMEM.
 */
int rpc_ctx_set_meta(rpc_ctx *ctx, const char *name, const char *value);

/* rpc_ctx_set_meta(ctx, RPC_META_HTTP_STATUS, status as text); SEO_EINVAL
 * for a status outside 100..599. */
int rpc_ctx_set_http_status(rpc_ctx *ctx, int status);

/* ---- client ------------------------------------------------------------ */

typedef struct rpc_client rpc_client;

typedef struct rpc_meta {
	const char *name;  /* lowercase */
	const char *value;
} rpc_meta;

typedef struct rpc_result {
	int grpc_status;         /* SEO_GRPC_OK on success */
	const char *code;        /* seo-error-code trailer, or NULL */
	const char *message;     /* grpc-message, decoded; "" when none */
	const char *extra_json;  /* seo-error-extra, or NULL */
	ProtobufCMessage *response; /* on success; allocated with the call's
				     * allocator, owned by the caller */
	const rpc_meta *meta;    /* the server's response metadata (headers
				  * and trailers) but the protocol's own
				  * (:status, content-type, grpc-*,
				  * seo-error-*), at most 16, in the order
				  * received; values as sent */
	size_t n_meta;
} rpc_result;

/* Called exactly once per call, always from the event loop (never from
 * inside rpc_client_call()). The strings in `res` live until it returns. */
typedef void (*rpc_done_fn)(const rpc_result *res, void *ud);

/*
 * Creates a client for "host:port". It connects lazily, keeps one HTTP/2
 * connection with many concurrent streams, and reconnects after a failure
 * (with a short back-off). Calls made while no connection can be had fail
 * with UNAVAILABLE without waiting for their deadline.
 */
int rpc_client_new(struct event_base *base, const char *addr,
		   rpc_client **out);

/*
 * Starts a call. `alloc` unpacks the response (e.g. the request's arena);
 * NULL uses malloc. `timeout_ms` > 0 is sent as grpc-timeout and enforced
 * locally (DEADLINE_EXCEEDED). `meta` adds request headers. `req` is
 * completed by seo_pb_fill() (seo/pb.h) before it is packed.
 * Returns 0 (done will be called) or SEO_ENOMEM (it will not).
 */
int rpc_client_call(rpc_client *c, const char *path, ProtobufCMessage *req,
		    const ProtobufCMessageDescriptor *resp_desc,
		    ProtobufCAllocator *alloc, int timeout_ms,
		    const rpc_meta *meta, size_t n_meta, rpc_done_fn done,
		    void *ud);

/* Fails every call in flight with UNAVAILABLE and frees the client. */
void rpc_client_free(rpc_client *c);

/*
 * Blocking convenience for tools and tests: runs its own event_base until
 * the call ends. `*res` strings and response are allocated on `arena`.
 * `req` is completed as rpc_client_call() does.
 */
int rpc_call_sync(const char *addr, const char *path, ProtobufCMessage *req,
		  const ProtobufCMessageDescriptor *resp_desc, seo_arena *arena,
		  int timeout_ms, const rpc_meta *meta, size_t n_meta,
		  rpc_result *res);

/* ---- a service's main() ------------------------------------------------ */

/*
 * Runs a service process: logs as `name`, listens on `addr`, serves
 * `methods` with `workers` threads, the methods of `inline_methods` (ended
 * by a NULL path; may be NULL) on the loop thread (rpc_server_run_inline),
 * stops cleanly on SIGINT/SIGTERM (GOAWAY, calls in flight finish).
 * Exits with status 2 when SEO_INTERNAL_TOKEN is not set
 * (seo_config_require()). Returns the process exit code.
 */
int rpc_service_main(const char *name, const char *addr,
		     const rpc_method *methods, size_t n_methods,
		     void *service, int workers,
		     const rpc_inline *inline_methods);

#endif

/*
 * gw_http.h: the gateway's HTTP front end, one listening port for
 * HTTP/1.1 (keep-alive, pipelining-safe: responses leave in request order)
 * and HTTP/2 (h2c by prior knowledge, told apart from HTTP/1.1 by the
 * 24-byte client preface; h2 or http/1.1 by ALPN under TLS when a
 * certificate is configured). Event-driven on one libevent event_base; no
 * thread per connection. HTTP/2 goes through the shared seo_h2io pump.
 *
 * The front end knows nothing of routes or JSON: it hands each complete
 * request to the handler and writes the response the handler gives back,
 * now or later. Errors it detects itself (malformed request, body over the
 * limit, headers too large, a request past its deadline, a cap of
 * GW_HTTP_LIMITS) are answered with the specification's error object
 * {"error", "code", "message"} as application/json.
 */
#ifndef GW_HTTP_H
#define GW_HTTP_H

#include <stddef.h>
#include <stdint.h>

#include <event2/event.h>

typedef struct gw_http_server gw_http_server;
typedef struct gw_http_req gw_http_req;

typedef struct gw_http_header {
	const char *name;
	const char *value;
} gw_http_header;

/*
 * What one client may hold, one row per limit: X(id, default, unit,
 * meaning). The server, the tests and docs/decisions.md (which says why
 * each number) follow this table; a config sets a row to override it.
 * Refusals: a connection over a cap is answered 429 too_many_connections
 * (per address) or 503 service_unavailable (in all) on cleartext, then
 * closed; a request past its deadline is answered 408 request_timeout
 * (HTTP/1.1 then closes); an HTTP/2 stream whose answer (any answer) is
 * still unread a deadline after it was given is reset with CANCEL; bodies
 * and headers over a budget are answered 503 service_unavailable with
 * Retry-After.
 */
#define GW_HTTP_LIMITS(X)                                                    \
	X(REQUEST_MS, 30000, "ms",                                           \
	  "a whole request: HTTP/1.1 from its first byte to its end, HTTP/2 " \
	  "from HEADERS to END_STREAM, and a new connection's TLS handshake " \
	  "or protocol choice; also an HTTP/2 answer's time to be read")     \
	X(IDLE_MS, 30000, "ms",                                              \
	  "a connection with no request under way (HTTP/1.1 keep-alive, "   \
	  "HTTP/2 without a stream), or a write that makes no progress")    \
	X(CONNS, 4096, "connections",                                        \
	  "open connections in all, and never more than RLIMIT_NOFILE less " \
	  "64 descriptors kept for the rest of the process")                 \
	X(CONNS_PER_IP, 256, "connections",                                  \
	  "open connections from one peer address (IPv6: one /64)")         \
	X(H2_STREAMS, 100, "streams",                                        \
	  "SETTINGS_MAX_CONCURRENT_STREAMS of an HTTP/2 connection")         \
	X(CONN_REQUEST_BYTES, 8388608, "bytes",                              \
	  "what the requests of one connection hold at once: arenas, "       \
	  "targets, headers, bodies (never under one request at its limits)")\
	X(REQUEST_BYTES, 268435456, "bytes",                                 \
	  "what the requests of the whole server hold at once")

typedef enum gw_http_limit {
#define GW_HTTP_LIMIT_ID(id, dflt, unit, meaning) GW_LIM_##id,
	GW_HTTP_LIMITS(GW_HTTP_LIMIT_ID)
#undef GW_HTTP_LIMIT_ID
	GW__LIM_COUNT
} gw_http_limit;

typedef struct gw_http_limit_def {
	const char *name;    /* "REQUEST_MS" */
	long long dflt;
	const char *unit;
	const char *meaning;
} gw_http_limit_def;

/* The row of `id` (static storage). */
const gw_http_limit_def *gw_http_limit_info(gw_http_limit id);

typedef struct gw_http_config {
	const char *addr;        /* "host:port" to listen on */
	size_t body_limit;       /* larger bodies get 413 payload_too_large */
	const char *tls_cert;    /* PEM file, or NULL/"" for cleartext only */
	const char *tls_key;     /* PEM file */
	long long limits[GW__LIM_COUNT]; /* 0 (or less): the table's default */
} gw_http_config;

/*
 * Called once per complete request on the loop thread. The request stays
 * valid until gw_http_respond() is called for it, even if the client goes
 * away in between (the response is then dropped).
 */
typedef void (*gw_http_handler_fn)(gw_http_req *req, void *ud);

/* Creates the server and starts listening; raises the process's soft
 * RLIMIT_NOFILE towards what GW_LIM_CONNS needs (up to the hard limit).
 * Returns 0, SEO_EIO when the address cannot be bound or the certificate
 * not loaded, SEO_ENOMEM. */
int gw_http_server_new(struct event_base *base, const gw_http_config *cfg,
		       gw_http_handler_fn handler, void *ud,
		       gw_http_server **out);

/* The bound port (useful when cfg->addr asked for port 0). */
unsigned short gw_http_server_port(const gw_http_server *srv);

/* Stops accepting, sends GOAWAY / Connection: close, lets responses in
 * flight finish. */
void gw_http_server_shutdown(gw_http_server *srv);

/* 1 when no connection is open (after a shutdown: every answer has left),
 * else 0. */
int gw_http_server_idle(const gw_http_server *srv);

/* Frees the server and every connection. */
void gw_http_server_free(gw_http_server *srv);

/* ---- request accessors (strings owned by the request) ------------------ */

const char *gw_http_method(const gw_http_req *req);   /* "GET" */
const char *gw_http_path(const gw_http_req *req);     /* "/v1/keys/abc", no query */
const char *gw_http_query(const gw_http_req *req);    /* raw, without '?'; "" when none */
const char *gw_http_header_get(const gw_http_req *req, const char *name); /* case-insensitive; NULL when absent */
const char *gw_http_body(const gw_http_req *req, size_t *len); /* "" and 0 when none; NUL-terminated */
const char *gw_http_peer(const gw_http_req *req);     /* client IP text */
const char *gw_http_protocol(const gw_http_req *req); /* "HTTP/1.1", "HTTP/1.0" or "HTTP/2" */
int gw_http_closed(const gw_http_req *req);           /* 1 when the client went away */

/*
 * Sends the response and releases the request. `headers` may be NULL;
 * Content-Length / content-length and Date are added by the front end
 * (and Connection for HTTP/1.x). The body is copied. Must be called exactly
 * once per request, on the loop thread.
 */
void gw_http_respond(gw_http_req *req, int status,
		     const gw_http_header *headers, size_t n_headers,
		     const char *body, size_t body_len);

#endif

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
 * limit, headers too large) are answered with the specification's error
 * object {"error", "code", "message"} as application/json.
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

typedef struct gw_http_config {
	const char *addr;        /* "host:port" to listen on */
	size_t body_limit;       /* larger bodies get 413 payload_too_large */
	const char *tls_cert;    /* PEM file, or NULL/"" for cleartext only */
	const char *tls_key;     /* PEM file */
	int idle_timeout_s;      /* close idle keep-alive connections; 0: 60 */
} gw_http_config;

/*
 * Called once per complete request on the loop thread. The request stays
 * valid until gw_http_respond() is called for it, even if the client goes
 * away in between (the response is then dropped).
 */
typedef void (*gw_http_handler_fn)(gw_http_req *req, void *ud);

/* Creates the server and starts listening. Returns 0, SEO_EIO when the
 * address cannot be bound or the certificate not loaded, SEO_ENOMEM. */
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

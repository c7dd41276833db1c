/*
 * http_internal.h: what http_server.c, http1.c and http2.c share.
 *
 * Ownership: the server owns its connections (a doubly linked list); a
 * connection owns the requests it is parsing or has queued. A request is
 * reference counted: one reference for the connection (or HTTP/2 stream)
 * that read it, one for the handler from dispatch until gw_http_respond().
 * When the connection goes first the request is detached (conn = NULL,
 * closed = 1) and the handler's reference keeps it alive.
 */
#ifndef GW_HTTP_INTERNAL_H
#define GW_HTTP_INTERNAL_H

#include <netinet/in.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/time.h>

#include <arpa/inet.h>
#include <event2/bufferevent.h>
#include <event2/event.h>
#include <event2/listener.h>
#include <http_parser.h>
#include <nghttp2/nghttp2.h>
#include <openssl/ssl.h>

#include "gw_http.h"
#include "seo/arena.h"
#include "seo/h2io.h"

/* URL plus header names and values of one request. */
#define GW_MAX_HEADER_BYTES (16 * 1024)
#define GW_MAX_HEADERS 128
/* HTTP/1.1 requests read ahead of their responses before reading pauses. */
#define GW_H1_MAX_PIPELINE 32
/* Output queued on a connection before it stops reading requests. */
#define GW_OUT_HIGH (1024 * 1024)
/* How long a closing HTTP/1.1 connection keeps reading (and discarding) so
 * that unread input does not turn our close into a reset. */
#define GW_LINGER_S 2
#define GW_LINGER_MAX (1024 * 1024)
/* Descriptors kept for the rest of the process when RLIMIT_NOFILE bounds
 * the connections (GW_LIM_CONNS). */
#define GW_FD_RESERVE 64
/* A canned refusal written at accept. */
#define GW_REFUSAL_MAX 512

#define GW_H2_PREFACE "PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n"
#define GW_H2_PREFACE_LEN 24

enum gw__proto {
	GW_PROTO_SNIFF, /* cleartext before the first bytes, or TLS handshake */
	GW_PROTO_H1,
	GW_PROTO_H2,
};

enum gw__h1_state {
	GW_H1_READING, /* parsing requests */
	GW_H1_CLOSING, /* no more requests; close once the queue is written */
	GW_H1_LINGER,  /* write side shut, draining input until EOF */
};

struct gw__buf {
	char *p;
	size_t len;
	size_t cap;
};

struct gw__h1 {
	http_parser parser;
	gw_http_req *cur;   /* being parsed, not yet dispatched */
	gw_http_req *qhead; /* dispatched, oldest first, until written */
	gw_http_req *qtail;
	unsigned nqueue;
	struct gw__buf tok; /* URL, or "name\0value" of the current header */
	size_t name_len;    /* bytes of the name in tok while reading a value */
	int tok_kind;
	size_t hdr_bytes;
	int fail;           /* status a parser callback asked for */
	size_t lingered;
	enum gw__h1_state state;
	unsigned in_parse : 1;
	unsigned reading : 1;
};

struct gw__h2 {
	nghttp2_session *session;
	seo_h2io *io;
	gw_http_req *streams; /* requests whose stream is open */
	unsigned nstreams;
	struct event *idle; /* armed while no stream is open */
};

/* Open connections per peer address (http_limits.c). */
typedef struct gw__peers gw__peers;

struct gw__conn {
	gw_http_server *srv;
	struct gw__conn *prev;
	struct gw__conn *next;
	struct bufferevent *bev; /* owned here, except by the pump for HTTP/2 */
	enum gw__proto proto;
	int tls;
	char peer[INET6_ADDRSTRLEN];
	unsigned char peer_key[16]; /* what GW_LIM_CONNS_PER_IP counts */
	/* The protocol choice (TLS handshake included) and then each HTTP/1.1
	 * request, within GW_LIM_REQUEST_MS. */
	struct event *deadline;
	size_t held; /* header and body bytes of the requests it holds */
	union {
		struct gw__h1 h1;
		struct gw__h2 h2;
	} u;
};

struct gw_http_server {
	struct event_base *base;
	struct evconnlistener *listener;
	struct event *accept_retry;
	SSL_CTX *ssl_ctx;
	nghttp2_session_callbacks *h2_cbs;
	gw_http_handler_fn handler;
	void *ud;
	size_t body_limit;
	long long lim[GW__LIM_COUNT]; /* the table with the config applied */
	struct timeval idle;
	const struct timeval *request_tv; /* a libevent common timeout */
	unsigned max_conns; /* GW_LIM_CONNS within RLIMIT_NOFILE */
	unsigned nconns;
	gw__peers *peers;
	size_t held; /* header and body bytes of every connection */
	size_t conn_held_max;
	char refuse_ip[GW_REFUSAL_MAX];  /* 429 over the per-address cap */
	char refuse_all[GW_REFUSAL_MAX]; /* 503 over the cap in all */
	unsigned short port;
	int shutting_down;
	struct gw__conn *conns;
	time_t date_sec;
	char date[64];
};

struct gw_http_req {
	seo_arena *arena; /* holds this struct and its strings */
	struct gw__conn *conn; /* NULL once the client went away */
	int refs;
	const char *method;
	const char *path;
	const char *query;
	const char *protocol;
	gw_http_header *hdrs;
	unsigned nhdrs;
	unsigned hdr_cap;
	char *body; /* malloc'd, NUL-terminated; NULL when empty */
	size_t body_len;
	size_t body_cap;
	size_t held; /* counted in conn->held while conn is set */
	struct event *deadline; /* HTTP/2: the stream's GW_LIM_REQUEST_MS */
	char peer[INET6_ADDRSTRLEN];
	unsigned keep_alive : 1;
	unsigned head : 1;
	unsigned dispatched : 1;
	unsigned responded : 1;
	unsigned complete : 1;   /* the whole request was read */
	unsigned want_continue : 1;
	unsigned closed : 1;
	unsigned rst_after : 1;  /* HTTP/2: reset the stream once answered */
	/* HTTP/1.x */
	gw_http_req *next;        /* pipeline queue */
	struct evbuffer *pending; /* answer waiting for earlier ones */
	/* HTTP/2 */
	int32_t stream_id;
	gw_http_req *sprev;
	gw_http_req *snext;
	size_t hdr_bytes;
	int fail; /* the status to answer once its headers are read */
	const char *resp_body;
	size_t resp_len;
	size_t resp_off;
};

/* ---- http_server.c ---- */

/* A new request on `c` holding one reference (the connection's), or NULL
 * when out of memory. Its `fail` is 503 when the connection's or the
 * server's budget of held bytes cannot take it. */
gw_http_req *gw__req_new(struct gw__conn *c);
void gw__req_unref(gw_http_req *req);
/* Copies a header into the request. SEO_ENOMEM, SEO_ETOOBIG past
 * GW_MAX_HEADERS, SEO_EDENIED past a budget of held bytes. */
int gw__req_add_header(gw_http_req *req, const char *name, size_t nlen,
		       const char *value, size_t vlen);
/* Splits an origin-form (or absolute-form) target into path and query.
 * SEO_EINVAL when it is neither, SEO_EDENIED past a budget of held bytes. */
int gw__req_set_target(gw_http_req *req, const char *target, size_t len);
/* Appends body bytes. SEO_ETOOBIG past the server's body limit,
 * SEO_EDENIED past the connection's or the server's budget of held bytes
 * (GW_LIM_CONN_REQUEST_BYTES, GW_LIM_REQUEST_BYTES). */
int gw__req_body_append(gw_http_req *req, const char *data, size_t len);
/* Grows the body buffer to hold `len` bytes ahead of time (`len` within
 * the body limit). SEO_EDENIED past a body budget, SEO_ENOMEM. */
int gw__req_body_reserve(gw_http_req *req, size_t len);
/* Parts the request from its connection, which is going away: its bytes
 * leave the budgets, gw_http_closed() says 1, its stream timer is freed. */
void gw__req_detach(gw_http_req *req);
/* Hands the request to the handler (taking the handler's reference). */
void gw__dispatch(gw_http_req *req);
/* Answers with the error object; the request must not have been
 * dispatched. */
void gw__respond_error(gw_http_req *req, int status, const char *code,
		       const char *message);
/* Maps a status the front end produces itself to its error code and
 * its message. */
const char *gw__error_code(int status);
const char *gw__error_message(int status);
/* Arms `ev` to fire GW_LIM_REQUEST_MS from now. */
void gw__deadline_arm(gw_http_server *srv, struct event *ev);
/* IMF-fixdate of the current second, cached. */
const char *gw__date(gw_http_server *srv);
/* 1 when a response header is one the front end writes itself or one
 * HTTP/2 forbids. */
int gw__reserved_header(const char *name);
/* Unlinks and frees the connection with whatever protocol state it has. */
void gw__conn_free(struct gw__conn *c);

/* ---- http_limits.c ---- */

/* Creates the per-address counts. NULL when out of memory. */
gw__peers *gw__peers_new(void);
void gw__peers_free(gw__peers *p);
/* What one peer address counts as: IPv4 (mapped), or the /64 of IPv6. */
void gw__peer_key(const struct sockaddr *sa, unsigned char key[16]);
/* Counts one more connection for `key`. SEO_EDENIED when `max` are open
 * already, SEO_ENOMEM. */
int gw__peers_add(gw__peers *p, const unsigned char key[16], unsigned max);
/* Counts one connection less for `key` (one that gw__peers_add() took). */
void gw__peers_remove(gw__peers *p, const unsigned char key[16]);

/* ---- http1.c ---- */

/* Takes over a connection whose first bytes are not the HTTP/2 preface
 * (or that negotiated http/1.1), parsing what is already buffered. May free
 * the connection; returns nothing for that reason. */
void gw__h1_start(struct gw__conn *c);
void gw__h1_respond(gw_http_req *req, int status, const gw_http_header *hdrs,
		    size_t n, const char *body, size_t len);
void gw__h1_shutdown(struct gw__conn *c);
void gw__h1_release(struct gw__conn *c);
/* The connection's deadline passed during a request: 408, then close. May
 * free the connection. */
void gw__h1_timeout(struct gw__conn *c);

/* ---- http2.c ---- */

int gw__h2_callbacks_new(nghttp2_session_callbacks **out);
/* Like gw__h1_start() for HTTP/2: hands the bufferevent to a pump. */
void gw__h2_start(struct gw__conn *c);
void gw__h2_respond(gw_http_req *req, int status, const gw_http_header *hdrs,
		    size_t n, const char *body, size_t len);
void gw__h2_shutdown(struct gw__conn *c);
void gw__h2_release(struct gw__conn *c);

#endif

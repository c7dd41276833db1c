/*
 * http_server.c: the listener, TLS, protocol detection, requests and the
 * parts of answering shared by HTTP/1.1 and HTTP/2.
 */
#include <errno.h>
#include <netdb.h>
#include <netinet/tcp.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <time.h>

#include <event2/bufferevent_ssl.h>
#include <event2/buffer.h>
#include <jansson.h>
#include <openssl/err.h>

#include "http_internal.h"
#include "seo/errors.h"
#include "seo/json_text.h"
#include "seo/log.h"

#define GW_LISTEN_BACKLOG 1024
#define GW_REQ_ARENA 2048
/* What one request at every limit holds, about: its arena, its target and
 * headers (with their copies and arrays), its body. A connection's budget
 * is never less. */
#define GW_REQ_HELD_MAX(srv) \
	(GW_REQ_ARENA + 2 * GW_MAX_HEADER_BYTES + (srv)->body_limit + 1)

/* ---- requests ---------------------------------------------------------- */

/* Counts `n` more bytes the request holds against the connection's and
 * the server's budgets. SEO_EDENIED when over one. */
static int hold(gw_http_req *req, size_t n)
{
	struct gw__conn *c = req->conn;
	gw_http_server *srv = c->srv;

	if (c->held + n > srv->conn_held_max ||
	    srv->held + n > (size_t)srv->lim[GW_LIM_REQUEST_BYTES])
		return SEO_EDENIED;
	c->held += n;
	srv->held += n;
	req->held += n;
	return 0;
}

/* What the request holds leaves the budgets. */
static void release(gw_http_req *req)
{
	struct gw__conn *c = req->conn;

	if (c == NULL)
		return;
	c->held -= req->held;
	c->srv->held -= req->held;
	req->held = 0;
}

gw_http_req *gw__req_new(struct gw__conn *c)
{
	seo_arena *a = seo_arena_new(GW_REQ_ARENA);
	gw_http_req *req;

	if (a == NULL)
		return NULL;
	req = seo_arena_calloc(a, sizeof(*req));
	if (req == NULL) {
		seo_arena_free(a);
		return NULL;
	}
	req->arena = a;
	req->conn = c;
	req->refs = 1;
	req->protocol = "HTTP/1.1";
	memcpy(req->peer, c->peer, sizeof(req->peer));
	/* Answered 503 once its headers are read (HTTP/2) or at once. */
	if (hold(req, GW_REQ_ARENA) < 0)
		req->fail = 503;
	return req;
}

void gw__req_detach(gw_http_req *req)
{
	release(req);
	req->conn = NULL;
	req->closed = 1;
	if (req->deadline != NULL)
		event_free(req->deadline);
	req->deadline = NULL;
}

void gw__req_unref(gw_http_req *req)
{
	if (--req->refs > 0)
		return;
	release(req);
	if (req->deadline != NULL)
		event_free(req->deadline);
	if (req->pending != NULL)
		evbuffer_free(req->pending);
	free(req->body);
	seo_arena_free(req->arena);
}

int gw__req_add_header(gw_http_req *req, const char *name, size_t nlen,
		       const char *value, size_t vlen)
{
	gw_http_header *h;

	if (req->nhdrs == req->hdr_cap) {
		unsigned cap = req->hdr_cap ? req->hdr_cap * 2 : 16;
		gw_http_header *n;

		if (req->nhdrs >= GW_MAX_HEADERS)
			return SEO_ETOOBIG;
		if (hold(req, cap * sizeof(*n)) < 0)
			return SEO_EDENIED;
		/* The old array stays in the arena until the request ends. */
		n = seo_arena_alloc(req->arena, cap * sizeof(*n));
		if (n == NULL)
			return SEO_ENOMEM;
		if (req->nhdrs > 0)
			memcpy(n, req->hdrs, req->nhdrs * sizeof(*n));
		req->hdrs = n;
		req->hdr_cap = cap;
	}
	if (hold(req, nlen + vlen + 2) < 0)
		return SEO_EDENIED;
	h = &req->hdrs[req->nhdrs];
	h->name = seo_arena_strndup(req->arena, name, nlen);
	h->value = seo_arena_strndup(req->arena, value, vlen);
	if (h->name == NULL || h->value == NULL)
		return SEO_ENOMEM;
	req->nhdrs++;
	return 0;
}

int gw__req_set_target(gw_http_req *req, const char *target, size_t len)
{
	struct http_parser_url u;
	const char *q;

	if (hold(req, len) < 0)
		return SEO_EDENIED;
	if (len > 0 && target[0] != '/') {
		/* absolute-form, as sent to proxies */
		http_parser_url_init(&u);
		if (http_parser_parse_url(target, len, 0, &u) != 0 ||
		    !(u.field_set & (1 << UF_PATH)))
			return SEO_EINVAL;
		req->path = seo_arena_strndup(req->arena,
					      target + u.field_data[UF_PATH].off,
					      u.field_data[UF_PATH].len);
		req->query = (u.field_set & (1 << UF_QUERY)) ?
			seo_arena_strndup(req->arena,
					  target + u.field_data[UF_QUERY].off,
					  u.field_data[UF_QUERY].len) : "";
		return req->path && req->query ? 0 : SEO_ENOMEM;
	}
	if (len == 0)
		return SEO_EINVAL;
	q = memchr(target, '?', len);
	if (q == NULL) {
		req->path = seo_arena_strndup(req->arena, target, len);
		req->query = "";
	} else {
		req->path = seo_arena_strndup(req->arena, target,
					      (size_t)(q - target));
		req->query = seo_arena_strndup(req->arena, q + 1,
					       len - (size_t)(q - target) - 1);
	}
	return req->path && req->query ? 0 : SEO_ENOMEM;
}

int gw__req_body_reserve(gw_http_req *req, size_t len)
{
	gw_http_server *srv = req->conn->srv;
	size_t cap = req->body_cap ? req->body_cap : 256;
	char *p;

	if (len + 1 <= req->body_cap)
		return 0;
	while (cap < len + 1)
		cap *= 2;
	/* A body at the limit costs the limit, not the next power of two. */
	if (cap > srv->body_limit + 1)
		cap = len + 1 > srv->body_limit + 1 ? len + 1 :
						      srv->body_limit + 1;
	if (hold(req, cap - req->body_cap) < 0)
		return SEO_EDENIED;
	p = realloc(req->body, cap);
	if (p == NULL)
		return SEO_ENOMEM;
	req->body = p;
	req->body_cap = cap;
	return 0;
}

int gw__req_body_append(gw_http_req *req, const char *data, size_t len)
{
	size_t limit = req->conn->srv->body_limit;
	int rv;

	if (len > limit || req->body_len > limit - len)
		return SEO_ETOOBIG;
	rv = gw__req_body_reserve(req, req->body_len + len);
	if (rv < 0)
		return rv;
	memcpy(req->body + req->body_len, data, len);
	req->body_len += len;
	req->body[req->body_len] = '\0';
	return 0;
}

void gw__dispatch(gw_http_req *req)
{
	gw_http_server *srv = req->conn->srv;

	req->refs++;
	req->dispatched = 1;
	srv->handler(req, srv->ud);
}

/* What the front end answers by itself; the last row is the default (the
 * error table has no row for 431; a malformed request is a bad parameter
 * too). */
static const struct {
	int status;
	const char *code;
	const char *message;
} own_errors[] = {
	{408, "request_timeout", "request not received within its deadline"},
	{413, "payload_too_large", "request body over the size limit"},
	{431, "invalid_parameter", "request header fields too large"},
	{500, "internal_error", "out of memory reading the request"},
	{503, "service_unavailable",
	 "request bodies in flight over the budget; retry"},
	{400, "invalid_parameter", "malformed http request"},
};

static size_t own_error(int status)
{
	size_t n = sizeof(own_errors) / sizeof(own_errors[0]), i;

	for (i = 0; i + 1 < n && own_errors[i].status != status; i++)
		;
	return i;
}

const char *gw__error_code(int status)
{
	return own_errors[own_error(status)].code;
}

const char *gw__error_message(int status)
{
	return own_errors[own_error(status)].message;
}

void gw__deadline_arm(gw_http_server *srv, struct event *ev)
{
	evtimer_add(ev, srv->request_tv);
}

void gw__respond_error(gw_http_req *req, int status, const char *code,
		       const char *message)
{
	static const gw_http_header hdrs[] = {
		{"Content-Type", "application/json"},
		{"Retry-After", "1"},
	};
	json_t *obj;
	char *text = NULL;

	req->refs++;
	req->dispatched = 1;
	obj = json_pack("{s:s, s:s, s:s}", "error", seo_http_reason(status),
			"code", code, "message", message);
	if (obj != NULL)
		text = seo_json_dumps(obj, JSON_COMPACT, NULL);
	json_decref(obj);
	gw_http_respond(req, status, hdrs, status == 503 ? 2 : 1,
			text ? text : "{}", text ? strlen(text) : 2);
	free(text);
}

const char *gw__date(gw_http_server *srv)
{
	static const char days[7][4] = {"Sun", "Mon", "Tue", "Wed", "Thu",
					"Fri", "Sat"};
	static const char months[12][4] = {"Jan", "Feb", "Mar", "Apr", "May",
					   "Jun", "Jul", "Aug", "Sep", "Oct",
					   "Nov", "Dec"};
	struct timeval tv;
	struct tm tm;

	event_base_gettimeofday_cached(srv->base, &tv);
	if (tv.tv_sec == srv->date_sec && srv->date[0] != '\0')
		return srv->date;
	srv->date_sec = tv.tv_sec;
	gmtime_r(&srv->date_sec, &tm);
	/* By hand: strftime's names follow the locale. */
	snprintf(srv->date, sizeof(srv->date),
		 "%s, %02d %s %04d %02d:%02d:%02d GMT", days[tm.tm_wday],
		 tm.tm_mday, months[tm.tm_mon], tm.tm_year + 1900, tm.tm_hour,
		 tm.tm_min, tm.tm_sec);
	return srv->date;
}

int gw__reserved_header(const char *name)
{
	static const char *const reserved[] = {
		"content-length", "date", "connection", "keep-alive",
		"transfer-encoding", "upgrade", "proxy-connection",
	};

	for (size_t i = 0; i < sizeof(reserved) / sizeof(reserved[0]); i++)
		if (strcasecmp(name, reserved[i]) == 0)
			return 1;
	return 0;
}

/* ---- public request API ------------------------------------------------ */

const char *gw_http_method(const gw_http_req *req)
{
	return req->method ? req->method : "";
}

const char *gw_http_path(const gw_http_req *req)
{
	return req->path ? req->path : "";
}

const char *gw_http_query(const gw_http_req *req)
{
	return req->query ? req->query : "";
}

const char *gw_http_header_get(const gw_http_req *req, const char *name)
{
	for (unsigned i = 0; i < req->nhdrs; i++)
		if (strcasecmp(req->hdrs[i].name, name) == 0)
			return req->hdrs[i].value;
	return NULL;
}

const char *gw_http_body(const gw_http_req *req, size_t *len)
{
	if (len != NULL)
		*len = req->body_len;
	return req->body ? req->body : "";
}

const char *gw_http_peer(const gw_http_req *req)
{
	return req->peer;
}

const char *gw_http_protocol(const gw_http_req *req)
{
	return req->protocol;
}

int gw_http_closed(const gw_http_req *req)
{
	return req->closed;
}

void gw_http_respond(gw_http_req *req, int status,
		     const gw_http_header *headers, size_t n_headers,
		     const char *body, size_t body_len)
{
	if (req->responded) {
		log_error("http response given twice for %s %s",
			  gw_http_method(req), gw_http_path(req));
		return;
	}
	req->responded = 1;
	if (headers == NULL)
		n_headers = 0;
	if (body == NULL)
		body_len = 0;
	if (req->conn != NULL) {
		if (req->conn->proto == GW_PROTO_H2)
			gw__h2_respond(req, status, headers, n_headers, body,
				       body_len);
		else
			gw__h1_respond(req, status, headers, n_headers, body,
				       body_len);
	}
	gw__req_unref(req);
}

/* ---- connections ------------------------------------------------------- */

void gw__conn_free(struct gw__conn *c)
{
	gw_http_server *srv = c->srv;

	if (c->proto == GW_PROTO_H1)
		gw__h1_release(c);
	else if (c->proto == GW_PROTO_H2)
		gw__h2_release(c);
	if (c->bev != NULL)
		bufferevent_free(c->bev);
	if (c->deadline != NULL)
		event_free(c->deadline);
	srv->nconns--;
	gw__peers_remove(srv->peers, c->peer_key);
	if (c->prev != NULL)
		c->prev->next = c->next;
	else
		srv->conns = c->next;
	if (c->next != NULL)
		c->next->prev = c->prev;
	free(c);
}

static void sniff_decide_tls(struct gw__conn *c)
{
	SSL *ssl = bufferevent_openssl_get_ssl(c->bev);
	const unsigned char *alpn = NULL;
	unsigned alpn_len = 0;

	SSL_get0_alpn_selected(ssl, &alpn, &alpn_len);
	if (alpn_len == 2 && memcmp(alpn, "h2", 2) == 0)
		gw__h2_start(c);
	else
		gw__h1_start(c);
}

static void sniff_readcb(struct bufferevent *bev, void *arg)
{
	struct gw__conn *c = arg;
	struct evbuffer *in = bufferevent_get_input(bev);
	size_t n = evbuffer_get_length(in);
	const unsigned char *p;

	if (n > GW_H2_PREFACE_LEN)
		n = GW_H2_PREFACE_LEN;
	p = evbuffer_pullup(in, (ev_ssize_t)n);
	if (p == NULL)
		return;
	/* The protocol choice and the first request count from here. */
	if (!evtimer_pending(c->deadline, NULL))
		gw__deadline_arm(c->srv, c->deadline);
	/* Decided on the first byte that differs: HTTP/1.1 requests never
	 * wait for 24 bytes. */
	if (memcmp(p, GW_H2_PREFACE, n) != 0)
		gw__h1_start(c);
	else if (n == GW_H2_PREFACE_LEN)
		gw__h2_start(c);
}

static void sniff_eventcb(struct bufferevent *bev, short what, void *arg)
{
	struct gw__conn *c = arg;

	(void)bev;
	if (what & BEV_EVENT_CONNECTED) {
		sniff_decide_tls(c);
		return;
	}
	if (c->tls && (what & BEV_EVENT_ERROR)) {
		unsigned long e = bufferevent_get_openssl_error(c->bev);

		if (e != 0) {
			char buf[256];

			ERR_error_string_n(e, buf, sizeof(buf));
			log_debug("tls handshake with %s failed: %s", c->peer,
				  buf);
		}
	}
	gw__conn_free(c);
}

static void peer_text(const struct sockaddr *sa, char *out, size_t outlen)
{
	const void *addr = NULL;

	if (sa->sa_family == AF_INET)
		addr = &((const struct sockaddr_in *)sa)->sin_addr;
	else if (sa->sa_family == AF_INET6)
		addr = &((const struct sockaddr_in6 *)sa)->sin6_addr;
	if (addr == NULL || inet_ntop(sa->sa_family, addr, out,
				      (socklen_t)outlen) == NULL)
		snprintf(out, outlen, "unknown");
}

/* The protocol choice, or an HTTP/1.1 request, took too long. */
static void on_conn_deadline(evutil_socket_t fd, short what, void *arg)
{
	struct gw__conn *c = arg;

	(void)fd;
	(void)what;
	if (c->proto == GW_PROTO_H1)
		gw__h1_timeout(c);
	else
		gw__conn_free(c);
}

/* Over a cap: a cleartext client is told why in HTTP/1.1 (what a client
 * that spoke HTTP/2 reads as a broken connection, the same outcome), then
 * the socket is closed before anything is read. */
static void refuse(gw_http_server *srv, evutil_socket_t fd, const char *text)
{
	if (srv->ssl_ctx == NULL)
		(void)send(fd, text, strlen(text), MSG_DONTWAIT | MSG_NOSIGNAL);
	evutil_closesocket(fd);
}

static void on_accept(struct evconnlistener *l, evutil_socket_t fd,
		      struct sockaddr *sa, int salen, void *arg)
{
	gw_http_server *srv = arg;
	struct gw__conn *c;
	unsigned char key[16];
	int one = 1;
	int rv;

	(void)l;
	(void)salen;
	if (srv->nconns >= srv->max_conns) {
		refuse(srv, fd, srv->refuse_all);
		return;
	}
	gw__peer_key(sa, key);
	rv = gw__peers_add(srv->peers, key,
			   (unsigned)srv->lim[GW_LIM_CONNS_PER_IP]);
	if (rv < 0) {
		if (rv == SEO_EDENIED)
			refuse(srv, fd, srv->refuse_ip);
		else
			evutil_closesocket(fd);
		return;
	}
	/* Responses go out whole in one write; Nagle would only delay them. */
	setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
	c = calloc(1, sizeof(*c));
	if (c == NULL)
		goto fail;
	c->srv = srv;
	memcpy(c->peer_key, key, sizeof(key));
	peer_text(sa, c->peer, sizeof(c->peer));
	c->deadline = evtimer_new(srv->base, on_conn_deadline, c);
	if (c->deadline == NULL)
		goto fail;
	if (srv->ssl_ctx != NULL) {
		SSL *ssl = SSL_new(srv->ssl_ctx);

		if (ssl == NULL)
			goto fail;
		c->bev = bufferevent_openssl_socket_new(
			srv->base, fd, ssl, BUFFEREVENT_SSL_ACCEPTING,
			BEV_OPT_CLOSE_ON_FREE);
		if (c->bev == NULL) {
			SSL_free(ssl);
			goto fail;
		}
		/* Most clients just close; that is not an attack here. */
		bufferevent_openssl_set_allow_dirty_shutdown(c->bev, 1);
		c->tls = 1;
		/* The handshake is part of the first request's time. */
		gw__deadline_arm(srv, c->deadline);
	} else {
		c->bev = bufferevent_socket_new(srv->base, fd,
						BEV_OPT_CLOSE_ON_FREE);
		if (c->bev == NULL)
			goto fail;
	}
	srv->nconns++;
	c->next = srv->conns;
	if (srv->conns != NULL)
		srv->conns->prev = c;
	srv->conns = c;
	/* TLS decides on ALPN once the handshake is done (CONNECTED). */
	bufferevent_setcb(c->bev, c->tls ? NULL : sniff_readcb, NULL,
			  sniff_eventcb, c);
	bufferevent_set_timeouts(c->bev, &srv->idle, &srv->idle);
	bufferevent_enable(c->bev, EV_READ);
	return;
fail:
	log_warn("http accept: out of memory");
	gw__peers_remove(srv->peers, key);
	if (c != NULL && c->deadline != NULL)
		event_free(c->deadline);
	free(c);
	evutil_closesocket(fd);
}

static void on_accept_retry(evutil_socket_t fd, short what, void *arg)
{
	gw_http_server *srv = arg;

	(void)fd;
	(void)what;
	if (srv->listener != NULL)
		evconnlistener_enable(srv->listener);
}

static void on_accept_error(struct evconnlistener *l, void *arg)
{
	gw_http_server *srv = arg;
	int err = EVUTIL_SOCKET_ERROR();
	struct timeval tv = {0, 100 * 1000};

	log_warn("http accept: %s", evutil_socket_error_to_string(err));
	/* Out of descriptors: the listener would spin on the same error. */
	if (err == EMFILE || err == ENFILE || err == ENOBUFS || err == ENOMEM) {
		evconnlistener_disable(l);
		evtimer_add(srv->accept_retry, &tv);
	}
}

/* ---- the server -------------------------------------------------------- */

/* The canned answer of a refused connection, with the error object. */
static void refusal_text(char *out, size_t n, int status, const char *code,
			 const char *message)
{
	char body[256];
	int blen = snprintf(body, sizeof(body),
			    "{\"error\":\"%s\",\"code\":\"%s\","
			    "\"message\":\"%s\"}",
			    seo_http_reason(status), code, message);

	snprintf(out, n,
		 "HTTP/1.1 %d %s\r\nContent-Type: application/json\r\n"
		 "Retry-After: 1\r\nConnection: close\r\n"
		 "Content-Length: %d\r\n\r\n%s",
		 status, seo_http_reason(status), blen, body);
}

/* The table's rows with the config applied, the connection cap within
 * the descriptors the process may open, and what follows from them. */
static int apply_limits(gw_http_server *srv, const gw_http_config *cfg)
{
	struct rlimit rl;
	char msg[128];

	for (int i = 0; i < GW__LIM_COUNT; i++)
		srv->lim[i] = cfg->limits[i] > 0 ? cfg->limits[i] :
			gw_http_limit_info((gw_http_limit)i)->dflt;
	if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur != RLIM_INFINITY) {
		rlim_t need = (rlim_t)(srv->lim[GW_LIM_CONNS] + GW_FD_RESERVE);
		long long fds;

		/* The soft limit (often 1024) up to what the caps need, as far
		 * as the hard limit lets it. */
		if (rl.rlim_cur < need && rl.rlim_cur < rl.rlim_max) {
			rl.rlim_cur = need < rl.rlim_max ? need : rl.rlim_max;
			if (setrlimit(RLIMIT_NOFILE, &rl) != 0)
				getrlimit(RLIMIT_NOFILE, &rl);
		}
		fds = (long long)rl.rlim_cur - GW_FD_RESERVE;
		if (srv->lim[GW_LIM_CONNS] > fds)
			srv->lim[GW_LIM_CONNS] = fds > 1 ? fds : 1;
	}
	srv->max_conns = (unsigned)srv->lim[GW_LIM_CONNS];
	srv->conn_held_max = (size_t)srv->lim[GW_LIM_CONN_REQUEST_BYTES];
	if (srv->conn_held_max < GW_REQ_HELD_MAX(srv))
		srv->conn_held_max = GW_REQ_HELD_MAX(srv);
	srv->idle.tv_sec = srv->lim[GW_LIM_IDLE_MS] / 1000;
	srv->idle.tv_usec = (srv->lim[GW_LIM_IDLE_MS] % 1000) * 1000;
	{
		struct timeval tv = {
			srv->lim[GW_LIM_REQUEST_MS] / 1000,
			(srv->lim[GW_LIM_REQUEST_MS] % 1000) * 1000};

		/* Many timers of one duration: O(1) each, not a heap entry. */
		srv->request_tv = event_base_init_common_timeout(srv->base,
								 &tv);
	}
	snprintf(msg, sizeof(msg),
		 "more than %lld open connections from this address",
		 srv->lim[GW_LIM_CONNS_PER_IP]);
	refusal_text(srv->refuse_ip, sizeof(srv->refuse_ip), 429,
		     "too_many_connections", msg);
	refusal_text(srv->refuse_all, sizeof(srv->refuse_all), 503,
		     "service_unavailable", "too many open connections");
	srv->peers = gw__peers_new();
	return srv->request_tv != NULL && srv->peers != NULL ? 0 : SEO_ENOMEM;
}

static int alpn_select(SSL *ssl, const unsigned char **out,
		       unsigned char *outlen, const unsigned char *in,
		       unsigned inlen, void *arg)
{
	static const unsigned char ours[] = "\x02h2\x08http/1.1";
	unsigned char *sel;

	(void)ssl;
	(void)arg;
	if (SSL_select_next_proto(&sel, outlen, ours, sizeof(ours) - 1, in,
				  inlen) != OPENSSL_NPN_NEGOTIATED)
		return SSL_TLSEXT_ERR_NOACK;
	*out = sel;
	return SSL_TLSEXT_ERR_OK;
}

static int tls_ctx_new(const gw_http_config *cfg, SSL_CTX **out)
{
	SSL_CTX *ctx = SSL_CTX_new(TLS_server_method());
	int rv = SEO_EIO;

	if (ctx == NULL)
		goto out;
	SSL_CTX_set_min_proto_version(ctx, TLS1_2_VERSION);
	SSL_CTX_set_options(ctx, SSL_OP_NO_COMPRESSION |
				 SSL_OP_NO_SESSION_RESUMPTION_ON_RENEGOTIATION);
	if (SSL_CTX_use_certificate_chain_file(ctx, cfg->tls_cert) != 1 ||
	    cfg->tls_key == NULL ||
	    SSL_CTX_use_PrivateKey_file(ctx, cfg->tls_key,
					SSL_FILETYPE_PEM) != 1 ||
	    SSL_CTX_check_private_key(ctx) != 1) {
		char buf[256];

		ERR_error_string_n(ERR_get_error(), buf, sizeof(buf));
		log_error("http tls: cannot load %s / %s: %s", cfg->tls_cert,
			  cfg->tls_key ? cfg->tls_key : "(no key)", buf);
		goto out;
	}
	SSL_CTX_set_alpn_select_cb(ctx, alpn_select, NULL);
	*out = ctx;
	ctx = NULL;
	rv = 0;
out:
	SSL_CTX_free(ctx);
	return rv;
}

/* Resolves "host:port", "[v6]:port" or ":port" (every interface). */
static int resolve_addr(const char *addr, struct addrinfo **out)
{
	struct addrinfo hints;
	char host[256];
	const char *colon = strrchr(addr, ':');
	size_t hlen;
	const char *h = host;

	if (colon == NULL)
		return SEO_EINVAL;
	hlen = (size_t)(colon - addr);
	if (hlen >= 2 && addr[0] == '[' && addr[hlen - 1] == ']') {
		addr++;
		hlen -= 2;
	}
	if (hlen >= sizeof(host))
		return SEO_EINVAL;
	memcpy(host, addr, hlen);
	host[hlen] = '\0';
	if (hlen == 0 || strcmp(host, "*") == 0)
		h = NULL;
	memset(&hints, 0, sizeof(hints));
	hints.ai_family = AF_UNSPEC;
	hints.ai_socktype = SOCK_STREAM;
	hints.ai_flags = AI_PASSIVE | AI_NUMERICSERV;
	if (getaddrinfo(h, colon + 1, &hints, out) != 0)
		return SEO_EINVAL;
	return 0;
}

/* libevent writes with writev(), not send(MSG_NOSIGNAL): a client gone
 * mid-write must cost an EPIPE, not the process. A handler the program
 * installed itself is left alone. */
static void ignore_sigpipe(void)
{
	struct sigaction sa;

	if (sigaction(SIGPIPE, NULL, &sa) == 0 && sa.sa_handler == SIG_DFL) {
		sa.sa_handler = SIG_IGN;
		sigaction(SIGPIPE, &sa, NULL);
	}
}

int gw_http_server_new(struct event_base *base, const gw_http_config *cfg,
		       gw_http_handler_fn handler, void *ud,
		       gw_http_server **out)
{
	gw_http_server *srv;
	struct addrinfo *ai = NULL;
	struct sockaddr_storage ss;
	socklen_t sslen = sizeof(ss);
	int rv = SEO_ENOMEM;

	srv = calloc(1, sizeof(*srv));
	if (srv == NULL)
		goto out;
	ignore_sigpipe();
	srv->base = base;
	srv->handler = handler;
	srv->ud = ud;
	srv->body_limit = cfg->body_limit;
	srv->accept_retry = evtimer_new(base, on_accept_retry, srv);
	if (srv->accept_retry == NULL || apply_limits(srv, cfg) < 0 ||
	    gw__h2_callbacks_new(&srv->h2_cbs) < 0)
		goto out;
	if (cfg->tls_cert != NULL && cfg->tls_cert[0] != '\0') {
		rv = tls_ctx_new(cfg, &srv->ssl_ctx);
		if (rv < 0)
			goto out;
	}
	rv = resolve_addr(cfg->addr ? cfg->addr : "", &ai);
	if (rv < 0) {
		log_error("http listen: bad address '%s'",
			  cfg->addr ? cfg->addr : "");
		rv = SEO_EIO;
		goto out;
	}
	srv->listener = evconnlistener_new_bind(
		base, on_accept, srv,
		LEV_OPT_CLOSE_ON_FREE | LEV_OPT_REUSEABLE |
			LEV_OPT_CLOSE_ON_EXEC,
		GW_LISTEN_BACKLOG, ai->ai_addr, (int)ai->ai_addrlen);
	if (srv->listener == NULL) {
		log_error("http listen on %s: %s", cfg->addr,
			  evutil_socket_error_to_string(EVUTIL_SOCKET_ERROR()));
		rv = SEO_EIO;
		goto out;
	}
	evconnlistener_set_error_cb(srv->listener, on_accept_error);
	if (getsockname(evconnlistener_get_fd(srv->listener),
			(struct sockaddr *)&ss, &sslen) == 0)
		srv->port = ntohs(ss.ss_family == AF_INET6 ?
			((struct sockaddr_in6 *)&ss)->sin6_port :
			((struct sockaddr_in *)&ss)->sin_port);
	*out = srv;
	srv = NULL;
	rv = 0;
out:
	if (ai != NULL)
		freeaddrinfo(ai);
	gw_http_server_free(srv);
	return rv;
}

unsigned short gw_http_server_port(const gw_http_server *srv)
{
	return srv->port;
}

int gw_http_server_idle(const gw_http_server *srv)
{
	return srv->conns == NULL;
}

void gw_http_server_shutdown(gw_http_server *srv)
{
	struct gw__conn *c, *next;

	if (srv->shutting_down)
		return;
	srv->shutting_down = 1;
	if (srv->listener != NULL) {
		evconnlistener_free(srv->listener);
		srv->listener = NULL;
	}
	evtimer_del(srv->accept_retry);
	for (c = srv->conns; c != NULL; c = next) {
		next = c->next;
		if (c->proto == GW_PROTO_H1)
			gw__h1_shutdown(c);
		else if (c->proto == GW_PROTO_H2)
			gw__h2_shutdown(c);
		else
			gw__conn_free(c);
	}
}

void gw_http_server_free(gw_http_server *srv)
{
	if (srv == NULL)
		return;
	if (srv->listener != NULL)
		evconnlistener_free(srv->listener);
	while (srv->conns != NULL)
		gw__conn_free(srv->conns);
	if (srv->accept_retry != NULL)
		event_free(srv->accept_retry);
	if (srv->h2_cbs != NULL)
		nghttp2_session_callbacks_del(srv->h2_cbs);
	gw__peers_free(srv->peers);
	SSL_CTX_free(srv->ssl_ctx);
	free(srv);
}

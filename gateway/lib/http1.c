/*
 * http1.c: HTTP/1.0 and HTTP/1.1 on http_parser.
 *
 * Requests are parsed one at a time: the parser pauses after each complete
 * request so that the loop in h1_process() can stop between requests (the
 * connection is closing, or too many answers are outstanding). Dispatched
 * requests wait in a FIFO; an answer given out of turn is kept in the
 * request's own buffer until every earlier answer has been written.
 */
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>

#include <event2/buffer.h>

#include "http_internal.h"
#include "seo/errors.h"
#include "seo/json_write.h"
#include "seo/log.h"

enum { TOK_NONE, TOK_URL, TOK_FIELD, TOK_VALUE };

static const char continue_line[] = "HTTP/1.1 100 Continue\r\n\r\n";

static void h1_after(struct gw__conn *c);
static void h1_eventcb(struct bufferevent *bev, short what, void *arg);

/* ---- parsing ----------------------------------------------------------- */

static int tok_append(struct gw__h1 *h, const char *p, size_t len)
{
	struct gw__buf *b = &h->tok;

	if (b->len + len > b->cap) {
		size_t cap = b->cap ? b->cap * 2 : 512;
		char *n;

		while (cap < b->len + len)
			cap *= 2;
		n = realloc(b->p, cap);
		if (n == NULL)
			return SEO_ENOMEM;
		b->p = n;
		b->cap = cap;
	}
	memcpy(b->p + b->len, p, len);
	b->len += len;
	return 0;
}

/* Moves the finished token into the request. */
static int tok_commit(struct gw__h1 *h)
{
	gw_http_req *req = h->cur;
	int rv = 0;

	switch (h->tok_kind) {
	case TOK_URL:
		rv = gw__req_set_target(req, h->tok.p, h->tok.len);
		if (rv < 0)
			h->fail = rv == SEO_ENOMEM ? 500 :
				  rv == SEO_EDENIED ? 503 : 400;
		break;
	case TOK_FIELD: /* a name whose value was empty */
		rv = gw__req_add_header(req, h->tok.p, h->tok.len, "", 0);
		break;
	case TOK_VALUE:
		rv = gw__req_add_header(req, h->tok.p, h->name_len,
					h->tok.p + h->name_len + 1,
					h->tok.len - h->name_len - 1);
		break;
	}
	if (rv < 0 && h->fail == 0)
		h->fail = rv == SEO_ETOOBIG ? 431 : rv == SEO_EDENIED ? 503 : 500;
	h->tok.len = 0;
	h->tok_kind = TOK_NONE;
	return rv;
}

static int tok_add(http_parser *p, int kind, const char *at, size_t len)
{
	struct gw__conn *c = p->data;
	struct gw__h1 *h = &c->u.h1;

	h->hdr_bytes += len;
	if (h->hdr_bytes > GW_MAX_HEADER_BYTES) {
		h->fail = 431;
		return -1;
	}
	if (kind == TOK_VALUE && h->tok_kind == TOK_FIELD) {
		/* tok becomes "name\0value" */
		h->name_len = h->tok.len;
		if (tok_append(h, "", 1) < 0)
			goto nomem;
		h->tok_kind = TOK_VALUE;
	} else if (kind != h->tok_kind) {
		if (h->tok_kind != TOK_NONE && tok_commit(h) < 0)
			return -1;
		h->tok_kind = kind;
	}
	if (tok_append(h, at, len) < 0)
		goto nomem;
	return 0;
nomem:
	h->fail = 500;
	return -1;
}

static int on_message_begin(http_parser *p)
{
	struct gw__conn *c = p->data;
	struct gw__h1 *h = &c->u.h1;

	h->cur = gw__req_new(c);
	if (h->cur == NULL || h->cur->fail != 0) {
		h->fail = h->cur == NULL ? 500 : h->cur->fail;
		return -1;
	}
	/* The first request's time began at the connection's first byte. */
	if (!evtimer_pending(c->deadline, NULL))
		gw__deadline_arm(c->srv, c->deadline);
	h->tok.len = 0;
	h->tok_kind = TOK_NONE;
	h->hdr_bytes = 0;
	return 0;
}

static int on_url(http_parser *p, const char *at, size_t len)
{
	return tok_add(p, TOK_URL, at, len);
}

static int on_header_field(http_parser *p, const char *at, size_t len)
{
	return tok_add(p, TOK_FIELD, at, len);
}

static int on_header_value(http_parser *p, const char *at, size_t len)
{
	return tok_add(p, TOK_VALUE, at, len);
}

static int on_headers_complete(http_parser *p)
{
	struct gw__conn *c = p->data;
	struct gw__h1 *h = &c->u.h1;
	gw_http_req *req = h->cur;
	const char *expect;

	if (h->tok_kind != TOK_NONE && tok_commit(h) < 0)
		return -1;
	if (p->http_major != 1 || req->path == NULL) {
		h->fail = 400;
		return -1;
	}
	req->protocol = p->http_minor == 0 ? "HTTP/1.0" : "HTTP/1.1";
	req->method = http_method_str((enum http_method)p->method);
	req->head = p->method == HTTP_HEAD;
	req->keep_alive = http_should_keep_alive(p) != 0;
	if (p->content_length != ULLONG_MAX && p->content_length > 0) {
		if (p->content_length > c->srv->body_limit) {
			h->fail = 413;
			return -1;
		}
		int rv = gw__req_body_reserve(req, (size_t)p->content_length);

		if (rv < 0) {
			h->fail = rv == SEO_EDENIED ? 503 : 500;
			return -1;
		}
	}
	expect = gw_http_header_get(req, "expect");
	if (expect != NULL && p->http_minor >= 1 &&
	    strcasecmp(expect, "100-continue") == 0) {
		/* An interim answer must not overtake earlier final ones. */
		if (h->qhead == NULL)
			bufferevent_write(c->bev, continue_line,
					  sizeof(continue_line) - 1);
		else
			req->want_continue = 1;
	}
	return 0;
}

static int on_body(http_parser *p, const char *at, size_t len)
{
	struct gw__conn *c = p->data;
	struct gw__h1 *h = &c->u.h1;
	int rv = gw__req_body_append(h->cur, at, len);

	if (rv < 0) {
		h->fail = rv == SEO_ETOOBIG ? 413 : rv == SEO_EDENIED ? 503 : 500;
		return -1;
	}
	return 0;
}

static int on_message_complete(http_parser *p)
{
	struct gw__conn *c = p->data;
	struct gw__h1 *h = &c->u.h1;
	gw_http_req *req = h->cur;

	h->cur = NULL;
	evtimer_del(c->deadline);
	req->complete = 1;
	req->want_continue = 0;
	if (h->qtail != NULL)
		h->qtail->next = req;
	else
		h->qhead = req;
	h->qtail = req;
	h->nqueue++;
	if (!req->keep_alive)
		h->state = GW_H1_CLOSING;
	/* Back to h1_process() after every request. */
	http_parser_pause(p, 1);
	gw__dispatch(req);
	return 0;
}

static const http_parser_settings parser_settings = {
	.on_message_begin = on_message_begin,
	.on_url = on_url,
	.on_header_field = on_header_field,
	.on_header_value = on_header_value,
	.on_headers_complete = on_headers_complete,
	.on_body = on_body,
	.on_message_complete = on_message_complete,
};

/* Answers a request the parser rejected and stops reading. */
static void h1_reject(struct gw__conn *c, int status)
{
	struct gw__h1 *h = &c->u.h1;
	gw_http_req *req = h->cur;

	h->cur = NULL;
	h->state = GW_H1_CLOSING;
	evtimer_del(c->deadline);
	if (req == NULL)
		req = gw__req_new(c);
	if (req == NULL)
		return;
	req->keep_alive = 0;
	req->complete = 1;
	req->want_continue = 0;
	if (h->qtail != NULL)
		h->qtail->next = req;
	else
		h->qhead = req;
	h->qtail = req;
	h->nqueue++;
	gw__respond_error(req, status, gw__error_code(status),
			  gw__error_message(status));
}

/* Writes what is queued straight away on cleartext connections, whose
 * bufferevent keeps its write event disabled between responses. */
static void h1_flush(struct gw__conn *c)
{
	if (!c->tls)
		seo_bev_write_now(c->bev);
}

static void h1_process(struct gw__conn *c)
{
	struct gw__h1 *h = &c->u.h1;
	struct evbuffer *in = bufferevent_get_input(c->bev);
	struct evbuffer_iovec v;
	size_t n;
	enum http_errno err;

	h->in_parse = 1;
	while (h->state == GW_H1_READING && h->nqueue < GW_H1_MAX_PIPELINE &&
	       evbuffer_peek(in, -1, NULL, &v, 1) > 0 && v.iov_len > 0) {
		http_parser_pause(&h->parser, 0);
		n = http_parser_execute(&h->parser, &parser_settings,
					v.iov_base, v.iov_len);
		evbuffer_drain(in, n);
		err = HTTP_PARSER_ERRNO(&h->parser);
		if (err == HPE_OK || err == HPE_PAUSED)
			continue;
		h1_reject(c, h->fail ? h->fail :
			     err == HPE_HEADER_OVERFLOW ? 431 : 400);
	}
	h->in_parse = 0;
	h1_flush(c);
	h1_after(c);
}

/* ---- connection state -------------------------------------------------- */

static void set_reading(struct gw__conn *c, int on)
{
	struct gw__h1 *h = &c->u.h1;

	if (h->reading == (unsigned)on)
		return;
	h->reading = on ? 1 : 0;
	if (on)
		bufferevent_enable(c->bev, EV_READ);
	else
		bufferevent_disable(c->bev, EV_READ);
}

static void linger_readcb(struct bufferevent *bev, void *arg)
{
	struct gw__conn *c = arg;
	struct evbuffer *in = bufferevent_get_input(bev);
	size_t n = evbuffer_get_length(in);

	c->u.h1.lingered += n;
	evbuffer_drain(in, n);
	if (c->u.h1.lingered > GW_LINGER_MAX)
		gw__conn_free(c);
}

/* All answers are written: close, but keep draining input a little while
 * so that what the client still sends does not reset the connection
 * before it has read our last answer. */
static void h1_close(struct gw__conn *c)
{
	struct timeval tv = {GW_LINGER_S, 0};

	if (c->tls || shutdown(bufferevent_getfd(c->bev), SHUT_WR) < 0) {
		gw__conn_free(c);
		return;
	}
	c->u.h1.state = GW_H1_LINGER;
	evbuffer_drain(bufferevent_get_input(c->bev),
		       evbuffer_get_length(bufferevent_get_input(c->bev)));
	bufferevent_setcb(c->bev, linger_readcb, NULL, h1_eventcb, c);
	bufferevent_set_timeouts(c->bev, &tv, NULL);
	c->u.h1.reading = 0;
	set_reading(c, 1);
}

/* Decides about reading and closing after anything changed. May free the
 * connection. */
static void h1_after(struct gw__conn *c)
{
	struct gw__h1 *h = &c->u.h1;
	size_t out = evbuffer_get_length(bufferevent_get_output(c->bev));

	if (h->state == GW_H1_READING) {
		int want = h->nqueue < GW_H1_MAX_PIPELINE && out < GW_OUT_HIGH;

		set_reading(c, want);
		/* Requests already buffered while reading was off. */
		if (want && !h->in_parse &&
		    evbuffer_get_length(bufferevent_get_input(c->bev)) > 0)
			bufferevent_trigger(c->bev, EV_READ,
					    BEV_TRIG_IGNORE_WATERMARKS |
						    BEV_TRIG_DEFER_CALLBACKS);
		return;
	}
	if (h->state != GW_H1_CLOSING)
		return;
	set_reading(c, 0);
	if (h->nqueue == 0 && out == 0 && !h->in_parse)
		h1_close(c);
}

static void h1_readcb(struct bufferevent *bev, void *arg)
{
	(void)bev;
	h1_process(arg);
}

static void h1_writecb(struct bufferevent *bev, void *arg)
{
	struct gw__conn *c = arg;

	if (!c->tls)
		bufferevent_disable(bev, EV_WRITE);
	h1_after(c);
}

static void h1_eventcb(struct bufferevent *bev, short what, void *arg)
{
	struct gw__conn *c = arg;
	struct gw__h1 *h = &c->u.h1;

	(void)bev;
	/* Only a read timeout while the handler works is not idleness. */
	if (h->state == GW_H1_READING && what == (BEV_EVENT_TIMEOUT |
						  BEV_EVENT_READING) &&
	    h->nqueue > 0 && h->cur == NULL) {
		h->reading = 0;
		set_reading(c, 1);
		return;
	}
	gw__conn_free(c);
}

void gw__h1_start(struct gw__conn *c)
{
	struct gw__h1 *h = &c->u.h1;

	c->proto = GW_PROTO_H1;
	memset(h, 0, sizeof(*h));
	http_parser_init(&h->parser, HTTP_REQUEST);
	h->parser.data = c;
	h->state = GW_H1_READING;
	h->reading = 1;
	bufferevent_setcb(c->bev, h1_readcb, h1_writecb, h1_eventcb, c);
	if (!c->tls)
		bufferevent_disable(c->bev, EV_WRITE);
	h1_process(c);
}

/* ---- answering --------------------------------------------------------- */

/* A string literal's bytes, without printf and without strlen(). */
#define ADD_LITERAL(out, lit) evbuffer_add((out), (lit), sizeof(lit) - 1)

static void write_response(struct gw__conn *c, struct evbuffer *out,
			   gw_http_req *req, int status,
			   const gw_http_header *hdrs, size_t n,
			   const char *body, size_t len)
{
	int bodyless = status == 204 || status == 304 || status < 200;
	const char *reason = seo_http_reason(status);
	const char *date = gw__date(c->srv);
	char num[SEO_INT_TEXT_MAX];

	ADD_LITERAL(out, "HTTP/1.1 ");
	evbuffer_add(out, num, seo_fmt_int(num, status));
	ADD_LITERAL(out, " ");
	evbuffer_add(out, reason, strlen(reason));
	ADD_LITERAL(out, "\r\nDate: ");
	evbuffer_add(out, date, strlen(date));
	if (req->keep_alive)
		ADD_LITERAL(out, "\r\nConnection: keep-alive\r\n");
	else
		ADD_LITERAL(out, "\r\nConnection: close\r\n");
	if (!bodyless) {
		ADD_LITERAL(out, "Content-Length: ");
		evbuffer_add(out, num, seo_fmt_int(num, (long long)len));
		ADD_LITERAL(out, "\r\n");
	}
	for (size_t i = 0; i < n; i++) {
		if (gw__reserved_header(hdrs[i].name))
			continue;
		evbuffer_add(out, hdrs[i].name, strlen(hdrs[i].name));
		evbuffer_add(out, ": ", 2);
		evbuffer_add(out, hdrs[i].value, strlen(hdrs[i].value));
		evbuffer_add(out, "\r\n", 2);
	}
	evbuffer_add(out, "\r\n", 2);
	if (!bodyless && !req->head && len > 0)
		evbuffer_add(out, body, len);
}

/* Writes every answered request at the head of the queue, in order. */
static void h1_pop(struct gw__conn *c)
{
	struct gw__h1 *h = &c->u.h1;
	struct evbuffer *out = bufferevent_get_output(c->bev);
	gw_http_req *req;

	while ((req = h->qhead) != NULL && req->responded) {
		if (req->pending != NULL) {
			evbuffer_add_buffer(out, req->pending);
			evbuffer_free(req->pending);
			req->pending = NULL;
		}
		h->qhead = req->next;
		if (h->qhead == NULL)
			h->qtail = NULL;
		h->nqueue--;
		if (!req->keep_alive)
			h->state = GW_H1_CLOSING;
		gw__req_unref(req);
	}
	if (h->qhead == NULL && h->cur != NULL && h->cur->want_continue) {
		h->cur->want_continue = 0;
		evbuffer_add(out, continue_line, sizeof(continue_line) - 1);
	}
}

void gw__h1_respond(gw_http_req *req, int status, const gw_http_header *hdrs,
		    size_t n, const char *body, size_t len)
{
	struct gw__conn *c = req->conn;
	struct gw__h1 *h = &c->u.h1;
	struct evbuffer *out;

	/* The last answer before a shutdown tells the client. */
	if (h->state != GW_H1_READING && req == h->qtail)
		req->keep_alive = 0;
	if (req == h->qhead) {
		out = bufferevent_get_output(c->bev);
	} else {
		req->pending = evbuffer_new();
		out = req->pending;
	}
	if (out != NULL)
		write_response(c, out, req, status, hdrs, n, body, len);
	else
		req->keep_alive = 0;
	if (req == h->qhead)
		h1_pop(c);
	if (!h->in_parse) {
		h1_flush(c);
		h1_after(c);
	}
}

void gw__h1_shutdown(struct gw__conn *c)
{
	struct gw__h1 *h = &c->u.h1;

	if (h->state != GW_H1_READING)
		return;
	h->state = GW_H1_CLOSING;
	/* A request half read is not answered. */
	if (h->cur != NULL && !h->in_parse) {
		gw__req_unref(h->cur);
		h->cur = NULL;
	}
	if (!h->in_parse)
		h1_after(c);
}

void gw__h1_release(struct gw__conn *c)
{
	struct gw__h1 *h = &c->u.h1;
	gw_http_req *req, *next;

	if (h->cur != NULL)
		gw__req_unref(h->cur);
	for (req = h->qhead; req != NULL; req = next) {
		next = req->next;
		gw__req_detach(req);
		gw__req_unref(req);
	}
	free(h->tok.p);
	memset(h, 0, sizeof(*h));
}

void gw__h1_timeout(struct gw__conn *c)
{
	struct gw__h1 *h = &c->u.h1;

	if (h->state != GW_H1_READING || h->cur == NULL)
		return;
	/* As in h1_process(): the answer must not free the connection. */
	h->in_parse = 1;
	h1_reject(c, 408);
	h->in_parse = 0;
	h1_flush(c);
	h1_after(c);
}

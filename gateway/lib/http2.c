/*
 * http2.c: HTTP/2 requests on nghttp2, through the shared seo_h2io pump.
 *
 * A request is created when its HEADERS begin, collects headers and DATA,
 * and goes to the handler on END_STREAM. The stream holds the
 * connection's reference; on_stream_close drops it. An answer given
 * before the request ended (413) resets the stream with NO_ERROR once the
 * answer is out, as RFC 9113 section 8.1 allows.
 */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "http_internal.h"
#include "seo/errors.h"
#include "seo/json_write.h"
#include "seo/log.h"

static void h2_reject(gw_http_req *req, int status)
{
	gw__respond_error(req, status, gw__error_code(status),
			  gw__error_message(status));
}

/* A stream past its deadline is answered 408. Any answer then has one
 * deadline to be read (a client can keep its flow-control window shut); a
 * stream still open after it is reset. */
static void on_stream_deadline(evutil_socket_t fd, short what, void *arg)
{
	gw_http_req *req = arg;
	struct gw__h2 *h2 = &req->conn->u.h2;

	(void)fd;
	(void)what;
	if (!req->responded && !req->dispatched) {
		/* Answering arms the timer again, and may close the stream and
		 * free req. */
		h2_reject(req, 408);
		return;
	}
	nghttp2_submit_rst_stream(h2->session, NGHTTP2_FLAG_NONE,
				  req->stream_id, NGHTTP2_CANCEL);
	seo_h2io_flush(h2->io);
}

static int on_begin_headers(nghttp2_session *s, const nghttp2_frame *f,
			    void *ud)
{
	struct gw__conn *c = ud;
	struct gw__h2 *h2 = &c->u.h2;
	gw_http_req *req;

	if (f->hd.type != NGHTTP2_HEADERS ||
	    f->headers.cat != NGHTTP2_HCAT_REQUEST)
		return 0;
	req = gw__req_new(c);
	if (req == NULL)
		return NGHTTP2_ERR_TEMPORAL_CALLBACK_FAILURE;
	req->stream_id = f->hd.stream_id;
	req->protocol = "HTTP/2";
	req->deadline = evtimer_new(c->srv->base, on_stream_deadline, req);
	if (req->deadline == NULL) {
		gw__req_unref(req);
		return NGHTTP2_ERR_TEMPORAL_CALLBACK_FAILURE;
	}
	gw__deadline_arm(c->srv, req->deadline);
	req->snext = h2->streams;
	if (h2->streams != NULL)
		h2->streams->sprev = req;
	h2->streams = req;
	if (h2->nstreams++ == 0)
		evtimer_del(h2->idle);
	nghttp2_session_set_stream_user_data(s, f->hd.stream_id, req);
	return 0;
}

static int on_header(nghttp2_session *s, const nghttp2_frame *f,
		     const uint8_t *name, size_t nlen, const uint8_t *value,
		     size_t vlen, uint8_t flags, void *ud)
{
	gw_http_req *req;
	const char *n = (const char *)name;
	const char *v = (const char *)value;
	int rv = 0;

	(void)flags;
	(void)ud;
	if (f->hd.type != NGHTTP2_HEADERS ||
	    f->headers.cat != NGHTTP2_HCAT_REQUEST)
		return 0; /* trailers are not used */
	req = nghttp2_session_get_stream_user_data(s, f->hd.stream_id);
	if (req == NULL || req->fail != 0)
		return 0;
	req->hdr_bytes += nlen + vlen;
	if (req->hdr_bytes > GW_MAX_HEADER_BYTES) {
		req->fail = 431;
		return 0;
	}
	if (nlen > 0 && n[0] == ':') {
		/* nghttp2 has already checked the pseudo-headers */
		if (nlen == 7 && memcmp(n, ":method", 7) == 0) {
			req->method = seo_arena_strndup(req->arena, v, vlen);
			rv = req->method ? 0 : SEO_ENOMEM;
			req->head = vlen == 4 && memcmp(v, "HEAD", 4) == 0;
		} else if (nlen == 5 && memcmp(n, ":path", 5) == 0) {
			rv = gw__req_set_target(req, v, vlen);
		} else if (nlen == 10 && memcmp(n, ":authority", 10) == 0) {
			rv = gw__req_add_header(req, "host", 4, v, vlen);
		}
	} else {
		rv = gw__req_add_header(req, n, nlen, v, vlen);
	}
	if (rv < 0)
		req->fail = rv == SEO_ENOMEM ? 500 : rv == SEO_ETOOBIG ? 431 :
			    rv == SEO_EDENIED ? 503 : 400;
	return 0;
}

static int on_data_chunk_recv(nghttp2_session *s, uint8_t flags,
			      int32_t stream_id, const uint8_t *data,
			      size_t len, void *ud)
{
	gw_http_req *req = nghttp2_session_get_stream_user_data(s, stream_id);
	int rv;

	(void)flags;
	(void)ud;
	if (req == NULL || req->responded)
		return 0;
	rv = gw__req_body_append(req, (const char *)data, len);
	if (rv < 0)
		h2_reject(req, rv == SEO_ETOOBIG ? 413 :
			       rv == SEO_EDENIED ? 503 : 500);
	return 0;
}

static int on_frame_recv(nghttp2_session *s, const nghttp2_frame *f,
			 void *ud)
{
	struct gw__conn *c = ud;
	gw_http_req *req;
	const char *cl;

	if (f->hd.type != NGHTTP2_HEADERS && f->hd.type != NGHTTP2_DATA)
		return 0;
	req = nghttp2_session_get_stream_user_data(s, f->hd.stream_id);
	if (req == NULL)
		return 0;
	if (f->hd.flags & NGHTTP2_FLAG_END_STREAM) {
		req->complete = 1;
		req->rst_after = 0;
		evtimer_del(req->deadline);
	}
	if (req->responded || req->dispatched)
		return 0;
	if (f->hd.type == NGHTTP2_HEADERS &&
	    f->headers.cat == NGHTTP2_HCAT_REQUEST) {
		if (req->fail != 0) {
			h2_reject(req, req->fail);
			return 0;
		}
		cl = gw_http_header_get(req, "content-length");
		if (cl != NULL) {
			unsigned long long n = strtoull(cl, NULL, 10);

			if (n > c->srv->body_limit) {
				h2_reject(req, 413);
				return 0;
			}
			int rv = gw__req_body_reserve(req, (size_t)n);

			if (rv < 0) {
				h2_reject(req, rv == SEO_EDENIED ? 503 : 500);
				return 0;
			}
		}
	}
	if (req->complete)
		gw__dispatch(req);
	return 0;
}

static int on_frame_send(nghttp2_session *s, const nghttp2_frame *f,
			 void *ud)
{
	gw_http_req *req;

	(void)ud;
	if ((f->hd.type != NGHTTP2_HEADERS && f->hd.type != NGHTTP2_DATA) ||
	    !(f->hd.flags & NGHTTP2_FLAG_END_STREAM))
		return 0;
	req = nghttp2_session_get_stream_user_data(s, f->hd.stream_id);
	if (req != NULL && req->rst_after) {
		/* Answered before the request ended: stop its upload. */
		req->rst_after = 0;
		nghttp2_submit_rst_stream(s, NGHTTP2_FLAG_NONE,
					  f->hd.stream_id, NGHTTP2_NO_ERROR);
	}
	return 0;
}

static void detach(struct gw__conn *c, gw_http_req *req)
{
	struct gw__h2 *h2 = &c->u.h2;

	if (req->sprev != NULL)
		req->sprev->snext = req->snext;
	else
		h2->streams = req->snext;
	if (req->snext != NULL)
		req->snext->sprev = req->sprev;
	gw__req_detach(req);
	h2->nstreams--;
	gw__req_unref(req);
}

static int on_stream_close(nghttp2_session *s, int32_t stream_id,
			   uint32_t error_code, void *ud)
{
	struct gw__conn *c = ud;
	struct gw__h2 *h2 = &c->u.h2;
	gw_http_req *req = nghttp2_session_get_stream_user_data(s, stream_id);

	(void)error_code;
	if (req == NULL)
		return 0;
	detach(c, req);
	if (h2->nstreams == 0)
		evtimer_add(h2->idle, &c->srv->idle);
	return 0;
}

int gw__h2_callbacks_new(nghttp2_session_callbacks **out)
{
	nghttp2_session_callbacks *cbs;

	if (nghttp2_session_callbacks_new(&cbs) != 0)
		return SEO_ENOMEM;
	nghttp2_session_callbacks_set_on_begin_headers_callback(
		cbs, on_begin_headers);
	nghttp2_session_callbacks_set_on_header_callback(cbs, on_header);
	nghttp2_session_callbacks_set_on_data_chunk_recv_callback(
		cbs, on_data_chunk_recv);
	nghttp2_session_callbacks_set_on_frame_recv_callback(cbs,
							     on_frame_recv);
	nghttp2_session_callbacks_set_on_frame_send_callback(cbs,
							     on_frame_send);
	nghttp2_session_callbacks_set_on_stream_close_callback(
		cbs, on_stream_close);
	*out = cbs;
	return 0;
}

/* No stream for the idle time: say GOAWAY; the pump closes after it. */
static void h2_idle(evutil_socket_t fd, short what, void *arg)
{
	struct gw__conn *c = arg;

	(void)fd;
	(void)what;
	seo_h2io_shutdown(c->u.h2.io);
}

static void h2_on_close(seo_h2io *io, void *ud)
{
	(void)io;
	gw__conn_free(ud);
}

void gw__h2_start(struct gw__conn *c)
{
	struct gw__h2 *h2 = &c->u.h2;
	nghttp2_settings_entry iv[] = {
		{NGHTTP2_SETTINGS_MAX_CONCURRENT_STREAMS,
		 (uint32_t)c->srv->lim[GW_LIM_H2_STREAMS]},
	};
	struct bufferevent *bev = c->bev;

	c->proto = GW_PROTO_H2;
	/* Each stream has its own deadline from here. */
	evtimer_del(c->deadline);
	memset(h2, 0, sizeof(*h2));
	h2->idle = evtimer_new(c->srv->base, h2_idle, c);
	if (h2->idle == NULL ||
	    nghttp2_session_server_new(&h2->session, c->srv->h2_cbs, c) != 0 ||
	    nghttp2_submit_settings(h2->session, NGHTTP2_FLAG_NONE, iv,
				    sizeof(iv) / sizeof(iv[0])) != 0)
		goto fail;
	/* Streams waiting for a handler are not idleness; h2->idle counts
	 * from the last stream instead. */
	bufferevent_set_timeouts(bev, NULL, NULL);
	c->bev = NULL;
	evtimer_add(h2->idle, &c->srv->idle);
	if (seo_h2io_new(bev, h2->session, c->tls ? 0 : SEO_H2IO_CLEARTEXT,
			 h2_on_close, c, &h2->io) < 0) {
		c->bev = bev;
		goto fail;
	}
	seo_h2io_flush(h2->io);
	return;
fail:
	log_warn("http2 connection from %s: out of memory", c->peer);
	gw__conn_free(c);
}

static ssize_t body_read(nghttp2_session *s, int32_t stream_id, uint8_t *buf,
			 size_t length, uint32_t *flags,
			 nghttp2_data_source *src, void *ud)
{
	gw_http_req *req = src->ptr;
	size_t n = req->resp_len - req->resp_off;

	(void)s;
	(void)stream_id;
	(void)ud;
	if (n > length)
		n = length;
	memcpy(buf, req->resp_body + req->resp_off, n);
	req->resp_off += n;
	if (req->resp_off == req->resp_len)
		*flags |= NGHTTP2_DATA_FLAG_EOF;
	return (ssize_t)n;
}

static nghttp2_nv make_nv(const char *name, const char *value)
{
	nghttp2_nv nv = {(uint8_t *)name, (uint8_t *)value, strlen(name),
			 strlen(value), NGHTTP2_NV_FLAG_NONE};

	return nv;
}

void gw__h2_respond(gw_http_req *req, int status, const gw_http_header *hdrs,
		    size_t n, const char *body, size_t len)
{
	struct gw__conn *c = req->conn;
	struct gw__h2 *h2 = &c->u.h2;
	nghttp2_data_provider prd;
	nghttp2_nv *nv;
	size_t nnv = 0;
	char st[SEO_INT_TEXT_MAX + 1];
	char clen[SEO_INT_TEXT_MAX + 1];
	int bodyless = status == 204 || status == 304;
	int rv = SEO_ENOMEM;

	nv = seo_arena_alloc(req->arena, (n + 3) * sizeof(*nv));
	if (nv == NULL)
		goto out;
	/* Every answer's two numbers, without printf (statuses are 100-599). */
	st[seo_fmt_int(st, status)] = '\0';
	clen[seo_fmt_int(clen, (long long)len)] = '\0';
	nv[nnv++] = make_nv(":status", st);
	nv[nnv++] = make_nv("date", gw__date(c->srv));
	if (!bodyless)
		nv[nnv++] = make_nv("content-length", clen);
	for (size_t i = 0; i < n; i++) {
		char *lname;

		if (gw__reserved_header(hdrs[i].name))
			continue;
		lname = seo_arena_strdup(req->arena, hdrs[i].name);
		if (lname == NULL)
			goto out;
		for (char *p = lname; *p != '\0'; p++)
			*p = (char)tolower((unsigned char)*p);
		nv[nnv++] = make_nv(lname, hdrs[i].value);
	}
	if (!bodyless && !req->head && len > 0) {
		char *copy = seo_arena_alloc(req->arena, len);

		if (copy == NULL)
			goto out;
		memcpy(copy, body, len);
		req->resp_body = copy;
		req->resp_len = len;
		prd.source.ptr = req;
		prd.read_callback = body_read;
	}
	req->rst_after = !req->complete;
	gw__deadline_arm(c->srv, req->deadline);
	rv = nghttp2_submit_response(h2->session, req->stream_id, nv, nnv,
				     req->resp_body ? &prd : NULL);
	if (rv != 0)
		log_warn("http2 response on stream %d: %s", req->stream_id,
			 nghttp2_strerror(rv));
out:
	if (rv != 0)
		nghttp2_submit_rst_stream(h2->session, NGHTTP2_FLAG_NONE,
					  req->stream_id,
					  NGHTTP2_INTERNAL_ERROR);
	seo_h2io_flush(h2->io);
}

void gw__h2_shutdown(struct gw__conn *c)
{
	seo_h2io_shutdown(c->u.h2.io);
}

void gw__h2_release(struct gw__conn *c)
{
	struct gw__h2 *h2 = &c->u.h2;

	seo_h2io_free(h2->io);
	h2->io = NULL;
	if (h2->session != NULL)
		nghttp2_session_del(h2->session);
	h2->session = NULL;
	while (h2->streams != NULL)
		detach(c, h2->streams);
	if (h2->idle != NULL)
		event_free(h2->idle);
	h2->idle = NULL;
}

/*
 * rpc_client.c: the asynchronous gRPC client (see seo/rpc.h).
 *
 * Connections: new calls go to `active`, opened lazily. A connection that
 * received GOAWAY (or ran out of stream ids) is `draining`: its streams
 * finish there while new calls open a new connection; streams the server
 * refused (id above GOAWAY's last id, or RST_STREAM(REFUSED_STREAM)) were
 * never processed and are sent once more on the new connection. When a
 * connection fails before the server's first SETTINGS arrived, calls fail
 * with UNAVAILABLE and new calls fail at once for a back-off period (100 ms
 * doubling to 1 s), after which the next call tries to connect again.
 *
 * Done callbacks: a finished call goes on the `done` list and an event
 * delivers it from the loop, so that no callback ever runs inside
 * rpc_client_call() or inside nghttp2. A call is freed when its callback
 * has returned and its stream is closed, whichever comes last.
 *
 * Name resolution is a blocking getaddrinfo() per connection attempt (IPv4
 * preferred), which costs nothing for numeric addresses and once per
 * connection otherwise.
 */
#include "rpc_internal.h"

#include "seo/config.h"
#include "seo/errors.h"
#include "seo/h2io.h"
#include "seo/log.h"
#include "seo/pb.h"
#include "seo/util.h"

#include <ctype.h>
#include <netdb.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <sys/socket.h>

#include <event2/bufferevent.h>
#include <event2/event.h>
#include <nghttp2/nghttp2.h>

#define CLI_BACKOFF_MIN_MS 100
#define CLI_BACKOFF_MAX_MS 1000
#define CLI_CONNECT_TIMEOUT_MS 3000
#define CLI_USER_AGENT "seo-rpc/1"

struct cli_conn;

struct cli_call {
	rpc_client *c;
	struct cli_conn *conn; /* while a stream is attached */
	int32_t stream_id;
	nghttp2_nv *nva; /* one block: the array, then its strings */
	size_t nvlen;
	uint8_t *req; /* prefix + packed request */
	size_t req_len;
	size_t req_off;
	const ProtobufCMessageDescriptor *resp_desc;
	ProtobufCAllocator *alloc;
	rpc_done_fn done;
	void *ud;
	int timeout_ms;
	struct event *timer;

	unsigned retried : 1;
	unsigned finished : 1;  /* result decided, queued on `done` */
	unsigned delivered : 1; /* done callback returned */
	unsigned in_retry : 1;  /* queued on `retry` */

	/* What the server sent. */
	int got_headers;
	int http_status;
	int grpc_status; /* -1 until seen */
	char *grpc_message;
	char *code;
	char *extra;
	rpc_meta meta[RPC_RESP_META_MAX]; /* name and value in one malloc() */
	size_t n_meta;
	int lost; /* a trailer could not be kept: out of memory */
	rpc_reader rd; /* the response message, malloc()ed */

	rpc_result res;
	char *res_message;

	struct cli_call *conn_prev, *conn_next;
	struct cli_call *retry_next, *done_next;
};

struct cli_conn {
	rpc_client *c;
	nghttp2_session *session;
	seo_h2io *io;
	struct cli_call *calls;
	struct event *connect_timer;
	int established; /* the server's SETTINGS arrived */
	int draining;    /* no new streams here */
	struct cli_conn *prev, *next;
};

struct rpc_client {
	struct event_base *base;
	char *addr;
	char *token; /* SEO_INTERNAL_TOKEN, sent on every call; NULL: none */
	char host[256];
	char port[8];
	nghttp2_session_callbacks *callbacks;
	struct cli_conn *conns;
	struct cli_conn *active;
	int64_t retry_at; /* no connection attempt before this */
	int backoff_ms;
	char last_error[320];
	struct event *dispatch_ev;
	struct cli_call *retry_head, *retry_tail;
	struct cli_call *done_head, *done_tail;
	struct cli_call *dispatching; /* its done callback is running */
	int closing;
	int *freed; /* set when freed from a done callback */
};

static void call_start(struct cli_call *call);

/* ---- call lifetime ------------------------------------------------------ */

static void meta_clear(struct cli_call *call)
{
	for (size_t i = 0; i < call->n_meta; i++)
		free((char *)call->meta[i].name);
	call->n_meta = 0;
}

static void call_free(struct cli_call *call)
{
	if (call->timer != NULL)
		event_free(call->timer);
	free(call->nva);
	free(call->req);
	free(call->grpc_message);
	free(call->code);
	free(call->extra);
	meta_clear(call);
	free(call->rd.msg);
	free(call->res_message);
	free(call);
}

static void call_maybe_free(struct cli_call *call)
{
	if (call->delivered && call->conn == NULL && !call->in_retry &&
	    call != call->c->dispatching)
		call_free(call);
}

static void call_detach(struct cli_call *call)
{
	struct cli_conn *conn = call->conn;

	if (call->conn_prev != NULL)
		call->conn_prev->conn_next = call->conn_next;
	else
		conn->calls = call->conn_next;
	if (call->conn_next != NULL)
		call->conn_next->conn_prev = call->conn_prev;
	call->conn_prev = call->conn_next = NULL;
	nghttp2_session_set_stream_user_data(conn->session, call->stream_id,
					     NULL);
	call->conn = NULL;
	call->stream_id = 0;
}

/*
 * Decides the result and queues the done callback. `code` and `extra` come
 * from the server's trailers; `response` is owned by the caller from now.
 */
static void call_finish_full(struct cli_call *call, int status,
			     const char *message, const char *code,
			     const char *extra, ProtobufCMessage *response)
{
	rpc_client *c = call->c;

	if (call->finished)
		return;
	call->finished = 1;
	if (call->timer != NULL)
		event_del(call->timer);
	/* an answer without its message would be another answer */
	if (message[0] != '\0' &&
	    (call->res_message = strdup(message)) == NULL) {
		status = SEO_GRPC_INTERNAL;
		message = "out of memory";
		code = extra = NULL;
	}
	call->res.grpc_status = status;
	call->res.message = call->res_message != NULL ? call->res_message
						      : message;
	call->res.code = code;
	call->res.extra_json = extra;
	call->res.response = response;
	call->res.meta = call->meta;
	call->res.n_meta = call->n_meta;
	call->done_next = NULL;
	if (c->done_tail != NULL)
		c->done_tail->done_next = call;
	else
		c->done_head = call;
	c->done_tail = call;
	event_active(c->dispatch_ev, EV_TIMEOUT, 1);
}

static void call_finish(struct cli_call *call, int status, const char *fmt,
			...) __attribute__((format(printf, 3, 4)));

static void call_finish(struct cli_call *call, int status, const char *fmt,
			...)
{
	char msg[512];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	call_finish_full(call, status, msg, NULL, NULL, NULL);
}

/* Ends our side of a stream we no longer care about. */
static void call_abort_stream(struct cli_call *call)
{
	if (call->conn == NULL)
		return;
	nghttp2_submit_rst_stream(call->conn->session, NGHTTP2_FLAG_NONE,
				  call->stream_id, NGHTTP2_CANCEL);
	seo_h2io_flush(call->conn->io);
}

static int http_to_grpc(int http)
{
	switch (http) {
	case 400: return SEO_GRPC_INTERNAL;
	case 401: return SEO_GRPC_UNAUTHENTICATED;
	case 403: return SEO_GRPC_PERMISSION_DENIED;
	case 404: return SEO_GRPC_UNIMPLEMENTED;
	case 429:
	case 502:
	case 503:
	case 504: return SEO_GRPC_UNAVAILABLE;
	default: return SEO_GRPC_UNKNOWN;
	}
}

/* The server ended the stream, or it closed: turn what came into a result.
 * RST_STREAM codes map as grpc's PROTOCOL-HTTP2 says. */
static void call_complete(struct cli_call *call, uint32_t error_code)
{
	ProtobufCMessage *resp;

	if (call->lost) {
		call_finish(call, SEO_GRPC_INTERNAL,
			    "out of memory reading the answer of %s",
			    call->c->addr);
		return;
	}
	if (call->grpc_status > SEO_GRPC_OK) {
		call_finish_full(call, call->grpc_status,
				 call->grpc_message ? call->grpc_message : "",
				 call->code, call->extra, NULL);
		return;
	}
	if (call->grpc_status == SEO_GRPC_OK) {
		if (call->rd.prefix_got != 0) {
			call_finish(call, SEO_GRPC_INTERNAL,
				    "%s ended the response inside a message",
				    call->c->addr);
			return;
		}
		if (call->rd.n_msgs == 0) {
			call_finish(call, SEO_GRPC_UNIMPLEMENTED,
				    "%s sent no response message",
				    call->c->addr);
			return;
		}
		resp = protobuf_c_message_unpack(call->resp_desc, call->alloc,
						 call->rd.msg_len, call->rd.msg);
		if (resp == NULL) {
			call_finish(call, SEO_GRPC_INTERNAL,
				    "cannot parse the response as %s",
				    call->resp_desc->name);
			return;
		}
		call_finish_full(call, SEO_GRPC_OK, "", NULL, NULL, resp);
		return;
	}
	if (call->got_headers && call->http_status != 200) {
		call_finish(call, http_to_grpc(call->http_status),
			    "%s answered HTTP status %d", call->c->addr,
			    call->http_status);
		return;
	}
	switch (error_code) {
	case NGHTTP2_REFUSED_STREAM:
		call_finish(call, SEO_GRPC_UNAVAILABLE,
			    "%s refused the stream", call->c->addr);
		break;
	case NGHTTP2_CANCEL:
		call_finish(call, SEO_GRPC_CANCELLED,
			    "%s cancelled the stream", call->c->addr);
		break;
	case NGHTTP2_ENHANCE_YOUR_CALM:
		call_finish(call, SEO_GRPC_RESOURCE_EXHAUSTED,
			    "%s reset the stream: %s", call->c->addr,
			    nghttp2_http2_strerror(error_code));
		break;
	default:
		call_finish(call, SEO_GRPC_INTERNAL,
			    "%s ended the stream without grpc-status (%s)",
			    call->c->addr, nghttp2_http2_strerror(error_code));
		break;
	}
}

static void call_reset_response(struct cli_call *call)
{
	free(call->grpc_message);
	free(call->code);
	free(call->extra);
	meta_clear(call);
	free(call->rd.msg);
	call->grpc_message = call->code = call->extra = NULL;
	call->got_headers = 0;
	call->http_status = 0;
	call->grpc_status = -1;
	memset(&call->rd, 0, sizeof(call->rd));
}

/* ---- dispatch (from the loop) ------------------------------------------- */

static struct cli_call *done_pop(rpc_client *c)
{
	struct cli_call *call = c->done_head;

	if (call != NULL) {
		c->done_head = call->done_next;
		if (c->done_head == NULL)
			c->done_tail = NULL;
	}
	return call;
}

static struct cli_call *retry_pop(rpc_client *c)
{
	struct cli_call *call = c->retry_head;

	if (call != NULL) {
		c->retry_head = call->retry_next;
		if (c->retry_head == NULL)
			c->retry_tail = NULL;
		call->in_retry = 0;
	}
	return call;
}

static void dispatch_cb(evutil_socket_t fd, short what, void *arg)
{
	rpc_client *c = arg;
	struct cli_call *call;
	int freed = 0;

	(void)fd;
	(void)what;
	while ((call = retry_pop(c)) != NULL) {
		if (call->finished)
			call_maybe_free(call);
		else
			call_start(call);
	}
	c->freed = &freed;
	while ((call = done_pop(c)) != NULL) {
		c->dispatching = call;
		call->done(&call->res, call->ud);
		if (freed) {
			/* rpc_client_free() ran in the callback and left this
			 * call to us. */
			call_free(call);
			return;
		}
		c->dispatching = NULL;
		call->delivered = 1;
		call_maybe_free(call);
	}
	c->freed = NULL;
}

/* ---- nghttp2 callbacks -------------------------------------------------- */

static struct cli_call *stream_call(nghttp2_session *session, int32_t id)
{
	struct cli_call *call = nghttp2_session_get_stream_user_data(session,
								     id);

	return call != NULL && !call->finished ? call : NULL;
}

static char *decoded(const uint8_t *v, size_t n)
{
	char *s = malloc(n + 1);

	if (s != NULL)
		rpc_pct_decode((const char *)v, n, s);
	return s;
}

/* Keeps a trailer's value `s`; NULL (out of memory) marks the answer
 * lost rather than leave it without the trailer. */
static void set_str(struct cli_call *call, char **slot, char *s)
{
	free(*slot);
	*slot = s;
	if (s == NULL)
		call->lost = 1;
}

/* Keeps a response header that is not the protocol's own, for
 * rpc_result.meta; past RPC_RESP_META_MAX they are dropped. Out of memory,
 * the answer is lost, as for a trailer: a status or header the service
 * chose must not silently go missing. */
static void meta_keep(struct cli_call *call, const uint8_t *name,
		      size_t namelen, const uint8_t *value, size_t valuelen)
{
	const char *n = (const char *)name;
	char *both;

	if (namelen == 0 || n[0] == ':' || strcmp(n, "content-type") == 0 ||
	    strncmp(n, "grpc-", 5) == 0 || strncmp(n, "seo-error-", 10) == 0 ||
	    call->n_meta == RPC_RESP_META_MAX)
		return;
	both = malloc(namelen + valuelen + 2);
	if (both == NULL) {
		call->lost = 1;
		return;
	}
	memcpy(both, name, namelen + 1);
	memcpy(both + namelen + 1, value, valuelen);
	both[namelen + 1 + valuelen] = '\0';
	call->meta[call->n_meta].name = both;
	call->meta[call->n_meta++].value = both + namelen + 1;
}

static int on_header(nghttp2_session *session, const nghttp2_frame *frame,
		     const uint8_t *name, size_t namelen, const uint8_t *value,
		     size_t valuelen, uint8_t flags, void *user_data)
{
	struct cli_call *call;
	const char *n = (const char *)name;

	(void)flags;
	(void)user_data;
	if (frame->hd.type != NGHTTP2_HEADERS)
		return 0;
	call = stream_call(session, frame->hd.stream_id);
	if (call == NULL)
		return 0;
	if (frame->headers.cat == NGHTTP2_HCAT_RESPONSE)
		call->got_headers = 1;
	if (strcmp(n, ":status") == 0) {
		call->http_status = atoi((const char *)value);
	} else if (strcmp(n, "grpc-status") == 0) {
		char *end;
		long st = strtol((const char *)value, &end, 10);

		call->grpc_status = end != (const char *)value && *end == '\0' &&
						    st >= 0 && st <= 16
					    ? (int)st
					    : SEO_GRPC_UNKNOWN;
	} else if (strcmp(n, "grpc-message") == 0) {
		set_str(call, &call->grpc_message, decoded(value, valuelen));
	} else if (strcmp(n, "seo-error-code") == 0) {
		set_str(call, &call->code,
			strndup((const char *)value, valuelen));
	} else if (strcmp(n, "seo-error-extra") == 0) {
		set_str(call, &call->extra, decoded(value, valuelen));
	} else {
		meta_keep(call, name, namelen, value, valuelen);
	}
	return 0;
}

static void *msg_alloc(void *ud, size_t n)
{
	(void)ud;
	return malloc(n ? n : 1);
}

static void on_response_data(struct cli_call *call, const uint8_t *data,
			     size_t len)
{
	switch (rpc_reader_feed(&call->rd, data, len, msg_alloc, NULL)) {
	case RPC_READ_OK:
		return;
	case RPC_READ_SECOND:
		call_finish(call, SEO_GRPC_UNIMPLEMENTED,
			    "%s sent more than one response message",
			    call->c->addr);
		break;
	case RPC_READ_COMPRESSED:
		call_finish(call, SEO_GRPC_INTERNAL,
			    "%s sent a compressed response, but compression "
			    "is not supported",
			    call->c->addr);
		break;
	case RPC_READ_TOO_LARGE:
		call_finish(call, SEO_GRPC_RESOURCE_EXHAUSTED,
			    "response message of %zu bytes exceeds the limit "
			    "of %d bytes",
			    call->rd.msg_len, RPC_MAX_MESSAGE);
		break;
	case RPC_READ_NOMEM:
		call_finish(call, SEO_GRPC_RESOURCE_EXHAUSTED, "out of memory");
		break;
	}
	call_abort_stream(call);
}

static int on_data_chunk(nghttp2_session *session, uint8_t flags,
			 int32_t stream_id, const uint8_t *data, size_t len,
			 void *user_data)
{
	struct cli_call *call = stream_call(session, stream_id);

	(void)flags;
	(void)user_data;
	/* A non-200 body is not gRPC framing: the status says it all. */
	if (call != NULL && call->http_status == 200)
		on_response_data(call, data, len);
	return 0;
}

static int on_frame_recv(nghttp2_session *session, const nghttp2_frame *frame,
			 void *user_data)
{
	struct cli_conn *conn = user_data;
	rpc_client *c = conn->c;
	struct cli_call *call;

	switch (frame->hd.type) {
	case NGHTTP2_SETTINGS:
		if (!(frame->hd.flags & NGHTTP2_FLAG_ACK) && !conn->established) {
			conn->established = 1;
			c->backoff_ms = 0;
			c->retry_at = 0;
			event_del(conn->connect_timer);
		}
		break;
	case NGHTTP2_GOAWAY:
		log_debug("%s sent GOAWAY (last stream %d)", c->addr,
			  frame->goaway.last_stream_id);
		conn->draining = 1;
		if (c->active == conn)
			c->active = NULL;
		break;
	case NGHTTP2_HEADERS:
	case NGHTTP2_DATA:
		call = stream_call(session, frame->hd.stream_id);
		if (call != NULL && (frame->hd.flags & NGHTTP2_FLAG_END_STREAM))
			call_complete(call, NGHTTP2_NO_ERROR);
		break;
	}
	return 0;
}

static int on_stream_close(nghttp2_session *session, int32_t stream_id,
			   uint32_t error_code, void *user_data)
{
	struct cli_call *call;
	rpc_client *c = ((struct cli_conn *)user_data)->c;

	call = nghttp2_session_get_stream_user_data(session, stream_id);
	if (call == NULL)
		return 0;
	call_detach(call);
	if (!call->finished) {
		if (error_code == NGHTTP2_REFUSED_STREAM && !call->got_headers &&
		    !call->retried && !c->closing) {
			/* Never processed: safe to send again elsewhere. */
			log_debug("%s refused stream %d, sending it again",
				  c->addr, stream_id);
			call->retried = 1;
			call_reset_response(call);
			call->in_retry = 1;
			call->retry_next = NULL;
			if (c->retry_tail != NULL)
				c->retry_tail->retry_next = call;
			else
				c->retry_head = call;
			c->retry_tail = call;
			event_active(c->dispatch_ev, EV_TIMEOUT, 1);
			return 0;
		}
		call_complete(call, error_code);
	}
	call_maybe_free(call);
	return 0;
}

static ssize_t req_read(nghttp2_session *session, int32_t stream_id,
			uint8_t *buf, size_t length, uint32_t *data_flags,
			nghttp2_data_source *source, void *user_data)
{
	struct cli_call *call = source->ptr;
	size_t n = rpc_copy_out(buf, length, call->req, call->req_len,
				&call->req_off);

	(void)session;
	(void)stream_id;
	(void)user_data;
	if (call->req_off == call->req_len)
		*data_flags |= NGHTTP2_DATA_FLAG_EOF;
	return (ssize_t)n;
}

/* ---- connections -------------------------------------------------------- */

/* Detaches every call (failing those still running with `why`), then frees
 * the connection. */
static void conn_free(struct cli_conn *conn, const char *why)
{
	rpc_client *c = conn->c;

	if (c->active == conn)
		c->active = NULL;
	while (conn->calls != NULL) {
		struct cli_call *call = conn->calls;

		call_detach(call);
		call_finish(call, SEO_GRPC_UNAVAILABLE, "%s", why);
		call_maybe_free(call);
	}
	seo_h2io_free(conn->io);
	nghttp2_session_del(conn->session);
	if (conn->connect_timer != NULL)
		event_free(conn->connect_timer);
	if (conn->prev != NULL)
		conn->prev->next = conn->next;
	else
		c->conns = conn->next;
	if (conn->next != NULL)
		conn->next->prev = conn->prev;
	free(conn);
}

static void conn_failed(struct cli_conn *conn)
{
	rpc_client *c = conn->c;
	char why[320];

	if (conn->established) {
		snprintf(why, sizeof(why), "connection to %s lost", c->addr);
	} else {
		c->backoff_ms = c->backoff_ms == 0 ? CLI_BACKOFF_MIN_MS
						   : c->backoff_ms * 2;
		if (c->backoff_ms > CLI_BACKOFF_MAX_MS)
			c->backoff_ms = CLI_BACKOFF_MAX_MS;
		c->retry_at = seo_mono_ms() + c->backoff_ms;
		snprintf(c->last_error, sizeof(c->last_error),
			 "cannot connect to %s", c->addr);
		snprintf(why, sizeof(why), "%s", c->last_error);
		log_debug("%s, next attempt in %d ms", why, c->backoff_ms);
	}
	conn_free(conn, why);
}

static void conn_on_close(seo_h2io *io, void *ud)
{
	(void)io;
	conn_failed(ud);
}

static void connect_timeout_cb(evutil_socket_t fd, short what, void *arg)
{
	(void)fd;
	(void)what;
	conn_failed(arg);
}

/* Resolves the address, preferring IPv4 (what services listen on). */
static int resolve(rpc_client *c, struct sockaddr_storage *ss,
		   socklen_t *sslen)
{
	struct addrinfo hints, *ai, *pick;
	int gai;

	memset(&hints, 0, sizeof(hints));
	hints.ai_family = AF_UNSPEC;
	hints.ai_socktype = SOCK_STREAM;
	hints.ai_flags = AI_NUMERICSERV;
	gai = getaddrinfo(c->host, c->port, &hints, &ai);
	if (gai != 0) {
		snprintf(c->last_error, sizeof(c->last_error),
			 "cannot resolve %s: %s", c->addr, gai_strerror(gai));
		return SEO_EIO;
	}
	pick = ai;
	for (struct addrinfo *p = ai; p != NULL; p = p->ai_next)
		if (p->ai_family == AF_INET) {
			pick = p;
			break;
		}
	memcpy(ss, pick->ai_addr, pick->ai_addrlen);
	*sslen = pick->ai_addrlen;
	freeaddrinfo(ai);
	return 0;
}

static struct cli_conn *conn_open(rpc_client *c)
{
	struct cli_conn *conn = NULL;
	struct bufferevent *bev = NULL;
	struct sockaddr_storage ss;
	socklen_t sslen;
	struct timeval tv = {CLI_CONNECT_TIMEOUT_MS / 1000,
			     (CLI_CONNECT_TIMEOUT_MS % 1000) * 1000};

	if (resolve(c, &ss, &sslen) != 0)
		goto fail;
	snprintf(c->last_error, sizeof(c->last_error), "cannot connect to %s",
		 c->addr);
	conn = calloc(1, sizeof(*conn));
	if (conn == NULL)
		goto fail;
	conn->c = c;
	conn->connect_timer = evtimer_new(c->base, connect_timeout_cb, conn);
	bev = bufferevent_socket_new(c->base, -1, BEV_OPT_CLOSE_ON_FREE);
	if (conn->connect_timer == NULL || bev == NULL ||
	    bufferevent_socket_connect(bev, (struct sockaddr *)&ss,
				       (int)sslen) != 0 ||
	    nghttp2_session_client_new3(&conn->session, c->callbacks, conn,
					NULL, rpc__mem()) != 0 ||
	    rpc_session_start(conn->session, NGHTTP2_SETTINGS_ENABLE_PUSH, 0,
			      bev, conn_on_close, conn, &conn->io) != 0)
		goto fail;
	evtimer_add(conn->connect_timer, &tv);
	conn->next = c->conns;
	if (c->conns != NULL)
		c->conns->prev = conn;
	c->conns = conn;
	return conn;
fail:
	if (conn != NULL) {
		nghttp2_session_del(conn->session);
		if (conn->connect_timer != NULL)
			event_free(conn->connect_timer);
		free(conn);
	}
	if (bev != NULL)
		bufferevent_free(bev);
	c->backoff_ms = CLI_BACKOFF_MIN_MS;
	c->retry_at = seo_mono_ms() + c->backoff_ms;
	return NULL;
}

/* The connection for a new stream, or NULL (reason in last_error). */
static struct cli_conn *client_conn(rpc_client *c)
{
	if (c->active != NULL)
		return c->active;
	if (seo_mono_ms() < c->retry_at)
		return NULL;
	c->active = conn_open(c);
	return c->active;
}

/* ---- calls -------------------------------------------------------------- */

static void call_start(struct cli_call *call)
{
	rpc_client *c = call->c;
	struct cli_conn *conn;
	nghttp2_data_provider prd;
	int32_t id;

	if (c->closing) {
		call_finish(call, SEO_GRPC_UNAVAILABLE, "client closed");
		return;
	}
	conn = client_conn(c);
	if (conn == NULL) {
		call_finish(call, SEO_GRPC_UNAVAILABLE, "%s", c->last_error);
		return;
	}
	prd.source.ptr = call;
	prd.read_callback = req_read;
	call->req_off = 0;
	id = nghttp2_submit_request(conn->session, NULL, call->nva, call->nvlen,
				    &prd, call);
	if (id == NGHTTP2_ERR_STREAM_ID_NOT_AVAILABLE && !call->retried) {
		/* This connection has used up its stream ids. */
		conn->draining = 1;
		c->active = NULL;
		call->retried = 1;
		call_start(call);
		return;
	}
	if (id < 0) {
		call_finish(call, SEO_GRPC_INTERNAL, "cannot start the call: %s",
			    nghttp2_strerror(id));
		return;
	}
	call->conn = conn;
	call->stream_id = id;
	call->conn_prev = NULL;
	call->conn_next = conn->calls;
	if (conn->calls != NULL)
		conn->calls->conn_prev = call;
	conn->calls = call;
	seo_h2io_flush(conn->io);
}

static void call_timeout_cb(evutil_socket_t fd, short what, void *arg)
{
	struct cli_call *call = arg;

	(void)fd;
	(void)what;
	call_finish(call, SEO_GRPC_DEADLINE_EXCEEDED,
		    "deadline of %d ms exceeded", call->timeout_ms);
	call_abort_stream(call);
}

/* A header nghttp2 sends without copying: both strings outlive the
 * stream. */
static nghttp2_nv nv_ref(const char *name, size_t nl, const char *value,
			 size_t vl)
{
	nghttp2_nv nv = {(uint8_t *)name, (uint8_t *)value, nl, vl,
			 NGHTTP2_NV_FLAG_NO_COPY_NAME |
				 NGHTTP2_NV_FLAG_NO_COPY_VALUE};
	return nv;
}

#define NV_LIT(name, value) \
	nv_ref(name, sizeof(name) - 1, value, sizeof(value) - 1)

/* Copies `s` (lowercased when asked) to *p and returns where it went. */
static char *put(char **p, const char *s, size_t n, int lower)
{
	char *d = *p;

	for (size_t i = 0; i < n; i++)
		d[i] = lower ? (char)tolower((unsigned char)s[i]) : s[i];
	d[n] = '\0';
	*p += n + 1;
	return d;
}

/*
 * Builds the request header block, kept for the life of the call: nghttp2
 * sends it without copying, and a refused call is sent again from it.
 */
static int call_build_headers(struct cli_call *call, const char *path,
			      int timeout_ms, const rpc_meta *meta,
			      size_t n_meta)
{
	rpc_client *c = call->c;
	size_t n = 7 + (timeout_ms > 0) + (c->token != NULL) + n_meta;
	size_t bytes = n * sizeof(nghttp2_nv) + strlen(path) + 1 + 16;
	size_t i = 0;
	char *p, tmo[16];

	for (size_t k = 0; k < n_meta; k++)
		bytes += strlen(meta[k].name) + strlen(meta[k].value) + 2;
	call->nva = malloc(bytes);
	if (call->nva == NULL)
		return SEO_ENOMEM;
	p = (char *)(call->nva + n);
	call->nva[i++] = NV_LIT(":method", "POST");
	call->nva[i++] = NV_LIT(":scheme", "http");
	call->nva[i++] = nv_ref(":path", 5, put(&p, path, strlen(path), 0),
				strlen(path));
	call->nva[i++] = nv_ref(":authority", 10, c->addr, strlen(c->addr));
	call->nva[i++] = NV_LIT("content-type", "application/grpc");
	call->nva[i++] = NV_LIT("te", "trailers");
	call->nva[i++] = NV_LIT("user-agent", CLI_USER_AGENT);
	if (c->token != NULL)
		call->nva[i++] = nv_ref(RPC_META_INTERNAL_TOKEN,
					sizeof(RPC_META_INTERNAL_TOKEN) - 1,
					c->token, strlen(c->token));
	if (timeout_ms > 0) {
		rpc_timeout_format(timeout_ms, tmo);
		call->nva[i++] = nv_ref("grpc-timeout", 12,
					put(&p, tmo, strlen(tmo), 0),
					strlen(tmo));
	}
	for (size_t k = 0; k < n_meta; k++) {
		size_t nl = strlen(meta[k].name), vl = strlen(meta[k].value);
		char *name = put(&p, meta[k].name, nl, 1);

		call->nva[i++] = nv_ref(name, nl, put(&p, meta[k].value, vl, 0),
					vl);
	}
	call->nvlen = i;
	return 0;
}

int rpc_client_call(rpc_client *c, const char *path, ProtobufCMessage *req,
		    const ProtobufCMessageDescriptor *resp_desc,
		    ProtobufCAllocator *alloc, int timeout_ms,
		    const rpc_meta *meta, size_t n_meta, rpc_done_fn done,
		    void *ud)
{
	struct cli_call *call = calloc(1, sizeof(*call));
	size_t size;

	if (call == NULL)
		return SEO_ENOMEM;
	call->c = c;
	call->resp_desc = resp_desc;
	call->alloc = alloc;
	call->done = done;
	call->ud = ud;
	call->timeout_ms = timeout_ms;
	call->grpc_status = -1;
	if (call_build_headers(call, path, timeout_ms, meta, n_meta) != 0)
		goto out;
	if (timeout_ms > 0) {
		struct timeval tv = {timeout_ms / 1000,
				     (timeout_ms % 1000) * 1000};

		call->timer = evtimer_new(c->base, call_timeout_cb, call);
		if (call->timer == NULL)
			goto out;
		evtimer_add(call->timer, &tv);
	}
	seo_pb_fill(req);
	size = protobuf_c_message_get_packed_size(req);
	if (size > RPC_MAX_MESSAGE) {
		/* The server would refuse it: do not upload it first. */
		call_finish(call, SEO_GRPC_RESOURCE_EXHAUSTED,
			    "request message of %zu bytes exceeds the limit of "
			    "%d bytes",
			    size, RPC_MAX_MESSAGE);
		return 0;
	}
	call->req = malloc(RPC_PREFIX_LEN + size);
	if (call->req == NULL)
		goto out;
	rpc_prefix_put(call->req, size);
	protobuf_c_message_pack(req, call->req + RPC_PREFIX_LEN);
	call->req_len = RPC_PREFIX_LEN + size;
	call_start(call);
	return 0;
out:
	call_free(call);
	return SEO_ENOMEM;
}

/* ---- client ------------------------------------------------------------- */

int rpc_client_new(struct event_base *base, const char *addr,
		   rpc_client **out)
{
	rpc_client *c;
	unsigned short port;
	nghttp2_session_callbacks *cb;

	c = calloc(1, sizeof(*c));
	if (c == NULL)
		return SEO_ENOMEM;
	if (seo_split_hostport(addr, c->host, sizeof(c->host), &port) != 0) {
		free(c);
		return SEO_EINVAL;
	}
	snprintf(c->port, sizeof(c->port), "%u", port);
	c->base = base;
	c->addr = strdup(addr);
	if (*seo_config(SEO_CFG_INTERNAL_TOKEN) != '\0')
		c->token = strdup(seo_config(SEO_CFG_INTERNAL_TOKEN));
	c->dispatch_ev = event_new(base, -1, 0, dispatch_cb, c);
	if (c->addr == NULL || c->dispatch_ev == NULL ||
	    (*seo_config(SEO_CFG_INTERNAL_TOKEN) != '\0' && c->token == NULL) ||
	    nghttp2_session_callbacks_new(&cb) != 0) {
		if (c->dispatch_ev != NULL)
			event_free(c->dispatch_ev);
		free(c->token);
		free(c->addr);
		free(c);
		return SEO_ENOMEM;
	}
	nghttp2_session_callbacks_set_on_header_callback(cb, on_header);
	nghttp2_session_callbacks_set_on_data_chunk_recv_callback(
		cb, on_data_chunk);
	nghttp2_session_callbacks_set_on_frame_recv_callback(cb, on_frame_recv);
	nghttp2_session_callbacks_set_on_stream_close_callback(
		cb, on_stream_close);
	c->callbacks = cb;
	*out = c;
	return 0;
}

void rpc_client_free(rpc_client *c)
{
	struct cli_call *call;

	if (c == NULL)
		return;
	c->closing = 1;
	while ((call = retry_pop(c)) != NULL)
		call_finish(call, SEO_GRPC_UNAVAILABLE, "client closed");
	for (struct cli_conn *conn = c->conns; conn != NULL; conn = conn->next)
		for (call = conn->calls; call != NULL; call = call->conn_next)
			call_finish(call, SEO_GRPC_UNAVAILABLE,
				    "client closed");
	/* Callbacks may start calls: they fail at once and land here too. */
	while ((call = done_pop(c)) != NULL) {
		call->done(&call->res, call->ud);
		call->delivered = 1;
		call_maybe_free(call);
	}
	while (c->conns != NULL)
		conn_free(c->conns, "client closed");
	event_free(c->dispatch_ev);
	nghttp2_session_callbacks_del(c->callbacks);
	free(c->token);
	free(c->addr);
	if (c->freed != NULL)
		*c->freed = 1;
	free(c);
}

/*
 * rpc_server.c: the gRPC server (see seo/rpc.h).
 *
 * One rpc_ctx per stream. It is created when the request HEADERS begin,
 * collects the metadata and the one request message on its arena, and runs
 * the handler when the request ends: inline on the loop thread when the
 * server has no workers or the method runs inline (the built-in health
 * check does), else on the worker pool, which hands finished calls
 * back through a mutex-protected list and an eventfd the loop reads. Not
 * event_active(): from a worker it takes the event_base's lock, which the
 * loop holds between callbacks, and a thread blocked on it costs two more
 * system calls and a wake-up per call.
 *
 * A call has up to two owners, counted in `refs` (touched on the loop
 * thread only): its open stream, and a worker job. A deadline or a reset
 * may end the stream while a worker still runs the handler; the reply is
 * then already sent (or the stream gone), the call is marked cancelled, and
 * the late result is dropped when the worker hands it back. While a worker
 * owns a call the loop never touches its arena.
 *
 * Health: grpc.health.v1.Health/Check answers the status set with
 * rpc_server_set_serving() for every service name, "" included: each
 * process serves one service, so there is nothing finer to report. A method
 * of the caller's table with the same path takes precedence. It is the one
 * path open without the internal token (seo/rpc.h), so that probes work.
 */
#include "rpc_internal.h"

#include "seo/config.h"
#include "seo/errors.h"
#include "seo/h2io.h"
#include "seo/log.h"
#include "seo/pb.h"
#include "seo/util.h"

#include "grpc/health/v1/health.pb-c.h"

#include <errno.h>
#include <netdb.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <sys/eventfd.h>
#include <sys/socket.h>
#include <unistd.h>

#include <event2/bufferevent.h>
#include <event2/event.h>
#include <event2/listener.h>
#include <nghttp2/nghttp2.h>

#define SRV_MAX_STREAMS 1000
#define SRV_BACKLOG 1024
/* Retry-After of a call refused because the queue is full, in seconds. */
#define RPC_BUSY_RETRY_S 2
#define RPC_BUSY_RETRY_TEXT "2"

struct meta_entry {
	const char *name;
	const char *value;
	struct meta_entry *next;
};

struct srv_conn;

struct rpc_ctx {
	rpc_server *srv;
	struct srv_conn *conn; /* NULL once the stream is gone */
	int32_t stream_id;
	int refs;
	seo_arena *arena;
	ProtobufCAllocator alloc;
	const rpc_method *method;

	/* Request headers, on the arena. */
	struct meta_entry *meta;
	size_t meta_bytes;
	const char *http_method;
	const char *path;
	const char *content_type;
	const char *encoding;
	const char *timeout;
	int64_t deadline;
	struct event *timer;

	rpc_reader rd; /* the request message, on the arena */
	ProtobufCMessage *req; /* unpacked early to choose the thread */

	unsigned req_ended : 1;  /* the client sent END_STREAM */
	unsigned replied : 1;    /* our final frame is submitted */
	unsigned plain_http : 1; /* answered 405/415, not gRPC */
	atomic_int cancelled;   /* read by handlers on workers */

	/* Outcome, written by whichever thread runs the handler. */
	int failed;
	int status;
	const char *code;
	const char *message;
	const char *extra;
	struct meta_entry *resp_meta; /* rpc_ctx_set_meta(), on the arena */
	size_t n_resp_meta;
	uint8_t *resp; /* prefix + packed response, on the arena */
	size_t resp_len;
	size_t resp_off;

	struct rpc_ctx *conn_prev, *conn_next;
	struct rpc_ctx *job_next;
};

struct srv_conn {
	rpc_server *srv;
	nghttp2_session *session;
	seo_h2io *io;
	struct rpc_ctx *calls; /* open streams */
	struct srv_conn *prev, *next;
};

struct rpc_server {
	struct event_base *base;
	const rpc_method *methods;
	size_t n_methods;
	struct inline_rule {
		unsigned char on;
		rpc_inline_fn when;
	} *inline_of; /* per method: run on the loop thread, and when */
	void *service;
	char *token; /* SEO_INTERNAL_TOKEN; NULL: calls need none */
	int serving;
	unsigned port;
	struct evconnlistener *listener;
	nghttp2_session_callbacks *callbacks;
	struct srv_conn *conns;
	size_t n_conns;

	/* Worker pool. */
	int n_workers;
	pthread_t *threads;
	pthread_mutex_t lock;
	pthread_cond_t cond;
	int stop;
	struct rpc_ctx *jobs_head, *jobs_tail; /* under lock */
	size_t n_queued;  /* under lock: calls waiting for a worker */
	size_t n_idle;    /* under lock: workers waiting for a call */
	size_t queue_max; /* calls past the idle workers that may wait; one
			   * more is refused (SEO_RPC_QUEUE_MAX) */
	struct rpc_ctx *done;                  /* under lock */
	int done_fd;            /* eventfd: `done` became non-empty */
	struct event *done_ev;  /* reads done_fd */
	size_t jobs_out; /* loop thread: handed to workers, not back yet */
};

static int health_check(rpc_ctx *ctx, const ProtobufCMessage *req,
			ProtobufCMessage **resp);

static const rpc_method health_method = {
	"/grpc.health.v1.Health/Check",
	&grpc__health__v1__health_check_request__descriptor,
	&grpc__health__v1__health_check_response__descriptor,
	health_check,
};

static nghttp2_nv mknv(const char *name, const char *value)
{
	nghttp2_nv nv = {(uint8_t *)name, (uint8_t *)value, strlen(name),
			 strlen(value), NGHTTP2_NV_FLAG_NONE};
	return nv;
}

/* ---- call lifetime (loop thread) ---------------------------------------- */

static struct rpc_ctx *call_new(struct srv_conn *conn, int32_t stream_id)
{
	struct rpc_ctx *call = calloc(1, sizeof(*call));

	if (call == NULL)
		return NULL;
	call->arena = seo_arena_new(0);
	if (call->arena == NULL) {
		free(call);
		return NULL;
	}
	seo_arena_pb_allocator(call->arena, &call->alloc);
	call->srv = conn->srv;
	call->conn = conn;
	call->stream_id = stream_id;
	call->refs = 1;
	atomic_init(&call->cancelled, 0);
	call->conn_next = conn->calls;
	if (conn->calls != NULL)
		conn->calls->conn_prev = call;
	conn->calls = call;
	return call;
}

static void call_unref(struct rpc_ctx *call)
{
	if (--call->refs > 0)
		return;
	seo_arena_free(call->arena);
	free(call);
}

/* The stream is gone (closed, reset, or its connection dropped). */
static void call_detach(struct rpc_ctx *call)
{
	struct srv_conn *conn = call->conn;

	if (call->conn_prev != NULL)
		call->conn_prev->conn_next = call->conn_next;
	else
		conn->calls = call->conn_next;
	if (call->conn_next != NULL)
		call->conn_next->conn_prev = call->conn_prev;
	call->conn = NULL;
	atomic_store(&call->cancelled, 1);
	if (call->timer != NULL) {
		event_free(call->timer);
		call->timer = NULL;
	}
	call_unref(call);
}

/* ---- replies (loop thread, call->conn set) ------------------------------ */

static void reply_submitted(struct rpc_ctx *call, int rv)
{
	call->replied = 1;
	if (call->timer != NULL)
		event_del(call->timer);
	if (rv != 0) {
		log_error("cannot submit reply on stream %d: %s",
			  call->stream_id, nghttp2_strerror(rv));
		nghttp2_submit_rst_stream(call->conn->session,
					  NGHTTP2_FLAG_NONE, call->stream_id,
					  NGHTTP2_INTERNAL_ERROR);
	}
}

/* A plain HTTP error (wrong method or content-type): no gRPC status. */
static void reply_http(struct rpc_ctx *call, const char *status)
{
	nghttp2_nv nva[2] = {mknv(":status", status), mknv("allow", "POST")};
	size_t n = strcmp(status, "405") == 0 ? 2 : 1;

	call->plain_http = 1;
	reply_submitted(call, nghttp2_submit_response(call->conn->session,
						      call->stream_id, nva, n,
						      NULL));
}

/* Appends the handler's response metadata to nva[n...]; returns the new
 * count. */
static size_t add_resp_meta(const struct rpc_ctx *call, nghttp2_nv *nva,
			    size_t n)
{
	for (const struct meta_entry *e = call->resp_meta; e != NULL; e = e->next)
		nva[n++] = mknv(e->name, e->value);
	return n;
}

/*
 * Trailers-only response: one HEADERS frame with END_STREAM, with the
 * handler's response metadata when `with_meta` (only once the handler is
 * done). Allocates nothing on the arena, so it is safe while a worker still
 * owns it.
 */
static void reply_status(struct rpc_ctx *call, int status, const char *code,
			 const char *message, const char *extra,
			 int accept_identity, int with_meta)
{
	char st[12];
	char *enc_msg = NULL, *enc_extra = NULL;
	nghttp2_nv nva[7 + RPC_RESP_META_MAX];
	size_t n = 0;
	int rv = NGHTTP2_ERR_NOMEM;

	snprintf(st, sizeof(st), "%d", status);
	enc_msg = malloc(3 * strlen(message) + 1);
	if (extra != NULL)
		enc_extra = malloc(3 * strlen(extra) + 1);
	if (enc_msg == NULL || (extra != NULL && enc_extra == NULL))
		goto out;
	rpc_pct_encode(message, strlen(message), enc_msg);
	nva[n++] = mknv(":status", "200");
	nva[n++] = mknv("content-type", "application/grpc");
	nva[n++] = mknv("grpc-status", st);
	nva[n++] = mknv("grpc-message", enc_msg);
	if (code != NULL)
		nva[n++] = mknv("seo-error-code", code);
	if (extra != NULL) {
		rpc_pct_encode(extra, strlen(extra), enc_extra);
		nva[n++] = mknv("seo-error-extra", enc_extra);
	}
	if (accept_identity)
		nva[n++] = mknv("grpc-accept-encoding", "identity");
	if (with_meta)
		n = add_resp_meta(call, nva, n);
	rv = nghttp2_submit_response(call->conn->session, call->stream_id, nva,
				     n, NULL);
out:
	reply_submitted(call, rv);
	free(enc_msg);
	free(enc_extra);
}

static ssize_t resp_read(nghttp2_session *session, int32_t stream_id,
			 uint8_t *buf, size_t length, uint32_t *data_flags,
			 nghttp2_data_source *source, void *user_data)
{
	struct rpc_ctx *call = source->ptr;
	size_t n = rpc_copy_out(buf, length, call->resp, call->resp_len,
				&call->resp_off);
	nghttp2_nv ok = mknv("grpc-status", "0");

	(void)user_data;
	if (call->resp_off == call->resp_len) {
		*data_flags |= NGHTTP2_DATA_FLAG_EOF |
			       NGHTTP2_DATA_FLAG_NO_END_STREAM;
		if (nghttp2_submit_trailer(session, stream_id, &ok, 1) != 0)
			return NGHTTP2_ERR_TEMPORAL_CALLBACK_FAILURE;
	}
	return (ssize_t)n;
}

/* Sends the outcome recorded by call_run(). The worker, if any, is done. */
static void reply_outcome(struct rpc_ctx *call)
{
	nghttp2_nv nva[2 + RPC_RESP_META_MAX] = {
		mknv(":status", "200"), mknv("content-type", "application/grpc")};
	nghttp2_data_provider prd;
	size_t n;

	if (call->failed) {
		reply_status(call, call->status, call->code, call->message,
			     call->extra, 0, 1);
		return;
	}
	n = add_resp_meta(call, nva, 2);
	prd.source.ptr = call;
	prd.read_callback = resp_read;
	reply_submitted(call, nghttp2_submit_response(call->conn->session,
						      call->stream_id, nva, n,
						      &prd));
}

/* ---- running a call (any thread) ---------------------------------------- */

static void outcome_fail(struct rpc_ctx *call, int status, const char *code,
			 const char *message)
{
	call->failed = 1;
	call->status = status;
	call->code = code;
	call->message = message;
}

static void call_run(struct rpc_ctx *call)
{
	const rpc_method *m = call->method;
	ProtobufCMessage *req, *resp = NULL;
	size_t size;
	int rv;

	req = call->req != NULL ?
		      call->req :
		      protobuf_c_message_unpack(m->input, &call->alloc,
						call->rd.msg_len, call->rd.msg);
	if (req == NULL) {
		outcome_fail(call, SEO_GRPC_INTERNAL, NULL,
			     seo_arena_printf(call->arena,
					      "cannot parse the request as %s",
					      m->input->name));
		goto out;
	}
	rv = m->handler(call, req, &resp);
	if (call->failed)
		goto out;
	if (rv != 0) {
		outcome_fail(call, SEO_GRPC_INTERNAL, "internal_error",
			     seo_arena_printf(call->arena, "handler failed: %s",
					      seo_strerror(rv)));
		goto out;
	}
	if (resp == NULL || resp->descriptor != m->output) {
		outcome_fail(call, SEO_GRPC_INTERNAL, "internal_error",
			     seo_arena_printf(call->arena,
					      "handler of %s returned no %s",
					      m->path, m->output->name));
		goto out;
	}
	seo_pb_fill(resp);
	size = protobuf_c_message_get_packed_size(resp);
	if (size > RPC_MAX_MESSAGE) {
		outcome_fail(call, SEO_GRPC_RESOURCE_EXHAUSTED, NULL,
			     seo_arena_printf(call->arena,
					      "response of %zu bytes exceeds "
					      "the limit of %d bytes",
					      size, RPC_MAX_MESSAGE));
		goto out;
	}
	call->resp = seo_arena_alloc(call->arena, RPC_PREFIX_LEN + size);
	if (call->resp == NULL) {
		outcome_fail(call, SEO_GRPC_RESOURCE_EXHAUSTED, NULL,
			     "out of memory");
		goto out;
	}
	rpc_prefix_put(call->resp, size);
	protobuf_c_message_pack(resp, call->resp + RPC_PREFIX_LEN);
	call->resp_len = RPC_PREFIX_LEN + size;
out:
	/* arena_printf may have failed: never send a NULL message. */
	if (call->failed && call->message == NULL)
		call->message = "out of memory";
	if (call->failed && call->status == SEO_GRPC_INTERNAL)
		log_error("%s failed: %s", m->path, call->message);
}

/* ---- worker pool -------------------------------------------------------- */

static void *worker_main(void *arg)
{
	rpc_server *srv = arg;
	const uint64_t one = 1;

	pthread_mutex_lock(&srv->lock);
	for (;;) {
		struct rpc_ctx *call;
		int wake;

		srv->n_idle++;
		while (!srv->stop && srv->jobs_head == NULL)
			pthread_cond_wait(&srv->cond, &srv->lock);
		srv->n_idle--;
		if (srv->stop)
			break;
		call = srv->jobs_head;
		srv->n_queued--;
		srv->jobs_head = call->job_next;
		if (srv->jobs_head == NULL)
			srv->jobs_tail = NULL;
		pthread_mutex_unlock(&srv->lock);

		/* A call that waited past its deadline is not worth running;
		 * the loop answers DEADLINE_EXCEEDED unless it already did. */
		if (rpc_ctx_cancelled(call))
			outcome_fail(call, SEO_GRPC_DEADLINE_EXCEEDED, NULL,
				     "deadline exceeded before the call ran");
		else
			call_run(call);

		pthread_mutex_lock(&srv->lock);
		wake = srv->done == NULL;
		call->job_next = srv->done;
		srv->done = call;
		pthread_mutex_unlock(&srv->lock);
		/* Outside the lock, which the loop may be waiting for; a
		 * wake-up that finds the list already taken is harmless. */
		if (wake && write(srv->done_fd, &one, sizeof(one)) < 0 &&
		    errno != EAGAIN)
			log_error("cannot wake the loop: %s", strerror(errno));
		pthread_mutex_lock(&srv->lock);
	}
	pthread_mutex_unlock(&srv->lock);
	return NULL;
}

static void done_cb(evutil_socket_t fd, short what, void *arg)
{
	rpc_server *srv = arg;
	struct rpc_ctx *call, *next;
	uint64_t n;

	(void)fd;
	(void)what;
	if (read(srv->done_fd, &n, sizeof(n)) < 0 && errno != EAGAIN)
		log_error("cannot read the workers' wake-up: %s",
			  strerror(errno));
	pthread_mutex_lock(&srv->lock);
	call = srv->done;
	srv->done = NULL;
	pthread_mutex_unlock(&srv->lock);
	for (; call != NULL; call = next) {
		next = call->job_next;
		srv->jobs_out--;
		if (call->conn != NULL && !call->replied) {
			reply_outcome(call);
			seo_h2io_flush(call->conn->io);
		}
		call_unref(call);
	}
}

/* ---- request processing (loop thread) ----------------------------------- */

static const rpc_method *find_method(rpc_server *srv, const char *path)
{
	for (size_t i = 0; i < srv->n_methods; i++)
		if (strcmp(srv->methods[i].path, path) == 0)
			return &srv->methods[i];
	if (strcmp(health_method.path, path) == 0)
		return &health_method;
	return NULL;
}

static void deadline_cb(evutil_socket_t fd, short what, void *arg)
{
	struct rpc_ctx *call = arg;

	(void)fd;
	(void)what;
	if (call->replied)
		return;
	atomic_store(&call->cancelled, 1);
	reply_status(call, SEO_GRPC_DEADLINE_EXCEEDED, NULL,
		     "deadline exceeded", NULL, 0, 0);
	seo_h2io_flush(call->conn->io);
}

/* Whether the call carries the server's internal token, or needs none:
 * no token configured, or the health check (a service's own one too). */
static int token_ok(struct rpc_ctx *call)
{
	const char *given;

	if (call->srv->token == NULL ||
	    (call->path != NULL && strcmp(call->path, health_method.path) == 0))
		return 1;
	given = rpc_ctx_meta(call, RPC_META_INTERNAL_TOKEN);
	return given != NULL && seo_secure_streq(given, call->srv->token);
}

static void on_request_headers(struct rpc_ctx *call)
{
	int64_t ms;

	if (call->http_method == NULL ||
	    strcmp(call->http_method, "POST") != 0) {
		reply_http(call, "405");
		return;
	}
	if (!rpc_content_type_ok(call->content_type)) {
		reply_http(call, "415");
		return;
	}
	if (call->meta_bytes > RPC_META_MAX) {
		reply_status(call, SEO_GRPC_RESOURCE_EXHAUSTED, NULL,
			     "request metadata too large", NULL, 0, 0);
		return;
	}
	if (call->encoding != NULL && strcmp(call->encoding, "identity") != 0) {
		reply_status(call, SEO_GRPC_UNIMPLEMENTED, NULL,
			     "message compression is not supported", NULL, 1, 0);
		return;
	}
	if (call->path != NULL)
		call->method = find_method(call->srv, call->path);
	if (!token_ok(call)) {
		reply_status(call, SEO_GRPC_UNAUTHENTICATED, "internal_error",
			     "internal call without the internal token", NULL,
			     0, 0);
		return;
	}
	if (call->method == NULL) {
		char msg[256];

		snprintf(msg, sizeof(msg), "unknown method %.200s",
			 call->path != NULL ? call->path : "");
		reply_status(call, SEO_GRPC_UNIMPLEMENTED, NULL, msg, NULL, 0, 0);
		return;
	}
	if (call->timeout == NULL)
		return;
	if (rpc_timeout_parse(call->timeout, &ms) != 0) {
		reply_status(call, SEO_GRPC_INTERNAL, NULL,
			     "malformed grpc-timeout", NULL, 0, 0);
		return;
	}
	call->deadline = seo_mono_ms() + ms;
	call->timer = evtimer_new(call->srv->base, deadline_cb, call);
	if (call->timer == NULL) {
		reply_status(call, SEO_GRPC_RESOURCE_EXHAUSTED, NULL,
			     "out of memory", NULL, 0, 0);
		return;
	}
	{
		struct timeval tv = {ms / 1000, (ms % 1000) * 1000};
		evtimer_add(call->timer, &tv);
	}
}

static int runs_inline(const rpc_server *srv, struct rpc_ctx *call)
{
	const rpc_method *m = call->method;
	const struct inline_rule *rule;

	if (m == &health_method)
		return 1;
	rule = &srv->inline_of[m - srv->methods];
	if (!rule->on)
		return 0;
	if (rule->when == NULL)
		return 1;
	call->req = protobuf_c_message_unpack(m->input, &call->alloc,
					      call->rd.msg_len, call->rd.msg);
	/* an unreadable request is answered here, as call_run() words it */
	return call->req == NULL || rule->when(call->req);
}

/*
 * Every worker is busy and queue_max calls already wait: the call is
 * refused at once, as UNAVAILABLE service_unavailable with a Retry-After,
 * rather than held until its deadline. No worker owns the call, so its
 * arena may take the metadata.
 */
static void reply_busy(struct rpc_ctx *call)
{
	char extra[48];

	log_warn("%s refused: %zu calls already wait for a worker",
		 call->method->path, call->srv->queue_max);
	snprintf(extra, sizeof(extra), "{\"retry_after\":%d}", RPC_BUSY_RETRY_S);
	rpc_ctx_set_meta(call, "retry-after", RPC_BUSY_RETRY_TEXT);
	reply_status(call, SEO_GRPC_UNAVAILABLE, "service_unavailable",
		     "the service is busy; retry shortly", extra, 0, 1);
}

static void on_request_end(struct rpc_ctx *call)
{
	rpc_server *srv = call->srv;
	int full;

	call->req_ended = 1;
	if (call->replied)
		return;
	if (call->rd.prefix_got != 0) {
		reply_status(call, SEO_GRPC_INTERNAL, NULL,
			     "request ended inside a message", NULL, 0, 0);
		return;
	}
	if (call->rd.n_msgs == 0) {
		reply_status(call, SEO_GRPC_UNIMPLEMENTED, NULL,
			     "unary call without a request message", NULL, 0, 0);
		return;
	}
	if (rpc_ctx_cancelled(call)) {
		reply_status(call, SEO_GRPC_DEADLINE_EXCEEDED, NULL,
			     "deadline exceeded", NULL, 0, 0);
		return;
	}
	if (srv->n_workers == 0 || runs_inline(srv, call)) {
		call_run(call);
		reply_outcome(call);
		return;
	}
	call->job_next = NULL;
	pthread_mutex_lock(&srv->lock);
	/* a call an idle worker is about to take does not count */
	full = srv->n_queued >= srv->n_idle + srv->queue_max;
	if (!full) {
		if (srv->jobs_tail != NULL)
			srv->jobs_tail->job_next = call;
		else
			srv->jobs_head = call;
		srv->jobs_tail = call;
		srv->n_queued++;
		call->refs++;
		srv->jobs_out++;
	}
	pthread_mutex_unlock(&srv->lock);
	if (full) {
		reply_busy(call);
		return;
	}
	/* After unlocking: the worker woken does not block on the lock. */
	pthread_cond_signal(&srv->cond);
}

static void *msg_alloc(void *arena, size_t n)
{
	return seo_arena_alloc(arena, n);
}

/* Consumes request DATA: one 5-byte prefix, then its payload. */
static void on_request_data(struct rpc_ctx *call, const uint8_t *data,
			    size_t len)
{
	char msg[128];

	if (call->replied)
		return;
	switch (rpc_reader_feed(&call->rd, data, len, msg_alloc,
				call->arena)) {
	case RPC_READ_OK:
		break;
	case RPC_READ_SECOND:
		reply_status(call, SEO_GRPC_UNIMPLEMENTED, NULL,
			     "unary call with more than one request message",
			     NULL, 0, 0);
		break;
	case RPC_READ_COMPRESSED:
		reply_status(call, SEO_GRPC_INTERNAL, NULL,
			     "compressed request message, but compression is "
			     "not supported",
			     NULL, 1, 0);
		break;
	case RPC_READ_TOO_LARGE:
		snprintf(msg, sizeof(msg),
			 "request message of %zu bytes exceeds the limit of "
			 "%d bytes",
			 call->rd.msg_len, RPC_MAX_MESSAGE);
		reply_status(call, SEO_GRPC_RESOURCE_EXHAUSTED, NULL, msg,
			     NULL, 0, 0);
		break;
	case RPC_READ_NOMEM:
		reply_status(call, SEO_GRPC_RESOURCE_EXHAUSTED, NULL,
			     "out of memory", NULL, 0, 0);
		break;
	}
}

/* ---- nghttp2 callbacks -------------------------------------------------- */

static int on_begin_headers(nghttp2_session *session,
			    const nghttp2_frame *frame, void *user_data)
{
	struct rpc_ctx *call;

	if (frame->hd.type != NGHTTP2_HEADERS ||
	    frame->headers.cat != NGHTTP2_HCAT_REQUEST)
		return 0;
	call = call_new(user_data, frame->hd.stream_id);
	if (call == NULL)
		return NGHTTP2_ERR_TEMPORAL_CALLBACK_FAILURE;
	nghttp2_session_set_stream_user_data(session, frame->hd.stream_id,
					     call);
	return 0;
}

static int on_header(nghttp2_session *session, const nghttp2_frame *frame,
		     const uint8_t *name, size_t namelen, const uint8_t *value,
		     size_t valuelen, uint8_t flags, void *user_data)
{
	struct rpc_ctx *call;
	const char *v;

	(void)flags;
	(void)user_data;
	if (frame->hd.type != NGHTTP2_HEADERS ||
	    frame->headers.cat != NGHTTP2_HCAT_REQUEST)
		return 0;
	call = nghttp2_session_get_stream_user_data(session,
						    frame->hd.stream_id);
	if (call == NULL)
		return 0;
	call->meta_bytes += namelen + valuelen;
	if (call->meta_bytes > RPC_META_MAX)
		return 0;
	v = seo_arena_strndup(call->arena, (const char *)value, valuelen);
	if (v == NULL)
		return NGHTTP2_ERR_TEMPORAL_CALLBACK_FAILURE;
	if (name[0] == ':') {
		if (strcmp((const char *)name, ":method") == 0)
			call->http_method = v;
		else if (strcmp((const char *)name, ":path") == 0)
			call->path = v;
		return 0;
	}
	if (strcmp((const char *)name, "content-type") == 0)
		call->content_type = v;
	else if (strcmp((const char *)name, "grpc-encoding") == 0)
		call->encoding = v;
	else if (strcmp((const char *)name, "grpc-timeout") == 0)
		call->timeout = v;
	{
		struct meta_entry *e = seo_arena_alloc(call->arena, sizeof(*e));

		if (e == NULL)
			return NGHTTP2_ERR_TEMPORAL_CALLBACK_FAILURE;
		e->name = seo_arena_strndup(call->arena, (const char *)name,
					    namelen);
		if (e->name == NULL)
			return NGHTTP2_ERR_TEMPORAL_CALLBACK_FAILURE;
		e->value = v;
		e->next = call->meta;
		call->meta = e;
	}
	return 0;
}

static int on_frame_recv(nghttp2_session *session, const nghttp2_frame *frame,
			 void *user_data)
{
	struct rpc_ctx *call;

	(void)user_data;
	if (frame->hd.type != NGHTTP2_HEADERS && frame->hd.type != NGHTTP2_DATA)
		return 0;
	call = nghttp2_session_get_stream_user_data(session,
						    frame->hd.stream_id);
	if (call == NULL)
		return 0;
	if (frame->hd.type == NGHTTP2_HEADERS &&
	    frame->headers.cat == NGHTTP2_HCAT_REQUEST)
		on_request_headers(call);
	if (frame->hd.flags & NGHTTP2_FLAG_END_STREAM)
		on_request_end(call);
	return 0;
}

static int on_data_chunk(nghttp2_session *session, uint8_t flags,
			 int32_t stream_id, const uint8_t *data, size_t len,
			 void *user_data)
{
	struct rpc_ctx *call;

	(void)flags;
	(void)user_data;
	call = nghttp2_session_get_stream_user_data(session, stream_id);
	if (call != NULL && call->method != NULL)
		on_request_data(call, data, len);
	return 0;
}

static int on_frame_send(nghttp2_session *session, const nghttp2_frame *frame,
			 void *user_data)
{
	struct rpc_ctx *call;

	(void)user_data;
	if ((frame->hd.type != NGHTTP2_HEADERS &&
	     frame->hd.type != NGHTTP2_DATA) ||
	    !(frame->hd.flags & NGHTTP2_FLAG_END_STREAM))
		return 0;
	call = nghttp2_session_get_stream_user_data(session,
						    frame->hd.stream_id);
	/*
	 * Our side ended before the client's: PROTOCOL-HTTP2 asks for
	 * RST_STREAM(NO_ERROR) so that it stops sending. Not after a plain
	 * HTTP error, where it is optional: curl 7.88 then loses the response.
	 */
	if (call != NULL && !call->req_ended && !call->plain_http)
		nghttp2_submit_rst_stream(session, NGHTTP2_FLAG_NONE,
					  frame->hd.stream_id,
					  NGHTTP2_NO_ERROR);
	return 0;
}

static int on_stream_close(nghttp2_session *session, int32_t stream_id,
			   uint32_t error_code, void *user_data)
{
	struct rpc_ctx *call;

	(void)error_code;
	(void)user_data;
	call = nghttp2_session_get_stream_user_data(session, stream_id);
	if (call != NULL) {
		nghttp2_session_set_stream_user_data(session, stream_id, NULL);
		call_detach(call);
	}
	return 0;
}

/* ---- connections -------------------------------------------------------- */

static void conn_free(struct srv_conn *conn)
{
	rpc_server *srv = conn->srv;

	while (conn->calls != NULL) {
		nghttp2_session_set_stream_user_data(
			conn->session, conn->calls->stream_id, NULL);
		call_detach(conn->calls);
	}
	seo_h2io_free(conn->io);
	nghttp2_session_del(conn->session);
	if (conn->prev != NULL)
		conn->prev->next = conn->next;
	else
		srv->conns = conn->next;
	if (conn->next != NULL)
		conn->next->prev = conn->prev;
	srv->n_conns--;
	free(conn);
}

static void conn_on_close(seo_h2io *io, void *ud)
{
	(void)io;
	conn_free(ud);
}

static void accept_cb(struct evconnlistener *l, evutil_socket_t fd,
		      struct sockaddr *sa, int socklen, void *arg)
{
	rpc_server *srv = arg;
	struct srv_conn *conn;
	struct bufferevent *bev = NULL;

	(void)l;
	(void)sa;
	(void)socklen;
	conn = calloc(1, sizeof(*conn));
	if (conn == NULL)
		goto fail;
	conn->srv = srv;
	bev = bufferevent_socket_new(srv->base, fd, BEV_OPT_CLOSE_ON_FREE);
	if (bev == NULL)
		goto fail;
	if (nghttp2_session_server_new3(&conn->session, srv->callbacks, conn,
					NULL, rpc__mem()) != 0)
		goto fail;
	if (rpc_session_start(conn->session,
			      NGHTTP2_SETTINGS_MAX_CONCURRENT_STREAMS,
			      SRV_MAX_STREAMS, bev, conn_on_close, conn,
			      &conn->io) != 0)
		goto fail;
	conn->next = srv->conns;
	if (srv->conns != NULL)
		srv->conns->prev = conn;
	srv->conns = conn;
	srv->n_conns++;
	return;
fail:
	log_error("cannot accept a connection: out of memory");
	if (conn != NULL)
		nghttp2_session_del(conn->session);
	if (bev != NULL)
		bufferevent_free(bev);
	else
		evutil_closesocket(fd);
	free(conn);
}

/* ---- public API --------------------------------------------------------- */

int rpc_server_new(struct event_base *base, const rpc_method *methods,
		   size_t n_methods, void *service, int workers,
		   rpc_server **out)
{
	rpc_server *srv = calloc(1, sizeof(*srv));
	nghttp2_session_callbacks *cb;
	int rc = SEO_ENOMEM;

	if (srv == NULL)
		return SEO_ENOMEM;
	srv->base = base;
	srv->methods = methods;
	srv->n_methods = n_methods;
	srv->service = service;
	srv->serving = 1;
	srv->queue_max = (size_t)seo_config_num(SEO_CFG_RPC_QUEUE_MAX);
	srv->done_fd = -1;
	if (*seo_config(SEO_CFG_INTERNAL_TOKEN) != '\0' &&
	    (srv->token = strdup(seo_config(SEO_CFG_INTERNAL_TOKEN))) == NULL)
		goto out;
	pthread_mutex_init(&srv->lock, NULL);
	pthread_cond_init(&srv->cond, NULL);
	srv->inline_of = calloc(n_methods ? n_methods : 1,
				sizeof(*srv->inline_of));
	if (srv->inline_of == NULL || nghttp2_session_callbacks_new(&cb) != 0)
		goto out;
	srv->callbacks = cb;
	nghttp2_session_callbacks_set_on_begin_headers_callback(
		cb, on_begin_headers);
	nghttp2_session_callbacks_set_on_header_callback(cb, on_header);
	nghttp2_session_callbacks_set_on_frame_recv_callback(cb, on_frame_recv);
	nghttp2_session_callbacks_set_on_data_chunk_recv_callback(
		cb, on_data_chunk);
	nghttp2_session_callbacks_set_on_frame_send_callback(cb, on_frame_send);
	nghttp2_session_callbacks_set_on_stream_close_callback(
		cb, on_stream_close);

	if (workers > 0) {
		srv->done_fd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
		if (srv->done_fd >= 0)
			srv->done_ev = event_new(base, srv->done_fd,
						 EV_READ | EV_PERSIST, done_cb,
						 srv);
		srv->threads = calloc((size_t)workers, sizeof(pthread_t));
		if (srv->done_ev == NULL || srv->threads == NULL ||
		    event_add(srv->done_ev, NULL) != 0)
			goto out;
		for (; srv->n_workers < workers; srv->n_workers++) {
			if (pthread_create(&srv->threads[srv->n_workers], NULL,
					   worker_main, srv) != 0) {
				log_error("cannot start worker thread: %s",
					  strerror(errno));
				goto out;
			}
		}
	}
	*out = srv;
	srv = NULL;
	rc = 0;
out:
	rpc_server_free(srv);
	return rc;
}

int rpc_server_run_inline(rpc_server *srv, const char *path,
			  rpc_inline_fn when)
{
	for (size_t i = 0; i < srv->n_methods; i++)
		if (strcmp(srv->methods[i].path, path) == 0) {
			srv->inline_of[i].on = 1;
			srv->inline_of[i].when = when;
			return 0;
		}
	return SEO_EINVAL;
}

int rpc_server_listen(rpc_server *srv, const char *addr)
{
	char host[256], port[8];
	unsigned short p;
	struct addrinfo hints, *ai = NULL;
	struct sockaddr_storage ss;
	socklen_t sslen = sizeof(ss);
	int rc = SEO_EIO, gai;

	if (srv->listener != NULL) {
		log_error("cannot listen on %s: already listening", addr);
		return SEO_EINVAL;
	}
	if (seo_split_hostport(addr, host, sizeof(host), &p) != 0) {
		log_error("cannot listen on %s: malformed address", addr);
		return SEO_EINVAL;
	}
	snprintf(port, sizeof(port), "%u", p);
	memset(&hints, 0, sizeof(hints));
	hints.ai_family = AF_UNSPEC;
	hints.ai_socktype = SOCK_STREAM;
	hints.ai_flags = AI_PASSIVE | AI_NUMERICSERV;
	gai = getaddrinfo(host, port, &hints, &ai);
	if (gai != 0) {
		log_error("cannot listen on %s: %s", addr, gai_strerror(gai));
		goto out;
	}
	srv->listener = evconnlistener_new_bind(
		srv->base, accept_cb, srv,
		LEV_OPT_CLOSE_ON_FREE | LEV_OPT_REUSEABLE | LEV_OPT_CLOSE_ON_EXEC,
		SRV_BACKLOG, ai->ai_addr, (int)ai->ai_addrlen);
	if (srv->listener == NULL) {
		log_error("cannot listen on %s: %s", addr, strerror(errno));
		goto out;
	}
	if (getsockname(evconnlistener_get_fd(srv->listener),
			(struct sockaddr *)&ss, &sslen) == 0) {
		if (ss.ss_family == AF_INET)
			srv->port = ntohs(((struct sockaddr_in *)&ss)->sin_port);
		else if (ss.ss_family == AF_INET6)
			srv->port =
				ntohs(((struct sockaddr_in6 *)&ss)->sin6_port);
	}
	rc = 0;
out:
	if (ai != NULL)
		freeaddrinfo(ai);
	return rc;
}

void rpc_server_set_serving(rpc_server *srv, int serving)
{
	srv->serving = serving != 0;
}

void rpc_server_shutdown(rpc_server *srv)
{
	if (srv->listener != NULL) {
		evconnlistener_free(srv->listener);
		srv->listener = NULL;
	}
	for (struct srv_conn *c = srv->conns; c != NULL; c = c->next)
		seo_h2io_shutdown(c->io);
}

void rpc_server_free(rpc_server *srv)
{
	struct rpc_ctx *call, *next;

	if (srv == NULL)
		return;
	if (srv->listener != NULL)
		evconnlistener_free(srv->listener);
	pthread_mutex_lock(&srv->lock);
	srv->stop = 1;
	pthread_cond_broadcast(&srv->cond);
	pthread_mutex_unlock(&srv->lock);
	for (int i = 0; i < srv->n_workers; i++)
		pthread_join(srv->threads[i], NULL);
	while (srv->conns != NULL)
		conn_free(srv->conns);
	/* Finished calls and calls no worker started: drop the job refs. */
	if (srv->done_ev != NULL)
		done_cb(-1, 0, srv);
	for (call = srv->jobs_head; call != NULL; call = next) {
		next = call->job_next;
		call_unref(call);
	}
	if (srv->done_ev != NULL)
		event_free(srv->done_ev);
	if (srv->done_fd >= 0)
		close(srv->done_fd);
	nghttp2_session_callbacks_del(srv->callbacks);
	pthread_mutex_destroy(&srv->lock);
	pthread_cond_destroy(&srv->cond);
	free(srv->threads);
	free(srv->inline_of);
	free(srv->token);
	free(srv);
}

unsigned rpc_server_port(const rpc_server *srv)
{
	return srv->listener != NULL ? srv->port : 0;
}

size_t rpc_server_busy(const rpc_server *srv)
{
	return srv->n_conns + srv->jobs_out;
}

/* ---- handler context ---------------------------------------------------- */

seo_arena *rpc_ctx_arena(rpc_ctx *ctx)
{
	return ctx->arena;
}

ProtobufCAllocator *rpc_ctx_allocator(rpc_ctx *ctx)
{
	return &ctx->alloc;
}

void *rpc_ctx_service(rpc_ctx *ctx)
{
	return ctx->srv->service;
}

const char *rpc_ctx_meta(rpc_ctx *ctx, const char *name)
{
	const char *found = NULL;

	/* The list is newest first: keep the first value the client sent. */
	for (struct meta_entry *e = ctx->meta; e != NULL; e = e->next)
		if (strcmp(e->name, name) == 0)
			found = e->value;
	return found;
}

/* A name a handler may set: lowercase token characters, none of the
 * protocol's own (pseudo-headers, content-type, te, grpc-*, seo-error-*). */
static int resp_meta_name_ok(const char *name)
{
	size_t len = strlen(name);

	if (len == 0 || len > RPC_RESP_META_NAME_MAX ||
	    strspn(name, "abcdefghijklmnopqrstuvwxyz0123456789-_.") != len)
		return 0;
	return strncmp(name, "grpc-", 5) != 0 &&
	       strncmp(name, "seo-error-", 10) != 0 &&
	       strcmp(name, "content-type") != 0 && strcmp(name, "te") != 0;
}

int rpc_ctx_set_meta(rpc_ctx *ctx, const char *name, const char *value)
{
	struct meta_entry *e, **tail = &ctx->resp_meta;
	size_t len = strlen(value);

	if (!resp_meta_name_ok(name) || len > RPC_RESP_META_VALUE_MAX)
		return SEO_EINVAL;
	for (size_t i = 0; i < len; i++)
		if (value[i] < 0x20 || value[i] > 0x7e)
			return SEO_EINVAL;
	for (e = ctx->resp_meta; e != NULL; tail = &e->next, e = e->next)
		if (strcmp(e->name, name) == 0)
			break;
	if (e == NULL && ctx->n_resp_meta == RPC_RESP_META_MAX)
		return SEO_ETOOBIG;
	value = seo_arena_strdup(ctx->arena, value);
	if (value == NULL)
		return SEO_ENOMEM;
	if (e != NULL) {
		e->value = value;
		return 0;
	}
	e = seo_arena_calloc(ctx->arena, sizeof(*e));
	if (e == NULL || (e->name = seo_arena_strdup(ctx->arena, name)) == NULL)
		return SEO_ENOMEM;
	e->value = value;
	*tail = e; /* in the order set */
	ctx->n_resp_meta++;
	return 0;
}

int rpc_ctx_set_http_status(rpc_ctx *ctx, int status)
{
	char text[12];

	if (status < 100 || status > 599)
		return SEO_EINVAL;
	snprintf(text, sizeof(text), "%d", status);
	return rpc_ctx_set_meta(ctx, RPC_META_HTTP_STATUS, text);
}

int64_t rpc_ctx_deadline(rpc_ctx *ctx)
{
	return ctx->deadline;
}

int rpc_ctx_cancelled(rpc_ctx *ctx)
{
	return atomic_load(&ctx->cancelled) ||
	       (ctx->deadline != 0 && seo_mono_ms() >= ctx->deadline);
}

int rpc_ctx_fail(rpc_ctx *ctx, const char *code, const char *fmt, ...)
{
	const seo_error_def *def = seo_error_lookup(code);
	va_list ap;
	char *msg;
	size_t len;

	if (def == NULL) {
		log_warn("handler failed with unknown error code %s",
			 code != NULL ? code : "(null)");
		def = seo_error_lookup("internal_error");
	}
	va_start(ap, fmt);
	msg = seo_arena_vprintf(ctx->arena, fmt, ap);
	va_end(ap);
	if (msg != NULL && (len = strlen(msg)) > RPC_STATUS_TEXT_MAX) {
		/* Cut on a UTF-8 character boundary. */
		len = RPC_STATUS_TEXT_MAX;
		while (len > 0 && ((unsigned char)msg[len] & 0xc0) == 0x80)
			len--;
		msg[len] = '\0';
	}
	outcome_fail(ctx, def->grpc_status, def->code, msg);
	return -1;
}

void rpc_ctx_fail_extra(rpc_ctx *ctx, const char *json_object)
{
	ctx->extra = json_object != NULL
			     ? seo_arena_strdup(ctx->arena, json_object)
			     : NULL;
}

/* ---- health ------------------------------------------------------------- */

static int health_check(rpc_ctx *ctx, const ProtobufCMessage *req,
			ProtobufCMessage **resp)
{
	Grpc__Health__V1__HealthCheckResponse *r;

	(void)req;
	r = seo_arena_alloc(ctx->arena, sizeof(*r));
	if (r == NULL)
		return SEO_ENOMEM;
	grpc__health__v1__health_check_response__init(r);
	r->has_status = 1;
	r->status = ctx->srv->serving
			    ? GRPC__HEALTH__V1__HEALTH_CHECK_RESPONSE__SERVING_STATUS__SERVING
			    : GRPC__HEALTH__V1__HEALTH_CHECK_RESPONSE__SERVING_STATUS__NOT_SERVING;
	*resp = &r->base;
	return 0;
}

/*
 * test_rpc.c: the gRPC wire layer (common/rpc) against itself and against
 * raw nghttp2 peers that check the frames on the wire.
 *
 * Servers run on their own event_base in a thread (tsrv_*); clients run on
 * the test thread, either through rpc_call_sync() or on `cbase`.
 */
#include "rpc_internal.h"

#include "seo/errors.h"
#include "seo/h2io.h"
#include "seo/log.h"
#include "seo/util.h"
#include "test_config.h"

#include "test_config.h"

#include "grpc/health/v1/health.pb-c.h"
#include "seo/account/v1/account.pb-c.h"

#include <netinet/in.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <sys/socket.h>

#include <CUnit/Basic.h>
#include <event2/buffer.h>
#include <event2/bufferevent.h>
#include <event2/event.h>
#include <event2/listener.h>
#include <event2/thread.h>

typedef Grpc__Health__V1__HealthCheckRequest EchoMsg;
#define ECHO_DESC (&grpc__health__v1__health_check_request__descriptor)

/* ---- test service ------------------------------------------------------- */

struct tsvc {
	const char *name; /* answered to "who" */
	pthread_t loop;   /* the server's loop thread, for "thread" */
};

static atomic_int slow_finished;  /* Slow handlers that returned */
static atomic_int slow_saw_cancel; /* ... and saw rpc_ctx_cancelled() */

static void sleep_ms(long ms)
{
	struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};

	nanosleep(&ts, NULL);
}

/* Echo: answers `service`; "who" -> server name; "meta:NAME" -> metadata;
 * "big:N" -> N bytes of 'x'; "thread..." -> "loop" or "worker";
 * "answer:NAME=VALUE" -> sets that response metadata ("status" through
 * rpc_ctx_set_http_status()) and answers the return code. */
static int h_echo(rpc_ctx *ctx, const ProtobufCMessage *req,
		  ProtobufCMessage **resp)
{
	const EchoMsg *in = (const EchoMsg *)req;
	EchoMsg *out = seo_arena_alloc(rpc_ctx_arena(ctx), sizeof(*out));
	const char *s = in->service != NULL ? in->service : "";

	if (out == NULL)
		return SEO_ENOMEM;
	grpc__health__v1__health_check_request__init(out);
	if (strcmp(s, "who") == 0) {
		s = ((struct tsvc *)rpc_ctx_service(ctx))->name;
	} else if (strncmp(s, "thread", 6) == 0) {
		struct tsvc *svc = rpc_ctx_service(ctx);

		s = pthread_equal(pthread_self(), svc->loop) ? "loop" : "worker";
	} else if (strncmp(s, "meta:", 5) == 0) {
		s = rpc_ctx_meta(ctx, s + 5);
		if (s == NULL)
			s = "(none)";
	} else if (strncmp(s, "answer:", 7) == 0) {
		char *name = seo_arena_strdup(rpc_ctx_arena(ctx), s + 7);
		char *value = name != NULL ? strchr(name, '=') : NULL;
		int rc;

		if (value == NULL)
			return SEO_ENOMEM;
		*value++ = '\0';
		rc = strcmp(name, "status") == 0
			     ? rpc_ctx_set_http_status(ctx, atoi(value))
			     : rpc_ctx_set_meta(ctx, name, value);
		s = seo_arena_printf(rpc_ctx_arena(ctx), "%d", rc);
	} else if (strncmp(s, "big:", 4) == 0) {
		size_t n = strtoul(s + 4, NULL, 10);
		char *big = seo_arena_alloc(rpc_ctx_arena(ctx), n + 1);

		if (big == NULL)
			return SEO_ENOMEM;
		memset(big, 'x', n);
		big[n] = '\0';
		s = big;
	}
	out->service = (char *)s;
	*resp = &out->base;
	return 0;
}

/* Fail: fails with insufficient_credits, `service` as the message. */
static int h_fail(rpc_ctx *ctx, const ProtobufCMessage *req,
		  ProtobufCMessage **resp)
{
	const EchoMsg *in = (const EchoMsg *)req;

	(void)resp;
	rpc_ctx_fail_extra(ctx, "{\"retry_after\": 12}");
	rpc_ctx_set_meta(ctx, "retry-after", "12");
	return rpc_ctx_fail(ctx, "insufficient_credits", "%s",
			    in->service != NULL ? in->service : "");
}

/* Slow: sleeps `credits` ms in small steps, watching for cancellation,
 * then echoes the credits. Runs on a worker. */
static int h_slow(rpc_ctx *ctx, const ProtobufCMessage *req,
		  ProtobufCMessage **resp)
{
	const Seo__Account__V1__Credits *in = (const void *)req;
	Seo__Account__V1__Credits *out;
	int64_t until = seo_mono_ms() + in->credits;
	int saw = 0;

	while (seo_mono_ms() < until) {
		saw |= rpc_ctx_cancelled(ctx);
		sleep_ms(5);
	}
	out = seo_arena_alloc(rpc_ctx_arena(ctx), sizeof(*out));
	if (out == NULL)
		return SEO_ENOMEM;
	seo__account__v1__credits__init(out);
	out->credits = in->credits;
	*resp = &out->base;
	if (saw)
		atomic_fetch_add(&slow_saw_cancel, 1);
	atomic_fetch_add(&slow_finished, 1);
	return 0;
}

/* Bad: claims success without a response. */
static int h_bad(rpc_ctx *ctx, const ProtobufCMessage *req,
		 ProtobufCMessage **resp)
{
	(void)ctx;
	(void)req;
	(void)resp;
	return 0;
}

static const rpc_method methods[] = {
	{"/seo.test.Echo/Echo", ECHO_DESC, ECHO_DESC, h_echo},
	{"/seo.test.Echo/Echo2", ECHO_DESC, ECHO_DESC, h_echo},
	{"/seo.test.Echo/Fail", ECHO_DESC, ECHO_DESC, h_fail},
	{"/seo.test.Echo/Slow", &seo__account__v1__credits__descriptor,
	 &seo__account__v1__credits__descriptor, h_slow},
	{"/seo.test.Echo/Bad", &seo__account__v1__empty__descriptor,
	 &seo__account__v1__empty__descriptor, h_bad},
};
#define N_METHODS (sizeof(methods) / sizeof(methods[0]))

/* ---- a server on its own thread ----------------------------------------- */

struct tsrv {
	struct event_base *base;
	rpc_server *srv;
	pthread_t thread;
	unsigned port;
	char addr[64];
	struct tsvc svc;
};

static void *tsrv_main(void *arg)
{
	struct tsrv *t = arg;

	event_base_loop(t->base, EVLOOP_NO_EXIT_ON_EMPTY);
	return NULL;
}

/* Starts a server on 127.0.0.1:`port` (0: any). Returns 0 or -1. */
static int tsrv_start(struct tsrv *t, const char *name, unsigned port,
		      int workers)
{
	char addr[64];

	memset(t, 0, sizeof(*t));
	t->svc.name = name;
	t->base = event_base_new();
	if (t->base == NULL ||
	    rpc_server_new(t->base, methods, N_METHODS, &t->svc, workers,
			   &t->srv) != 0)
		return -1;
	snprintf(addr, sizeof(addr), "127.0.0.1:%u", port);
	if (rpc_server_listen(t->srv, addr) != 0)
		return -1;
	t->port = rpc_server_port(t->srv);
	snprintf(t->addr, sizeof(t->addr), "127.0.0.1:%u", t->port);
	if (pthread_create(&t->thread, NULL, tsrv_main, t) != 0)
		return -1;
	/* handlers read it only once a call arrives, after this store */
	t->svc.loop = t->thread;
	return 0;
}

static void stop_cb(evutil_socket_t fd, short what, void *arg)
{
	(void)fd;
	(void)what;
	event_base_loopbreak(arg);
}

static void tsrv_stop(struct tsrv *t)
{
	struct timeval now = {0, 0};

	/* Not event_base_loopbreak() from here: a break asked for before
	 * the thread entered its loop would be forgotten. */
	event_base_once(t->base, -1, EV_TIMEOUT, stop_cb, t->base, &now);
	pthread_join(t->thread, NULL);
	rpc_server_free(t->srv);
	event_base_free(t->base);
	t->base = NULL;
}

struct on_loop {
	void (*fn)(struct tsrv *t, void *arg);
	struct tsrv *t;
	void *arg;
	pthread_mutex_t lock;
	pthread_cond_t cond;
	int done;
};

static void on_loop_cb(evutil_socket_t fd, short what, void *arg)
{
	struct on_loop *j = arg;

	(void)fd;
	(void)what;
	j->fn(j->t, j->arg);
	pthread_mutex_lock(&j->lock);
	j->done = 1;
	pthread_cond_signal(&j->cond);
	pthread_mutex_unlock(&j->lock);
}

/* Runs fn on the server's loop thread and waits for it. */
static void tsrv_run(struct tsrv *t, void (*fn)(struct tsrv *, void *),
		     void *arg)
{
	struct on_loop j = {fn, t, arg, PTHREAD_MUTEX_INITIALIZER,
			    PTHREAD_COND_INITIALIZER, 0};
	struct timeval now = {0, 0};

	event_base_once(t->base, -1, EV_TIMEOUT, on_loop_cb, &j, &now);
	pthread_mutex_lock(&j.lock);
	while (!j.done)
		pthread_cond_wait(&j.cond, &j.lock);
	pthread_mutex_unlock(&j.lock);
}

static void do_shutdown(struct tsrv *t, void *arg)
{
	(void)arg;
	rpc_server_shutdown(t->srv);
}

static void do_serving(struct tsrv *t, void *arg)
{
	rpc_server_set_serving(t->srv, *(int *)arg);
}

static void do_busy(struct tsrv *t, void *arg)
{
	*(size_t *)arg = rpc_server_busy(t->srv);
}

/* ---- client helpers ----------------------------------------------------- */

static struct event_base *cbase; /* the test thread's client loop */
static int in_client_call;        /* set around rpc_client_call() */

struct acall {
	int done;
	int reentrant;
	int status;
	char message[512];
	char code[64];
	char extra[128];
	char service[64];
	char retry_after[16]; /* the retry-after response metadata */
	int64_t credits;
	int64_t started, finished;
	int *counter;
};

static void acall_done(const rpc_result *r, void *ud)
{
	struct acall *a = ud;

	a->done++;
	a->reentrant |= in_client_call;
	a->status = r->grpc_status;
	a->finished = seo_mono_ms();
	snprintf(a->message, sizeof(a->message), "%s", r->message);
	snprintf(a->code, sizeof(a->code), "%s", r->code ? r->code : "");
	snprintf(a->extra, sizeof(a->extra), "%s",
		 r->extra_json ? r->extra_json : "");
	for (size_t i = 0; i < r->n_meta; i++)
		if (strcmp(r->meta[i].name, "retry-after") == 0)
			snprintf(a->retry_after, sizeof(a->retry_after), "%s",
				 r->meta[i].value);
	if (r->response != NULL) {
		if (r->response->descriptor == ECHO_DESC) {
			const EchoMsg *m = (const EchoMsg *)r->response;

			snprintf(a->service, sizeof(a->service), "%.60s",
				 m->service ? m->service : "");
		} else {
			a->credits = ((const Seo__Account__V1__Credits *)
					      r->response)->credits;
		}
		protobuf_c_message_free_unpacked(r->response, NULL);
	}
	if (a->counter != NULL)
		(*a->counter)++;
}

static int acall_start(rpc_client *c, const char *path, ProtobufCMessage *req,
		       const ProtobufCMessageDescriptor *out, int timeout_ms,
		       const rpc_meta *meta, size_t n_meta, struct acall *a)
{
	int rv;

	a->started = seo_mono_ms();
	in_client_call = 1;
	rv = rpc_client_call(c, path, req, out, NULL, timeout_ms, meta, n_meta,
			     acall_done, a);
	in_client_call = 0;
	return rv;
}

static void tick_cb(evutil_socket_t fd, short what, void *arg)
{
	(void)fd;
	(void)what;
	(void)arg;
}

/* Runs `base` until *count >= want or `ms` pass. */
static void run_until(struct event_base *base, const int *count, int want,
		      int ms)
{
	struct event *tick = event_new(base, -1, EV_PERSIST, tick_cb, NULL);
	struct timeval tv = {0, 5000};
	int64_t end = seo_mono_ms() + ms;

	event_add(tick, &tv);
	while ((count == NULL || *count < want) && seo_mono_ms() < end)
		event_base_loop(base, EVLOOP_ONCE);
	event_free(tick);
}

static int echo_sync(const char *addr, const char *path, const char *s,
		     int timeout_ms, const rpc_meta *meta, size_t n_meta,
		     seo_arena *a, rpc_result *res)
{
	EchoMsg req = GRPC__HEALTH__V1__HEALTH_CHECK_REQUEST__INIT;

	req.service = (char *)s;
	return rpc_call_sync(addr, path, &req.base, ECHO_DESC, a, timeout_ms,
			     meta, n_meta, res);
}

static const char *resp_service(const rpc_result *res)
{
	const EchoMsg *m = (const EchoMsg *)res->response;

	return m != NULL && m->service != NULL ? m->service : "";
}

/* ---- a raw HTTP/2 client, to see the frames ----------------------------- */

struct raw_hdr {
	const char *name, *value;
};

struct raw_resp {
	int status;
	int grpc_status;
	char content_type[64];
	char grpc_message[512];
	char code[64];
	char accept_encoding[64];
	int header_frames;
	int first_headers_end_stream;
	int data_frames;
	uint8_t data[256];
	size_t data_len;
	int rst;
	uint32_t rst_code;
	int closed;
	const uint8_t *body;
	size_t body_len;
	size_t body_off;
	int end_stream;
	struct event_base *base;
};

static int raw_on_header(nghttp2_session *s, const nghttp2_frame *f,
			 const uint8_t *name, size_t nl, const uint8_t *value,
			 size_t vl, uint8_t flags, void *ud)
{
	struct raw_resp *r = ud;
	const char *n = (const char *)name, *v = (const char *)value;

	(void)s;
	(void)f;
	(void)nl;
	(void)vl;
	(void)flags;
	if (strcmp(n, ":status") == 0)
		r->status = atoi(v);
	else if (strcmp(n, "grpc-status") == 0)
		r->grpc_status = atoi(v);
	else if (strcmp(n, "content-type") == 0)
		snprintf(r->content_type, sizeof(r->content_type), "%s", v);
	else if (strcmp(n, "grpc-message") == 0)
		snprintf(r->grpc_message, sizeof(r->grpc_message), "%s", v);
	else if (strcmp(n, "seo-error-code") == 0)
		snprintf(r->code, sizeof(r->code), "%s", v);
	else if (strcmp(n, "grpc-accept-encoding") == 0)
		snprintf(r->accept_encoding, sizeof(r->accept_encoding), "%s",
			 v);
	return 0;
}

static int raw_on_frame_recv(nghttp2_session *s, const nghttp2_frame *f,
			     void *ud)
{
	struct raw_resp *r = ud;

	(void)s;
	if (f->hd.stream_id != 1)
		return 0;
	if (f->hd.type == NGHTTP2_HEADERS) {
		if (r->header_frames++ == 0)
			r->first_headers_end_stream =
				!!(f->hd.flags & NGHTTP2_FLAG_END_STREAM);
	} else if (f->hd.type == NGHTTP2_DATA && f->hd.length > 0) {
		r->data_frames++;
	} else if (f->hd.type == NGHTTP2_RST_STREAM) {
		r->rst = 1;
		r->rst_code = f->rst_stream.error_code;
	}
	return 0;
}

static int raw_on_data(nghttp2_session *s, uint8_t flags, int32_t id,
		       const uint8_t *data, size_t len, void *ud)
{
	struct raw_resp *r = ud;

	(void)s;
	(void)flags;
	(void)id;
	if (r->data_len + len <= sizeof(r->data))
		memcpy(r->data + r->data_len, data, len);
	r->data_len += len;
	return 0;
}

static int raw_on_close(nghttp2_session *s, int32_t id, uint32_t code,
			void *ud)
{
	struct raw_resp *r = ud;

	(void)s;
	(void)id;
	(void)code;
	r->closed = 1;
	event_base_loopbreak(r->base);
	return 0;
}

static ssize_t raw_read(nghttp2_session *s, int32_t id, uint8_t *buf,
			size_t len, uint32_t *flags, nghttp2_data_source *src,
			void *ud)
{
	struct raw_resp *r = ud;
	size_t n = r->body_len - r->body_off;

	(void)s;
	(void)id;
	(void)src;
	if (n > len)
		n = len;
	memcpy(buf, r->body + r->body_off, n);
	r->body_off += n;
	if (r->body_off == r->body_len) {
		*flags |= NGHTTP2_DATA_FLAG_EOF;
		if (!r->end_stream)
			*flags |= NGHTTP2_DATA_FLAG_NO_END_STREAM;
	}
	return (ssize_t)n;
}

static void raw_close(seo_h2io *io, void *ud)
{
	struct raw_resp *r = ud;

	(void)io;
	event_base_loopbreak(r->base);
}

static void raw_timeout(evutil_socket_t fd, short what, void *arg)
{
	(void)fd;
	(void)what;
	event_base_loopbreak(arg);
}

/* Sends one request on stream 1 and records what comes back. */
static void raw_call(unsigned port, const struct raw_hdr *h, size_t nh,
		     const uint8_t *body, size_t body_len, int end_stream,
		     struct raw_resp *r)
{
	struct sockaddr_in sin;
	struct bufferevent *bev;
	nghttp2_session_callbacks *cb;
	nghttp2_session *session;
	nghttp2_data_provider prd;
	nghttp2_nv nva[16];
	seo_h2io *io;
	struct event *timer;
	struct timeval tv = {5, 0};

	memset(r, 0, sizeof(*r));
	r->grpc_status = -1;
	r->body = body;
	r->body_len = body_len;
	r->end_stream = end_stream;
	r->base = event_base_new();
	memset(&sin, 0, sizeof(sin));
	sin.sin_family = AF_INET;
	sin.sin_port = htons((unsigned short)port);
	sin.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	bev = bufferevent_socket_new(r->base, -1, BEV_OPT_CLOSE_ON_FREE);
	CU_ASSERT_FATAL(bufferevent_socket_connect(
				bev, (struct sockaddr *)&sin, sizeof(sin)) == 0);
	nghttp2_session_callbacks_new(&cb);
	nghttp2_session_callbacks_set_on_header_callback(cb, raw_on_header);
	nghttp2_session_callbacks_set_on_frame_recv_callback(cb,
							     raw_on_frame_recv);
	nghttp2_session_callbacks_set_on_data_chunk_recv_callback(cb,
								  raw_on_data);
	nghttp2_session_callbacks_set_on_stream_close_callback(cb,
							       raw_on_close);
	nghttp2_session_client_new(&session, cb, r);
	nghttp2_session_callbacks_del(cb);
	nghttp2_submit_settings(session, NGHTTP2_FLAG_NONE, NULL, 0);
	for (size_t i = 0; i < nh; i++) {
		nva[i].name = (uint8_t *)h[i].name;
		nva[i].value = (uint8_t *)h[i].value;
		nva[i].namelen = strlen(h[i].name);
		nva[i].valuelen = strlen(h[i].value);
		nva[i].flags = NGHTTP2_NV_FLAG_NONE;
	}
	prd.source.ptr = NULL;
	prd.read_callback = raw_read;
	CU_ASSERT(nghttp2_submit_request(session, NULL, nva, nh,
					 body != NULL ? &prd : NULL, r) == 1);
	CU_ASSERT_FATAL(seo_h2io_new(bev, session, 0, raw_close, r, &io) == 0);
	timer = evtimer_new(r->base, raw_timeout, r->base);
	evtimer_add(timer, &tv);
	event_base_dispatch(r->base);
	event_free(timer);
	seo_h2io_free(io);
	nghttp2_session_del(session);
	event_base_free(r->base);
	r->base = NULL;
}

static const struct raw_hdr grpc_hdrs[] = {
	{":method", "POST"},
	{":scheme", "http"},
	{":path", "/seo.test.Echo/Echo"},
	{":authority", "localhost"},
	{"content-type", "application/grpc"},
	{"te", "trailers"},
};
#define N_GRPC_HDRS (sizeof(grpc_hdrs) / sizeof(grpc_hdrs[0]))

/* A framed Echo request for `s` into buf; returns its length. */
static size_t frame_echo(const char *s, uint8_t *buf)
{
	EchoMsg req = GRPC__HEALTH__V1__HEALTH_CHECK_REQUEST__INIT;
	size_t n;

	req.service = (char *)s;
	n = protobuf_c_message_pack(&req.base, buf + RPC_PREFIX_LEN);
	rpc_prefix_put(buf, n);
	return RPC_PREFIX_LEN + n;
}

/* ---- shared server for most tests --------------------------------------- */

static struct tsrv main_srv;

static int suite_init(void)
{
	return tsrv_start(&main_srv, "main", 0, 4);
}

static int suite_clean(void)
{
	tsrv_stop(&main_srv);
	return 0;
}

/* ---- tests -------------------------------------------------------------- */

static void test_wire_codecs(void)
{
	char enc[64], dec[64];
	int64_t ms;

	rpc_pct_encode("a b%\xc3\xa9\n~", 8, enc);
	CU_ASSERT_STRING_EQUAL(enc, "a b%25%C3%A9%0A~");
	rpc_pct_decode(enc, strlen(enc), dec);
	CU_ASSERT_STRING_EQUAL(dec, "a b%\xc3\xa9\n~");
	rpc_pct_decode("100%", 4, dec);
	CU_ASSERT_STRING_EQUAL(dec, "100%");
	rpc_pct_decode("%zz%4", 5, dec);
	CU_ASSERT_STRING_EQUAL(dec, "%zz%4");

	CU_ASSERT(rpc_timeout_parse("100m", &ms) == 0 && ms == 100);
	CU_ASSERT(rpc_timeout_parse("2S", &ms) == 0 && ms == 2000);
	CU_ASSERT(rpc_timeout_parse("1M", &ms) == 0 && ms == 60000);
	CU_ASSERT(rpc_timeout_parse("1H", &ms) == 0 && ms == 3600000);
	CU_ASSERT(rpc_timeout_parse("1500u", &ms) == 0 && ms == 2);
	CU_ASSERT(rpc_timeout_parse("1n", &ms) == 0 && ms == 1);
	CU_ASSERT(rpc_timeout_parse("123456789m", &ms) == SEO_EINVAL);
	CU_ASSERT(rpc_timeout_parse("m", &ms) == SEO_EINVAL);
	CU_ASSERT(rpc_timeout_parse("10x", &ms) == SEO_EINVAL);
	CU_ASSERT(rpc_timeout_parse("10mm", &ms) == SEO_EINVAL);
	CU_ASSERT(rpc_timeout_parse("99999999H", &ms) == 0 &&
		  ms == 99999999LL * 3600000);
	CU_ASSERT(rpc_timeout_parse("0m", &ms) == 0 && ms == 0);
	{
		/* each refused, none read past its end (checked by ASan on
		 * copies of exactly their length) */
		static const char *const bad[] = {
			"", "100", "7", "-1m", "+1m", " 1m", "1m ", "1 m",
			"1.5S", "0x10m", "1h", "1s", "1\xffm", "000000001m",
			"123456789012345678901234567890123456789m",
			"99999999999999999999999999999999999999999",
		};

		for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
			char *v = strdup(bad[i]);

			CU_ASSERT_PTR_NOT_NULL_FATAL(v);
			ms = -7;
			CU_ASSERT_EQUAL(rpc_timeout_parse(v, &ms), SEO_EINVAL);
			CU_ASSERT_EQUAL(ms, -7);
			free(v);
		}
	}

	rpc_timeout_format(250, enc);
	CU_ASSERT_STRING_EQUAL(enc, "250m");
	rpc_timeout_format(100000000, enc);
	CU_ASSERT_STRING_EQUAL(enc, "100000S");
	rpc_timeout_format(100000000001LL, enc);
	CU_ASSERT_STRING_EQUAL(enc, "1666667M");

	CU_ASSERT(rpc_content_type_ok("application/grpc"));
	CU_ASSERT(rpc_content_type_ok("application/grpc+proto"));
	CU_ASSERT(rpc_content_type_ok("application/grpc; charset=x"));
	CU_ASSERT(!rpc_content_type_ok("application/grpc+json"));
	CU_ASSERT(!rpc_content_type_ok("application/json"));
	CU_ASSERT(!rpc_content_type_ok(NULL));
}

static void test_unary_ok(void)
{
	seo_arena *a = seo_arena_new(0);
	rpc_result res;
	rpc_meta meta[] = {{"x-request-id", "req-42"},
			   {"Seo-Workspace-Id", "ws1"}};

	CU_ASSERT(echo_sync(main_srv.addr, "/seo.test.Echo/Echo", "hello", 2000,
			    NULL, 0, a, &res) == 0);
	CU_ASSERT(res.grpc_status == SEO_GRPC_OK);
	CU_ASSERT_STRING_EQUAL(resp_service(&res), "hello");
	CU_ASSERT_PTR_NULL(res.code);

	CU_ASSERT(echo_sync(main_srv.addr, "/seo.test.Echo/Echo",
			    "meta:x-request-id", 2000, meta, 2, a, &res) == 0);
	CU_ASSERT_STRING_EQUAL(resp_service(&res), "req-42");
	/* Metadata names travel lowercase. */
	CU_ASSERT(echo_sync(main_srv.addr, "/seo.test.Echo/Echo",
			    "meta:seo-workspace-id", 2000, meta, 2, a,
			    &res) == 0);
	CU_ASSERT_STRING_EQUAL(resp_service(&res), "ws1");

	/* Empty request and response messages (zero-length payloads). */
	CU_ASSERT(echo_sync(main_srv.addr, "/seo.test.Echo/Echo", NULL, 2000,
			    NULL, 0, a, &res) == 0);
	CU_ASSERT_STRING_EQUAL(resp_service(&res), "");
	seo_arena_free(a);
}

/* The value of response metadata `name` in res, or NULL. */
static const char *res_meta(const rpc_result *res, const char *name)
{
	for (size_t i = 0; i < res->n_meta; i++)
		if (strcmp(res->meta[i].name, name) == 0)
			return res->meta[i].value;
	return NULL;
}

/* A handler's response metadata reaches the client; the protocol's own
 * names and malformed ones are refused. */
static void test_response_meta(void)
{
	static const struct {
		const char *ask, *rc, *name, *value;
	} cases[] = {
		{"answer:retry-after=30", "0", "retry-after", "30"},
		{"answer:status=202", "0", RPC_META_HTTP_STATUS, "202"},
		{"answer:status=99", "-2", RPC_META_HTTP_STATUS, NULL},
		{"answer:grpc-status=1", "-2", "grpc-status", NULL},
		{"answer:seo-error-code=x", "-2", "seo-error-code", NULL},
		{"answer:content-type=text/plain", "-2", "content-type", NULL},
		{"answer:X-Up=1", "-2", "x-up", NULL},
		{"answer:x-up=a\nb", "-2", "x-up", NULL},
		{"answer:=1", "-2", "", NULL},
	};
	seo_arena *a = seo_arena_new(0);
	rpc_result res;

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		CU_ASSERT(echo_sync(main_srv.addr, "/seo.test.Echo/Echo",
				    cases[i].ask, 2000, NULL, 0, a, &res) == 0);
		CU_ASSERT_STRING_EQUAL(resp_service(&res), cases[i].rc);
		if (cases[i].value == NULL) {
			CU_ASSERT_PTR_NULL(res_meta(&res, cases[i].name));
			CU_ASSERT_EQUAL(res.n_meta, 0);
		} else {
			CU_ASSERT_PTR_NOT_NULL_FATAL(res_meta(&res, cases[i].name));
			CU_ASSERT_STRING_EQUAL(res_meta(&res, cases[i].name),
					       cases[i].value);
		}
	}
	/* None unless a handler sets some. */
	CU_ASSERT(echo_sync(main_srv.addr, "/seo.test.Echo/Echo", "hello", 2000,
			    NULL, 0, a, &res) == 0);
	CU_ASSERT_EQUAL(res.n_meta, 0);
	seo_arena_free(a);
}

static void test_workers_inline(void)
{
	struct tsrv t;
	seo_arena *a = seo_arena_new(0);
	rpc_result res;

	CU_ASSERT_FATAL(tsrv_start(&t, "inline", 0, 0) == 0);
	CU_ASSERT(echo_sync(t.addr, "/seo.test.Echo/Echo", "who", 2000, NULL,
			    0, a, &res) == 0);
	CU_ASSERT_STRING_EQUAL(resp_service(&res), "inline");
	CU_ASSERT(echo_sync(t.addr, "/seo.test.Echo/Fail", "no", 2000, NULL, 0,
			    a, &res) == SEO_EUPSTREAM);
	CU_ASSERT(res.grpc_status == SEO_GRPC_FAILED_PRECONDITION);
	tsrv_stop(&t);
	seo_arena_free(a);
}

/* Run-inline rule of Echo2: every request but "thread:heavy". */
static int light_only(const ProtobufCMessage *req)
{
	const EchoMsg *in = (const EchoMsg *)req;

	return in->service == NULL || strcmp(in->service, "thread:heavy") != 0;
}

/* A method marked inline runs on the loop thread of a server with
 * workers, a method with a rule only for the requests it accepts; the
 * others still go to the workers. */
static void test_run_inline(void)
{
	struct tsrv t;
	seo_arena *a = seo_arena_new(0);
	rpc_result res;

	memset(&t, 0, sizeof(t));
	t.base = event_base_new();
	CU_ASSERT_FATAL(t.base != NULL);
	CU_ASSERT_FATAL(rpc_server_new(t.base, methods, N_METHODS, &t.svc, 2,
				       &t.srv) == 0);
	CU_ASSERT(rpc_server_run_inline(t.srv, "/seo.test.Echo/Nope", NULL) ==
		  SEO_EINVAL);
	CU_ASSERT(rpc_server_run_inline(t.srv, "/seo.test.Echo/Echo", NULL) ==
		  0);
	CU_ASSERT(rpc_server_run_inline(t.srv, "/seo.test.Echo/Echo2",
					light_only) == 0);
	CU_ASSERT_FATAL(rpc_server_listen(t.srv, "127.0.0.1:0") == 0);
	snprintf(t.addr, sizeof(t.addr), "127.0.0.1:%u",
		 rpc_server_port(t.srv));
	CU_ASSERT_FATAL(pthread_create(&t.thread, NULL, tsrv_main, &t) == 0);
	t.svc.loop = t.thread;
	CU_ASSERT(echo_sync(t.addr, "/seo.test.Echo/Echo", "thread", 2000,
			    NULL, 0, a, &res) == 0);
	CU_ASSERT_STRING_EQUAL(resp_service(&res), "loop");
	CU_ASSERT(echo_sync(t.addr, "/seo.test.Echo/Echo2", "thread", 2000,
			    NULL, 0, a, &res) == 0);
	CU_ASSERT_STRING_EQUAL(resp_service(&res), "loop");
	CU_ASSERT(echo_sync(t.addr, "/seo.test.Echo/Echo2", "thread:heavy",
			    2000, NULL, 0, a, &res) == 0);
	CU_ASSERT_STRING_EQUAL(resp_service(&res), "worker");
	tsrv_stop(&t);
	seo_arena_free(a);
}

static void test_error_trailers(void)
{
	seo_arena *a = seo_arena_new(0);
	rpc_result res;
	const char *text = "balance 3 < 5: 100% caf\xc3\xa9\nline2";

	CU_ASSERT(echo_sync(main_srv.addr, "/seo.test.Echo/Fail", text, 2000,
			    NULL, 0, a, &res) == SEO_EUPSTREAM);
	CU_ASSERT(res.grpc_status == SEO_GRPC_FAILED_PRECONDITION);
	CU_ASSERT_PTR_NOT_NULL_FATAL(res.code);
	CU_ASSERT_STRING_EQUAL(res.code, "insufficient_credits");
	CU_ASSERT_PTR_NOT_NULL_FATAL(res.extra_json);
	CU_ASSERT_STRING_EQUAL(res.extra_json, "{\"retry_after\": 12}");
	CU_ASSERT_STRING_EQUAL(res.message, text);
	CU_ASSERT_PTR_NULL(res.response);
	/* Response metadata travels with a failure too. */
	CU_ASSERT_EQUAL_FATAL(res.n_meta, 1);
	CU_ASSERT_STRING_EQUAL(res.meta[0].name, "retry-after");
	CU_ASSERT_STRING_EQUAL(res.meta[0].value, "12");

	/* A handler that succeeds without a response is an internal error. */
	{
		Seo__Account__V1__Empty e = SEO__ACCOUNT__V1__EMPTY__INIT;

		CU_ASSERT(rpc_call_sync(main_srv.addr, "/seo.test.Echo/Bad",
					&e.base,
					&seo__account__v1__empty__descriptor, a,
					2000, NULL, 0, &res) == SEO_EUPSTREAM);
		CU_ASSERT(res.grpc_status == SEO_GRPC_INTERNAL);
		CU_ASSERT_STRING_EQUAL(res.code, "internal_error");
	}
	seo_arena_free(a);
}

static void test_wire_trailers_only(void)
{
	uint8_t body[256];
	size_t n = frame_echo("100% caf\xc3\xa9\n", body);
	struct raw_hdr h[N_GRPC_HDRS];
	struct raw_resp r;

	memcpy(h, grpc_hdrs, sizeof(h));
	h[2].value = "/seo.test.Echo/Fail";
	raw_call(main_srv.port, h, N_GRPC_HDRS, body, n, 1, &r);
	CU_ASSERT(r.status == 200);
	CU_ASSERT_STRING_EQUAL(r.content_type, "application/grpc");
	CU_ASSERT(r.grpc_status == SEO_GRPC_FAILED_PRECONDITION);
	CU_ASSERT_STRING_EQUAL(r.grpc_message, "100%25 caf%C3%A9%0A");
	CU_ASSERT_STRING_EQUAL(r.code, "insufficient_credits");
	/* Trailers-only: one HEADERS frame ending the stream, no DATA. */
	CU_ASSERT(r.header_frames == 1);
	CU_ASSERT(r.first_headers_end_stream);
	CU_ASSERT(r.data_frames == 0);
	CU_ASSERT(!r.rst);
}

static void test_wire_ok_response(void)
{
	uint8_t body[256];
	size_t n = frame_echo("ping", body);
	struct raw_hdr h[N_GRPC_HDRS + 1];
	struct raw_resp r;
	EchoMsg *m;

	memcpy(h, grpc_hdrs, sizeof(grpc_hdrs));
	/* Also: application/grpc+proto and no te header are accepted. */
	h[4].value = "application/grpc+proto";
	h[5] = (struct raw_hdr){"grpc-timeout", "5S"};
	raw_call(main_srv.port, h, N_GRPC_HDRS, body, n, 1, &r);
	CU_ASSERT(r.status == 200);
	CU_ASSERT_STRING_EQUAL(r.content_type, "application/grpc");
	CU_ASSERT(r.grpc_status == 0);
	CU_ASSERT(r.header_frames == 2); /* headers, then trailers */
	CU_ASSERT(!r.first_headers_end_stream);
	CU_ASSERT_FATAL(r.data_len == RPC_PREFIX_LEN + 6);
	CU_ASSERT(r.data[0] == 0);
	CU_ASSERT(rpc_prefix_len(r.data) == 6);
	m = (EchoMsg *)protobuf_c_message_unpack(ECHO_DESC, NULL, 6,
						 r.data + RPC_PREFIX_LEN);
	CU_ASSERT_FATAL(m != NULL);
	CU_ASSERT_STRING_EQUAL(m->service, "ping");
	protobuf_c_message_free_unpacked(&m->base, NULL);
}

static void test_wire_http_errors(void)
{
	uint8_t body[64];
	size_t n = frame_echo("x", body);
	struct raw_hdr h[N_GRPC_HDRS];
	struct raw_resp r;

	memcpy(h, grpc_hdrs, sizeof(h));
	h[4].value = "application/json";
	raw_call(main_srv.port, h, N_GRPC_HDRS, body, n, 1, &r);
	CU_ASSERT(r.status == 415);
	CU_ASSERT(r.grpc_status == -1);

	memcpy(h, grpc_hdrs, sizeof(h));
	h[0].value = "GET";
	raw_call(main_srv.port, h, N_GRPC_HDRS, NULL, 0, 1, &r);
	CU_ASSERT(r.status == 405);

	/* Also through curl, when there is one (a few times: an early
	 * response races the request body). */
	if (system("command -v curl >/dev/null 2>&1") == 0) {
		char cmd[256];
		int ok = 0;

		snprintf(cmd, sizeof(cmd),
			 "curl -s -o /dev/null -w '%%{http_code}\\n' "
			 "--http2-prior-knowledge -H 'content-type: text/plain' "
			 "-d x http://%s/seo.test.Echo/Echo",
			 main_srv.addr);
		for (int i = 0; i < 10; i++) {
			FILE *p = popen(cmd, "r");
			int code = 0;

			CU_ASSERT_FATAL(p != NULL);
			if (fscanf(p, "%d", &code) == 1 && code == 415)
				ok++;
			pclose(p);
		}
		CU_ASSERT(ok == 10);
	}
}

static void test_wire_violations(void)
{
	uint8_t body[256];
	size_t n = frame_echo("x", body);
	struct raw_hdr h[N_GRPC_HDRS + 1];
	struct raw_resp r;

	/* Unknown method: UNIMPLEMENTED trailers-only. Sent without
	 * END_STREAM: the early trailers are followed by RST(NO_ERROR). */
	memcpy(h, grpc_hdrs, sizeof(grpc_hdrs));
	h[2].value = "/seo.test.Echo/Nope";
	raw_call(main_srv.port, h, N_GRPC_HDRS, body, n, 0, &r);
	CU_ASSERT(r.grpc_status == SEO_GRPC_UNIMPLEMENTED);
	CU_ASSERT(r.first_headers_end_stream);
	CU_ASSERT(r.rst && r.rst_code == NGHTTP2_NO_ERROR);

	/* Compressed flag without compression. */
	body[0] = 1;
	raw_call(main_srv.port, grpc_hdrs, N_GRPC_HDRS, body, n, 1, &r);
	CU_ASSERT(r.grpc_status == SEO_GRPC_INTERNAL);
	CU_ASSERT(strstr(r.grpc_message, "compress") != NULL);
	body[0] = 0;

	/* An encoding we do not have. */
	memcpy(h, grpc_hdrs, sizeof(grpc_hdrs));
	h[N_GRPC_HDRS] = (struct raw_hdr){"grpc-encoding", "gzip"};
	raw_call(main_srv.port, h, N_GRPC_HDRS + 1, body, n, 1, &r);
	CU_ASSERT(r.grpc_status == SEO_GRPC_UNIMPLEMENTED);
	CU_ASSERT_STRING_EQUAL(r.accept_encoding, "identity");

	/* Two messages on a unary call, and none. */
	memcpy(body + n, body, n);
	raw_call(main_srv.port, grpc_hdrs, N_GRPC_HDRS, body, 2 * n, 1, &r);
	CU_ASSERT(r.grpc_status == SEO_GRPC_UNIMPLEMENTED);
	raw_call(main_srv.port, grpc_hdrs, N_GRPC_HDRS, NULL, 0, 1, &r);
	CU_ASSERT(r.grpc_status == SEO_GRPC_UNIMPLEMENTED);

	/* A truncated message. */
	raw_call(main_srv.port, grpc_hdrs, N_GRPC_HDRS, body, n - 1, 1, &r);
	CU_ASSERT(r.grpc_status == SEO_GRPC_INTERNAL);

	/* A bad grpc-timeout. */
	memcpy(h, grpc_hdrs, sizeof(grpc_hdrs));
	h[N_GRPC_HDRS] = (struct raw_hdr){"grpc-timeout", "soon"};
	raw_call(main_srv.port, h, N_GRPC_HDRS + 1, body, n, 1, &r);
	CU_ASSERT(r.grpc_status == SEO_GRPC_INTERNAL);
}

static void test_unknown_method(void)
{
	seo_arena *a = seo_arena_new(0);
	rpc_result res;

	CU_ASSERT(echo_sync(main_srv.addr, "/seo.test.Echo/Missing", "x", 2000,
			    NULL, 0, a, &res) == SEO_EUPSTREAM);
	CU_ASSERT(res.grpc_status == SEO_GRPC_UNIMPLEMENTED);
	CU_ASSERT(strstr(res.message, "/seo.test.Echo/Missing") != NULL);
	seo_arena_free(a);
}

static int health(const char *addr, seo_arena *a, const char *service)
{
	Grpc__Health__V1__HealthCheckRequest req =
		GRPC__HEALTH__V1__HEALTH_CHECK_REQUEST__INIT;
	rpc_result res;

	req.service = (char *)service;
	if (rpc_call_sync(addr, "/grpc.health.v1.Health/Check", &req.base,
			  &grpc__health__v1__health_check_response__descriptor,
			  a, 2000, NULL, 0, &res) != 0)
		return -1;
	return ((Grpc__Health__V1__HealthCheckResponse *)res.response)->status;
}

static void test_health(void)
{
	seo_arena *a = seo_arena_new(0);
	int off = 0, on = 1;

	CU_ASSERT(health(main_srv.addr, a, NULL) ==
		  GRPC__HEALTH__V1__HEALTH_CHECK_RESPONSE__SERVING_STATUS__SERVING);
	CU_ASSERT(health(main_srv.addr, a, "seo.test.Echo") ==
		  GRPC__HEALTH__V1__HEALTH_CHECK_RESPONSE__SERVING_STATUS__SERVING);
	tsrv_run(&main_srv, do_serving, &off);
	CU_ASSERT(health(main_srv.addr, a, "") ==
		  GRPC__HEALTH__V1__HEALTH_CHECK_RESPONSE__SERVING_STATUS__NOT_SERVING);
	tsrv_run(&main_srv, do_serving, &on);
	CU_ASSERT(health(main_srv.addr, a, "") ==
		  GRPC__HEALTH__V1__HEALTH_CHECK_RESPONSE__SERVING_STATUS__SERVING);
	seo_arena_free(a);
}

/* A server created under SEO_INTERNAL_TOKEN refuses a call without it, or
 * with another value, before it looks the method up; its health check
 * stays open; a client created under the same token gets through. */
static void test_internal_token(void)
{
	const rpc_meta forged[] = {{RPC_META_INTERNAL_TOKEN, "guess-guess-guess"}};
	const char *echo = "/seo.test.Echo/Echo";
	seo_arena *a = seo_arena_new(0);
	struct tsrv t;
	rpc_result res;

	seo_test_config_set("SEO_INTERNAL_TOKEN", "internal-token-of-the-test");
	CU_ASSERT_FATAL(tsrv_start(&t, "guarded", 0, 2) == 0);
	CU_ASSERT(echo_sync(t.addr, echo, "who", 2000, NULL, 0, a, &res) == 0);
	CU_ASSERT_STRING_EQUAL(resp_service(&res), "guarded");

	seo_test_config_set("SEO_INTERNAL_TOKEN", NULL);
	CU_ASSERT(echo_sync(t.addr, echo, "who", 2000, NULL, 0, a, &res) ==
		  SEO_EUPSTREAM);
	CU_ASSERT(res.grpc_status == SEO_GRPC_UNAUTHENTICATED);
	CU_ASSERT(res.code != NULL && strcmp(res.code, "internal_error") == 0);
	CU_ASSERT(echo_sync(t.addr, echo, "who", 2000, forged, 1, a, &res) ==
		  SEO_EUPSTREAM);
	CU_ASSERT(res.grpc_status == SEO_GRPC_UNAUTHENTICATED);
	/* no method list for a caller without the token */
	CU_ASSERT(echo_sync(t.addr, "/seo.test.Echo/Missing", "", 2000, NULL,
			    0, a, &res) == SEO_EUPSTREAM);
	CU_ASSERT(res.grpc_status == SEO_GRPC_UNAUTHENTICATED);
	CU_ASSERT(health(t.addr, a, "") ==
		  GRPC__HEALTH__V1__HEALTH_CHECK_RESPONSE__SERVING_STATUS__SERVING);

	seo_test_config_set("SEO_INTERNAL_TOKEN", "internal-token-of-another");
	CU_ASSERT(echo_sync(t.addr, echo, "who", 2000, NULL, 0, a, &res) ==
		  SEO_EUPSTREAM);
	CU_ASSERT(res.grpc_status == SEO_GRPC_UNAUTHENTICATED);
	seo_test_config_set("SEO_INTERNAL_TOKEN", NULL);
	tsrv_stop(&t);
	seo_arena_free(a);
}

static int slow_sync(const char *addr, int64_t ms, int timeout_ms,
		     const rpc_meta *meta, size_t n_meta, seo_arena *a,
		     rpc_result *res)
{
	Seo__Account__V1__Credits req = SEO__ACCOUNT__V1__CREDITS__INIT;

	req.credits = ms;
	return rpc_call_sync(addr, "/seo.test.Echo/Slow", &req.base,
			     &seo__account__v1__credits__descriptor, a,
			     timeout_ms, meta, n_meta, res);
}

static void test_deadline_server(void)
{
	seo_arena *a = seo_arena_new(0);
	rpc_result res;
	/* No local deadline: only the server's timer can end this call. */
	rpc_meta meta[] = {{"grpc-timeout", "100m"}};
	int before = atomic_load(&slow_finished);
	int saw = atomic_load(&slow_saw_cancel);
	int64_t t0 = seo_mono_ms(), el;

	CU_ASSERT(slow_sync(main_srv.addr, 400, 0, meta, 1, a, &res) ==
		  SEO_EUPSTREAM);
	el = seo_mono_ms() - t0;
	CU_ASSERT(res.grpc_status == SEO_GRPC_DEADLINE_EXCEEDED);
	CU_ASSERT_STRING_EQUAL(res.message, "deadline exceeded");
	CU_ASSERT(el >= 90 && el < 350);
	/* The handler finishes later; its result must be dropped cleanly. */
	for (int i = 0; i < 200 && atomic_load(&slow_finished) == before; i++)
		sleep_ms(5);
	CU_ASSERT(atomic_load(&slow_finished) == before + 1);
	CU_ASSERT(atomic_load(&slow_saw_cancel) == saw + 1);
	sleep_ms(20);
	CU_ASSERT(slow_sync(main_srv.addr, 1, 2000, NULL, 0, a, &res) == 0);
	CU_ASSERT(((Seo__Account__V1__Credits *)res.response)->credits == 1);
	seo_arena_free(a);
}

static void test_deadline_client(void)
{
	seo_arena *a = seo_arena_new(0);
	rpc_result res;
	int before = atomic_load(&slow_finished);
	int64_t t0 = seo_mono_ms(), el;

	CU_ASSERT(slow_sync(main_srv.addr, 500, 100, NULL, 0, a, &res) ==
		  SEO_EUPSTREAM);
	el = seo_mono_ms() - t0;
	CU_ASSERT(res.grpc_status == SEO_GRPC_DEADLINE_EXCEEDED);
	CU_ASSERT(el >= 95 && el < 400);
	for (int i = 0; i < 200 && atomic_load(&slow_finished) == before; i++)
		sleep_ms(5);
	seo_arena_free(a);
}

static void test_concurrent(void)
{
	enum { N = 100 };
	static struct acall calls[N];
	rpc_client *c;
	char text[N][16];
	int done = 0;
	size_t busy = 99;

	CU_ASSERT_FATAL(rpc_client_new(cbase, main_srv.addr, &c) == 0);
	memset(calls, 0, sizeof(calls));
	for (int i = 0; i < N; i++) {
		EchoMsg req = GRPC__HEALTH__V1__HEALTH_CHECK_REQUEST__INIT;
		Seo__Account__V1__Credits slow = SEO__ACCOUNT__V1__CREDITS__INIT;

		calls[i].counter = &done;
		snprintf(text[i], sizeof(text[i]), "n%d", i);
		req.service = text[i];
		slow.credits = 50;
		/* Every tenth call sleeps on a worker meanwhile. */
		if (i % 10 == 0) {
			CU_ASSERT(acall_start(c, "/seo.test.Echo/Slow",
					      &slow.base,
					      &seo__account__v1__credits__descriptor,
					      5000, NULL, 0, &calls[i]) == 0);
		} else {
			CU_ASSERT(acall_start(c, "/seo.test.Echo/Echo",
					      &req.base, ECHO_DESC, 5000, NULL,
					      0, &calls[i]) == 0);
		}
	}
	run_until(cbase, &done, N, 10000);
	CU_ASSERT(done == N);
	for (int i = 0; i < N; i++) {
		CU_ASSERT(calls[i].done == 1);
		CU_ASSERT(!calls[i].reentrant);
		CU_ASSERT(calls[i].status == SEO_GRPC_OK);
		if (i % 10 == 0) {
			CU_ASSERT(calls[i].credits == 50);
		} else {
			CU_ASSERT_STRING_EQUAL(calls[i].service, text[i]);
		}
	}
	/* All of it on one connection. */
	tsrv_run(&main_srv, do_busy, &busy);
	CU_ASSERT(busy == 1);
	rpc_client_free(c);
}

/* One worker and room for two waiting calls: of five slow calls at once,
 * one runs, two wait and run, and two are refused at once, UNAVAILABLE
 * service_unavailable with a Retry-After, rather than held (three, when
 * the worker thread is not yet waiting as the calls arrive). */
static void test_queue_full(void)
{
	enum { N = 5 };
	struct acall calls[N];
	struct tsrv t;
	rpc_client *c;
	int done = 0, ok = 0, busy = 0;

	seo_test_config_set("SEO_RPC_QUEUE_MAX", "2");
	CU_ASSERT_FATAL(tsrv_start(&t, "queue", 0, 1) == 0);
	seo_test_config_set("SEO_RPC_QUEUE_MAX", NULL);
	CU_ASSERT_FATAL(rpc_client_new(cbase, t.addr, &c) == 0);
	memset(calls, 0, sizeof(calls));
	for (int i = 0; i < N; i++) {
		Seo__Account__V1__Credits slow = SEO__ACCOUNT__V1__CREDITS__INIT;

		slow.credits = 200;
		calls[i].counter = &done;
		CU_ASSERT(acall_start(c, "/seo.test.Echo/Slow", &slow.base,
				      &seo__account__v1__credits__descriptor,
				      5000, NULL, 0, &calls[i]) == 0);
	}
	run_until(cbase, &done, N, 5000);
	CU_ASSERT(done == N);
	for (int i = 0; i < N; i++) {
		if (calls[i].status == SEO_GRPC_OK) {
			ok++;
			continue;
		}
		busy++;
		CU_ASSERT_EQUAL(calls[i].status, SEO_GRPC_UNAVAILABLE);
		CU_ASSERT_STRING_EQUAL(calls[i].code, "service_unavailable");
		CU_ASSERT_STRING_EQUAL(calls[i].retry_after, "2");
		CU_ASSERT_PTR_NOT_NULL(strstr(calls[i].extra, "\"retry_after\":2"));
		/* refused at once, not after the calls ahead of it */
		CU_ASSERT(calls[i].finished - calls[i].started < 150);
	}
	/* three when the worker already waited for a call, else two */
	CU_ASSERT(ok == 3 || ok == 2);
	CU_ASSERT_EQUAL(ok + busy, N);
	rpc_client_free(c);
	tsrv_stop(&t);
}

static void test_message_limits(void)
{
	seo_arena *a = seo_arena_new(0);
	rpc_result res;
	size_t near = RPC_MAX_MESSAGE - 64;
	char *big = malloc(RPC_MAX_MESSAGE + 16);
	uint8_t hdr[RPC_PREFIX_LEN + 32];
	struct raw_resp r;
	char spec[32];

	CU_ASSERT_FATAL(big != NULL);
	/* Just under the limit, both ways. */
	memset(big, 'y', near);
	big[near] = '\0';
	CU_ASSERT(echo_sync(main_srv.addr, "/seo.test.Echo/Echo", big, 10000,
			    NULL, 0, a, &res) == 0);
	CU_ASSERT(strlen(resp_service(&res)) == near);

	/* Over the limit: our client refuses to send it. */
	memset(big, 'z', RPC_MAX_MESSAGE + 10);
	big[RPC_MAX_MESSAGE + 10] = '\0';
	CU_ASSERT(echo_sync(main_srv.addr, "/seo.test.Echo/Echo", big, 10000,
			    NULL, 0, a, &res) == SEO_EUPSTREAM);
	CU_ASSERT(res.grpc_status == SEO_GRPC_RESOURCE_EXHAUSTED);

	/* ... and the server refuses it from the prefix alone, before the
	 * request ended: trailers, then RST_STREAM(NO_ERROR). */
	rpc_prefix_put(hdr, RPC_MAX_MESSAGE + 1);
	memset(hdr + RPC_PREFIX_LEN, 'q', 32);
	raw_call(main_srv.port, grpc_hdrs, N_GRPC_HDRS, hdr, sizeof(hdr), 0,
		 &r);
	CU_ASSERT(r.grpc_status == SEO_GRPC_RESOURCE_EXHAUSTED);
	CU_ASSERT(r.first_headers_end_stream);
	CU_ASSERT(r.rst && r.rst_code == NGHTTP2_NO_ERROR);

	/* A handler's response over the limit is not sent. */
	snprintf(spec, sizeof(spec), "big:%d", RPC_MAX_MESSAGE + 1);
	CU_ASSERT(echo_sync(main_srv.addr, "/seo.test.Echo/Echo", spec, 10000,
			    NULL, 0, a, &res) == SEO_EUPSTREAM);
	CU_ASSERT(res.grpc_status == SEO_GRPC_RESOURCE_EXHAUSTED);
	free(big);
	seo_arena_free(a);
}

/* A raw HTTP/2 server that announces a 5 MiB response message. It takes
 * the connection the way the gateway does: the client preface is peeked
 * in the bufferevent before the pump is created. */
struct bigsrv {
	struct evconnlistener *l;
	struct bufferevent *bev;
	nghttp2_session *session;
	seo_h2io *io;
	int got_rst;
	uint32_t rst_code;
	int sent;
};

static ssize_t big_read(nghttp2_session *s, int32_t id, uint8_t *buf,
			size_t len, uint32_t *flags, nghttp2_data_source *src,
			void *ud)
{
	struct bigsrv *b = ud;

	(void)s;
	(void)id;
	(void)src;
	(void)len;
	if (b->sent)
		return NGHTTP2_ERR_DEFERRED;
	b->sent = 1;
	rpc_prefix_put(buf, 5 * 1024 * 1024);
	memset(buf + RPC_PREFIX_LEN, 0, 100);
	(void)flags;
	return RPC_PREFIX_LEN + 100;
}

static int big_frame_recv(nghttp2_session *s, const nghttp2_frame *f,
			  void *ud)
{
	struct bigsrv *b = ud;
	nghttp2_nv nva[2] = {
		{(uint8_t *)":status", (uint8_t *)"200", 7, 3, 0},
		{(uint8_t *)"content-type", (uint8_t *)"application/grpc", 12,
		 16, 0},
	};
	nghttp2_data_provider prd = {{0}, big_read};

	if (f->hd.type == NGHTTP2_RST_STREAM) {
		b->got_rst = 1;
		b->rst_code = f->rst_stream.error_code;
	}
	if ((f->hd.type == NGHTTP2_DATA || f->hd.type == NGHTTP2_HEADERS) &&
	    (f->hd.flags & NGHTTP2_FLAG_END_STREAM))
		nghttp2_submit_response(s, f->hd.stream_id, nva, 2, &prd);
	return 0;
}

static void big_close(seo_h2io *io, void *ud)
{
	struct bigsrv *b = ud;

	(void)io;
	seo_h2io_free(b->io);
	b->io = NULL;
}

static void big_preface(struct bufferevent *bev, void *ud)
{
	struct bigsrv *b = ud;
	struct evbuffer *in = bufferevent_get_input(bev);
	nghttp2_session_callbacks *cb;

	if (evbuffer_get_length(in) < NGHTTP2_CLIENT_MAGIC_LEN)
		return;
	CU_ASSERT(memcmp(evbuffer_pullup(in, NGHTTP2_CLIENT_MAGIC_LEN),
			 NGHTTP2_CLIENT_MAGIC, NGHTTP2_CLIENT_MAGIC_LEN) == 0);
	nghttp2_session_callbacks_new(&cb);
	nghttp2_session_callbacks_set_on_frame_recv_callback(cb,
							     big_frame_recv);
	nghttp2_session_server_new(&b->session, cb, b);
	nghttp2_session_callbacks_del(cb);
	nghttp2_submit_settings(b->session, NGHTTP2_FLAG_NONE, NULL, 0);
	/* The preface is still in the input: the pump consumes it. */
	CU_ASSERT(seo_h2io_new(bev, b->session, SEO_H2IO_CLEARTEXT, big_close, b,
			       &b->io) == 0);
}

static void big_accept(struct evconnlistener *l, evutil_socket_t fd,
		       struct sockaddr *sa, int len, void *ud)
{
	struct bigsrv *b = ud;

	(void)l;
	(void)sa;
	(void)len;
	b->bev = bufferevent_socket_new(cbase, fd, BEV_OPT_CLOSE_ON_FREE);
	bufferevent_setwatermark(b->bev, EV_READ, NGHTTP2_CLIENT_MAGIC_LEN, 0);
	bufferevent_setcb(b->bev, big_preface, NULL, NULL, b);
	bufferevent_enable(b->bev, EV_READ);
}

static void test_client_rejects_big_response(void)
{
	struct bigsrv b;
	struct sockaddr_in sin;
	socklen_t sl = sizeof(sin);
	char addr[64];
	rpc_client *c;
	struct acall call = {0};
	EchoMsg req = GRPC__HEALTH__V1__HEALTH_CHECK_REQUEST__INIT;

	memset(&b, 0, sizeof(b));
	memset(&sin, 0, sizeof(sin));
	sin.sin_family = AF_INET;
	sin.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	b.l = evconnlistener_new_bind(cbase, big_accept, &b,
				      LEV_OPT_CLOSE_ON_FREE | LEV_OPT_REUSEABLE,
				      16, (struct sockaddr *)&sin, sizeof(sin));
	CU_ASSERT_FATAL(b.l != NULL);
	getsockname(evconnlistener_get_fd(b.l), (struct sockaddr *)&sin, &sl);
	snprintf(addr, sizeof(addr), "127.0.0.1:%u", ntohs(sin.sin_port));
	CU_ASSERT_FATAL(rpc_client_new(cbase, addr, &c) == 0);
	req.service = "x";
	CU_ASSERT(acall_start(c, "/seo.test.Echo/Echo", &req.base, ECHO_DESC,
			      3000, NULL, 0, &call) == 0);
	run_until(cbase, &call.done, 1, 5000);
	CU_ASSERT(call.done == 1);
	CU_ASSERT(call.status == SEO_GRPC_RESOURCE_EXHAUSTED);
	CU_ASSERT(strstr(call.message, "exceeds") != NULL);
	CU_ASSERT(call.finished - call.started < 1000);
	/* The client cancelled the stream it no longer wants. */
	run_until(cbase, &b.got_rst, 1, 2000);
	CU_ASSERT(b.got_rst && b.rst_code == NGHTTP2_CANCEL);
	rpc_client_free(c);
	run_until(cbase, NULL, 0, 50);
	seo_h2io_free(b.io);
	nghttp2_session_del(b.session);
	evconnlistener_free(b.l);
}

static void test_down_and_restart(void)
{
	struct tsrv t;
	unsigned port;
	rpc_client *c;
	struct acall a1 = {0}, a2 = {0}, a3 = {0}, a4 = {0};
	EchoMsg req = GRPC__HEALTH__V1__HEALTH_CHECK_REQUEST__INIT;
	int64_t t0;
	int ok = 0;

	req.service = "who";
	/* Take a free port, then leave it unused. */
	CU_ASSERT_FATAL(tsrv_start(&t, "first", 0, 1) == 0);
	port = t.port;
	tsrv_stop(&t);

	CU_ASSERT_FATAL(rpc_client_new(cbase, t.addr, &c) == 0);
	/* Down: fails fast, long before the deadline, and not inside the
	 * call. */
	CU_ASSERT(acall_start(c, "/seo.test.Echo/Echo", &req.base, ECHO_DESC,
			      5000, NULL, 0, &a1) == 0);
	CU_ASSERT(a1.done == 0);
	run_until(cbase, &a1.done, 1, 6000);
	CU_ASSERT(a1.done == 1 && !a1.reentrant);
	CU_ASSERT(a1.status == SEO_GRPC_UNAVAILABLE);
	CU_ASSERT(a1.finished - a1.started < 500);
	/* During the back-off: fails at once, still from the loop. */
	CU_ASSERT(acall_start(c, "/seo.test.Echo/Echo", &req.base, ECHO_DESC,
			      5000, NULL, 0, &a2) == 0);
	CU_ASSERT(a2.done == 0);
	run_until(cbase, &a2.done, 1, 6000);
	CU_ASSERT(a2.status == SEO_GRPC_UNAVAILABLE);
	CU_ASSERT(a2.finished - a2.started < 100);

	/* Up again on the same port: the same client gets through. */
	CU_ASSERT_FATAL(tsrv_start(&t, "second", port, 1) == 0);
	t0 = seo_mono_ms();
	while (!ok && seo_mono_ms() - t0 < 3000) {
		memset(&a3, 0, sizeof(a3));
		CU_ASSERT(acall_start(c, "/seo.test.Echo/Echo", &req.base,
				      ECHO_DESC, 2000, NULL, 0, &a3) == 0);
		run_until(cbase, &a3.done, 1, 3000);
		ok = a3.status == SEO_GRPC_OK;
		if (!ok)
			run_until(cbase, NULL, 0, 50);
	}
	CU_ASSERT(ok);
	CU_ASSERT_STRING_EQUAL(a3.service, "second");

	/* Server gone while connected: UNAVAILABLE, then back again. */
	tsrv_stop(&t);
	CU_ASSERT(acall_start(c, "/seo.test.Echo/Echo", &req.base, ECHO_DESC,
			      5000, NULL, 0, &a4) == 0);
	run_until(cbase, &a4.done, 1, 6000);
	CU_ASSERT(a4.status == SEO_GRPC_UNAVAILABLE);
	CU_ASSERT(a4.finished - a4.started < 500);
	rpc_client_free(c);
}

static void test_goaway(void)
{
	struct tsrv a, b;
	rpc_client *c;
	struct acall slow = {0}, x = {0}, y = {0};
	EchoMsg req = GRPC__HEALTH__V1__HEALTH_CHECK_REQUEST__INIT;
	Seo__Account__V1__Credits sreq = SEO__ACCOUNT__V1__CREDITS__INIT;
	size_t busy = 99;

	req.service = "who";
	sreq.credits = 300;
	CU_ASSERT_FATAL(tsrv_start(&a, "A", 0, 2) == 0);
	CU_ASSERT_FATAL(rpc_client_new(cbase, a.addr, &c) == 0);
	CU_ASSERT(acall_start(c, "/seo.test.Echo/Slow", &sreq.base,
			      &seo__account__v1__credits__descriptor, 5000,
			      NULL, 0, &slow) == 0);
	run_until(cbase, NULL, 0, 80);
	CU_ASSERT(slow.done == 0);

	/* A says GOAWAY and stops listening; B takes over the port. */
	tsrv_run(&a, do_shutdown, NULL);
	CU_ASSERT_FATAL(tsrv_start(&b, "B", a.port, 2) == 0);

	/* Sent before the client read the GOAWAY: A ignores the stream, the
	 * client learns it was refused and sends it again to B. */
	CU_ASSERT(acall_start(c, "/seo.test.Echo/Echo", &req.base, ECHO_DESC,
			      5000, NULL, 0, &x) == 0);
	run_until(cbase, &x.done, 1, 5000);
	CU_ASSERT(x.status == SEO_GRPC_OK);
	CU_ASSERT_STRING_EQUAL(x.service, "B");
	/* After it: straight to the new connection. */
	CU_ASSERT(acall_start(c, "/seo.test.Echo/Echo", &req.base, ECHO_DESC,
			      5000, NULL, 0, &y) == 0);
	run_until(cbase, &y.done, 1, 5000);
	CU_ASSERT(y.status == SEO_GRPC_OK);
	CU_ASSERT_STRING_EQUAL(y.service, "B");

	/* The call in flight on A finished there. */
	run_until(cbase, &slow.done, 1, 5000);
	CU_ASSERT(slow.status == SEO_GRPC_OK);
	CU_ASSERT(slow.credits == 300);
	/* A closed its connection once nothing was left. */
	for (int i = 0; i < 100 && busy != 0; i++) {
		run_until(cbase, NULL, 0, 20);
		tsrv_run(&a, do_busy, &busy);
	}
	CU_ASSERT(busy == 0);
	rpc_client_free(c);
	tsrv_stop(&a);
	tsrv_stop(&b);
}

static void test_client_free_in_flight(void)
{
	rpc_client *c;
	struct acall s1 = {0}, s2 = {0};
	Seo__Account__V1__Credits sreq = SEO__ACCOUNT__V1__CREDITS__INIT;

	sreq.credits = 200;
	CU_ASSERT_FATAL(rpc_client_new(cbase, main_srv.addr, &c) == 0);
	CU_ASSERT(acall_start(c, "/seo.test.Echo/Slow", &sreq.base,
			      &seo__account__v1__credits__descriptor, 5000,
			      NULL, 0, &s1) == 0);
	CU_ASSERT(acall_start(c, "/seo.test.Echo/Slow", &sreq.base,
			      &seo__account__v1__credits__descriptor, 0, NULL,
			      0, &s2) == 0);
	run_until(cbase, NULL, 0, 30);
	rpc_client_free(c);
	CU_ASSERT(s1.done == 1 && s2.done == 1);
	CU_ASSERT(s1.status == SEO_GRPC_UNAVAILABLE);
	CU_ASSERT(s2.status == SEO_GRPC_UNAVAILABLE);
	run_until(cbase, NULL, 0, 20);
	CU_ASSERT(s1.done == 1 && s2.done == 1);
	sleep_ms(250); /* let the handlers end before the next test */
}

/* A done callback that frees its own client. */
struct self_free {
	rpc_client *c;
	int n;
};

static void free_in_done(const rpc_result *r, void *ud)
{
	struct self_free *sf = ud;

	if (r->response != NULL)
		protobuf_c_message_free_unpacked(r->response, NULL);
	if (sf->n++ == 0)
		rpc_client_free(sf->c);
}

static void test_free_from_done(void)
{
	struct self_free sf = {NULL, 0};
	EchoMsg req = GRPC__HEALTH__V1__HEALTH_CHECK_REQUEST__INIT;

	CU_ASSERT_FATAL(rpc_client_new(cbase, main_srv.addr, &sf.c) == 0);
	req.service = "a";
	CU_ASSERT(rpc_client_call(sf.c, "/seo.test.Echo/Echo", &req.base,
				  ECHO_DESC, NULL, 2000, NULL, 0, free_in_done,
				  &sf) == 0);
	CU_ASSERT(rpc_client_call(sf.c, "/seo.test.Echo/Echo", &req.base,
				  ECHO_DESC, NULL, 2000, NULL, 0, free_in_done,
				  &sf) == 0);
	run_until(cbase, &sf.n, 2, 3000);
	CU_ASSERT(sf.n == 2);
}

int main(void)
{
	CU_pSuite s;
	unsigned failed;

	seo_log_init("test_rpc");
	signal(SIGPIPE, SIG_IGN);
	if (evthread_use_pthreads() != 0)
		return 1;
	cbase = event_base_new();
	if (CU_initialize_registry() != CUE_SUCCESS)
		return 1;
	s = CU_add_suite("rpc", suite_init, suite_clean);
	CU_add_test(s, "wire codecs", test_wire_codecs);
	CU_add_test(s, "unary ok and metadata", test_unary_ok);
	CU_add_test(s, "response metadata", test_response_meta);
	CU_add_test(s, "handlers on the loop thread", test_workers_inline);
	CU_add_test(s, "inline methods beside workers", test_run_inline);
	CU_add_test(s, "error trailers", test_error_trailers);
	CU_add_test(s, "wire: trailers-only, percent-encoding",
		    test_wire_trailers_only);
	CU_add_test(s, "wire: ok response", test_wire_ok_response);
	CU_add_test(s, "wire: 415 and 405", test_wire_http_errors);
	CU_add_test(s, "wire: violations", test_wire_violations);
	CU_add_test(s, "unknown method", test_unknown_method);
	CU_add_test(s, "health", test_health);
	CU_add_test(s, "internal token", test_internal_token);
	CU_add_test(s, "deadline at server", test_deadline_server);
	CU_add_test(s, "deadline at client", test_deadline_client);
	CU_add_test(s, "100 concurrent calls", test_concurrent);
	CU_add_test(s, "a full queue refuses at once", test_queue_full);
	CU_add_test(s, "message limits", test_message_limits);
	CU_add_test(s, "client refuses a big response",
		    test_client_rejects_big_response);
	CU_add_test(s, "server down and restart", test_down_and_restart);
	CU_add_test(s, "goaway", test_goaway);
	CU_add_test(s, "client freed with calls in flight",
		    test_client_free_in_flight);
	CU_add_test(s, "client freed from a done callback",
		    test_free_from_done);
	CU_basic_set_mode(CU_BRM_VERBOSE);
	CU_basic_run_tests();
	failed = CU_get_number_of_tests_failed() +
		 CU_get_number_of_suites_failed();
	CU_cleanup_registry();
	event_base_free(cbase);
	return failed != 0;
}

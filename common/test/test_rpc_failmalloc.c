/*
 * test_rpc_failmalloc.c: the gRPC layer (common/rpc) when allocations fail.
 * A server and a client on one event_base make one call, with allocation
 * 1, 2, ... failing (tests/support/failmalloc.h), until a run makes all
 * its allocations: every run with a failed allocation must end in an
 * error (a failed setup call or a call answered with a gRPC error), none
 * may crash, hang or, under ASan, leak. Counted: the allocations of
 * common/ and of nghttp2 (rpc__mem()), protobuf-c's (through the call's
 * arena), jansson's, and libevent's as lenient ones (libevent absorbs some
 * of its own failures, so a run may then succeed, but must still end).
 */
#include "rpc_internal.h"

#include "failmalloc.h"
#include "seo/errors.h"
#include "seo/json_text.h"
#include "seo/log.h"
#include "seo/util.h"

#include "grpc/health/v1/health.pb-c.h"

#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <CUnit/Basic.h>
#include <event2/event.h>
#include <event2/thread.h>

typedef Grpc__Health__V1__HealthCheckRequest EchoMsg;
#define ECHO_DESC (&grpc__health__v1__health_check_request__descriptor)

/* Answers `service` followed by the x-request-id it was sent. */
static int h_echo(rpc_ctx *ctx, const ProtobufCMessage *req,
		  ProtobufCMessage **resp)
{
	const EchoMsg *in = (const EchoMsg *)req;
	EchoMsg *out = seo_arena_alloc(rpc_ctx_arena(ctx), sizeof(*out));
	const char *id = rpc_ctx_meta(ctx, "x-request-id");

	if (out == NULL)
		return rpc_ctx_fail(ctx, "internal_error", "out of memory");
	grpc__health__v1__health_check_request__init(out);
	out->service = seo_arena_printf(rpc_ctx_arena(ctx), "%s %s",
					in->service, id != NULL ? id : "-");
	if (out->service == NULL)
		return rpc_ctx_fail(ctx, "internal_error", "out of memory");
	*resp = &out->base;
	return 0;
}

/* Fails with a public code, a message and extra fields. */
static int h_fail(rpc_ctx *ctx, const ProtobufCMessage *req,
		  ProtobufCMessage **resp)
{
	(void)req;
	(void)resp;
	rpc_ctx_fail_extra(ctx, "{\"retry_after\": 12}");
	return rpc_ctx_fail(ctx, "insufficient_credits", "need %d more", 7);
}

static const rpc_method methods[] = {
	{"/seo.test.Echo/Echo", ECHO_DESC, ECHO_DESC, h_echo},
	{"/seo.test.Echo/Fail", ECHO_DESC, ECHO_DESC, h_fail},
};

/* One run's call and what its answer must be for the run to succeed. */
struct scenario {
	const char *path;
	int workers;           /* of the server */
	int want_status;       /* gRPC status */
	const char *want_text; /* the response's service, or the error code */
	const char *want_message; /* grpc-message */
	const char *want_extra;
};

struct outcome {
	int done;
	int status;
	char text[64]; /* the response's service, or the error code */
	char message[64];
	char extra[64];
};

static void on_done(const rpc_result *r, void *ud)
{
	struct outcome *o = ud;

	o->done++;
	o->status = r->grpc_status;
	if (r->response != NULL)
		snprintf(o->text, sizeof(o->text), "%s",
			 ((const EchoMsg *)r->response)->service);
	else
		snprintf(o->text, sizeof(o->text), "%s",
			 r->code != NULL ? r->code : "");
	snprintf(o->message, sizeof(o->message), "%s", r->message);
	snprintf(o->extra, sizeof(o->extra), "%s",
		 r->extra_json != NULL ? r->extra_json : "");
}

static void tick_cb(evutil_socket_t fd, short what, void *arg)
{
	(void)fd;
	(void)what;
	(void)arg;
}

/* Runs `base` until the call is done; 0, SEO_ENOMEM, or SEO_ETIMEDOUT
 * after 10 s (a hang). */
static int run_until_done(struct event_base *base, const struct outcome *o)
{
	struct event *tick = event_new(base, -1, EV_PERSIST, tick_cb, NULL);
	struct timeval tv = {0, 10000};
	int64_t end = seo_mono_ms() + 10000;

	if (tick == NULL || event_add(tick, &tv) != 0) {
		if (tick != NULL)
			event_free(tick);
		return SEO_ENOMEM;
	}
	while (o->done == 0 && seo_mono_ms() < end)
		event_base_loop(base, EVLOOP_ONCE);
	event_free(tick);
	return o->done != 0 ? 0 : SEO_ETIMEDOUT;
}

/* The call's outcome as a run's result: 0 when it is the one wanted, a
 * negative code for any other error, 1 for a wrong answer. */
static int judge(const struct scenario *sc, const struct outcome *o)
{
	if (o->done != 1)
		return 1;
	if (o->status != sc->want_status)
		return o->status != SEO_GRPC_OK ? SEO_EIO : 1;
	if (strcmp(o->text, sc->want_text) != 0 ||
	    strcmp(o->message, sc->want_message) != 0 ||
	    strcmp(o->extra, sc->want_extra) != 0)
		return 1;
	return 0;
}

static int run_call(void *ud)
{
	const struct scenario *sc = ud;
	struct event_base *base = event_base_new();
	EchoMsg req = GRPC__HEALTH__V1__HEALTH_CHECK_REQUEST__INIT;
	rpc_meta meta[] = {{"x-request-id", "r-1"}};
	struct outcome o = {0};
	ProtobufCAllocator alloc;
	rpc_server *srv = NULL;
	rpc_client *c = NULL;
	seo_arena *a = NULL;
	char addr[64];
	int rc;

	if (base == NULL)
		return SEO_ENOMEM;
	req.service = "ping";
	rc = rpc_server_new(base, methods, sizeof(methods) / sizeof(methods[0]),
			    NULL, sc->workers, &srv);
	if (rc == 0)
		rc = rpc_server_listen(srv, "127.0.0.1:0");
	if (rc == 0) {
		snprintf(addr, sizeof(addr), "127.0.0.1:%u",
			 rpc_server_port(srv));
		rc = rpc_client_new(base, addr, &c);
	}
	if (rc == 0 && (a = seo_arena_new(0)) == NULL)
		rc = SEO_ENOMEM;
	if (rc == 0) {
		seo_arena_pb_allocator(a, &alloc);
		rc = rpc_client_call(c, sc->path, &req.base, ECHO_DESC, &alloc,
				     0, meta, 1, on_done, &o);
	}
	if (rc == 0) {
		rc = run_until_done(base, &o);
		if (rc == SEO_ETIMEDOUT) {
			fprintf(stderr, "\n  %s: no answer\n", sc->path);
			CU_FAIL("the call hung");
		}
		if (rc == 0)
			rc = judge(sc, &o);
	}
	failmalloc_settle();
	rpc_client_free(c);
	rpc_server_free(srv);
	seo_arena_free(a);
	/* bufferevent_free() leaves the freeing to the loop's next turn */
	event_base_loop(base, EVLOOP_NONBLOCK);
	event_base_free(base);
	return rc;
}

static void loop(const struct scenario *sc)
{
	long n = failmalloc_loop(sc->path, run_call, (void *)sc, 5000);

	CU_ASSERT(n > 0);
	fprintf(stderr, " (%ld allocations) ", n);
}

static void test_unary_loop(void)
{
	const struct scenario sc = {"/seo.test.Echo/Echo", 0, SEO_GRPC_OK,
				    "ping r-1", "", ""};

	loop(&sc);
}

static void test_unary_worker(void)
{
	const struct scenario sc = {"/seo.test.Echo/Echo", 1, SEO_GRPC_OK,
				    "ping r-1", "", ""};

	loop(&sc);
}

static void test_error_trailers(void)
{
	const struct scenario sc = {"/seo.test.Echo/Fail", 0,
				    SEO_GRPC_FAILED_PRECONDITION,
				    "insufficient_credits", "need 7 more",
				    "{\"retry_after\": 12}"};

	loop(&sc);
}

int main(void)
{
	CU_pSuite s;
	unsigned failed;

	failmalloc_init();
	seo_json_init();
	event_set_mem_functions(failmalloc_lenient_malloc,
				failmalloc_lenient_realloc, free);
	seo_log_init("test_rpc_failmalloc");
	signal(SIGPIPE, SIG_IGN);
	if (evthread_use_pthreads() != 0)
		return 1;
	if (CU_initialize_registry() != CUE_SUCCESS)
		return 1;
	s = CU_add_suite("rpc under failing allocations", NULL, NULL);
	CU_add_test(s, "unary call, handler on the loop", test_unary_loop);
	CU_add_test(s, "unary call, handler on a worker", test_unary_worker);
	CU_add_test(s, "error trailers", test_error_trailers);
	CU_basic_set_mode(CU_BRM_VERBOSE);
	CU_basic_run_tests();
	failed = CU_get_number_of_tests_failed() +
		 CU_get_number_of_suites_failed();
	CU_cleanup_registry();
	return failed != 0;
}

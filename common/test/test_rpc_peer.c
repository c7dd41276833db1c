/*
 * test_rpc_peer.c: calls between services (common/rpc/rpc_peer.c). A
 * "front" server's handler calls a "back" server as its peer, at the
 * address the registry's configuration key gives; the test checks what
 * reaches the back: the caller's metadata, the internal token and a
 * deadline, and what comes back from a failing or absent peer.
 */
#include "rpc_internal.h"

#include "seo/config.h"
#include "seo/errors.h"
#include "seo/log.h"
#include "seo/rpc_peer.h"
#include "seo/util.h"

#include "grpc/health/v1/health.pb-c.h"

#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <CUnit/Basic.h>
#include <event2/thread.h>

typedef Grpc__Health__V1__HealthCheckRequest Msg;
#define MSG_DESC (&grpc__health__v1__health_check_request__descriptor)

/* A pair the registry allows: `from` may call `to`. */
static seo_service from, to;
static rpc_peer *peer;

static int reply(rpc_ctx *ctx, const char *text, ProtobufCMessage **resp)
{
	Msg *out = seo_arena_alloc(rpc_ctx_arena(ctx), sizeof(*out));

	if (out == NULL)
		return SEO_ENOMEM;
	grpc__health__v1__health_check_request__init(out);
	out->service = (char *)text;
	*resp = &out->base;
	return 0;
}

static const char *meta(rpc_ctx *ctx, const char *name)
{
	const char *v = rpc_ctx_meta(ctx, name);

	return v != NULL ? v : "-";
}

/* Back: "fail" fails with user_not_found; otherwise answers the metadata
 * it got and whether a deadline came within the front's. */
static int h_back(rpc_ctx *ctx, const ProtobufCMessage *req,
		  ProtobufCMessage **resp)
{
	const Msg *in = (const Msg *)req;
	int64_t left = rpc_ctx_deadline(ctx) - seo_mono_ms();

	if (in->service != NULL && strcmp(in->service, "fail") == 0) {
		rpc_ctx_fail_extra(ctx, "{\"user_id\": \"u1\"}");
		return rpc_ctx_fail(ctx, "user_not_found", "no such user");
	}
	return reply(ctx, seo_arena_printf(rpc_ctx_arena(ctx), "%s|%s|%s|%s|%s|%s|%s",
				   meta(ctx, "x-request-id"),
				   meta(ctx, "seo-workspace-id"),
				   meta(ctx, "seo-user-id"),
				   meta(ctx, "seo-key-id"), meta(ctx, "seo-role"),
				   meta(ctx, "other"),
				   rpc_ctx_deadline(ctx) != 0 && left > 0 &&
						   left <= 5000
					   ? "deadline"
					   : "no-deadline"),
		     resp);
}

/* Front: passes its request's text on to the peer and its answer back. */
static int h_front(rpc_ctx *ctx, const ProtobufCMessage *req,
		   ProtobufCMessage **resp)
{
	Msg next = GRPC__HEALTH__V1__HEALTH_CHECK_REQUEST__INIT;
	rpc_result res;

	next.service = ((const Msg *)req)->service;
	if (rpc_peer_call(peer, ctx, "/t.Back/Back", &next.base, MSG_DESC,
			  rpc_ctx_arena(ctx), &res) != 0)
		return rpc_peer_fail(ctx, &res);
	*resp = res.response;
	return 0;
}

static const rpc_method methods[] = {
	{"/t.Back/Back", MSG_DESC, MSG_DESC, h_back},
	{"/t.Front/Front", MSG_DESC, MSG_DESC, h_front},
};

struct tsrv {
	struct event_base *base;
	rpc_server *srv;
	pthread_t thread;
	char addr[64];
};

static struct tsrv back, front;

static void *tsrv_main(void *arg)
{
	event_base_loop(((struct tsrv *)arg)->base, EVLOOP_NO_EXIT_ON_EMPTY);
	return NULL;
}

static int tsrv_start(struct tsrv *t)
{
	t->base = event_base_new();
	if (t->base == NULL ||
	    rpc_server_new(t->base, methods, 2, NULL, 2, &t->srv) != 0 ||
	    rpc_server_listen(t->srv, "127.0.0.1:0") != 0)
		return -1;
	snprintf(t->addr, sizeof(t->addr), "127.0.0.1:%u", rpc_server_port(t->srv));
	return pthread_create(&t->thread, NULL, tsrv_main, t) == 0 ? 0 : -1;
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

	event_base_once(t->base, -1, EV_TIMEOUT, stop_cb, t->base, &now);
	pthread_join(t->thread, NULL);
	rpc_server_free(t->srv);
	event_base_free(t->base);
}

static const char *addr_var(seo_service svc)
{
	return seo_config_def(seo_service_get(svc)->addr_key)->name;
}

/* Calls the front with `text` and the gateway's metadata. */
static int call_front(const char *text, seo_arena *arena, rpc_result *res)
{
	Msg req = GRPC__HEALTH__V1__HEALTH_CHECK_REQUEST__INIT;
	const rpc_meta m[] = {
		{"x-request-id", "r1"}, {"seo-workspace-id", "w1"},
		{"seo-user-id", "u1"}, {"seo-key-id", "k1"},
		{"seo-role", "owner"}, {"other", "not carried"},
	};

	req.service = (char *)text;
	return rpc_call_sync(front.addr, "/t.Front/Front", &req.base, MSG_DESC,
			     arena, 5000, m, sizeof(m) / sizeof(m[0]), res);
}

static void test_open_follows_the_registry(void)
{
	rpc_peer *p = NULL;
	seo_cfg_error err;

	CU_ASSERT(rpc_peer_open(to, from, &p) == SEO_EDENIED);
	CU_ASSERT(rpc_peer_open(from, from, &p) == SEO_EDENIED);
	CU_ASSERT(p == NULL);
	/* a malformed address never gets this far: the process stops */
	setenv(addr_var(to), "no-port", 1);
	CU_ASSERT(seo_config_load(&err) == SEO_EINVAL);
	CU_ASSERT(strstr(err.message, addr_var(to)) == err.message);
	unsetenv(addr_var(to));
}

static void test_call_carries_the_caller(void)
{
	seo_arena *arena = seo_arena_new(4096);
	rpc_result res;

	CU_ASSERT_FATAL(arena != NULL);
	CU_ASSERT_FATAL(call_front("hi", arena, &res) == 0);
	CU_ASSERT_STRING_EQUAL(((Msg *)res.response)->service,
			       "r1|w1|u1|k1|owner|-|deadline");
	seo_arena_free(arena);
}

/* Work of the service's own: the identity given goes along (the unset
 * key id does not), with SEO_RPC_TIMEOUT_MS (more than the 5 s the
 * back calls a deadline). */
static void test_call_as_carries_the_identity(void)
{
	seo_arena *arena = seo_arena_new(4096);
	Msg req = GRPC__HEALTH__V1__HEALTH_CHECK_REQUEST__INIT;
	rpc_identity who = {.request_id = "r2", .workspace_id = "w2",
			    .user_id = "u2", .role = "member"};
	rpc_result res;

	CU_ASSERT_FATAL(arena != NULL);
	req.service = "hi";
	CU_ASSERT_FATAL(rpc_peer_call_as(peer, &who, "/t.Back/Back", &req.base,
					 MSG_DESC, arena, &res) == 0);
	CU_ASSERT_STRING_EQUAL(((Msg *)res.response)->service,
			       "r2|w2|u2|-|member|-|no-deadline");
	seo_arena_free(arena);
}

static void test_peer_failure_passes_on(void)
{
	seo_arena *arena = seo_arena_new(4096);
	rpc_result res;

	CU_ASSERT_FATAL(arena != NULL);
	CU_ASSERT(call_front("fail", arena, &res) == SEO_EUPSTREAM);
	CU_ASSERT_STRING_EQUAL(res.code, "user_not_found");
	CU_ASSERT_STRING_EQUAL(res.message, "no such user");
	CU_ASSERT(res.extra_json != NULL && strstr(res.extra_json, "u1") != NULL);
	seo_arena_free(arena);
}

static void test_absent_peer(void)
{
	seo_arena *arena = seo_arena_new(4096);
	rpc_result res;

	CU_ASSERT_FATAL(arena != NULL);
	tsrv_stop(&back);
	CU_ASSERT(call_front("hi", arena, &res) == SEO_EUPSTREAM);
	CU_ASSERT_STRING_EQUAL(res.code, "service_unavailable");
	seo_arena_free(arena);
}

/* Starts the two servers under an internal token, which the back then
 * requires of the front's peer calls; the front's peer is the back. */
static int calls_init(void)
{
	seo_cfg_error err;

	setenv("SEO_INTERNAL_TOKEN", "internal-token-of-the-peers", 1);
	if (seo_config_load(&err) != 0 || tsrv_start(&back) != 0 ||
	    tsrv_start(&front) != 0)
		return -1;
	setenv(addr_var(to), back.addr, 1);
	if (seo_config_load(&err) != 0)
		return -1;
	return rpc_peer_open(from, to, &peer) == 0 ? 0 : -1;
}

static int calls_clean(void)
{
	tsrv_stop(&front);
	rpc_peer_free(peer);
	return 0;
}

int main(void)
{
	CU_pSuite s;
	unsigned failed;
	int found = 0;

	seo_log_init("test_rpc_peer");
	signal(SIGPIPE, SIG_IGN);
	if (evthread_use_pthreads() != 0)
		return 1;
	for (int f = 0; f < SEO__SVC_COUNT && !found; f++)
		for (int t = 0; t < SEO__SVC_COUNT && !found; t++)
			if (seo_service_may_call((seo_service)f, (seo_service)t)) {
				from = (seo_service)f;
				to = (seo_service)t;
				found = 1;
			}
	if (!found || CU_initialize_registry() != CUE_SUCCESS)
		return 1;
	s = CU_add_suite("rpc_peer", NULL, NULL);
	CU_add_test(s, "open follows the registry", test_open_follows_the_registry);
	s = CU_add_suite("rpc_peer calls", calls_init, calls_clean);
	CU_add_test(s, "a call carries the caller", test_call_carries_the_caller);
	CU_add_test(s, "a call as an identity", test_call_as_carries_the_identity);
	CU_add_test(s, "a peer's failure passes on", test_peer_failure_passes_on);
	/* last: it stops the back */
	CU_add_test(s, "an absent peer", test_absent_peer);
	CU_basic_set_mode(CU_BRM_VERBOSE);
	CU_basic_run_tests();
	failed = CU_get_number_of_tests_failed() + CU_get_number_of_suites_failed();
	CU_cleanup_registry();
	return failed == 0 ? 0 : 1;
}

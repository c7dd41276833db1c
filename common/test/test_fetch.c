/*
 * test_fetch.c: the fetcher (common/http/fetch.c) against
 * tests/fakes/site_server.py on 127.0.0.1: redirects, limits, decompression, charsets, connect-to (500
 * entries too), and the private-address block on the first hop and after
 * redirects.
 */
#include "seo/arena.h"
#include "seo/config.h"
#include "seo/errors.h"
#include "seo/fetch.h"
#include "seo/util.h"
#include "resolver.h"
#include "test_config.h"
#include "test_site.h"

#include <CUnit/Basic.h>
#include <netdb.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static int port;
static seo_fetch_config cfg;

/* The configuration of the next fetches, through the environment as a
 * service reads it. */
static void env(const char *allow, const char *connect_to)
{
	seo_test_config_set("SEO_FETCH_ALLOW_NETS", allow);
	seo_test_config_set("SEO_FETCH_CONNECT_TO", connect_to);
	seo_fetch_config_clear(&cfg);
	CU_ASSERT_EQUAL_FATAL(seo_fetch_config_from_env(&cfg), 0);
}

/* Fetches http://127.0.0.1:PORT<path> into *r. */
static void get(seo_arena *a, const char *path, const seo_fetch_opts *o,
		seo_fetch_result *r)
{
	char *url = seo_arena_printf(a, "http://127.0.0.1:%d%s", port, path);

	CU_ASSERT_EQUAL_FATAL(seo_fetch_sync(&cfg, url, o, a, r), 0);
}

static void test_ok(void)
{
	seo_arena *a = seo_arena_new(0);
	seo_fetch_result r;

	env("127.0.0.0/8", "");
	get(a, "/ok", NULL, &r);
	CU_ASSERT_EQUAL(r.error, SEO_FETCH_OK);
	CU_ASSERT_EQUAL(r.status, 200);
	CU_ASSERT_PTR_NOT_NULL(strstr(r.body, "caf\xc3\xa9"));
	CU_ASSERT_STRING_EQUAL(r.charset, "utf-8");
	CU_ASSERT_STRING_EQUAL(seo_fetch_header(&r, "x-robots-tag"), "noarchive");
	CU_ASSERT_EQUAL(r.n_hops, 1);
	CU_ASSERT(r.response_time_ms >= 0 && r.response_time_ms < 5000);
	CU_ASSERT_PTR_NULL(seo_fetch_error_code(r.error));
	seo_arena_free(a);
}

static void test_redirects(void)
{
	seo_arena *a = seo_arena_new(0);
	seo_fetch_opts o = {0};
	seo_fetch_result r;
	char *want;

	env("127.0.0.0/8", "");
	get(a, "/chain/3", NULL, &r);
	CU_ASSERT_EQUAL(r.error, SEO_FETCH_OK);
	CU_ASSERT_EQUAL(r.n_hops, 4);
	CU_ASSERT_EQUAL(r.hops[0].status, 301);
	want = seo_arena_printf(a, "http://127.0.0.1:%d/ok", port);
	CU_ASSERT_STRING_EQUAL(r.final_url, want);

	get(a, "/chain/9", NULL, &r);
	CU_ASSERT_EQUAL(r.error, SEO_FETCH_FAILED);
	CU_ASSERT_STRING_EQUAL(seo_fetch_error_code(r.error), "fetch_failed");

	o.no_follow = 1;
	get(a, "/chain/2", &o, &r);
	CU_ASSERT_EQUAL(r.error, SEO_FETCH_OK);
	CU_ASSERT_EQUAL(r.status, 301);
	CU_ASSERT_PTR_NOT_NULL(seo_fetch_header(&r, "location"));

	get(a, "/redirect?to=gopher://127.0.0.1/", NULL, &r);
	CU_ASSERT_EQUAL(r.error, SEO_FETCH_FAILED);
	seo_arena_free(a);
}

static void test_limits(void)
{
	seo_arena *a = seo_arena_new(0);
	seo_fetch_opts o = {0};
	seo_fetch_result r;
	int64_t t0;

	env("127.0.0.0/8", "");
	o.max_body = 1000;
	get(a, "/big?n=1000", &o, &r);
	CU_ASSERT_EQUAL(r.error, SEO_FETCH_OK);
	CU_ASSERT_EQUAL(r.body_len, 1000);
	get(a, "/big?n=1001", &o, &r);
	CU_ASSERT_EQUAL(r.error, SEO_FETCH_TOO_LARGE);
	CU_ASSERT_STRING_EQUAL(seo_fetch_error_code(r.error), "response_too_large");
	/* no Content-Length: the running count stops it */
	get(a, "/chunked-big", NULL, &r);
	CU_ASSERT_EQUAL(r.error, SEO_FETCH_TOO_LARGE);
	/* 20 MB of zeros in a few kB of gzip */
	get(a, "/bomb", NULL, &r);
	CU_ASSERT_EQUAL(r.error, SEO_FETCH_TOO_LARGE);

	o.max_body = 0;
	o.timeout_ms = 300;
	t0 = seo_mono_ms();
	get(a, "/slow?ms=3000", &o, &r);
	CU_ASSERT_EQUAL(r.error, SEO_FETCH_TIMEOUT);
	CU_ASSERT_STRING_EQUAL(seo_fetch_error_code(r.error), "timeout");
	CU_ASSERT(seo_mono_ms() - t0 < 2000);
	seo_arena_free(a);
}

static void test_decoding(void)
{
	seo_arena *a = seo_arena_new(0);
	seo_fetch_opts o = {0};
	seo_fetch_result r;

	env("127.0.0.0/8", "");
	get(a, "/gzip", NULL, &r);
	CU_ASSERT_EQUAL(r.error, SEO_FETCH_OK);
	CU_ASSERT_PTR_NOT_NULL(strstr(r.body, "<title>ok page</title>"));
	get(a, "/latin1", NULL, &r);
	CU_ASSERT_STRING_EQUAL(r.charset, "windows-1252");
	CU_ASSERT_PTR_NOT_NULL(strstr(r.body, "caf\xc3\xa9"));
	get(a, "/meta-latin1", NULL, &r);
	CU_ASSERT_STRING_EQUAL(r.charset, "windows-1252");
	CU_ASSERT_PTR_NOT_NULL(strstr(r.body, "caf\xc3\xa9"));
	get(a, "/utf16", NULL, &r);
	CU_ASSERT_STRING_EQUAL(r.charset, "utf-16le");
	CU_ASSERT_EQUAL(strncmp(r.body, "<!doctype html>", 15), 0);
	CU_ASSERT_PTR_NOT_NULL(strstr(r.body, "caf\xc3\xa9"));
	o.raw_body = 1;
	get(a, "/latin1", &o, &r);
	CU_ASSERT_PTR_NOT_NULL(strstr(r.body, "caf\xe9"));
	seo_arena_free(a);
}

static void test_connect_to(void)
{
	seo_arena *a = seo_arena_new(0);
	seo_fetch_result r;
	char *ct = seo_arena_printf(a, "site.test:80:127.0.0.1:%d", port);

	env("127.0.0.0/8", ct);
	CU_ASSERT_EQUAL_FATAL(seo_fetch_sync(&cfg, "http://SITE.test./chain/1", NULL, a, &r), 0);
	CU_ASSERT_EQUAL(r.error, SEO_FETCH_OK);
	CU_ASSERT_EQUAL(r.status, 200);
	CU_ASSERT_STRING_EQUAL(r.final_url, "http://site.test/ok");
	/* the mapped address is still checked */
	env("", ct);
	CU_ASSERT_EQUAL_FATAL(seo_fetch_sync(&cfg, "http://site.test/ok", NULL, a, &r), 0);
	CU_ASSERT_EQUAL(r.error, SEO_FETCH_PRIVATE_IP);
	seo_arena_free(a);
}

/* Any number of entries: the 500th maps the host, and a bad one among
 * them is named. */
static void test_connect_to_many(void)
{
	seo_arena *a = seo_arena_new(0);
	size_t cap = 500 * 48, len = 0;
	char *list = malloc(cap);
	seo_cfg_error err;
	seo_fetch_result r;

	CU_ASSERT_PTR_NOT_NULL_FATAL(list);
	for (int i = 0; i < 499; i++)
		len += (size_t)snprintf(list + len, cap - len, "h%d.test:80:127.0.0.1:1,", i);
	snprintf(list + len, cap - len, "site.test:80:127.0.0.1:%d", port);
	env("127.0.0.0/8", list);
	CU_ASSERT_EQUAL(cfg.n_connect_to, 500);
	CU_ASSERT_EQUAL_FATAL(seo_fetch_sync(&cfg, "http://site.test/ok", NULL, a, &r), 0);
	CU_ASSERT_EQUAL(r.error, SEO_FETCH_OK);
	CU_ASSERT_EQUAL(r.status, 200);
	CU_ASSERT_STRING_EQUAL(r.final_url, "http://site.test/ok");
	/* an earlier entry still wins: h7.test goes to port 1, where nobody
	 * listens */
	CU_ASSERT_EQUAL_FATAL(seo_fetch_sync(&cfg, "http://h7.test/ok", NULL, a, &r), 0);
	CU_ASSERT_EQUAL(r.error, SEO_FETCH_FAILED);

	/* a process refuses the list at start, naming the entry */
	strcat(list, ",x:80:y");
	setenv("SEO_FETCH_CONNECT_TO", list, 1);
	CU_ASSERT_EQUAL(seo_config_load(&err), SEO_EINVAL);
	CU_ASSERT_STRING_EQUAL(err.message, "SEO_FETCH_CONNECT_TO: entry 501 \"x:80:y\" "
			       "is not HOST:PORT:CONNECT_HOST:CONNECT_PORT");
	setenv("SEO_FETCH_CONNECT_TO", "", 1);
	setenv("SEO_FETCH_ALLOW_NETS", "127.0.0.0/8,nonsense", 1);
	CU_ASSERT_EQUAL(seo_config_load(&err), SEO_EINVAL);
	CU_ASSERT_STRING_EQUAL(err.message, "SEO_FETCH_ALLOW_NETS: entry 2 \"nonsense\" "
			       "is not an address or a CIDR network");
	seo_test_config_set("SEO_FETCH_ALLOW_NETS", "");
	free(list);
	seo_arena_free(a);
}

static void test_private_refused(void)
{
	seo_arena *a = seo_arena_new(0);
	seo_fetch_result r;
	const char *targets[] = {
		"http://127.0.0.2:%d/ok", "http://0x7f000002:%d/ok",
		"http://[::1]:%d/ok", "http://[::ffff:127.0.0.1]:%d/ok",
		"http://0:%d/ok", "http://169.254.169.254:%d/",
		"http://10.0.0.1:%d/",
	};

	/* without the allow-list, loopback is refused */
	env("", "");
	get(a, "/ok", NULL, &r);
	CU_ASSERT_EQUAL(r.error, SEO_FETCH_PRIVATE_IP);
	CU_ASSERT_STRING_EQUAL(seo_fetch_error_code(r.error), "private_ip");
	CU_ASSERT_EQUAL(r.n_hops, 0);

	/* with only the server's address allowed, no redirect may leave it */
	env("127.0.0.1/32", "");
	for (size_t i = 0; i < sizeof(targets) / sizeof(targets[0]); i++) {
		char *to = seo_arena_printf(a, targets[i], port);
		char *path = seo_arena_printf(a, "/redirect?to=%s", to);

		get(a, path, NULL, &r);
		if (r.error != SEO_FETCH_PRIVATE_IP)
			fprintf(stderr, "\nredirect to %s: error %d\n", to, r.error);
		CU_ASSERT_EQUAL(r.error, SEO_FETCH_PRIVATE_IP);
		CU_ASSERT_EQUAL(r.n_hops, 1);
	}
	CU_ASSERT_EQUAL_FATAL(seo_fetch_sync(&cfg, "http://user@127.0.0.1/", NULL, a, &r), 0);
	CU_ASSERT_EQUAL(r.error, SEO_FETCH_INVALID_URL);
	seo_arena_free(a);
}

static void test_unreachable(void)
{
	seo_arena *a = seo_arena_new(0);
	seo_fetch_result r;

	env("127.0.0.0/8", "");
	/* port 1 on loopback: nothing listens */
	CU_ASSERT_EQUAL_FATAL(seo_fetch_sync(&cfg, "http://127.0.0.1:1/", NULL, a, &r), 0);
	CU_ASSERT_EQUAL(r.error, SEO_FETCH_FAILED);
	CU_ASSERT_EQUAL_FATAL(seo_fetch_sync(&cfg, "http://no-such-host.invalid/", NULL, a, &r), 0);
	CU_ASSERT_EQUAL(r.error, SEO_FETCH_FAILED);
	seo_arena_free(a);
}

struct many {
	struct event_base *base;
	int left, ok;
};

static void many_done(const seo_fetch_result *r, void *ud)
{
	struct many *m = ud;

	if (r->error == SEO_FETCH_OK && r->status == 200)
		m->ok++;
	if (--m->left == 0)
		event_base_loopbreak(m->base);
}

/* 24 fetches of a 400 ms page finish together, not one after another. */
static void test_concurrent(void)
{
	seo_arena *a = seo_arena_new(0);
	struct many m = {event_base_new(), 24, 0};
	seo_fetcher *f = NULL;
	int64_t t0 = seo_mono_ms();

	env("127.0.0.0/8", "");
	CU_ASSERT_EQUAL_FATAL(seo_fetcher_new(m.base, &cfg, &f), 0);
	for (int i = 0; i < 24; i++) {
		char *url = seo_arena_printf(a, "http://127.0.0.1:%d/slow?ms=400&i=%d", port, i);

		CU_ASSERT_EQUAL(seo_fetch_start(f, url, NULL, a, many_done, &m), 0);
	}
	CU_ASSERT_EQUAL(seo_fetcher_active(f), 24);
	event_base_dispatch(m.base);
	CU_ASSERT_EQUAL(m.ok, 24);
	CU_ASSERT_EQUAL(seo_fetcher_active(f), 0);
	CU_ASSERT(seo_mono_ms() - t0 < 4000);
	/* freeing with fetches in flight calls no callback */
	CU_ASSERT_EQUAL(seo_fetch_start(f, "http://127.0.0.1:1/", NULL, a, many_done, &m), 0);
	seo_fetcher_free(f);
	event_base_free(m.base);
	seo_arena_free(a);
}

struct stream {
	size_t got, stop_at;
	int calls;
};

static int on_chunk(const char *data, size_t len, void *ud)
{
	struct stream *st = ud;

	(void)data;
	st->got += len;
	st->calls++;
	return st->stop_at != 0 && st->got >= st->stop_at;
}

/* A streamed body goes to the callback, not the result; the callback may
 * end the transfer, and max_body still bounds it. */
static void test_stream(void)
{
	seo_arena *a = seo_arena_new(0);
	struct stream st = {0, 0, 0};
	seo_fetch_opts o = {0};
	seo_fetch_result r;

	env("127.0.0.0/8", "");
	o.on_body = on_chunk;
	o.body_ud = &st;
	get(a, "/big?n=300000", &o, &r);
	CU_ASSERT_EQUAL(r.error, SEO_FETCH_OK);
	CU_ASSERT_EQUAL(r.status, 200);
	CU_ASSERT_EQUAL(st.got, 300000);
	CU_ASSERT_EQUAL(r.body_len, 0);
	st = (struct stream){0, 1000, 0};
	get(a, "/chunked-big", &o, &r);
	CU_ASSERT_EQUAL(r.error, SEO_FETCH_OK);
	CU_ASSERT(st.got >= 1000 && st.got < 1000000);
	st = (struct stream){0, 0, 0};
	o.max_body = 1000;
	get(a, "/big?n=300000", &o, &r);
	CU_ASSERT_EQUAL(r.error, SEO_FETCH_TOO_LARGE);
	CU_ASSERT(st.got <= 1000);
	seo_arena_free(a);
}

/* A name server that takes 2 s to answer. */
static int slow_getaddrinfo(const char *node, const char *service,
			    const struct addrinfo *hints, struct addrinfo **res)
{
	struct timespec ts = {2, 0};

	nanosleep(&ts, NULL);
	return getaddrinfo(node, service, hints, res);
}

/* A lookup that outlasts the fetch's deadline ends the fetch at the
 * deadline, and freeing its fetcher does not wait for the lookup. */
static void test_slow_dns(void)
{
	seo_arena *a = seo_arena_new(0);
	seo_fetch_opts o = {0};
	seo_fetch_result r;
	int64_t t0;

	env("127.0.0.0/8", "");
	seo__getaddrinfo = slow_getaddrinfo;
	o.timeout_ms = 300;
	t0 = seo_mono_ms();
	get(a, "/ok", &o, &r);
	CU_ASSERT_EQUAL(r.error, SEO_FETCH_TIMEOUT);
	CU_ASSERT(seo_mono_ms() - t0 < 1000);
	seo__getaddrinfo = getaddrinfo;
	/* the abandoned lookup ends on its own, and is freed there */
	{
		struct timespec ts = {2, 500000000};

		nanosleep(&ts, NULL);
	}
	get(a, "/ok", NULL, &r);
	CU_ASSERT_EQUAL(r.error, SEO_FETCH_OK);
	seo_arena_free(a);
}

int main(void)
{
	CU_pSuite s;
	unsigned failed;

	if (CU_initialize_registry() != CUE_SUCCESS)
		return 1;
	if (test_site_start(&port) != 0) {
		fprintf(stderr, "cannot start tests/fakes/site_server.py\n");
		test_site_stop();
		return 1;
	}
	s = CU_add_suite("fetch", NULL, test_site_stop);
	CU_add_test(s, "a page is fetched", test_ok);
	CU_add_test(s, "redirects are followed and bounded", test_redirects);
	CU_add_test(s, "size and time limits", test_limits);
	CU_add_test(s, "gzip and charsets are decoded", test_decoding);
	CU_add_test(s, "connect-to maps hosts, still checked", test_connect_to);
	CU_add_test(s, "connect-to takes any number of entries", test_connect_to_many);
	CU_add_test(s, "private targets are refused on every hop", test_private_refused);
	CU_add_test(s, "unreachable targets fail", test_unreachable);
	CU_add_test(s, "many fetches run concurrently", test_concurrent);
	CU_add_test(s, "a body is streamed to its reader", test_stream);
	CU_add_test(s, "a slow name server holds nothing past the deadline",
		    test_slow_dns);
	CU_basic_set_mode(CU_BRM_NORMAL);
	CU_basic_run_tests();
	failed = CU_get_number_of_failures();
	CU_cleanup_registry();
	seo_fetch_config_clear(&cfg);
	return failed ? 1 : 0;
}

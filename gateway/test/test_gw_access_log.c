/*
 * test_gw_access_log.c: the access-log line (lib/access_log.c) against the
 * line json_pack() and json_dumps() wrote before it, byte for byte, over
 * random requests: durations of every size, escapes and UTF-8 in the
 * path, absent workspaces and keys.
 */
#include <CUnit/Basic.h>
#include <jansson.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "access_log.h"

static uint64_t rng_state = 0x2545f4914f6cdd1dULL;

static uint64_t rnd(void)
{
	rng_state ^= rng_state >> 12;
	rng_state ^= rng_state << 25;
	rng_state ^= rng_state >> 27;
	return rng_state * 2685821657736338717ULL;
}

/* The line as the gateway wrote it with jansson. */
static char *packed(const gw_access *a)
{
	json_t *line = json_pack(
		"{s:I, s:s, s:s, s:s, s:s, s:i, s:f, s:I, s:I, s:s?, s:s?}",
		"ts", (json_int_t)a->ts_ms, "request_id", a->request_id,
		"method", a->method, "path", a->path, "route", a->route,
		"status", a->status, "duration_ms",
		(double)a->duration_us / 1000.0, "bytes", (json_int_t)a->bytes,
		"credits", (json_int_t)a->credits, "workspace_id",
		a->workspace_id, "key_id", a->key_id);
	char *text = json_dumps(line, JSON_COMPACT);

	json_decref(line);
	return text;
}

static void test_same_as_jansson(void)
{
	static const char *const paths[] = {
		"/v1/referring-domains", "/v1/a\"b\\c", "/v1/\x01\x1f\t\n",
		"/v1/caf\xc3\xa9/\xe2\x82\xac/\xf0\x9f\x98\x80", "/", "",
		"/v1/x?y=1&z=%20",
	};
	static const char *const ids[] = {NULL, "ws_1", "4f9c2e1a-0b7d-4e51-9a3c"};
	seo_jw w = SEO_JW_INIT;
	long failures = 0;
	int i;

	for (i = 0; i < 200000; i++) {
		gw_access a = {
			.ts_ms = 1764000000000LL + (long long)(rnd() % 100000000),
			.request_id = "0123456789abcdef",
			.method = i % 3 ? "GET" : "POST",
			.path = paths[rnd() % (sizeof(paths) / sizeof(paths[0]))],
			.route = i % 5 ? "/v1/referring-domains" : "",
			.status = (int)(rnd() % 600),
			.duration_us = (long long)(rnd() >> (rnd() % 64)),
			.bytes = (long long)(rnd() % 1000000),
			.credits = (long long)(rnd() % 7) - 1,
			.workspace_id = ids[rnd() % 3],
			.key_id = ids[rnd() % 3],
		};
		char *want = packed(&a);

		seo_jw_reset(&w);
		gw__access_line(&w, &a);
		CU_ASSERT_PTR_NOT_NULL_FATAL(want);
		if ((w.len != strlen(want) || memcmp(w.buf, want, w.len) != 0) &&
		    failures++ < 5)
			fprintf(stderr, "\n  got  %.*s\n  want %s\n", (int)w.len,
				w.buf, want);
		free(want);
	}
	CU_ASSERT_EQUAL(failures, 0);
	CU_ASSERT_FALSE(w.failed);
	seo_jw_free(&w);
}

/* A path that is no UTF-8 (jansson refused the whole line) still logs. */
static void test_bad_utf8(void)
{
	gw_access a = {.ts_ms = 1, .request_id = "r", .method = "GET",
		       .path = "/v1/\xff", .route = "", .status = 404,
		       .duration_us = 1500};
	seo_jw w = SEO_JW_INIT;
	char *text;

	gw__access_line(&w, &a);
	text = seo_jw_finish(&w, NULL);
	CU_ASSERT_PTR_NOT_NULL_FATAL(text);
	CU_ASSERT_STRING_EQUAL(text,
			       "{\"ts\":1,\"request_id\":\"r\",\"method\":\"GET\","
			       "\"path\":\"/v1/\xef\xbf\xbd\",\"route\":\"\","
			       "\"status\":404,\"duration_ms\":1.5,\"bytes\":0,"
			       "\"credits\":0,\"workspace_id\":null,\"key_id\":null}");
	free(text);
}

int main(void)
{
	CU_pSuite s;
	int failed;

	if (CU_initialize_registry() != CUE_SUCCESS)
		return 1;
	s = CU_add_suite("access log", NULL, NULL);
	CU_add_test(s, "the bytes jansson wrote", test_same_as_jansson);
	CU_add_test(s, "a path that is no UTF-8", test_bad_utf8);
	CU_basic_set_mode(CU_BRM_VERBOSE);
	CU_basic_run_tests();
	failed = (int)CU_get_number_of_failures();
	CU_cleanup_registry();
	return failed != 0;
}

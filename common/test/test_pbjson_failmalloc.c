/*
 * test_pbjson_failmalloc.c: the shared JSON <-> protobuf-c conversion
 * (seo/pbjson.h) when allocations fail (tests/support/failmalloc.h). Each
 * run decodes a valid JSON object onto a fresh arena and encodes the
 * message back, as a tree and as text written straight from it: a run
 * whose allocation failed must answer SEO_ENOMEM or NULL, never SEO_EINVAL
 * (the input is valid) nor a JSON value or text missing parts; none may
 * crash or, under ASan, leak.
 */
#include <CUnit/Basic.h>
#include <stdlib.h>
#include <string.h>

#include "failmalloc.h"
#include "seo/account/v1/account.pb-c.h"
#include "seo/errors.h"
#include "seo/json_text.h"
#include "seo/nullable.h"
#include "seo/pbjson.h"
#include "seo/realtime/v1/realtime.pb-c.h"

#define ACCT(t) (&seo__account__v1__##t##__descriptor)
#define RT(t) (&seo__realtime__v1__##t##__descriptor)

struct round_trip {
	const char *text; /* decodes and encodes back to the same JSON */
	const ProtobufCMessageDescriptor *desc;
	json_t *json;
};

static int run_round_trip(void *ud)
{
	const struct round_trip *t = ud;
	/* a small first block, so that the arena grows */
	seo_arena *a = seo_arena_new(64);
	ProtobufCMessage *m = NULL;
	seo_pbjson_error err;
	json_t *back = NULL;
	seo_jw w = SEO_JW_INIT;
	char *want = NULL, *got = NULL;
	int rc;

	if (a == NULL)
		return SEO_ENOMEM;
	rc = seo_pbjson_decode(t->json, t->desc, SEO_PBJSON_STRICT, a, &m,
			       &err);
	if (rc == SEO_EINVAL)
		rc = 1;
	if (rc == 0 && (back = seo_pbjson_encode(m, seo_proto_nullable)) == NULL)
		rc = SEO_ENOMEM;
	if (rc == 0 && !json_equal(back, t->json))
		rc = 1;
	/* the text written straight from the message: the tree's bytes */
	if (rc == 0 && (want = seo_json_dumps(back, JSON_COMPACT, NULL)) == NULL)
		rc = SEO_ENOMEM;
	if (rc == 0)
		rc = seo_pbjson_write(&w, m, seo_proto_nullable);
	if (rc == 0 && (got = seo_jw_finish(&w, NULL)) == NULL)
		rc = SEO_ENOMEM;
	if (rc == 0 && strcmp(got, want) != 0)
		rc = 1;
	failmalloc_settle();
	seo_jw_free(&w);
	free(want);
	free(got);
	json_decref(back);
	seo_arena_free(a);
	return rc;
}

static void loop(const char *text, const ProtobufCMessageDescriptor *desc)
{
	struct round_trip t = {text, desc, json_loads(text, 0, NULL)};
	long n;

	CU_ASSERT_PTR_NOT_NULL_FATAL(t.json);
	n = failmalloc_loop(desc->name, run_round_trip, &t, 5000);
	CU_ASSERT(n > 0);
	fprintf(stderr, " %s: %ld allocations ", desc->short_name, n);
	json_decref(t.json);
}

static void test_nested(void)
{
	loop("{\"workspace_id\": \"w\", \"user_id\": \"u\", \"key_id\": \"k\","
	     " \"role\": \"owner\", \"charge_id\": \"\","
	     " \"credits_remaining\": -5, \"rate\": {\"limit\": 9,"
	     " \"remaining\": 0, \"reset_s\": 1, \"granted\": 0}}",
	     ACCT(authorize_response));
}

static void test_repeated(void)
{
	loop("{\"data\": [{\"url\": \"u\", \"priority\": \"0.5\"},"
	     " {\"url\": \"v\"}], \"total\": 2,"
	     " \"sitemap_url\": null, \"child_sitemaps\": [\"c\", \"d\"],"
	     " \"child_sitemaps_fetched\": [\"a\"], \"sitemap_type\": \"x\","
	     " \"child_sitemaps_total\": 0, \"truncated\": false,"
	     " \"source\": \"none\", \"billed\": 0}",
	     RT(sitemap_response));
}

/* Text past the writer's first buffer, which then grows twice. */
static void test_long_text(void)
{
#define X16 "\\u00e9\\t\\\"0123456789"
#define X64 X16 X16 X16 X16
	loop("{\"data\": [{\"url\": \"" X64 X64 X64 X64 X64 "\"}], \"total\": 1,"
	     " \"sitemap_url\": \"" X64 X64 "\", \"child_sitemaps\": [],"
	     " \"child_sitemaps_fetched\": [], \"sitemap_type\": \"x\","
	     " \"child_sitemaps_total\": 0, \"truncated\": false,"
	     " \"source\": \"none\", \"billed\": 0}",
	     RT(sitemap_response));
#undef X64
#undef X16
}

static void test_bytes(void)
{
	loop("{\"payload\": \"aGVsbG8gd29ybGQ=\", \"signature\": \"s\"}",
	     ACCT(payment_webhook_request));
}

static void test_raw_json(void)
{
	loop("{\"type\": [\"A\", \"B\"], \"id\": null, \"block_index\": 0,"
	     " \"source\": \"graph\","
	     " \"properties\": [1, {\"b\": null, \"c\": [\"x\", 2.5]}]}",
	     RT(schema_entity));
}

int main(void)
{
	CU_pSuite s;
	unsigned failed;

	failmalloc_init();
	seo_json_init();
	if (CU_initialize_registry() != CUE_SUCCESS)
		return 1;
	s = CU_add_suite("pbjson under failing allocations", NULL, NULL);
	CU_add_test(s, "nested message", test_nested);
	CU_add_test(s, "repeated fields", test_repeated);
	CU_add_test(s, "text past the first buffer", test_long_text);
	CU_add_test(s, "bytes", test_bytes);
	CU_add_test(s, "RawJson", test_raw_json);
	CU_basic_set_mode(CU_BRM_VERBOSE);
	CU_basic_run_tests();
	failed = CU_get_number_of_tests_failed() +
		 CU_get_number_of_suites_failed();
	CU_cleanup_registry();
	return failed != 0;
}

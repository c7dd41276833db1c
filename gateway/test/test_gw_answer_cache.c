/*
 * test_gw_answer_cache.c: answers kept in the gateway's memory
 * (gateway/lib/answer_cache.c): a kept answer is served until its route's
 * cache_ms has passed, then not; a newer answer replaces it; routes
 * without cache_ms are never kept; the table's rows that may be kept
 * (GET /v1/pricing) pass the check and a keyed, billed or parameterised
 * row does not.
 */
#include <CUnit/Basic.h>
#include <string.h>

#include "answer_cache.h"
#include "gw_routes.h"
#include "seo/errors.h"

static const gw_route rows[] = {
	{.method = "GET", .pattern = "/v1/kept", .auth = {.key = GW_KEY_NONE},
	 .quota = GW_QUOTA_NONE, .out = {.status = 200, .cache_ms = 5000}},
	{.method = "GET", .pattern = "/v1/fresh", .auth = {.key = GW_KEY_NONE},
	 .quota = GW_QUOTA_NONE, .out = {.status = 200}},
};

static void test_kept_until_expiry(void)
{
	gw_answer_cache *ac = NULL;
	const gw_cached_answer *a;

	CU_ASSERT_FATAL(gw__answer_cache_new(rows, 2, &ac) == 0);
	CU_ASSERT_PTR_NULL(gw__answer_cache_get(ac, &rows[0], 1000));
	gw__answer_cache_put(ac, &rows[0], 200, "{\"a\":1}", 7, 1000);
	a = gw__answer_cache_get(ac, &rows[0], 1000);
	CU_ASSERT_PTR_NOT_NULL_FATAL(a);
	CU_ASSERT_EQUAL(a->status, 200);
	CU_ASSERT_EQUAL(a->len, 7);
	CU_ASSERT_NSTRING_EQUAL(a->body, "{\"a\":1}", 7);
	CU_ASSERT_PTR_NOT_NULL(gw__answer_cache_get(ac, &rows[0], 5999));
	CU_ASSERT_PTR_NULL(gw__answer_cache_get(ac, &rows[0], 6000));
	/* the service's next answer replaces it, with a new lifetime */
	gw__answer_cache_put(ac, &rows[0], 200, "{\"a\":2}", 7, 6000);
	a = gw__answer_cache_get(ac, &rows[0], 10999);
	CU_ASSERT_PTR_NOT_NULL_FATAL(a);
	CU_ASSERT_NSTRING_EQUAL(a->body, "{\"a\":2}", 7);
	gw__answer_cache_free(ac);
}

static void test_not_kept(void)
{
	gw_answer_cache *ac = NULL;
	gw_route other = rows[0];

	CU_ASSERT_FATAL(gw__answer_cache_new(rows, 2, &ac) == 0);
	gw__answer_cache_put(ac, &rows[1], 200, "{}", 2, 0);
	CU_ASSERT_PTR_NULL(gw__answer_cache_get(ac, &rows[1], 0));
	/* a row from outside the table has no slot */
	gw__answer_cache_put(ac, &other, 200, "{}", 2, 0);
	CU_ASSERT_PTR_NULL(gw__answer_cache_get(ac, &other, 0));
	gw__answer_cache_free(ac);
}

static void test_check(void)
{
	const gw_route *table;
	size_t n, kept = 0;
	gw_route r;
	char why[128];

	table = gw_routes(&n);
	for (size_t i = 0; i < n; i++) {
		CU_ASSERT_EQUAL(gw__answer_cache_check(&table[i], why,
						       sizeof(why)), 0);
		if (table[i].out.cache_ms > 0) {
			kept++;
			CU_ASSERT_STRING_EQUAL(table[i].pattern, "/v1/pricing");
		}
	}
	CU_ASSERT_EQUAL(kept, 1);
	r = rows[0];
	r.auth.key = GW_KEY_REQUIRED;
	CU_ASSERT_EQUAL(gw__answer_cache_check(&r, why, sizeof(why)), SEO_EINVAL);
	CU_ASSERT_PTR_NOT_NULL(strstr(why, "key"));
	r = rows[0];
	r.bill.kind = GW_BILL_FIXED;
	CU_ASSERT_EQUAL(gw__answer_cache_check(&r, why, sizeof(why)), SEO_EINVAL);
	r = rows[0];
	r.in.kind = GW_IN_QUERY;
	CU_ASSERT_EQUAL(gw__answer_cache_check(&r, why, sizeof(why)), SEO_EINVAL);
	r = rows[0];
	r.method = "POST";
	CU_ASSERT_EQUAL(gw__answer_cache_check(&r, why, sizeof(why)), SEO_EINVAL);
}

int main(void)
{
	CU_pSuite s;
	unsigned failed;

	if (CU_initialize_registry() != CUE_SUCCESS)
		return 1;
	s = CU_add_suite("answer_cache", NULL, NULL);
	CU_add_test(s, "kept until its lifetime ends", test_kept_until_expiry);
	CU_add_test(s, "routes without cache_ms are not kept", test_not_kept);
	CU_add_test(s, "which rows may be kept", test_check);
	CU_basic_set_mode(CU_BRM_VERBOSE);
	CU_basic_run_tests();
	failed = CU_get_number_of_tests_failed() +
		 CU_get_number_of_suites_failed();
	CU_cleanup_registry();
	return failed != 0;
}

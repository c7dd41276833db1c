/*
 * test_acct_ratelimit.c: the per-key token buckets (svc-account/lib/
 * ratelimit.c) and their grants: a grant is at most an eighth of what the
 * bucket holds and none below ACCT_RATE_GRANT_MIN, tokens given back never
 * fill a bucket past full, and a refusal recalls grants once, only while
 * one may be held.
 */
#include <CUnit/Basic.h>

#include "acct_int.h"
#include "seo/errors.h"

#define KEY "0000000000000000000000000000000000000000000000000000000000000001"

static int64_t now_ms;

static int64_t fake_clock(void *ud)
{
	(void)ud;
	return now_ms;
}

static acct__limiter l;

static void setup(int64_t per_min)
{
	now_ms = 0;
	CU_ASSERT_FATAL(acct__limiter_init(&l, per_min, fake_clock, NULL) == 0);
}

/* One call of KEY counted: 0 or SEO_EDENIED. */
static int take(acct_rate *r, int *recall)
{
	int64_t retry;

	return acct__limiter_check(&l, KEY, 1, r, &retry, recall);
}

static void test_grants_are_an_eighth_of_the_bucket(void)
{
	acct_rate r;
	int recall;

	setup(600);
	CU_ASSERT_EQUAL(take(&r, &recall), 0);
	CU_ASSERT_EQUAL(acct__limiter_grant(&l, KEY, 1000, &r), 599 / 8);
	CU_ASSERT_EQUAL(r.remaining, 599 - 599 / 8);
	/* Less is wanted than the bucket could give: that much. */
	CU_ASSERT_EQUAL(acct__limiter_grant(&l, KEY, 5, &r), 5);
	CU_ASSERT_EQUAL(r.remaining, 599 - 599 / 8 - 5);
	CU_ASSERT_EQUAL(acct__limiter_grant(&l, KEY, 0, &r), 0);
	acct__limiter_destroy(&l);
}

static void test_no_grant_near_empty(void)
{
	acct_rate r;
	int recall;

	setup(60);
	while (acct__limiter_grant(&l, KEY, 1000, &r) > 0)
		;
	CU_ASSERT(r.remaining < ACCT_RATE_GRANT_MIN);
	CU_ASSERT(r.remaining >= ACCT_RATE_GRANT_MIN - ACCT_RATE_GRANT_MIN / 8 - 1);
	/* Every token left is counted one by one. */
	for (int64_t left = r.remaining; left > 0; left--)
		CU_ASSERT_EQUAL(take(&r, &recall), 0);
	CU_ASSERT_EQUAL(take(&r, &recall), SEO_EDENIED);
	acct__limiter_destroy(&l);

	/* A bucket under the minimum from the start grants nothing. */
	setup(ACCT_RATE_GRANT_MIN - 1);
	CU_ASSERT_EQUAL(acct__limiter_grant(&l, KEY, 1000, &r), 0);
	CU_ASSERT_EQUAL(r.remaining, ACCT_RATE_GRANT_MIN - 1);
	acct__limiter_destroy(&l);

	/* The limit off: nothing to grant. */
	setup(0);
	CU_ASSERT_EQUAL(acct__limiter_grant(&l, KEY, 1000, &r), 0);
	acct__limiter_destroy(&l);
}

static void test_given_back_never_past_full(void)
{
	acct_rate r;
	int recall;
	int64_t g;

	setup(600);
	CU_ASSERT_EQUAL(take(&r, &recall), 0);
	g = acct__limiter_grant(&l, KEY, 50, &r);
	CU_ASSERT_EQUAL(g, 50);
	acct__limiter_give(&l, KEY, 20);
	acct__limiter_check(&l, KEY, 0, &r, &(int64_t){0}, &recall);
	CU_ASSERT_EQUAL(r.remaining, 600 - 1 - 50 + 20);
	/* Refilled meanwhile: what is given back tops it up to full only. */
	now_ms += 60000;
	acct__limiter_give(&l, KEY, 30);
	acct__limiter_check(&l, KEY, 0, &r, &(int64_t){0}, &recall);
	CU_ASSERT_EQUAL(r.remaining, 600);
	/* Absurd amounts are bounded, not overflowed. */
	acct__limiter_give(&l, KEY, INT64_MAX);
	acct__limiter_check(&l, KEY, 0, &r, &(int64_t){0}, &recall);
	CU_ASSERT_EQUAL(r.remaining, 600);
	acct__limiter_destroy(&l);
}

static void test_refusal_recalls_once_while_grants_may_be_held(void)
{
	acct_rate r;
	int recall = 0;

	setup(60);
	CU_ASSERT_EQUAL(take(&r, &recall), 0);
	CU_ASSERT(acct__limiter_grant(&l, KEY, 1000, &r) > 0);
	while (take(&r, &recall) == 0)
		CU_ASSERT_EQUAL(recall, 0);
	CU_ASSERT_EQUAL(recall, 1);
	CU_ASSERT_EQUAL(take(&r, &recall), SEO_EDENIED);
	CU_ASSERT_EQUAL(recall, 0);

	/* A grant long past: given back or spent by now, nothing recalled. */
	now_ms += 60000;
	CU_ASSERT(acct__limiter_grant(&l, KEY, 1000, &r) > 0);
	now_ms += ACCT_RATE_RECALL_MS;
	while (take(&r, &recall) == 0)
		;
	CU_ASSERT_EQUAL(recall, 0);
	acct__limiter_destroy(&l);
}

int main(void)
{
	CU_pSuite s;
	unsigned failed;

	if (CU_initialize_registry() != CUE_SUCCESS)
		return 1;
	s = CU_add_suite("acct_ratelimit", NULL, NULL);
	CU_add_test(s, "grants are an eighth of the bucket",
		    test_grants_are_an_eighth_of_the_bucket);
	CU_add_test(s, "no grant near empty", test_no_grant_near_empty);
	CU_add_test(s, "given back never past full",
		    test_given_back_never_past_full);
	CU_add_test(s, "a refusal recalls once while grants may be held",
		    test_refusal_recalls_once_while_grants_may_be_held);
	CU_basic_set_mode(CU_BRM_VERBOSE);
	CU_basic_run_tests();
	failed = CU_get_number_of_failures();
	CU_cleanup_registry();
	return failed != 0;
}

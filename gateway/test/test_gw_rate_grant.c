/*
 * test_gw_rate_grant.c: a key's rate counted in the gateway (gateway/lib/
 * rate_grant.c, and its place in keys.c): tokens granted are spent one a
 * call, one grant is asked at a time, a grant spent within its hold asks
 * for twice as many next time, the next grant is asked ahead at the
 * low-water mark or late in its hold while grants come (and only with
 * calls once an ask got none or failed), so that no call asks in steady
 * use, even as its pace changes, what is held never exceeds the largest
 * ask, tokens past their hold or recalled leave, held tokens never
 * outlive their hold, and the limit shown is svc-account's bucket
 * refilled since, plus what is held, never full.
 */
#include <CUnit/Basic.h>
#include <string.h>

#include <event2/event.h>

#include "keys.h"
#include "rate_grant.h"

#define HASH_A "aaaaaaaa00000000000000000000000000000000000000000000000000000001"

static void test_one_ask_at_a_time(void)
{
	gw_rate_grant g = {0};
	gw_rate r;
	long long want;

	CU_ASSERT_EQUAL(gw__grant_take(&g, 1000, &r, &want), 0);
	CU_ASSERT_EQUAL(want, GW_RATE_WANT_MIN);
	/* Asked already: the next call is counted by svc-account alone. */
	CU_ASSERT_EQUAL(gw__grant_take(&g, 1001, &r, &want), 0);
	CU_ASSERT_EQUAL(want, 0);
	/* A failed ask lets the next call ask. */
	gw__grant_unasked(&g);
	CU_ASSERT_EQUAL(gw__grant_take(&g, 1002, &r, &want), 0);
	CU_ASSERT_EQUAL(want, GW_RATE_WANT_MIN);
	/* An answer never heard does not stop asking for ever. */
	CU_ASSERT_EQUAL(gw__grant_take(&g, 1002 + GW_RATE_ASK_MS, &r, &want), 0);
	CU_ASSERT_EQUAL(want, GW_RATE_WANT_MIN);
}

static void test_tokens_spent_one_a_call(void)
{
	gw_rate_grant g = {0};
	gw_rate r, bucket = {600, 500, 10};
	long long want;

	gw__grant_take(&g, 0, &r, &want);
	gw__grant_add(&g, 8, &bucket, 0);
	for (int i = 0; i < 8; i++) {
		CU_ASSERT_EQUAL(gw__grant_take(&g, 0, &r, &want), 1);
		CU_ASSERT_EQUAL(r.limit, 600);
		/* The bucket's 500 plus what is still held here. */
		CU_ASSERT_EQUAL(r.remaining, 500 + 7 - i);
		/* Fallen to a quarter of the grant: the next is asked ahead
		 * (twice as many, less the 2 still held), once. */
		CU_ASSERT_EQUAL(want, i == 5 ? 2 * GW_RATE_WANT_MIN - 2 : 0);
	}
	/* That ask failed: the call asks, the grant spent whole within its
	 * hold: twice as many again. */
	gw__grant_unasked(&g);
	CU_ASSERT_EQUAL(gw__grant_take(&g, 10, &r, &want), 0);
	CU_ASSERT_EQUAL(want, 4 * GW_RATE_WANT_MIN);
	/* Granted none (the bucket is low): asked again, no larger. */
	gw__grant_add(&g, 0, &bucket, 10);
	CU_ASSERT_EQUAL(gw__grant_take(&g, 11, &r, &want), 0);
	CU_ASSERT_EQUAL(want, 4 * GW_RATE_WANT_MIN);
}

static void test_the_next_grant_asked_ahead(void)
{
	gw_rate_grant g = {0};
	gw_rate r, bucket = {6000, 5000, 10};
	long long want;
	int64_t now = 100;

	gw__grant_take(&g, now, &r, &want);
	gw__grant_add(&g, 8, &bucket, now);
	for (int i = 0; i < 6; i++)
		CU_ASSERT_EQUAL(gw__grant_take(&g, now, &r, &want), 1);
	CU_ASSERT_EQUAL(want, 14);
	/* One ask at a time: spending on, nothing more is asked; run out
	 * before it is answered, the calls go to svc-account alone. */
	CU_ASSERT_EQUAL(gw__grant_take(&g, now, &r, &want), 1);
	CU_ASSERT_EQUAL(want, 0);
	gw__grant_add(&g, 14, &bucket, now + 500);
	/* The one left, of the older grant, still ends at its own hold;
	 * the new grant's 14 at theirs. */
	CU_ASSERT_EQUAL(gw__grant_expire(&g, now + GW_RATE_HOLD_MS), 1);
	for (int i = 0; i < 10; i++) {
		CU_ASSERT_EQUAL(gw__grant_take(&g, now + GW_RATE_HOLD_MS, &r,
					       &want), 1);
		CU_ASSERT_EQUAL(want, 0);
	}
	/* 3 left, under a quarter of 14: the next asked. Spent this far in
	 * half its hold, not less: as large as the last (halved by the
	 * expiry above to 8), less what is held. */
	CU_ASSERT_EQUAL(gw__grant_take(&g, now + GW_RATE_HOLD_MS, &r, &want), 1);
	CU_ASSERT_EQUAL(want, 8 - 3);
	/* Answered with none (the bucket low, or an svc-account from before
	 * that grants to no ask alone): no more asks ahead, the call asks
	 * once the tokens are spent. */
	gw__grant_add(&g, 0, &bucket, now + GW_RATE_HOLD_MS);
	for (int i = 0; i < 3; i++) {
		CU_ASSERT_EQUAL(gw__grant_take(&g, now + GW_RATE_HOLD_MS, &r,
					       &want), 1);
		CU_ASSERT_EQUAL(want, 0);
	}
	CU_ASSERT_EQUAL(gw__grant_take(&g, now + GW_RATE_HOLD_MS, &r, &want), 0);
	CU_ASSERT(want > 0);

	/* Spent slowly: three quarters into its hold, the next is asked,
	 * as many as were spent of this one. */
	g = (gw_rate_grant){0};
	gw__grant_take(&g, 0, &r, &want);
	gw__grant_add(&g, 100, &bucket, 0);
	for (int i = 0; i < 10; i++) {
		CU_ASSERT_EQUAL(gw__grant_take(&g, i * 70, &r, &want), 1);
		CU_ASSERT_EQUAL(want, 0);
	}
	CU_ASSERT_EQUAL(gw__grant_take(&g, GW_RATE_HOLD_MS * 3 / 4, &r, &want), 1);
	CU_ASSERT_EQUAL(want, 11);
}

/* A key called at `per_s[k]` calls a second in turn, each for `phase_ms`,
 * for `n` calls, each ask answered 3 calls after it: the calls that
 * asked svc-account after the first 200, *back the tokens that went back
 * unspent; what is held with what is asked never passes the largest
 * ask. */
static int steady(const int *per_s, int n_rates, int phase_ms, int n,
		  gw_rate_grant *g, long long *back)
{
	gw_rate r, bucket = {100000000, 90000000, 10};
	long long want, asked = 0;
	int64_t us = 100000;
	int calls = 0, late = 0;

	memset(g, 0, sizeof(*g));
	*back = 0;
	for (int i = 0; i < n; i++) {
		int64_t now = us / 1000;

		us += 1000000 / per_s[(now / phase_ms) % n_rates];
		*back += gw__grant_expire(g, now);
		if (!gw__grant_take(g, now, &r, &want) && i >= 200)
			late++;
		if (want > 0) {
			asked = want;
			calls = 3;
		}
		CU_ASSERT(g->tokens + g->next + asked <= GW_RATE_WANT_MAX);
		if (asked > 0 && --calls == 0) {
			gw__grant_add(g, asked, &bucket, now);
			asked = 0;
		}
	}
	return late;
}

static void test_no_call_asks_in_steady_use(void)
{
	static const int fast[] = {10000}, mid[] = {1000}, slow[] = {400},
			 uneven[] = {2000, 300, 900, 150};
	gw_rate_grant g;
	long long back;

	/* 10,000 calls a second: the largest grants. */
	CU_ASSERT_EQUAL(steady(fast, 1, 1000, 200000, &g, &back), 0);
	CU_ASSERT_EQUAL(g.want, GW_RATE_WANT_MAX);
	CU_ASSERT_EQUAL(back, 0);
	/* Slower: grants spent within their hold, none going back. */
	CU_ASSERT_EQUAL(steady(mid, 1, 1000, 20000, &g, &back), 0);
	CU_ASSERT(g.want >= 256 && g.want <= 1024);
	CU_ASSERT_EQUAL(back, 0);
	CU_ASSERT_EQUAL(steady(slow, 1, 1000, 8000, &g, &back), 0);
	CU_ASSERT_EQUAL(back, 0);
	/* A pace that changes every 1.5 s: tokens go back when it slows,
	 * and still no call waits for svc-account. */
	CU_ASSERT_EQUAL(steady(uneven, 4, 1500, 40000, &g, &back), 0);
}

static void test_the_view_refills(void)
{
	gw_rate_grant g = {0};
	gw_rate r, bucket = {600, 100, 50};
	long long want;

	gw__grant_take(&g, 0, &r, &want);
	gw__grant_add(&g, 2, &bucket, 0);
	/* 500 ms later: 5 tokens refilled at svc-account. */
	CU_ASSERT_EQUAL(gw__grant_take(&g, 500, &r, &want), 1);
	CU_ASSERT_EQUAL(r.remaining, 100 + 5 + 1);
	/* (600 - 106) tokens at 10 a second: 49.4 s, shown as 50. */
	CU_ASSERT_EQUAL(r.reset, 50);
	/* Never full: this call was counted. */
	bucket = (gw_rate){600, 599, 1};
	gw__grant_add(&g, 1, &bucket, 500);
	CU_ASSERT_EQUAL(gw__grant_take(&g, 70000, &r, &want), 0);
	g.expires_ms = 80000;
	CU_ASSERT_EQUAL(gw__grant_take(&g, 70000, &r, &want), 1);
	CU_ASSERT_EQUAL(r.remaining, 599);
	CU_ASSERT_EQUAL(r.reset, 1);
}

static void test_expired_and_recalled_tokens_leave(void)
{
	gw_rate_grant g = {0};
	gw_rate r, bucket = {600, 500, 10};
	long long want;

	gw__grant_take(&g, 0, &r, &want);
	gw__grant_add(&g, 8, &bucket, 0);
	CU_ASSERT_EQUAL(gw__grant_expire(&g, GW_RATE_HOLD_MS - 1), 0);
	CU_ASSERT_EQUAL(gw__grant_take(&g, 1, &r, &want), 1);
	/* Past the hold: nothing more is spent, the 7 left go back. */
	CU_ASSERT_EQUAL(gw__grant_take(&g, GW_RATE_HOLD_MS, &r, &want), 0);
	CU_ASSERT_EQUAL(gw__grant_expire(&g, GW_RATE_HOLD_MS), 7);
	CU_ASSERT_EQUAL(gw__grant_expire(&g, GW_RATE_HOLD_MS), 0);

	/* A recall takes everything held, and the next ask is small. */
	g = (gw_rate_grant){.want = 64};
	gw__grant_add(&g, 64, &bucket, 0);
	CU_ASSERT_EQUAL(gw__grant_recall(&g), 64);
	CU_ASSERT_EQUAL(gw__grant_take(&g, 1, &r, &want), 0);
	CU_ASSERT_EQUAL(want, GW_RATE_WANT_MIN);
}

static void test_held_tokens_keep_their_end(void)
{
	gw_rate_grant g = {0};
	gw_rate r, bucket = {600, 500, 10};
	long long want;

	gw__grant_add(&g, 4, &bucket, 0);
	/* A second grant (asked ahead): its tokens wait, with their end. */
	gw__grant_add(&g, 4, &bucket, 900);
	/* A third (an ask timed out, then both answered): with the second. */
	gw__grant_add(&g, 2, &bucket, 950);
	CU_ASSERT_EQUAL(gw__grant_take(&g, GW_RATE_HOLD_MS, &r, &want), 0);
	CU_ASSERT_EQUAL(gw__grant_expire(&g, GW_RATE_HOLD_MS), 4);
	CU_ASSERT_EQUAL(gw__grant_take(&g, GW_RATE_HOLD_MS, &r, &want), 1);
	CU_ASSERT_EQUAL(gw__grant_expire(&g, 900 + GW_RATE_HOLD_MS - 1), 0);
	CU_ASSERT_EQUAL(gw__grant_expire(&g, 900 + GW_RATE_HOLD_MS), 5);
	/* A recall takes both. */
	gw__grant_add(&g, 4, &bucket, 2000);
	gw__grant_add(&g, 4, &bucket, 2100);
	CU_ASSERT_EQUAL(gw__grant_recall(&g), 8);
}

/* ---- in the kept keys (keys.c) ---------------------------------------- */

static struct event_base *base;
static rpc_client *no_client; /* the watch never asks */

static void heard(gw_keys *k, char **recall, size_t n_recall, char **keys,
		  size_t n_keys, int64_t now)
{
	Seo__Account__V1__WatchResponse w = SEO__ACCOUNT__V1__WATCH_RESPONSE__INIT;

	w.instance = "i1";
	w.keys = keys;
	w.n_keys = n_keys;
	w.rate_recall = recall;
	w.n_rate_recall = n_recall;
	gw__keys_heard(k, &w, now);
}

static void test_kept_keys_hold_grants(void)
{
	gw_keys *k = NULL;
	gw_kept_key key = {.workspace_id = "ws_1", .user_id = "usr_1",
			   .role = "owner", .rate_limit = 600};
	gw_rate r, bucket = {600, 500, 10};
	long long want;
	int asked;
	char *hash = HASH_A;

	CU_ASSERT_FATAL(gw__keys_new(base, &no_client, "gw-test", NULL, NULL, &k) == 0);
	heard(k, NULL, 0, NULL, 0, 1000);
	/* Not kept: nothing held, nothing asked. */
	CU_ASSERT_EQUAL(gw__keys_rate_take(k, HASH_A, 1000, &r, &want, &asked), 0);
	CU_ASSERT_EQUAL(want, 0);
	gw__keys_put(k, HASH_A, &key, gw__keys_epoch(k));
	CU_ASSERT_EQUAL(gw__keys_rate_take(k, HASH_A, 1000, &r, &want, &asked), 0);
	CU_ASSERT_EQUAL(want, GW_RATE_WANT_MIN);
	gw__keys_rate_granted(k, HASH_A, 3, &bucket, 1000);
	/* Kept again (another call's answer): its tokens stay. */
	gw__keys_put(k, HASH_A, &key, gw__keys_epoch(k));
	CU_ASSERT_EQUAL(gw__keys_rate_take(k, HASH_A, 1001, &r, &want, &asked), 1);
	CU_ASSERT_EQUAL(r.remaining, 502);
	/* Recalled: the next call asks svc-account. */
	heard(k, &hash, 1, NULL, 0, 1002);
	CU_ASSERT_EQUAL(gw__keys_rate_take(k, HASH_A, 1002, &r, &want, &asked), 0);
	CU_ASSERT_EQUAL(want, GW_RATE_WANT_MIN);
	gw__keys_rate_granted(k, HASH_A, 3, &bucket, 1002);
	/* Revoked: the key and its tokens are gone. */
	heard(k, NULL, 0, &hash, 1, 1003);
	CU_ASSERT_EQUAL(gw__keys_rate_take(k, HASH_A, 1003, &r, &want, &asked), 0);
	CU_ASSERT_EQUAL(want, 0);
	/* A grant for a key no longer kept is not held. */
	gw__keys_rate_granted(k, HASH_A, 3, &bucket, 1004);
	gw__keys_put(k, HASH_A, &key, gw__keys_epoch(k));
	CU_ASSERT_EQUAL(gw__keys_rate_take(k, HASH_A, 1004, &r, &want, &asked), 0);
	/* Fallen to the low-water mark with no svc-account to ask: the
	 * call asks again once the tokens are spent. */
	gw__keys_rate_granted(k, HASH_A, 4, &bucket, 1004);
	CU_ASSERT_EQUAL(gw__keys_rate_take(k, HASH_A, 1004, &r, &want, &asked), 1);
	CU_ASSERT_EQUAL(gw__keys_rate_take(k, HASH_A, 1004, &r, &want, &asked), 1);
	CU_ASSERT_EQUAL(gw__keys_rate_take(k, HASH_A, 1004, &r, &want, &asked), 1);
	CU_ASSERT_EQUAL(asked, 0);
	CU_ASSERT_EQUAL(gw__keys_rate_take(k, HASH_A, 1004, &r, &want, &asked), 1);
	CU_ASSERT_EQUAL(gw__keys_rate_take(k, HASH_A, 1004, &r, &want, &asked), 0);
	CU_ASSERT(want > 0);
	gw__keys_rate_unasked(k, HASH_A);
	/* Stopping: no token is spent any more. */
	gw__keys_rate_granted(k, HASH_A, 3, &bucket, 1004);
	CU_ASSERT_EQUAL(gw__keys_stop(k), 0);
	CU_ASSERT_EQUAL(gw__keys_rate_take(k, HASH_A, 1005, &r, &want, &asked), 0);
	gw__keys_close(k);
	gw__keys_free(k);
}

int main(void)
{
	CU_pSuite s;
	unsigned failed;

	base = event_base_new();
	if (base == NULL || CU_initialize_registry() != CUE_SUCCESS)
		return 1;
	s = CU_add_suite("gw_rate_grant", NULL, NULL);
	CU_add_test(s, "one ask at a time", test_one_ask_at_a_time);
	CU_add_test(s, "tokens spent one a call", test_tokens_spent_one_a_call);
	CU_add_test(s, "the view refills", test_the_view_refills);
	CU_add_test(s, "expired and recalled tokens leave",
		    test_expired_and_recalled_tokens_leave);
	CU_add_test(s, "the next grant asked ahead",
		    test_the_next_grant_asked_ahead);
	CU_add_test(s, "no call asks in steady use",
		    test_no_call_asks_in_steady_use);
	CU_add_test(s, "held tokens keep their end",
		    test_held_tokens_keep_their_end);
	CU_add_test(s, "kept keys hold grants", test_kept_keys_hold_grants);
	CU_basic_set_mode(CU_BRM_VERBOSE);
	CU_basic_run_tests();
	failed = CU_get_number_of_failures();
	CU_cleanup_registry();
	event_base_free(base);
	return failed != 0;
}

/*
 * test_gw_lease_queue.c: a workspace's ended calls kept as columns
 * (gateway/lib/lease_queue.c): every column and string of every call
 * reads back as pushed, across the columns' and the text's growth, after
 * drops from the front (the offsets rebased, the text holding only the
 * calls left), after dropping all, and after a free.
 */
#include <CUnit/Basic.h>
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "lease_queue.h"

#define MODEL_MAX 8192
#define DOMAIN_MAX 300
#define OWN_MAX 40

/* The calls the queue should hold, in order, kept apart from it. */
static struct want {
	uint64_t request_no;
	int64_t charged, used, created_at;
	uint32_t name[GW_LQ_NAMES];
	char own[GW_LQ_NAMES][OWN_MAX + 1];
	char domain[DOMAIN_MAX + 1];
} want[MODEL_MAX];
static size_t want_n;
static size_t next_seq; /* the next generated call's number */

static void begin(void)
{
	want_n = 0;
	next_seq = 0;
}

static void push(gw_lq *q, const gw_lq_call *c)
{
	struct want *w;

	CU_ASSERT_FATAL(want_n < MODEL_MAX);
	w = &want[want_n];
	w->request_no = c->request_no;
	w->charged = c->charged;
	w->used = c->used;
	w->created_at = c->created_at;
	for (int j = 0; j < GW_LQ_NAMES; j++) {
		w->name[j] = c->name[j];
		snprintf(w->own[j], sizeof(w->own[j]), "%s",
			 c->name[j] == GW_LQ_OWN ? c->own[j] : "");
	}
	snprintf(w->domain, sizeof(w->domain), "%s",
		 c->domain != NULL ? c->domain : "");
	want_n++;
	CU_ASSERT_EQUAL_FATAL(gw__lq_push(q, c), 0);
}

static void drop(gw_lq *q, size_t k)
{
	size_t gone = k < want_n ? k : want_n;

	gw__lq_drop(q, k);
	memmove(want, want + gone, (want_n - gone) * sizeof(*want));
	want_n -= gone;
}

/* `len` bytes starting with the call's number and a tag, so a string
 * read at another call's or name's offset differs. */
static void fill(char *s, size_t len, size_t seq, char tag)
{
	size_t i = (size_t)snprintf(s, len + 1, "%zu%c", seq, tag);

	for (i = i < len ? i : len; i < len; i++)
		s[i] = (char)('a' + (seq + i) % 26);
	s[len] = '\0';
}

/* Call `next_seq`: a domain of 0 to DOMAIN_MAX bytes, each of the eight
 * mixes of own names and indexes, own names of 0 to OWN_MAX bytes, and
 * numbers using the columns' full width and sign. */
static void push_next(gw_lq *q)
{
	size_t seq = next_seq++;
	char domain[DOMAIN_MAX + 1], own[GW_LQ_NAMES][OWN_MAX + 1];
	gw_lq_call c = {
		.request_no = UINT64_MAX - seq,
		.charged = -3 * (long long)seq,
		.used = 1000003LL * (long long)seq,
		.created_at = INT64_C(1700000000000) + (int64_t)seq * 1000,
		.domain = domain,
	};

	fill(domain, seq % (DOMAIN_MAX + 1), seq, 'd');
	for (int j = 0; j < GW_LQ_NAMES; j++) {
		if ((seq >> j) & 1) {
			fill(own[j], (seq / 8 + (size_t)j * 13) % (OWN_MAX + 1),
			     seq, (char)('u' + j));
			c.name[j] = GW_LQ_OWN;
			c.own[j] = own[j];
		} else {
			c.name[j] = (uint32_t)(seq * 3 + (size_t)j);
		}
	}
	push(q, &c);
}

static void push_many(gw_lq *q, size_t count)
{
	for (size_t i = 0; i < count; i++)
		push_next(q);
}

/* `got` is `expect` and lies in the text's used part: stale bytes past
 * text_len that happen to match do not pass. */
static int reads(const gw_lq *q, const char *got, const char *expect)
{
	size_t len = strlen(expect);

	return got >= q->text && got + len < q->text + q->text_len &&
	       memcmp(got, expect, len + 1) == 0;
}

/* The first call that differs from the model, or want_n. */
static size_t first_wrong(const gw_lq *q)
{
	for (size_t i = 0; i < want_n; i++) {
		const struct want *w = &want[i];

		if (q->request_no[i] != w->request_no ||
		    q->charged[i] != w->charged || q->used[i] != w->used ||
		    q->created_at[i] != w->created_at ||
		    !reads(q, gw__lq_domain(q, i), w->domain))
			return i;
		for (int j = 0; j < GW_LQ_NAMES; j++)
			if (q->name[j][i] != w->name[j] ||
			    (w->name[j] == GW_LQ_OWN &&
			     !reads(q, gw__lq_own(q, i, j), w->own[j])))
				return i;
	}
	return want_n;
}

/* The text holds the calls left and nothing else. */
static size_t want_text_len(void)
{
	size_t len = 0;

	for (size_t i = 0; i < want_n; i++) {
		len += strlen(want[i].domain) + 1;
		for (int j = 0; j < GW_LQ_NAMES; j++)
			if (want[i].name[j] == GW_LQ_OWN)
				len += strlen(want[i].own[j]) + 1;
	}
	return len;
}

static void check(const gw_lq *q)
{
	CU_ASSERT_EQUAL_FATAL(q->n, want_n);
	CU_ASSERT_EQUAL(first_wrong(q), want_n);
	CU_ASSERT_EQUAL(q->text_len, want_text_len());
}

static void test_push_read_back(void)
{
	gw_lq q = {0};
	gw_lq_call a = {
		.request_no = 1, .charged = 5, .used = 3,
		.created_at = INT64_C(1700000000123),
		.name = {0, 1, 2}, .domain = "example.com",
	}, b = {
		.request_no = UINT64_MAX, .charged = -7, .used = 0,
		.created_at = -1,
		.name = {GW_LQ_OWN, UINT32_MAX - 1, 4},
		.own = {[GW_LQ_USER] = "usr_gone"},
	}, c = {
		.request_no = 42, .charged = LLONG_MIN, .used = LLONG_MAX,
		.created_at = INT64_MAX,
		.name = {9, GW_LQ_OWN, GW_LQ_OWN},
		.own = {[GW_LQ_KEY] = "", [GW_LQ_ENDPOINT] = "/v1/serp"},
		.domain = "shop.example.org",
	};

	begin();
	push(&q, &a);
	push(&q, &b);
	push(&q, &c);
	check(&q);
	/* spelled out once, so the model itself is checked too */
	CU_ASSERT_STRING_EQUAL(gw__lq_own(&q, 1, GW_LQ_USER), "usr_gone");
	CU_ASSERT_STRING_EQUAL(gw__lq_domain(&q, 1), "");
	CU_ASSERT_STRING_EQUAL(gw__lq_own(&q, 2, GW_LQ_ENDPOINT), "/v1/serp");
	CU_ASSERT_EQUAL(q.name[GW_LQ_KEY][1], UINT32_MAX - 1);
	CU_ASSERT_EQUAL(q.charged[2], LLONG_MIN);
	CU_ASSERT_EQUAL(q.request_no[1], UINT64_MAX);
	gw__lq_free(&q);
}

static void test_growth(void)
{
	gw_lq q = {0};

	begin();
	/* far past the first columns and text: many reallocations, each
	 * one carrying what was pushed before it */
	push_many(&q, 5000);
	check(&q);
	gw__lq_free(&q);
}

static void test_drop_front(void)
{
	gw_lq q = {0};
	size_t steps[] = {1, 1000, 0, MODEL_MAX}; /* the last: more than left */

	begin();
	push_many(&q, 1500);
	check(&q);
	for (size_t s = 0; s < sizeof(steps) / sizeof(steps[0]); s++) {
		drop(&q, steps[s]);
		check(&q);
		/* pushed after the drop, at offsets past the rebased ones */
		push_many(&q, 200);
		check(&q);
	}
	gw__lq_free(&q);
}

static void test_drop_all_and_free(void)
{
	gw_lq q = {0}, zero = {0};

	begin();
	push_many(&q, 100);
	drop(&q, q.n);
	check(&q);
	push_many(&q, 100);
	check(&q);

	gw__lq_free(&q);
	CU_ASSERT(memcmp(&q, &zero, sizeof(q)) == 0);
	begin();
	push_many(&q, 300);
	check(&q);
	gw__lq_free(&q);

	gw__lq_free(&zero);
	CU_ASSERT_EQUAL(zero.n, 0);
	CU_ASSERT_PTR_NULL(zero.text);
}

int main(void)
{
	CU_pSuite s;
	unsigned failed;

	if (CU_initialize_registry() != CUE_SUCCESS)
		return 1;
	s = CU_add_suite("lease_queue", NULL, NULL);
	CU_add_test(s, "push then read back", test_push_read_back);
	CU_add_test(s, "columns and text grow", test_growth);
	CU_add_test(s, "drops from the front", test_drop_front);
	CU_add_test(s, "drop all, free, reuse", test_drop_all_and_free);
	CU_basic_set_mode(CU_BRM_VERBOSE);
	CU_basic_run_tests();
	failed = CU_get_number_of_tests_failed() +
		 CU_get_number_of_suites_failed();
	CU_cleanup_registry();
	return failed != 0;
}

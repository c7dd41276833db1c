/*
 * test_acct_lease_columns: a report's calls as columns (lib/lease_columns.c,
 * acct__lease_columns()) become one LeaseCall a column entry, every field
 * taken from its column, request ids the prefix and 16 lowercase hex
 * digits of the request number at both ends of 64 bits, the report's other
 * fields copied and the report left as it was. A report without columns
 * is passed through; no calls and an empty prefix work; unequal columns,
 * an index past names, a prefix over 64 bytes, calls given both ways and
 * more than ACCT_LEASE_CALLS_MAX calls are refused as invalid_parameter.
 * No database.
 */
#include <CUnit/Basic.h>

#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "acct_int.h"
#include "seo/arena.h"
#include "seo/errors.h"

typedef Seo__Account__V1__LeaseRequest LeaseRequest;
typedef Seo__Account__V1__LeaseCall LeaseCall;
typedef Seo__Account__V1__LeaseCallColumns LeaseCallColumns;

#define N 3
/* One call past the limit, every entry valid. */
#define MANY (ACCT_LEASE_CALLS_MAX + 1)

/* Three calls of one user and key, two endpoints; values told apart
 * column by column so that a call reading the wrong column shows. */
struct fixture {
	char *names[4];
	uint64_t no[N];
	uint32_t user[N], key[N], endpoint[N];
	char *domain[N];
	int64_t charged[N], credits_used[N], created_at[N];
	LeaseCallColumns cols;
	LeaseRequest req;
};

static const struct {
	const char *request_id, *endpoint, *domain;
	int64_t charged, credits_used, created_at;
} want[N] = {
	{"gwabc0000000000000001", "backlinks", "", 3, 2, 1700000000000},
	{"gwabc0000000000000abc", "domain-rank", "example.com", 5, 0,
	 1700000000001},
	{"gwabcffffffffffffffff", "backlinks", "", 250, 120, 1700000000250},
};

static uint64_t many_no[MANY];
static uint32_t many_idx[MANY];
static char *many_domain[MANY];
static int64_t many_int[MANY];
static char *many_names[] = {"usr_a"};

/* Fills `f` in place: cols and req point into it. */
static void fixture_init(struct fixture *f)
{
	static const struct fixture values = {
		.names = {"usr_a", "key_b", "backlinks", "domain-rank"},
		.no = {1, 0xabc, UINT64_MAX},
		.user = {0, 0, 0},
		.key = {1, 1, 1},
		.endpoint = {2, 3, 2},
		.domain = {"", "example.com", ""},
		.charged = {3, 5, 250},
		.credits_used = {2, 0, 120},
		.created_at = {1700000000000, 1700000000001, 1700000000250},
	};
	LeaseCallColumns *k = &f->cols;

	*f = values;
	seo__account__v1__lease_call_columns__init(k);
	k->n_names = 4;
	k->names = f->names;
	k->request_prefix = "gwabc";
	k->n_request_no = N;
	k->request_no = f->no;
	k->n_user = N;
	k->user = f->user;
	k->n_key = N;
	k->key = f->key;
	k->n_endpoint = N;
	k->endpoint = f->endpoint;
	k->n_domain = N;
	k->domain = f->domain;
	k->n_charged = N;
	k->charged = f->charged;
	k->n_credits_used = N;
	k->credits_used = f->credits_used;
	k->n_created_at = N;
	k->created_at = f->created_at;
	seo__account__v1__lease_request__init(&f->req);
	f->req.holder = "gw-1";
	f->req.workspace_id = "ws_abc";
	f->req.has_want = 1;
	f->req.want = 100;
	f->req.stream = "st_1";
	f->req.first_seq = 41;
	f->req.columns = k;
}

/* n calls of user, key and endpoint "usr_a", every column as long. */
static LeaseCallColumns many(size_t n)
{
	LeaseCallColumns k = SEO__ACCOUNT__V1__LEASE_CALL_COLUMNS__INIT;

	for (size_t i = 0; i < MANY; i++)
		many_domain[i] = "";
	k.n_names = 1;
	k.names = many_names;
	k.n_request_no = k.n_user = k.n_key = k.n_endpoint = k.n_domain =
		k.n_charged = k.n_credits_used = k.n_created_at = n;
	k.request_no = many_no;
	k.user = k.key = k.endpoint = many_idx;
	k.domain = many_domain;
	k.charged = k.credits_used = k.created_at = many_int;
	return k;
}

/* `req` converted without error; *out allocated from `arena`. */
static LeaseRequest *converted(seo_arena *arena, const LeaseRequest *req)
{
	LeaseRequest *out = NULL;
	acct_err err = {.code = ""};
	int rc = acct__lease_columns(arena, req, &out, &err);

	if (rc != 0)
		fprintf(stderr, "%s: %s\n", err.code, err.message);
	CU_ASSERT_EQUAL(rc, 0);
	return rc == 0 ? out : NULL;
}

/* `req` refused as a bad parameter. */
static void refused(const LeaseRequest *req)
{
	seo_arena *arena = seo_arena_new(0);
	LeaseRequest *out = NULL;
	acct_err err = {.code = ""};

	CU_ASSERT_PTR_NOT_NULL_FATAL(arena);
	CU_ASSERT_EQUAL(acct__lease_columns(arena, req, &out, &err), SEO_EINVAL);
	CU_ASSERT_STRING_EQUAL(err.code, "invalid_parameter");
	seo_arena_free(arena);
}

static void test_no_columns(void)
{
	seo_arena *arena = seo_arena_new(0);
	LeaseCall call = SEO__ACCOUNT__V1__LEASE_CALL__INIT;
	LeaseCall *calls[] = {&call};
	LeaseRequest req = SEO__ACCOUNT__V1__LEASE_REQUEST__INIT;

	CU_ASSERT_PTR_NOT_NULL_FATAL(arena);
	req.n_calls = 1;
	req.calls = calls;
	CU_ASSERT_PTR_EQUAL(converted(arena, &req), &req);
	CU_ASSERT_EQUAL(seo_arena_used(arena), 0);
	seo_arena_free(arena);
}

static void test_three_calls(void)
{
	seo_arena *arena = seo_arena_new(0);
	struct fixture f, before;
	LeaseRequest *out;

	CU_ASSERT_PTR_NOT_NULL_FATAL(arena);
	fixture_init(&f);
	/* Byte for byte, so that any write through `in` shows. */
	memcpy(&before, &f, sizeof(f));
	out = converted(arena, &f.req);
	CU_ASSERT_PTR_NOT_NULL_FATAL(out);
	CU_ASSERT_PTR_NOT_EQUAL(out, &f.req);
	CU_ASSERT_PTR_NULL(out->columns);
	CU_ASSERT_STRING_EQUAL(out->holder, "gw-1");
	CU_ASSERT_STRING_EQUAL(out->workspace_id, "ws_abc");
	CU_ASSERT_STRING_EQUAL(out->stream, "st_1");
	CU_ASSERT_EQUAL(out->first_seq, 41);
	CU_ASSERT(out->has_want);
	CU_ASSERT_EQUAL(out->want, 100);
	CU_ASSERT_FALSE(out->has_close);
	CU_ASSERT_FALSE(out->has_hold);
	CU_ASSERT_EQUAL_FATAL(out->n_calls, N);
	for (size_t i = 0; i < N; i++) {
		const LeaseCall *c = out->calls[i];

		CU_ASSERT_PTR_EQUAL(c->base.descriptor,
				    &seo__account__v1__lease_call__descriptor);
		CU_ASSERT_STRING_EQUAL(c->request_id, want[i].request_id);
		CU_ASSERT_STRING_EQUAL(c->user_id, "usr_a");
		CU_ASSERT_STRING_EQUAL(c->key_id, "key_b");
		CU_ASSERT_STRING_EQUAL(c->endpoint, want[i].endpoint);
		CU_ASSERT_STRING_EQUAL(c->domain, want[i].domain);
		CU_ASSERT_EQUAL(c->charged, want[i].charged);
		CU_ASSERT_EQUAL(c->credits_used, want[i].credits_used);
		CU_ASSERT_EQUAL(c->created_at, want[i].created_at);
	}
	/* What lease.c and the wire would read of it. */
	CU_ASSERT(protobuf_c_message_check(&out->base));
	CU_ASSERT_EQUAL(memcmp(&before, &f, sizeof(f)), 0);
	seo_arena_free(arena);
}

static void test_short_column(void)
{
	struct fixture f;
	/* request_no too: it is the one the others are measured by. */
	size_t *lens[] = {
		&f.cols.n_request_no, &f.cols.n_user, &f.cols.n_key,
		&f.cols.n_endpoint, &f.cols.n_domain, &f.cols.n_charged,
		&f.cols.n_credits_used, &f.cols.n_created_at,
	};

	for (size_t c = 0; c < sizeof(lens) / sizeof(lens[0]); c++) {
		fixture_init(&f);
		*lens[c] = N - 1;
		refused(&f.req);
	}
}

static void test_index_past_names(void)
{
	struct fixture f;
	uint32_t *cols[] = {f.user, f.key, f.endpoint};

	/* The last call's, so that every call is checked. */
	for (size_t c = 0; c < sizeof(cols) / sizeof(cols[0]); c++) {
		fixture_init(&f);
		cols[c][N - 1] = 4;
		refused(&f.req);
	}
}

static void test_prefix_length(void)
{
	seo_arena *arena = seo_arena_new(0);
	char prefix[66], id[66 + 16];
	struct fixture f;
	LeaseRequest *out;

	CU_ASSERT_PTR_NOT_NULL_FATAL(arena);
	memset(prefix, 'p', 65);
	prefix[65] = '\0';
	fixture_init(&f);
	f.cols.request_prefix = prefix;
	refused(&f.req);
	prefix[64] = '\0';
	out = converted(arena, &f.req);
	CU_ASSERT_PTR_NOT_NULL_FATAL(out);
	CU_ASSERT_EQUAL_FATAL(out->n_calls, N);
	snprintf(id, sizeof(id), "%sffffffffffffffff", prefix);
	CU_ASSERT_STRING_EQUAL(out->calls[N - 1]->request_id, id);
	seo_arena_free(arena);
}

static void test_both_ways(void)
{
	LeaseCall call = SEO__ACCOUNT__V1__LEASE_CALL__INIT;
	LeaseCall *calls[] = {&call};
	struct fixture f;

	fixture_init(&f);
	f.req.n_calls = 1;
	f.req.calls = calls;
	refused(&f.req);
}

static void test_too_many(void)
{
	seo_arena *arena = seo_arena_new(0);
	LeaseRequest req = SEO__ACCOUNT__V1__LEASE_REQUEST__INIT;
	LeaseCallColumns k = many(MANY);
	LeaseRequest *out;

	CU_ASSERT_PTR_NOT_NULL_FATAL(arena);
	req.columns = &k;
	refused(&req);
	k = many(ACCT_LEASE_CALLS_MAX);
	out = converted(arena, &req);
	CU_ASSERT_PTR_NOT_NULL_FATAL(out);
	CU_ASSERT_EQUAL(out->n_calls, ACCT_LEASE_CALLS_MAX);
	seo_arena_free(arena);
}

static void test_empty_prefix(void)
{
	seo_arena *arena = seo_arena_new(0);
	struct fixture f;
	LeaseRequest *out;

	CU_ASSERT_PTR_NOT_NULL_FATAL(arena);
	fixture_init(&f);
	f.cols.request_prefix = "";
	out = converted(arena, &f.req);
	CU_ASSERT_PTR_NOT_NULL_FATAL(out);
	CU_ASSERT_EQUAL_FATAL(out->n_calls, N);
	CU_ASSERT_STRING_EQUAL(out->calls[0]->request_id, "0000000000000001");
	CU_ASSERT_STRING_EQUAL(out->calls[1]->request_id, "0000000000000abc");
	CU_ASSERT_STRING_EQUAL(out->calls[2]->request_id, "ffffffffffffffff");
	seo_arena_free(arena);
}

static void test_no_calls(void)
{
	seo_arena *arena = seo_arena_new(0);
	LeaseCallColumns k = SEO__ACCOUNT__V1__LEASE_CALL_COLUMNS__INIT;
	LeaseRequest req = SEO__ACCOUNT__V1__LEASE_REQUEST__INIT;
	LeaseRequest *out;

	CU_ASSERT_PTR_NOT_NULL_FATAL(arena);
	req.columns = &k;
	out = converted(arena, &req);
	CU_ASSERT_PTR_NOT_NULL_FATAL(out);
	CU_ASSERT_PTR_NOT_EQUAL(out, &req);
	CU_ASSERT_PTR_NULL(out->columns);
	CU_ASSERT_EQUAL(out->n_calls, 0);
	seo_arena_free(arena);
}

int main(void)
{
	CU_pSuite s;
	unsigned failures;

	if (CU_initialize_registry() != CUE_SUCCESS)
		return 1;
	s = CU_add_suite("lease columns", NULL, NULL);
	CU_add_test(s, "a report without columns is itself", test_no_columns);
	CU_add_test(s, "three calls, every field", test_three_calls);
	CU_add_test(s, "a column shorter than the others", test_short_column);
	CU_add_test(s, "an index past names", test_index_past_names);
	CU_add_test(s, "a prefix of 64 bytes, not 65", test_prefix_length);
	CU_add_test(s, "calls given both ways", test_both_ways);
	CU_add_test(s, "at most 4096 calls", test_too_many);
	CU_add_test(s, "an empty prefix", test_empty_prefix);
	CU_add_test(s, "no calls", test_no_calls);
	CU_basic_set_mode(CU_BRM_VERBOSE);
	CU_basic_run_tests();
	failures = CU_get_number_of_failures() + CU_get_number_of_suites_failed();
	CU_cleanup_registry();
	return failures == 0 ? 0 : 1;
}

/*
 * test_acct_usage_batches: leased calls' usage rows written in batches
 * (migrations 008 and 010, lib/lease.c, lib/usage_text.c) and read back
 * (lib/account.c's page and total, the usage_all view) against
 * PostgreSQL, at the sizes a busy workspace reaches: thousands of calls
 * from several keys in reports whose times overlap, beside per-call rows,
 * paged at every limit and at offsets across batches' edges and past the
 * end; a report of the most calls a report may carry, from more keys than
 * one round trip writes; text that JSON must escape; every field of calls
 * naming more than a batch's names.
 * Without SEO_TEST_PG_URL it prints a skip line and passes.
 */
#include <CUnit/Basic.h>

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <libpq-fe.h>

#include "acct_int.h"
#include "acct_testdb.h"

typedef Seo__Account__V1__LeaseRequest LeaseRequest;
typedef Seo__Account__V1__LeaseCall LeaseCall;
typedef Seo__Account__V1__ListUsageResponse ListUsageResponse;

#define KEYS 3
#define REPORTS 40
#define PER_CALL_ROWS 300
#define T0 1800000000000LL

static acct_testdb T;
static PGconn *db;
static acct_service *svc;

/* The first value of `sql` ($1 `p1`) as an integer; -1 when it failed. */
static long long q_int(const char *sql, const char *p1)
{
	PGresult *r = PQexecParams(db, sql, p1 != NULL, NULL, &p1, NULL, NULL, 0);
	long long v = -1;

	if (PQresultStatus(r) == PGRES_TUPLES_OK && PQntuples(r) > 0)
		v = atoll(PQgetvalue(r, 0, 0));
	PQclear(r);
	return v;
}

/* A workspace of 10,000,000 credits holding an open lease of holder
 * `holder`. */
static void new_leased(const char *name, acct_new_user *w)
{
	LeaseRequest req = SEO__ACCOUNT__V1__LEASE_REQUEST__INIT;
	char email[64];
	acct__lease_out o;
	acct_err err;

	snprintf(email, sizeof(email), "%s@example.com", name);
	CU_ASSERT_FATAL(acct_workspace_create(db, name, email, 10000000, w, &err) == 0);
	req.holder = "gw-batches";
	req.workspace_id = w->workspace_id;
	req.want = 1000000;
	CU_ASSERT_FATAL(acct__lease(svc, &req, &o, &err) == 0);
	CU_ASSERT_FATAL(o.granted > 0);
}

/* Reports calls[0..n) of workspace `ws`, numbered from *seq on. */
static void report(const char *ws, LeaseCall *calls, size_t n, uint64_t *seq)
{
	LeaseRequest req = SEO__ACCOUNT__V1__LEASE_REQUEST__INIT;
	LeaseCall **cp = malloc(n * sizeof(*cp));
	acct__lease_out o;
	acct_err err;

	CU_ASSERT_FATAL(cp != NULL);
	for (size_t i = 0; i < n; i++)
		cp[i] = &calls[i];
	req.holder = "gw-batches";
	req.workspace_id = (char *)ws;
	req.calls = cp;
	req.n_calls = n;
	req.stream = "batches";
	req.first_seq = *seq;
	if (acct__lease(svc, &req, &o, &err) != 0) {
		fprintf(stderr, "lease: %s\n", err.message);
		CU_FAIL("the report was refused");
	}
	*seq += n;
	free(cp);
}

/* Strings the calls point to, kept until the suite ends. */
static char (*text)[48];
static size_t n_text;

static char *keep(const char *fmt, ...)
{
	char *s = text[n_text++];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(s, sizeof(text[0]), fmt, ap);
	va_end(ap);
	return s;
}

static unsigned seed = 12345;

static int next_rand(int n)
{
	seed = seed * 1103515245u + 12345u;
	return (int)((seed >> 8) % (unsigned)n);
}

/* Each page of `ws` at `limit` and `offset` equals usage_all's rows in the
 * listing's order, and the total its count. */
static int page_matches(const char *ws, acct_caller *who, int64_t limit,
			int64_t offset)
{
	Seo__Account__V1__ListUsageRequest req = SEO__ACCOUNT__V1__LIST_USAGE_REQUEST__INIT;
	seo_arena *arena = seo_arena_new(0);
	ListUsageResponse *got;
	char lim[24], off[24];
	const char *p[3] = {ws, lim, off};
	acct_err err;
	PGresult *r;
	int ok;

	req.has_limit = req.has_offset = 1;
	req.limit = limit;
	req.offset = offset;
	snprintf(lim, sizeof(lim), "%lld", (long long)(limit > 200 ? 200 : limit));
	snprintf(off, sizeof(off), "%lld", (long long)offset);
	ok = arena != NULL && acct_list_usage(svc, who, &req, arena, &got, &err) == 0;
	r = PQexecParams(db, "SELECT endpoint, credits_used, coalesce(domain, ''), "
			 "created_at FROM usage_all WHERE workspace_id = $1 "
			 "ORDER BY created_at DESC, id DESC LIMIT $2 OFFSET $3",
			 3, NULL, p, NULL, NULL, 0);
	ok = ok && PQresultStatus(r) == PGRES_TUPLES_OK &&
	     (size_t)PQntuples(r) == got->n_usage &&
	     got->total == q_int("SELECT count(*) FROM usage_all WHERE workspace_id = $1", ws);
	for (int i = 0; ok && i < PQntuples(r); i++) {
		const Seo__Account__V1__UsageRow *u = got->usage[i];

		ok = strcmp(u->endpoint, PQgetvalue(r, i, 0)) == 0 &&
		     u->credits_used == atoll(PQgetvalue(r, i, 1)) &&
		     strcmp(u->domain != NULL ? u->domain : "", PQgetvalue(r, i, 2)) == 0 &&
		     u->created_at == atoll(PQgetvalue(r, i, 3));
		if (!ok)
			fprintf(stderr, "limit %lld offset %lld row %d: %s %s differs\n",
				(long long)limit, (long long)offset, i,
				u->domain != NULL ? u->domain : "-", PQgetvalue(r, i, 2));
	}
	PQclear(r);
	seo_arena_free(arena);
	return ok;
}

/*
 * 40 reports of 1 to 200 calls from 3 keys, each report's times spread
 * over 300 ms and overlapping the next ones (one report spans almost all
 * of them), beside 300 per-call rows of the same times (some equal to a
 * batched call's): every page equals the merged rows in order.
 */
static void test_pages_merge_in_order(void)
{
	static LeaseCall calls[200];
	int64_t limits[] = {1, 7, 50, 200, 1000};
	acct_new_user w;
	acct_caller who;
	uint64_t seq = 1;
	long long total;
	PGresult *res;
	char q[512];

	new_leased("Pages", &w);
	who = (acct_caller){w.workspace_id, w.user_id, "key_owner", ACCT_ROLE_OWNER};
	for (int r = 0; r < REPORTS; r++) {
		int n = r == 5 ? 200 : 1 + next_rand(120);

		for (int i = 0; i < n; i++) {
			int k = next_rand(KEYS);
			LeaseCall *c = &calls[i];

			seo__account__v1__lease_call__init(c);
			c->request_id = keep("req-%d-%d", r, i);
			c->key_id = keep("key_%d", k);
			c->user_id = keep("usr_%d", k);
			c->endpoint = i % 2 ? "backlinks" : "domain-rank";
			c->domain = keep("d%d-%d.example.com", r, i);
			c->charged = 2;
			c->credits_used = next_rand(3);
			/* Report 5 spans the first to the last report's times. */
			c->created_at = r == 5 ? T0 + (int64_t)i * 100
					       : T0 + r * 200 + next_rand(300);
		}
		report(w.workspace_id, calls, (size_t)n, &seq);
	}
	snprintf(q, sizeof(q),
		 "INSERT INTO usage (id, workspace_id, endpoint, domain, charged, "
		 "credits_used, created_at) SELECT 'chg_p' || lpad(g::text, 4, '0'), "
		 "'%s', 'anchors', 'p' || g || '.example.com', 1, g %% 2, "
		 "%lld + (g * 29) %% 8000 FROM generate_series(1, %d) g",
		 w.workspace_id, T0, PER_CALL_ROWS);
	res = PQexec(db, q);
	CU_ASSERT_EQUAL_FATAL(PQresultStatus(res), PGRES_COMMAND_OK);
	PQclear(res);
	total = q_int("SELECT count(*) FROM usage_all WHERE workspace_id = $1",
		      w.workspace_id);
	CU_ASSERT_FATAL(total > PER_CALL_ROWS + 1000);
	CU_ASSERT(q_int("SELECT count(*) FROM usage_batches WHERE workspace_id = $1",
			w.workspace_id) > REPORTS);
	for (size_t l = 0; l < sizeof(limits) / sizeof(limits[0]); l++) {
		int64_t offsets[] = {0, 1, 49, 199, 200, 201, 777, total / 2,
				     total - 1, total, total + 5};

		for (size_t o = 0; o < sizeof(offsets) / sizeof(offsets[0]); o++)
			CU_ASSERT(page_matches(w.workspace_id, &who, limits[l], offsets[o]));
	}
	/* Every row once, walking the whole listing page by page. */
	for (int64_t off = 0; off < total; off += 200)
		CU_ASSERT(page_matches(w.workspace_id, &who, 200, off));
}

/* A report of the most calls it may carry, from 20 keys: a batch each,
 * written over several round trips, every call kept. */
static void test_largest_report_many_keys(void)
{
	static LeaseCall calls[ACCT_LEASE_CALLS_MAX];
	acct_new_user w;
	uint64_t seq = 1;

	new_leased("Largest", &w);
	for (int i = 0; i < ACCT_LEASE_CALLS_MAX; i++) {
		LeaseCall *c = &calls[i];

		seo__account__v1__lease_call__init(c);
		c->request_id = keep("big-%d", i);
		c->key_id = keep("key_big%02d", i % 20);
		c->endpoint = "backlinks";
		c->charged = 1;
		c->credits_used = 1;
		c->created_at = T0 + i;
	}
	report(w.workspace_id, calls, ACCT_LEASE_CALLS_MAX, &seq);
	CU_ASSERT_EQUAL(q_int("SELECT count(*) FROM usage_batches WHERE workspace_id = $1",
			      w.workspace_id), 20);
	CU_ASSERT_EQUAL(q_int("SELECT count(*) FROM usage_all WHERE workspace_id = $1 "
			      "AND outcome = 'earned'", w.workspace_id),
			ACCT_LEASE_CALLS_MAX);
	CU_ASSERT_EQUAL(q_int("SELECT count(DISTINCT request_id) FROM usage_all "
			      "WHERE workspace_id = $1", w.workspace_id),
			ACCT_LEASE_CALLS_MAX);
	CU_ASSERT_EQUAL(q_int("SELECT sum(credits_used) FROM usage_batches "
			      "WHERE workspace_id = $1", w.workspace_id),
			ACCT_LEASE_CALLS_MAX);
	/* Each key's calls in its batch, in the order reported. */
	CU_ASSERT_EQUAL(q_int("SELECT count(*) FROM usage_batches WHERE workspace_id = $1 "
			      "AND first_at = 1800000000000 + substr(key_id, 8)::int "
			      "AND n_calls IN (204, 205)",
			      w.workspace_id), 20);
}

/* A domain JSON must escape, and bytes that are no UTF-8, read back. */
static void test_text_escaped(void)
{
	LeaseCall c;
	acct_new_user w;
	uint64_t seq = 1;
	const char *ws;
	char got[64];
	PGresult *r;

	new_leased("Escaped", &w);
	ws = w.workspace_id;
	seo__account__v1__lease_call__init(&c);
	c.request_id = "esc-1";
	c.key_id = "key_esc";
	c.endpoint = "backlinks";
	c.domain = "a\"b\\c\td\ne\x01f\xff";
	c.charged = 1;
	c.credits_used = 1;
	c.created_at = T0;
	report(w.workspace_id, &c, 1, &seq);
	r = PQexecParams(db, "SELECT domain FROM usage_all WHERE workspace_id = $1",
			 1, NULL, &ws, NULL, NULL, 0);
	CU_ASSERT_FATAL(PQresultStatus(r) == PGRES_TUPLES_OK && PQntuples(r) == 1);
	snprintf(got, sizeof(got), "%s", PQgetvalue(r, 0, 0));
	CU_ASSERT_STRING_EQUAL(got, "a\"b\\c\td\ne\x01f\xef\xbf\xbd");
	PQclear(r);
}

/*
 * Every field of every call read back as reported (migration 010's
 * compact text): more names than a batch keeps (40 domains, 20 routes),
 * calls without a domain, request ids whose common bytes end inside a
 * character and one that is all of their common part, a call without
 * its time.
 */
static void test_every_field_read_back(void)
{
	enum { N = 300 };
	static LeaseCall calls[N];
	static char want[N * 64], got[N * 64];
	acct_new_user w;
	uint64_t seq = 1;
	size_t len = 0;
	PGresult *r;
	const char *ws;

	new_leased("Fields", &w);
	ws = w.workspace_id;
	for (int i = 0; i < N; i++) {
		LeaseCall *c = &calls[i];

		seo__account__v1__lease_call__init(c);
		c->key_id = "key_fields";
		c->user_id = "usr_fields";
		c->endpoint = keep("ep%d", i % 20);
		c->domain = i % 50 == 0 ? NULL : keep("f%d.example.com", i % 40);
		c->request_id = i == 7 ? "x" : keep("x\xc3%s-%d", i % 2 ? "\xa9" : "\xa8", i);
		c->charged = 3;
		c->credits_used = i % 4;
		c->created_at = i == 9 ? 0 : T0 + i * 3;
		len += (size_t)snprintf(want + len, sizeof(want) - len, "%s%s|%s|%s|3|%d|",
					i > 0 ? " " : "",
					c->request_id,
					c->endpoint, c->domain != NULL ? c->domain : "-",
					i % 4);
		if (i == 9)
			len += (size_t)snprintf(want + len, sizeof(want) - len, "now");
		else
			len += (size_t)snprintf(want + len, sizeof(want) - len, "%lld",
						(long long)c->created_at);
	}
	report(ws, calls, N, &seq);
	r = PQexecParams(db, "SELECT string_agg(concat_ws('|', coalesce(request_id, '-'), "
			 "endpoint, coalesce(domain, '-'), charged, credits_used, "
			 "CASE WHEN created_at < 1800000000000 AND created_at > 1700000000000 "
			 "THEN 'now' ELSE created_at::text END), ' ' ORDER BY id) "
			 "FROM usage_all WHERE workspace_id = $1", 1, NULL, &ws, NULL, NULL, 0);
	CU_ASSERT_FATAL(PQresultStatus(r) == PGRES_TUPLES_OK && PQntuples(r) == 1);
	snprintf(got, sizeof(got), "%s", PQgetvalue(r, 0, 0));
	CU_ASSERT_STRING_EQUAL(got, want);
	PQclear(r);
	CU_ASSERT_EQUAL(q_int("SELECT count(*) FROM usage_batches WHERE workspace_id = $1 "
			      "AND left(calls_compact, 1) = '{'", ws), 1);
	/* Compressed as 008's calls are, where the server has lz4: a new
	 * column's default, pglz, took a fifth of a report's CPU. */
	if (q_int("SELECT count(*) FROM pg_settings WHERE name = "
		  "'default_toast_compression' AND 'lz4' = ANY (enumvals)", NULL) == 1)
		CU_ASSERT_EQUAL(q_int("SELECT count(*) FROM usage_batches WHERE "
				      "workspace_id = $1 AND "
				      "pg_column_compression(calls_compact) = 'lz4'", ws), 1);
	/* What an svc-account from before migration 010 reads of it: no
	 * call, and no error. */
	CU_ASSERT_EQUAL(q_int("SELECT count(*) FROM usage_batches b, "
			      "json_array_elements(b.calls::json) WHERE workspace_id = $1",
			      ws), 0);
}

static const acct_testdb_case cases[] = {
	{"pages merge batches and per-call rows in order",
	 test_pages_merge_in_order},
	{"the largest report, from 20 keys", test_largest_report_many_keys},
	{"text JSON escapes, read back", test_text_escaped},
	{"every field read back", test_every_field_read_back},
};

int main(void)
{
	int rc = acct_testdb_open(&T, "test_acct_usage_batches", "acct_batches");

	if (rc != 0)
		return rc < 0;
	db = T.db;
	svc = T.svc;
	text = calloc(REPORTS * 200 * 4 + ACCT_LEASE_CALLS_MAX * 2 + 1000, sizeof(*text));
	if (text == NULL) {
		acct_testdb_close(&T);
		return 1;
	}
	rc = ACCT_TESTDB_RUN(&T, "usage_batches", cases);
	free(text);
	return rc;
}

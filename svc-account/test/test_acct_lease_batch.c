/*
 * test_acct_lease_batch: LeaseBatch (svc-account/lib/lease.c) against a
 * real PostgreSQL. A batch of 300 workspaces leaves exactly what the same
 * reports sent one by one with Lease leave (answers, balances, leases,
 * ledger, usage rows, streams); a bad report or an unknown workspace is
 * refused alone; a batch over the limits, naming a workspace twice or
 * mixing holders is refused whole; a batch sent again writes no call
 * twice; two holders' batches of the same workspaces in opposite orders
 * beside a loop of debits never deadlock and conserve credits. It prints
 * (asserts nothing on) how long a batch of 200 workspaces takes against
 * 200 Leases. Without SEO_TEST_PG_URL it prints a skip line and passes.
 */
#include <CUnit/Basic.h>

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <libpq-fe.h>

#include "acct_int.h"
#include "acct_testdb.h"
#include "seo/errors.h"
#include "seo/util.h"

typedef Seo__Account__V1__LeaseRequest LeaseRequest;
typedef Seo__Account__V1__LeaseCall LeaseCall;

#define CALLS_MAX 8
/* The same reports as one batch and one by one. */
#define SAME_N 300
#define SAME_ROUNDS 4
/* The ad hoc figure. */
#define TIME_N 200
#define TIME_REPS 5
/* Two holders at once. */
#define CONC_N 24
#define CONC_ROUNDS 30
#define CONC_CREDITS 200000

static acct_testdb T;
static PGconn *db;
static acct_service *svc;

/* ---- helpers ---------------------------------------------------------- */

/* The first value of `sql` with one parameter, as text (malloc()ed; ""
 * when no row or NULL). */
static char *q_text(const char *sql, const char *param)
{
	PGresult *r = PQexecParams(db, sql, param != NULL ? 1 : 0, NULL, &param,
				   NULL, NULL, 0);
	const char *v = "";

	if (PQresultStatus(r) != PGRES_TUPLES_OK)
		fprintf(stderr, "query failed: %s: %s", sql, PQerrorMessage(db));
	else if (PQntuples(r) > 0 && !PQgetisnull(r, 0, 0))
		v = PQgetvalue(r, 0, 0);
	v = strdup(v);
	PQclear(r);
	return (char *)v;
}

static long long q_int(const char *sql, const char *param)
{
	char *s = q_text(sql, param);
	long long v = s[0] != '\0' ? strtoll(s, NULL, 10) : -1;

	free(s);
	return v;
}

static long long balance(const char *ws)
{
	return q_int("SELECT balance FROM workspaces WHERE id = $1", ws);
}

static long long rows_of(const char *ws)
{
	return q_int("SELECT count(*) FROM usage_all WHERE workspace_id = $1", ws);
}

/* Balance + open leases' unused + usage's credits_used over the workspaces
 * named `name`, in one snapshot. */
static long long total_named(const char *name)
{
	return q_int("WITH w AS (SELECT id, balance FROM workspaces WHERE name = $1) "
		     "SELECT (SELECT sum(balance) FROM w) + "
		     "(SELECT coalesce(sum(granted - used), 0) FROM credit_leases "
		     "WHERE closed_at IS NULL AND workspace_id IN (SELECT id FROM w)) + "
		     "(SELECT coalesce(sum(credits_used), 0) FROM usage_all "
		     "WHERE workspace_id IN (SELECT id FROM w))", name);
}

/* Every change of the balances named `name` is one ledger row. */
static int ledger_ok(const char *name)
{
	return q_int("SELECT count(*) FROM workspaces w WHERE name = $1 AND "
		     "balance <> (SELECT coalesce(sum(delta), 0) FROM ledger "
		     "WHERE workspace_id = w.id)", name) == 0;
}

/*
 * Everything a workspace's reports wrote, as one text: its balance, its
 * leases, its ledger, its usage rows and batches, its streams, in orders
 * that do not depend on the moment written nor on random ids.
 */
static char *fingerprint(const char *ws)
{
	return q_text(
		"SELECT concat_ws(' # ', "
		"(SELECT balance FROM workspaces WHERE id = $1), "
		"(SELECT string_agg(concat_ws('|', holder, granted, used, "
		"closed_at IS NULL), ';' ORDER BY created_at, granted, used) "
		"FROM credit_leases WHERE workspace_id = $1), "
		"(SELECT string_agg(concat_ws('|', delta, reason), ';' ORDER BY id) "
		"FROM ledger WHERE workspace_id = $1), "
		"(SELECT string_agg(concat_ws('|', user_id, key_id, endpoint, domain, "
		"charged, credits_used, request_id, outcome, created_at), ';' "
		"ORDER BY request_id) FROM usage_all WHERE workspace_id = $1), "
		"(SELECT string_agg(concat_ws('|', user_id, key_id, first_at, last_at, "
		"n_calls, credits_used, unclaimed, calls, calls_compact), ';' "
		"ORDER BY first_at, key_id, user_id) FROM usage_batches "
		"WHERE workspace_id = $1), "
		"(SELECT string_agg(concat_ws('|', holder, stream, reported_seq), ';' "
		"ORDER BY holder, stream) FROM lease_streams WHERE workspace_id = $1))",
		ws);
}

static void new_workspace(const char *name, int64_t credits, acct_new_user *u)
{
	acct_err err;

	CU_ASSERT_FATAL(acct_workspace_create(db, name, "b@example.com", credits,
					      u, &err) == 0);
}

/* A report and its calls, pointing into itself. */
typedef struct report {
	LeaseRequest req;
	LeaseCall calls[CALLS_MAX];
	LeaseCall *ptrs[CALLS_MAX];
	char ids[CALLS_MAX][48];
	char keys[CALLS_MAX][16];
	char users[CALLS_MAX][16];
} report;

/* An empty report of `holder` for `ws`. */
static void report_init(report *r, const char *holder, const char *ws)
{
	LeaseRequest init = SEO__ACCOUNT__V1__LEASE_REQUEST__INIT;

	r->req = init;
	r->req.holder = (char *)holder;
	r->req.workspace_id = (char *)ws;
	r->req.calls = r->ptrs;
	r->req.stream = "st";
	for (size_t i = 0; i < CALLS_MAX; i++)
		r->ptrs[i] = &r->calls[i];
}

/* Adds a call of `charged` credits that finally cost `used`, of key
 * `key` (0: none) and user `user`, under request id `id`. */
static void report_call(report *r, const char *id, int key, int user,
			int64_t charged, int64_t used, int64_t at)
{
	LeaseCall init = SEO__ACCOUNT__V1__LEASE_CALL__INIT;
	size_t i = r->req.n_calls++;
	LeaseCall *c = &r->calls[i];

	*c = init;
	snprintf(r->ids[i], sizeof(r->ids[i]), "%s", id);
	r->keys[i][0] = '\0';
	if (key > 0)
		snprintf(r->keys[i], sizeof(r->keys[i]), "key-%d", key);
	snprintf(r->users[i], sizeof(r->users[i]), "usr_%d", user);
	c->request_id = r->ids[i];
	c->key_id = r->keys[i];
	c->user_id = r->users[i];
	c->endpoint = i % 2 == 0 ? "backlinks" : "anchors";
	c->domain = i % 3 == 0 ? "" : "example.com";
	c->charged = charged;
	c->credits_used = used;
	c->created_at = at;
}

/* The batch of reports r[0 .. n). */
static int send_batch(report *r, size_t n, acct__lease_result *res,
		      acct_err *err)
{
	const LeaseRequest **in = malloc((n + 1) * sizeof(*in));
	int rc;

	CU_ASSERT_FATAL(in != NULL);
	for (size_t i = 0; i < n; i++)
		in[i] = &r[i].req;
	rc = acct__lease_batch(svc, in, n, res, err);
	free(in);
	return rc;
}

/* ---- a batch is the same as its reports one by one ----------------------- */

/*
 * Report `i` of round `round` (its calls numbered from *seq on): opening
 * leases of every kind (top-ups, watch leases, none), calls of several
 * keys and users spent or given back, some beyond the lease, closes and
 * top-ups, and at last most leases closed.
 */
static void scenario(report *r, int i, int round, uint64_t *seq)
{
	int n = 0;

	if (round == 0) {
		r->req.hold = i % 5 == 0;
		r->req.want = i % 5 == 0 || i % 11 == 0 ? 0 : 1000 + 37 * i;
		return;
	}
	if (round == 1 || round == 2)
		n = round == 1 ? 1 + i % 4 : 2 + i % 2;
	for (int j = 0; j < n; j++) {
		char id[48];
		int64_t charged = i % 13 == 2 ? 3000 : 5 + j;

		snprintf(id, sizeof(id), "same-%d-%d-%d", i, round, j);
		report_call(r, id, (i + j) % 3, j % 2, charged,
			    j % 3 == 0 ? 0 : charged - (j % 2), 1700000000000 + 1000 * round + 10 * i + j);
	}
	if (n > 0)
		r->req.first_seq = *seq;
	*seq += (uint64_t)n;
	if (round == 1) {
		r->req.want = i % 3 == 0 ? 500 : 0;
		r->req.close = i % 7 == 1;
	} else if (round == 2) {
		r->req.want = i % 2 == 1 ? 200 : 0;
		r->req.close = i % 2 == 0;
		r->req.hold = i % 4 == 1;
	} else {
		r->req.close = i % 6 != 0;
		r->req.want = 100;
	}
}

static int64_t elapsed_us(struct timespec *t0)
{
	struct timespec t1;

	clock_gettime(CLOCK_MONOTONIC, &t1);
	return (t1.tv_sec - t0->tv_sec) * 1000000 + (t1.tv_nsec - t0->tv_nsec) / 1000;
}

static void test_same_as_one_by_one(void)
{
	static acct_new_user a[SAME_N], b[SAME_N];
	static report ra[SAME_N], rb[SAME_N];
	static acct__lease_result res[SAME_N];
	uint64_t seq_a[SAME_N], seq_b[SAME_N];
	int64_t batch_us = 0, single_us = 0;
	int differ = 0, refused = 0;
	acct_err err;

	for (int i = 0; i < SAME_N; i++) {
		int64_t credits = i % 10 == 3 ? 8000 : 50000 + 1000 * i;

		new_workspace("same-a", credits, &a[i]);
		new_workspace("same-b", credits, &b[i]);
		seq_a[i] = seq_b[i] = 1;
	}
	for (int round = 0; round < SAME_ROUNDS; round++) {
		struct timespec t0;

		for (int i = 0; i < SAME_N; i++) {
			report_init(&ra[i], "gw1", a[i].workspace_id);
			report_init(&rb[i], "gw1", b[i].workspace_id);
			scenario(&ra[i], i, round, &seq_a[i]);
			scenario(&rb[i], i, round, &seq_b[i]);
		}
		clock_gettime(CLOCK_MONOTONIC, &t0);
		CU_ASSERT_EQUAL_FATAL(send_batch(ra, SAME_N, res, &err), 0);
		batch_us += elapsed_us(&t0);
		clock_gettime(CLOCK_MONOTONIC, &t0);
		for (int i = 0; i < SAME_N; i++) {
			acct__lease_out o;
			int rc = acct__lease(svc, &rb[i].req, &o, &err);

			CU_ASSERT_EQUAL(res[i].rc, rc);
			refused += rc != 0;
			if (rc != 0 || res[i].rc != 0)
				continue;
			differ += res[i].out.granted != o.granted ||
				  res[i].out.used != o.used ||
				  res[i].out.outside != o.outside ||
				  res[i].out.ttl_ms != o.ttl_ms ||
				  (res[i].out.lease_id[0] == '\0') != (o.lease_id[0] == '\0');
		}
		single_us += elapsed_us(&t0);
	}
	CU_ASSERT_EQUAL(refused, 0);
	CU_ASSERT_EQUAL(differ, 0);
	for (int i = 0; i < SAME_N; i++) {
		char *fa = fingerprint(a[i].workspace_id);
		char *fb = fingerprint(b[i].workspace_id);

		if (strcmp(fa, fb) != 0 && differ++ < 3)
			fprintf(stderr, "workspace %d differs:\n  batch %s\n  alone %s\n",
				i, fa, fb);
		free(fa);
		free(fb);
		CU_ASSERT_EQUAL(acct__leases_count(&svc->leases, a[i].workspace_id),
				acct__leases_count(&svc->leases, b[i].workspace_id));
		CU_ASSERT_EQUAL(acct__leases_unused(&svc->leases, a[i].workspace_id),
				acct__leases_unused(&svc->leases, b[i].workspace_id));
	}
	CU_ASSERT_EQUAL(differ, 0);
	/* The scenario did what it says: calls written, spent and given
	 * back, leases closed and left open (watch leases), some beyond. */
	CU_ASSERT(q_int("SELECT count(*) FROM usage_all u JOIN workspaces w "
			"ON w.id = u.workspace_id WHERE w.name = $1", "same-a") > 500);
	CU_ASSERT(q_int("SELECT count(DISTINCT (l.workspace_id, l.holder)) FROM "
			"credit_leases l JOIN workspaces w ON w.id = l.workspace_id "
			"WHERE w.name = $1 AND l.closed_at IS NOT NULL", "same-a") > 100);
	CU_ASSERT(q_int("SELECT count(*) FROM credit_leases l JOIN workspaces w "
			"ON w.id = l.workspace_id WHERE w.name = $1 AND "
			"l.closed_at IS NULL", "same-a") > 10);
	CU_ASSERT(q_int("SELECT count(*) FROM usage_all u JOIN workspaces w ON "
			"w.id = u.workspace_id WHERE w.name = $1 AND u.charged = 3000 "
			"AND u.credits_used > 0", "same-a") > 0);
	CU_ASSERT(ledger_ok("same-a"));
	CU_ASSERT(ledger_ok("same-b"));
	printf("\n  %d rounds of %d reports: batches %lld us, one by one %lld us\n",
	       SAME_ROUNDS, SAME_N, (long long)batch_us, (long long)single_us);
}

/* ---- refusals ------------------------------------------------------------ */

static void test_report_refused_alone(void)
{
	acct_new_user u[3];
	report r[5];
	acct__lease_result res[5];
	acct_err err;

	for (int i = 0; i < 3; i++)
		new_workspace("alone", 100000, &u[i]);
	report_init(&r[0], "gw1", u[0].workspace_id);
	r[0].req.want = 1000;
	report_init(&r[1], "gw1", "ws_nope");
	r[1].req.want = 1000;
	report_init(&r[2], "gw1", u[1].workspace_id);
	r[2].req.want = 1000;
	report_init(&r[3], "gw1", u[2].workspace_id);
	r[3].req.want = 1000;
	report_init(&r[4], "gw1", "");
	CU_ASSERT_EQUAL_FATAL(send_batch(r, 5, res, &err), 0);
	CU_ASSERT_EQUAL(res[0].rc, 0);
	CU_ASSERT_EQUAL(res[0].out.granted, 1000);
	CU_ASSERT_EQUAL(res[1].rc, SEO_ENOTFOUND);
	CU_ASSERT_STRING_EQUAL(res[1].err.code, "not_found");
	CU_ASSERT_EQUAL(res[4].rc, SEO_EINVAL);
	CU_ASSERT_STRING_EQUAL(res[4].err.code, "invalid_parameter");
	/* Calls on the open leases: one report's call is bad. */
	for (int i = 0; i < 4; i++) {
		char id[48];

		report_init(&r[i], "gw1", i == 1 ? "ws_nope" : u[i == 0 ? 0 : i - 1].workspace_id);
		r[i].req.first_seq = 1;
		snprintf(id, sizeof(id), "alone-%d", i);
		report_call(&r[i], id, 1, 1, 5, i == 2 ? 6 : 5, 0);
	}
	CU_ASSERT_EQUAL_FATAL(send_batch(r, 4, res, &err), 0);
	CU_ASSERT_EQUAL(res[0].rc, 0);
	CU_ASSERT_EQUAL(res[0].out.used, 5);
	CU_ASSERT_EQUAL(res[1].rc, SEO_ENOTFOUND);
	CU_ASSERT_EQUAL(res[2].rc, SEO_EINVAL);
	CU_ASSERT_STRING_EQUAL(res[2].err.code, "invalid_parameter");
	CU_ASSERT_EQUAL(res[3].rc, 0);
	CU_ASSERT_EQUAL(res[3].out.used, 5);
	CU_ASSERT_EQUAL(rows_of(u[0].workspace_id), 1);
	CU_ASSERT_EQUAL(rows_of(u[1].workspace_id), 0);
	CU_ASSERT_EQUAL(rows_of(u[2].workspace_id), 1);
	CU_ASSERT_EQUAL(q_int("SELECT count(*) FROM usage_all WHERE request_id = $1",
			      "alone-1"), 0);
	CU_ASSERT_EQUAL(balance(u[1].workspace_id), 99000);
	CU_ASSERT_EQUAL(total_named("alone"), 300000);
	CU_ASSERT(ledger_ok("alone"));
}

/* A batch over a limit, naming a workspace twice or mixing holders:
 * refused whole, nothing written. */
static void test_batch_refused_whole(void)
{
	static report big[ACCT_LEASE_BATCH_MAX + 1];
	static acct__lease_result res[ACCT_LEASE_BATCH_MAX + 1];
	static char names[ACCT_LEASE_BATCH_MAX + 1][24];
	static LeaseCall calls[ACCT_LEASE_CALLS_MAX + 1];
	static LeaseCall *ptrs[ACCT_LEASE_CALLS_MAX + 1];
	acct_new_user u[2];
	report r[3];
	acct_err err;

	new_workspace("whole", 100000, &u[0]);
	new_workspace("whole", 100000, &u[1]);
	for (int i = 0; i <= ACCT_LEASE_BATCH_MAX; i++) {
		snprintf(names[i], sizeof(names[i]), "ws_%d", i);
		report_init(&big[i], "gw1", i == 0 ? u[0].workspace_id : names[i]);
		big[i].req.want = 1000;
	}
	CU_ASSERT_EQUAL(send_batch(big, ACCT_LEASE_BATCH_MAX + 1, res, &err), SEO_EINVAL);
	CU_ASSERT_STRING_EQUAL(err.code, "invalid_parameter");
	/* 2048 and 2049 calls: each fits alone, not both. */
	for (int i = 0; i <= ACCT_LEASE_CALLS_MAX; i++) {
		LeaseCall init = SEO__ACCOUNT__V1__LEASE_CALL__INIT;

		calls[i] = init;
		calls[i].request_id = "whole";
		calls[i].endpoint = "backlinks";
		calls[i].charged = 1;
		calls[i].credits_used = 1;
		ptrs[i] = &calls[i];
	}
	for (int i = 0; i < 2; i++) {
		report_init(&r[i], "gw1", u[i].workspace_id);
		r[i].req.calls = ptrs + (i == 0 ? 0 : 2048);
		r[i].req.n_calls = i == 0 ? 2048 : 2049;
		r[i].req.first_seq = 1;
		r[i].req.want = 1000;
	}
	CU_ASSERT_EQUAL(send_batch(r, 2, res, &err), SEO_EINVAL);
	CU_ASSERT_STRING_EQUAL(err.code, "invalid_parameter");
	r[1].req.n_calls = 2048;
	CU_ASSERT_EQUAL(send_batch(r, 2, res, &err), 0);
	CU_ASSERT_EQUAL(res[0].rc, 0);
	CU_ASSERT_EQUAL(res[1].rc, 0);
	CU_ASSERT_EQUAL(rows_of(u[1].workspace_id), 2048);
	/* A workspace twice; two holders. */
	for (int i = 0; i < 3; i++) {
		report_init(&r[i], "gw2", u[i % 2].workspace_id);
		r[i].req.want = 1000;
	}
	CU_ASSERT_EQUAL(send_batch(r, 3, res, &err), SEO_EINVAL);
	CU_ASSERT_STRING_EQUAL(err.code, "invalid_parameter");
	r[1].req.holder = "gw3";
	CU_ASSERT_EQUAL(send_batch(r, 2, res, &err), SEO_EINVAL);
	CU_ASSERT_STRING_EQUAL(err.code, "invalid_parameter");
	r[0].req.holder = r[1].req.holder = "";
	CU_ASSERT_EQUAL(send_batch(r, 2, res, &err), SEO_EINVAL);
	CU_ASSERT_EQUAL(q_int("SELECT count(*) FROM credit_leases WHERE holder <> $1",
			      "gw1"), 0);
	CU_ASSERT_EQUAL(q_int("SELECT count(*) FROM credit_leases WHERE workspace_id = $1",
			      u[1].workspace_id), 1);
	CU_ASSERT_EQUAL(total_named("whole"), 200000);
	CU_ASSERT(ledger_ok("whole"));
	/* Nothing to do: no transaction. */
	CU_ASSERT_EQUAL(send_batch(r, 0, res, &err), 0);
}

/* The same batch twice, then one overlapping it: every call once. */
static void test_batch_sent_again(void)
{
	enum { N = 50 };
	static acct_new_user u[N];
	static report r[N];
	static acct__lease_result res[N];
	acct_err err;
	long long before;

	for (int i = 0; i < N; i++) {
		new_workspace("again", 100000, &u[i]);
		report_init(&r[i], "gw1", u[i].workspace_id);
		r[i].req.want = 2000;
	}
	CU_ASSERT_EQUAL_FATAL(send_batch(r, N, res, &err), 0);
	for (int i = 0; i < N; i++) {
		report_init(&r[i], "gw1", u[i].workspace_id);
		r[i].req.first_seq = 1;
		for (int j = 0; j < 3; j++) {
			char id[48];

			snprintf(id, sizeof(id), "again-%d-%d", i, j);
			report_call(&r[i], id, j, 0, 10, 10, 0);
		}
	}
	CU_ASSERT_EQUAL_FATAL(send_batch(r, N, res, &err), 0);
	before = total_named("again");
	CU_ASSERT_EQUAL_FATAL(send_batch(r, N, res, &err), 0);
	for (int i = 0; i < N; i++) {
		CU_ASSERT_EQUAL(res[i].rc, 0);
		CU_ASSERT_EQUAL(res[i].out.used, 30);
		CU_ASSERT_EQUAL(rows_of(u[i].workspace_id), 3);
	}
	/* Calls 2 to 4: only the 4th is new. */
	for (int i = 0; i < N; i++) {
		r[i].req.first_seq = 2;
		r[i].req.calls = &r[i].ptrs[1];
		r[i].req.n_calls = 3;
		snprintf(r[i].ids[3], sizeof(r[i].ids[3]), "again-%d-3", i);
		r[i].calls[3] = r[i].calls[2];
		r[i].calls[3].request_id = r[i].ids[3];
	}
	CU_ASSERT_EQUAL_FATAL(send_batch(r, N, res, &err), 0);
	for (int i = 0; i < N; i++) {
		CU_ASSERT_EQUAL(res[i].out.used, 40);
		CU_ASSERT_EQUAL(rows_of(u[i].workspace_id), 4);
	}
	CU_ASSERT_EQUAL(before, N * 100000);
	CU_ASSERT_EQUAL(total_named("again"), N * 100000);
	CU_ASSERT(ledger_ok("again"));
}

/* ---- two holders and debits at once ------------------------------------- */

typedef struct holder {
	const char *name;
	acct_new_user *u;
	int backwards;     /* its batches name the workspaces in reverse */
	int failures;
} holder;

static void *holder_main(void *arg)
{
	holder *h = arg;
	report *r = calloc(CONC_N, sizeof(*r));
	acct__lease_result *res = calloc(CONC_N, sizeof(*res));
	int64_t left[CONC_N] = {0};
	uint64_t seq[CONC_N];
	acct_err err;

	if (r == NULL || res == NULL) {
		h->failures++;
		free(r);
		free(res);
		return NULL;
	}
	for (int i = 0; i < CONC_N; i++)
		seq[i] = 1;
	for (int round = 0; round < CONC_ROUNDS; round++) {
		for (int k = 0; k < CONC_N; k++) {
			int i = h->backwards ? CONC_N - 1 - k : k;

			report_init(&r[k], h->name, h->u[i].workspace_id);
			r[k].req.stream = (char *)h->name;
			r[k].req.first_seq = seq[i];
			for (int j = 0; j < 3 && left[i] >= 5; j++) {
				char id[48];

				snprintf(id, sizeof(id), "%s-%d-%d-%d", h->name, i,
					 round, j);
				report_call(&r[k], id, j, 0, 5, j == 2 ? 2 : 5, 0);
				left[i] -= 5;
			}
			seq[i] += r[k].req.n_calls;
			r[k].req.want = 400;
			r[k].req.close = round == CONC_ROUNDS - 1;
		}
		if (send_batch(r, CONC_N, res, &err) != 0) {
			fprintf(stderr, "%s: %s\n", h->name, err.message);
			h->failures++;
			continue;
		}
		for (int k = 0; k < CONC_N; k++) {
			int i = h->backwards ? CONC_N - 1 - k : k;

			h->failures += res[k].rc != 0;
			left[i] = res[k].out.granted - res[k].out.used;
		}
	}
	free(r);
	free(res);
	return NULL;
}

typedef struct debitor {
	acct_new_user *u;
	atomic_int *stop;
	int failures, done;
} debitor;

static void *debit_main(void *arg)
{
	debitor *d = arg;
	char hash[CONC_N][ACCT_HASH_LEN];

	for (int i = 0; i < CONC_N; i++)
		seo_sha256_hex(d->u[i].api_key, strlen(d->u[i].api_key), hash[i]);
	for (int k = 0; !atomic_load(d->stop); k++) {
		int i = k % CONC_N;
		acct_caller who = {d->u[i].workspace_id, d->u[i].user_id, hash[i],
				   ACCT_ROLE_OWNER};
		char charge[ACCT_ID_LEN];
		int64_t remaining;
		acct_err err;

		if (acct_charge(svc, &who, NULL, "backlinks", 3, NULL, charge,
				&remaining, &err) != 0) {
			fprintf(stderr, "debit: %s\n", err.message);
			d->failures++;
		}
		d->done++;
	}
	return NULL;
}

static void test_two_holders_and_debits(void)
{
	static acct_new_user u[CONC_N];
	holder h[2] = {{"gwA", u, 0, 0}, {"gwB", u, 1, 0}};
	atomic_int stop = 0;
	debitor d = {u, &stop, 0, 0};
	pthread_t t[3];

	for (int i = 0; i < CONC_N; i++)
		new_workspace("conc", CONC_CREDITS, &u[i]);
	CU_ASSERT_FATAL(pthread_create(&t[2], NULL, debit_main, &d) == 0);
	for (int i = 0; i < 2; i++)
		CU_ASSERT_FATAL(pthread_create(&t[i], NULL, holder_main, &h[i]) == 0);
	/* Meanwhile, in one snapshot each time: no credit made or lost. */
	for (int i = 0; i < 20; i++)
		CU_ASSERT_EQUAL(total_named("conc"), CONC_N * CONC_CREDITS);
	for (int i = 0; i < 2; i++) {
		pthread_join(t[i], NULL);
		CU_ASSERT_EQUAL(h[i].failures, 0);
	}
	atomic_store(&stop, 1);
	pthread_join(t[2], NULL);
	CU_ASSERT_EQUAL(d.failures, 0);
	CU_ASSERT(d.done > 0);
	CU_ASSERT_EQUAL(total_named("conc"), CONC_N * CONC_CREDITS);
	CU_ASSERT_EQUAL(q_int("SELECT count(*) FROM credit_leases l JOIN workspaces w "
			      "ON w.id = l.workspace_id WHERE w.name = $1 AND "
			      "l.closed_at IS NULL", "conc"), 0);
	CU_ASSERT(q_int("SELECT count(*) FROM usage_batches b JOIN workspaces w "
			"ON w.id = b.workspace_id WHERE w.name = $1", "conc") > 0);
	CU_ASSERT(ledger_ok("conc"));
}

/* ---- the ad hoc figure ---------------------------------------------------- */

/* 200 workspaces' reports of 2 calls each: one batch against 200 Leases,
 * printed. */
static void test_time_batch(void)
{
	static acct_new_user a[TIME_N], b[TIME_N];
	static report r[TIME_N];
	static acct__lease_result res[TIME_N];
	int64_t batch_us = 0, single_us = 0;
	uint64_t seq = 1;
	acct_err err;

	for (int i = 0; i < TIME_N; i++) {
		new_workspace("time-a", 1000000, &a[i]);
		new_workspace("time-b", 1000000, &b[i]);
	}
	for (int rep = -1; rep < TIME_REPS; rep++) {
		struct timespec t0;
		int failed = 0;

		for (int side = 0; side < 2; side++) {
			for (int i = 0; i < TIME_N; i++) {
				report_init(&r[i], "gw1", (side == 0 ? a : b)[i].workspace_id);
				r[i].req.want = 10000;
				if (rep < 0)
					continue;
				r[i].req.first_seq = seq;
				for (int j = 0; j < 2; j++) {
					char id[48];

					snprintf(id, sizeof(id), "time-%d-%d-%d", rep, i, j);
					report_call(&r[i], id, j, 0, 1, 1, 0);
				}
			}
			clock_gettime(CLOCK_MONOTONIC, &t0);
			if (side == 0) {
				failed += send_batch(r, TIME_N, res, &err) != 0;
			} else {
				for (int i = 0; i < TIME_N; i++) {
					acct__lease_out o;

					failed += acct__lease(svc, &r[i].req, &o, &err) != 0;
				}
			}
			/* The first round opens the leases, untimed. */
			if (rep >= 0)
				*(side == 0 ? &batch_us : &single_us) += elapsed_us(&t0);
		}
		CU_ASSERT_EQUAL(failed, 0);
		if (rep >= 0)
			seq += 2;
	}
	printf("\n  %d workspaces x 2 calls: one batch %lld us, %d Leases %lld us "
	       "(mean of %d)\n", TIME_N, (long long)(batch_us / TIME_REPS), TIME_N,
	       (long long)(single_us / TIME_REPS), TIME_REPS);
}

static const acct_testdb_case cases[] = {
	{"a batch of 300 leaves what 300 Leases leave",
	 test_same_as_one_by_one},
	{"a bad report or an unknown workspace refused alone",
	 test_report_refused_alone},
	{"a batch over the limits, a workspace twice, two holders: refused whole",
	 test_batch_refused_whole},
	{"a batch sent again writes every call once", test_batch_sent_again},
	{"two holders in opposite orders and debits: no deadlock, credits conserved",
	 test_two_holders_and_debits},
	{"200 workspaces: a batch against 200 Leases (printed)",
	 test_time_batch},
};

int main(void)
{
	int rc = acct_testdb_open(&T, "test_acct_lease_batch", "acct_lease_batch");

	if (rc != 0)
		return rc < 0;
	db = T.db;
	svc = T.svc;
	return ACCT_TESTDB_RUN(&T, "lease batches", cases);
}

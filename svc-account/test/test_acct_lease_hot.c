/*
 * test_acct_lease_hot: a lease report changes no indexed column in the
 * common case (svc-account/lib/lease.c, migration 009), and no promise
 * moves for it: a lease reported on is never closed by the expiry before
 * ACCT_LEASE_TTL_MS after its last report, whatever the age of the
 * indexed renewed_at it left (moved only once old), nor before the
 * ttl_ms it was answered; a stream reported on is not forgotten before
 * ACCT_LEASE_STREAM_KEEP_MS; both are given back or forgotten once
 * silent. Reports of 100 workspaces in 200 batches update their rows
 * heap-only (HOT) for the most part, read from pg_stat_user_tables; it
 * prints (asserts nothing on) each statement's mean time from
 * pg_stat_statements when the server has it. Without SEO_TEST_PG_URL it
 * prints a skip line and passes.
 */
#include <CUnit/Basic.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <libpq-fe.h>

#include "acct_int.h"
#include "acct_testdb.h"
#include "seo/util.h"

typedef Seo__Account__V1__LeaseRequest LeaseRequest;
typedef Seo__Account__V1__LeaseCall LeaseCall;

/* The load: batches of a report of 2 calls per workspace. */
#define LOAD_WS 100
#define LOAD_ROUNDS 200
#define LOAD_CALLS 2
/* How long the server may keep a backend's table counts before showing
 * them (PostgreSQL flushes an idle backend's within 10 s). */
#define STATS_WAIT_MS 15000

static acct_testdb T;
static PGconn *db;
static acct_service *svc;
static int have_pgss; /* the server keeps pg_stat_statements */

/* ---- helpers ---------------------------------------------------------- */

static void set_ms(const char *sql, const char *id, int64_t ms)
{
	char v[24];

	snprintf(v, sizeof(v), "%lld", (long long)ms);
	acct_testdb_int(db, sql, id, v, NULL);
}

/* Workspace `ws`'s open lease of gw1 ("" when none), in `id` (ACCT_ID_LEN). */
static void open_lease(const char *ws, char *id)
{
	PGresult *r = PQexecParams(db, "SELECT id FROM credit_leases WHERE "
				   "workspace_id = $1 AND closed_at IS NULL", 1,
				   NULL, &ws, NULL, NULL, 0);

	id[0] = '\0';
	if (PQresultStatus(r) == PGRES_TUPLES_OK && PQntuples(r) == 1)
		snprintf(id, ACCT_ID_LEN, "%s", PQgetvalue(r, 0, 0));
	PQclear(r);
}

static long long streams_of(const char *ws)
{
	return acct_testdb_int(db, "SELECT count(*) FROM lease_streams "
			       "WHERE workspace_id = $1", ws, NULL);
}

/* Every change of the balance is one ledger row. */
static int ledger_ok(const char *ws)
{
	return acct_testdb_int(db, "SELECT ((SELECT balance FROM workspaces "
			       "WHERE id = $1) = (SELECT sum(delta) FROM ledger "
			       "WHERE workspace_id = $1))::int", ws, NULL) == 1;
}

/* A report of gw1 for `ws` in stream "hot" of `n` calls numbered from
 * *seq on (advanced), asking `want`. */
static int report(const char *ws, uint64_t *seq, size_t n, int64_t want,
		  acct__lease_out *out)
{
	LeaseRequest req = SEO__ACCOUNT__V1__LEASE_REQUEST__INIT;
	LeaseCall calls[LOAD_CALLS], *ptrs[LOAD_CALLS];
	char ids[LOAD_CALLS][64];
	acct_err err;

	for (size_t i = 0; i < n && i < LOAD_CALLS; i++) {
		LeaseCall c = SEO__ACCOUNT__V1__LEASE_CALL__INIT;

		snprintf(ids[i], sizeof(ids[i]), "hot-%s-%llu", ws,
			 (unsigned long long)(*seq + i));
		c.request_id = ids[i];
		c.user_id = "usr_x";
		c.key_id = "key_x";
		c.endpoint = "backlinks";
		c.charged = 2;
		c.credits_used = 2;
		calls[i] = c;
		ptrs[i] = &calls[i];
	}
	req.holder = "gw1";
	req.workspace_id = (char *)ws;
	req.stream = "hot";
	req.first_seq = *seq;
	req.calls = ptrs;
	req.n_calls = n;
	req.want = want;
	*seq += n;
	return acct__lease(svc, &req, out, &err);
}

/* The reconcile job as of `at_ms`. */
static void reconcile_at(int64_t at_ms)
{
	char msg[256];
	int64_t done;

	CU_ASSERT_EQUAL(acct_reconcile(db, at_ms, &done, msg, sizeof(msg)), 0);
}

/* ---- a lease reported on lives its TTL past the report ------------------ */

/*
 * The lease's renewed_at is set back as if its last move were `age` ms
 * ago (the clock of a report that left it), then a report is made at t0:
 * the expiry as of t0 + the ttl_ms answered (the last moment its holder
 * may spend) must leave it open. An expiry on renewed_at alone closes it
 * for every age above 0.
 */
static void test_reported_lives_ttl(void)
{
	static const int64_t ages[] = {0, 1000, 5000, 9000, 9990, 10010, 20000,
				       30000, 59000};
	acct_new_user u;
	acct__lease_out o;
	acct_err err;
	char lease[ACCT_ID_LEN];
	uint64_t seq = 1;
	int64_t t0, t1;

	CU_ASSERT_FATAL(acct_workspace_create(db, "Ttl", "t@example.com", 1000000,
					      &u, &err) == 0);
	CU_ASSERT_FATAL(report(u.workspace_id, &seq, 0, 10000, &o) == 0);
	open_lease(u.workspace_id, lease);
	CU_ASSERT_FATAL(lease[0] != '\0');
	for (size_t i = 0; i < sizeof(ages) / sizeof(ages[0]); i++) {
		t0 = seo_now_ms();
		set_ms("UPDATE credit_leases SET renewed_at = $2 WHERE id = $1",
		       lease, t0 - ages[i]);
		CU_ASSERT_EQUAL_FATAL(report(u.workspace_id, &seq, 1, 0, &o), 0);
		CU_ASSERT_STRING_EQUAL(o.lease_id, lease);
		CU_ASSERT(o.ttl_ms > 0);
		CU_ASSERT(o.ttl_ms <= ACCT_LEASE_TTL_MS);
		reconcile_at(t0 + o.ttl_ms);
		open_lease(u.workspace_id, lease);
		CU_ASSERT_STRING_EQUAL_FATAL(lease, o.lease_id);
	}
	/* Silent for its TTL: given back, every credit back in the balance. */
	t1 = seo_now_ms();
	reconcile_at(t1 + ACCT_LEASE_TTL_MS + 1);
	open_lease(u.workspace_id, lease);
	CU_ASSERT_STRING_EQUAL(lease, "");
	CU_ASSERT(ledger_ok(u.workspace_id));
	CU_ASSERT_EQUAL(acct_testdb_int(db, "SELECT balance FROM workspaces "
					"WHERE id = $1", u.workspace_id, NULL),
			1000000 - 2 * (long long)(sizeof(ages) / sizeof(ages[0])));
}

/*
 * A lease whose last report was written by a process predating migration
 * 009 (renewed_at only): reported_at NULL, or older than renewed_at. The
 * expiry keeps it to renewed_at + the TTL, then closes it.
 */
static void test_reported_before_009(void)
{
	static const char *const reported[] = {"NULL", "renewed_at - 30000"};
	acct_new_user u;
	acct__lease_out o;
	acct_err err;
	char lease[ACCT_ID_LEN], sql[160];
	uint64_t seq = 1;
	int64_t t;

	CU_ASSERT_FATAL(acct_workspace_create(db, "Old", "o@example.com", 1000000,
					      &u, &err) == 0);
	for (size_t i = 0; i < sizeof(reported) / sizeof(reported[0]); i++) {
		CU_ASSERT_FATAL(report(u.workspace_id, &seq, 0, 10000, &o) == 0);
		open_lease(u.workspace_id, lease);
		CU_ASSERT_FATAL(lease[0] != '\0');
		t = seo_now_ms();
		snprintf(sql, sizeof(sql), "UPDATE credit_leases SET renewed_at = $2, "
			 "reported_at = %s WHERE id = $1", reported[i]);
		set_ms(sql, lease, t);
		reconcile_at(t + ACCT_LEASE_TTL_MS);
		open_lease(u.workspace_id, lease);
		CU_ASSERT_STRING_EQUAL(lease, o.lease_id);
		reconcile_at(t + ACCT_LEASE_TTL_MS + 1);
		open_lease(u.workspace_id, lease);
		CU_ASSERT_STRING_EQUAL(lease, "");
	}
	CU_ASSERT(ledger_ok(u.workspace_id));
}

/* The same for a stream and ACCT_LEASE_STREAM_KEEP_MS: set back by `age`,
 * reported on at t0, kept by the forget as of t0 + the keep; forgotten once
 * silent for longer. */
static void test_reported_stream_kept(void)
{
	static const int64_t ages[] = {0, 30000, 59000, 61000, 3600000};
	acct_new_user u;
	acct__lease_out o;
	acct_err err;
	uint64_t seq = 1;
	int64_t t0;

	CU_ASSERT_FATAL(acct_workspace_create(db, "Keep", "k@example.com", 1000000,
					      &u, &err) == 0);
	CU_ASSERT_FATAL(report(u.workspace_id, &seq, 0, 10000, &o) == 0);
	for (size_t i = 0; i < sizeof(ages) / sizeof(ages[0]); i++) {
		CU_ASSERT_EQUAL_FATAL(report(u.workspace_id, &seq, 1, 0, &o), 0);
		t0 = seo_now_ms();
		set_ms("UPDATE lease_streams SET updated_at = $2 WHERE workspace_id = $1",
		       u.workspace_id, t0 - ages[i]);
		CU_ASSERT_EQUAL_FATAL(report(u.workspace_id, &seq, 1, 0, &o), 0);
		reconcile_at(t0 + ACCT_LEASE_STREAM_KEEP_MS);
		CU_ASSERT_EQUAL_FATAL(streams_of(u.workspace_id), 1);
	}
	reconcile_at(seo_now_ms() + ACCT_LEASE_STREAM_KEEP_MS + 3600000);
	CU_ASSERT_EQUAL(streams_of(u.workspace_id), 0);
}

/* ---- reports update their rows heap-only ------------------------------ */

/* n_tup_upd and n_tup_hot_upd of `table` once the server shows at least
 * `least` updates (or STATS_WAIT_MS passed). */
static void table_updates(const char *table, long long least, long long *upd,
			  long long *hot)
{
	int64_t until = seo_now_ms() + STATS_WAIT_MS;

	do {
		*upd = acct_testdb_int(db, "SELECT n_tup_upd FROM "
				       "pg_stat_user_tables WHERE relname = $1",
				       table, NULL);
		*hot = acct_testdb_int(db, "SELECT n_tup_hot_upd FROM "
				       "pg_stat_user_tables WHERE relname = $1",
				       table, NULL);
		if (*upd >= least)
			return;
		acct_testdb_int(db, "SELECT pg_stat_clear_snapshot()", NULL);
		usleep(200 * 1000);
	} while (seo_now_ms() < until);
}

/* Each statement's mean time and rows in this database, when the server
 * keeps pg_stat_statements (printed). */
static void print_statements(void)
{
	PGresult *r;

	if (!have_pgss) {
		printf("\n  (no pg_stat_statements on this server)\n");
		return;
	}
	r = PQexec(db, "SELECT calls, round(mean_exec_time::numeric, 3), "
			     "rows / greatest(calls, 1), left(regexp_replace(query, "
			     "'\\s+', ' ', 'g'), 60) FROM pg_stat_statements WHERE "
			     "dbid = (SELECT oid FROM pg_database WHERE datname = "
			     "current_database()) AND calls >= 100 "
			     "ORDER BY mean_exec_time DESC LIMIT 12");

	if (PQresultStatus(r) == PGRES_TUPLES_OK) {
		printf("\n  calls  mean ms  rows/call  statement\n");
		for (int i = 0; i < PQntuples(r); i++)
			printf("  %5s  %7s  %9s  %s\n", PQgetvalue(r, i, 0),
			       PQgetvalue(r, i, 1), PQgetvalue(r, i, 2),
			       PQgetvalue(r, i, 3));
	}
	PQclear(r);
}

/* The batch of one report of `calls` calls (at most LOAD_CALLS) per
 * workspace ws[0 .. n), numbered from *seq on (advanced); 0 when all were
 * answered. */
static int load_batch(acct_new_user *ws, size_t n, uint64_t *seq,
		      size_t calls, int64_t want)
{
	static LeaseRequest req[LOAD_WS];
	static LeaseCall call[LOAD_WS][LOAD_CALLS];
	static LeaseCall *ptrs[LOAD_WS][LOAD_CALLS];
	static char ids[LOAD_WS][LOAD_CALLS][48];
	static acct__lease_result res[LOAD_WS];
	const LeaseRequest *in[LOAD_WS];
	acct_err err;
	int bad = 0;

	for (size_t i = 0; i < n; i++) {
		LeaseRequest init = SEO__ACCOUNT__V1__LEASE_REQUEST__INIT;

		req[i] = init;
		for (size_t j = 0; j < calls; j++) {
			LeaseCall c = SEO__ACCOUNT__V1__LEASE_CALL__INIT;

			snprintf(ids[i][j], sizeof(ids[i][j]), "load-%zu-%llu", i,
				 (unsigned long long)(*seq + j));
			c.request_id = ids[i][j];
			c.user_id = "usr_x";
			c.key_id = j % 2 == 0 ? "key_a" : "key_b";
			c.endpoint = "backlinks";
			c.charged = 1;
			c.credits_used = 1;
			call[i][j] = c;
			ptrs[i][j] = &call[i][j];
		}
		req[i].holder = "gw-load";
		req[i].workspace_id = ws[i].workspace_id;
		req[i].stream = "load";
		req[i].first_seq = *seq;
		req[i].calls = ptrs[i];
		req[i].n_calls = calls;
		req[i].want = want;
		in[i] = &req[i];
	}
	*seq += calls;
	if (acct__lease_batch(svc, in, n, res, &err) != 0)
		return -1;
	for (size_t i = 0; i < n; i++)
		bad += res[i].rc != 0;
	return bad;
}

/*
 * LOAD_WS workspaces' leases reported on in LOAD_ROUNDS batches, a top-up
 * asked every 10th: most updates of the leases, the streams and the
 * workspaces are heap-only.
 */
static void test_reports_hot(void)
{
	static acct_new_user ws[LOAD_WS];
	static const char *const tables[] = {"credit_leases", "lease_streams",
					     "workspaces"};
	long long upd0[3], hot0[3], upd[3], hot[3];
	uint64_t seq = 1;
	int64_t t0, us;
	acct_err err;
	int bad = 0;

	for (size_t i = 0; i < LOAD_WS; i++)
		CU_ASSERT_FATAL(acct_workspace_create(db, "Load", "l@example.com",
						      100000000, &ws[i], &err) == 0);
	/* The leases opened, then the streams begun. */
	CU_ASSERT_EQUAL_FATAL(load_batch(ws, LOAD_WS, &seq, 0, 100000), 0);
	CU_ASSERT_EQUAL_FATAL(load_batch(ws, LOAD_WS, &seq, LOAD_CALLS, 0), 0);
	for (size_t k = 0; k < 3; k++)
		table_updates(tables[k], 0, &upd0[k], &hot0[k]);
	if (have_pgss)
		acct_testdb_int(db, "SELECT pg_stat_statements_reset(0, (SELECT "
				"oid FROM pg_database WHERE datname = "
				"current_database()), 0)", NULL);
	t0 = seo_now_ms();
	for (int r = 0; r < LOAD_ROUNDS; r++)
		bad += load_batch(ws, LOAD_WS, &seq, LOAD_CALLS,
				  r % 10 == 9 ? 100000 : 0) != 0;
	us = (seo_now_ms() - t0) * 1000;
	CU_ASSERT_EQUAL(bad, 0);
	printf("\n  %d batches of %d reports of %d calls: %lld us a batch\n",
	       LOAD_ROUNDS, LOAD_WS, LOAD_CALLS, (long long)(us / LOAD_ROUNDS));
	for (size_t k = 0; k < 3; k++) {
		table_updates(tables[k], upd0[k] + (long long)LOAD_WS * LOAD_ROUNDS,
			      &upd[k], &hot[k]);
		upd[k] -= upd0[k];
		hot[k] -= hot0[k];
		printf("  %-14s %6lld updates, %6lld heap-only\n", tables[k], upd[k],
		       hot[k]);
		CU_ASSERT(upd[k] >= (long long)LOAD_WS * LOAD_ROUNDS);
	}
	/* The leases and streams move only unindexed columns (none of their
	 * updates was heap-only before 009). A page still lacks room when
	 * its dead versions cannot be pruned yet: 99 % alone, 80 % beside
	 * the whole suite's load on one server; half is far from both. */
	CU_ASSERT(hot[0] * 2 >= upd[0]);
	CU_ASSERT(hot[1] * 2 >= upd[1]);
	print_statements();
}

/* pg_stat_statements in this database; 0 on a server without the library
 * loaded (only the printout misses it). */
static int pgss_present(void)
{
	PGresult *r;
	int ok;

	PQclear(PQexec(db, "CREATE EXTENSION IF NOT EXISTS pg_stat_statements"));
	r = PQexec(db, "SELECT 1 FROM pg_stat_statements LIMIT 1");
	ok = PQresultStatus(r) == PGRES_TUPLES_OK;
	PQclear(r);
	return ok;
}

static const acct_testdb_case cases[] = {
	{"a lease reported on lives its TTL past the report",
	 test_reported_lives_ttl},
	{"a lease last reported on before migration 009 lives its TTL",
	 test_reported_before_009},
	{"a stream reported on is kept its day", test_reported_stream_kept},
	{"reports of 100 workspaces in 200 batches: updates heap-only",
	 test_reports_hot},
};

int main(void)
{
	int rc = acct_testdb_open(&T, "test_acct_lease_hot", "acct_lease_hot");

	if (rc != 0)
		return rc < 0;
	db = T.db;
	svc = T.svc;
	have_pgss = pgss_present();
	return ACCT_TESTDB_RUN(&T, "lease reports heap-only", cases);
}

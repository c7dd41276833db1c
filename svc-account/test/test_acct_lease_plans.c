/*
 * test_acct_lease_plans: every statement a lease report runs finds the
 * rows of the tables that grow (credit_leases keeps every lease it ever
 * closed, lease_streams a day of streams) by index, in the plan
 * PostgreSQL keeps for a prepared statement once it goes generic.
 *
 * A generic plan guesses an array parameter's length (10) and a join of
 * unnest() with a table may then hash the whole table each time: below
 * some tens of thousands of rows the planner finds that cheaper than an
 * index, and a report read every lease ever closed (lib/db.c says how
 * each statement avoids it). The tables are filled with closed leases and
 * streams of several holders, from a thousand rows to tens of thousands
 * (smaller, a table is read whole in a few pages, as cheap as an index),
 * and analysed; at each size every statement is prepared from
 * lib/db.c's own table, and EXPLAIN of its generic plan must show no
 * sequential scan of either. Without SEO_TEST_PG_URL it prints a skip
 * line and passes.
 */
#include <CUnit/Basic.h>

#include <stdio.h>
#include <string.h>

#include <libpq-fe.h>

#include "acct_int.h"
#include "acct_testdb.h"

/* Workspaces, each with an open lease of gw1 and gw2. */
#define FILL_WORKSPACES 200
/* The closed leases and the streams, growing: a plan is checked at each. */
static const int sizes[] = {1000, 3000, 10000, 30000};

static acct_testdb T;
static PGconn *db;

/* The statements of a report (lib/lease.c), reads then writes, and the
 * balance read (service.c), which adds a workspace's open leases. */
static const acct__q report_stmts[] = {
	ACCT_Q_LEDGER_LOCK_WORKSPACES, ACCT_Q_LEASE_MINE,
	ACCT_Q_LEASE_STREAM,           ACCT_Q_LEASE_OTHERS,
	ACCT_Q_LEASE_STREAM_SET,       ACCT_Q_LEASE_UPDATE,
	ACCT_Q_LEASE_INSERT,           ACCT_Q_LEASE_WS_SET,
	ACCT_Q_LEASE_USAGE_BATCHES,    ACCT_Q_BALANCE,
};

/* What none of them may read whole: the tables that grow, and the
 * expiry's index of every open lease (a workspace's are found by
 * credit_leases_workspace or credit_leases_open). */
static const char *const whole[] = {
	"Seq Scan on credit_leases", "Seq Scan on lease_streams",
	"using credit_leases_renewed",
};

static int run(const char *sql)
{
	PGresult *r = PQexec(db, sql);
	int ok = PQresultStatus(r) == PGRES_COMMAND_OK ||
		 PQresultStatus(r) == PGRES_TUPLES_OK;

	if (!ok)
		printf("\n  %s: %s", sql, PQerrorMessage(db));
	PQclear(r);
	return ok ? 0 : -1;
}

/* The workspaces and their open leases. */
static int fill_workspaces(void)
{
	char sql[512];

	snprintf(sql, sizeof(sql),
		 "INSERT INTO workspaces (id, name, balance, created_at) "
		 "SELECT 'ws_plan' || g, 'w', 1000, 0 FROM generate_series(1, %d) g",
		 FILL_WORKSPACES);
	if (run(sql) != 0)
		return -1;
	snprintf(sql, sizeof(sql),
		 "INSERT INTO credit_leases (id, workspace_id, holder, granted, "
		 "used, created_at, renewed_at, reported_at) "
		 "SELECT 'lse_open' || h || '_' || g, 'ws_plan' || g, 'gw' || h, "
		 "100, 50, 0, 0, 0 FROM generate_series(1, %d) g, "
		 "generate_series(1, 2) h", FILL_WORKSPACES);
	return run(sql);
}

/* Closed leases and streams of three holders numbered (from, to]. */
static int fill(int from, int to)
{
	static const char *const rows[] = {
		"INSERT INTO credit_leases (id, workspace_id, holder, granted, "
		"used, created_at, renewed_at, reported_at, closed_at) "
		"SELECT 'lse_plan' || g, 'ws_plan' || (g %% %d + 1), 'gw' || (g %% 3), "
		"100, 50, g, g, g, g FROM generate_series(%d, %d) g",
		"INSERT INTO lease_streams (workspace_id, holder, stream, "
		"reported_seq, updated_at) SELECT 'ws_plan' || (g %% %d + 1), "
		"'gw' || (g %% 3), 'st' || g, g, g FROM generate_series(%d, %d) g",
	};
	char sql[512];

	for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		snprintf(sql, sizeof(sql), rows[i], FILL_WORKSPACES, from + 1, to);
		if (run(sql) != 0)
			return -1;
	}
	return run("ANALYZE workspaces, credit_leases, lease_streams");
}

/* EXPLAIN of statement `q`'s generic plan, one line a node, into `out`
 * (0), or -1 (printed). */
static int generic_plan(acct__q q, char *out, size_t size)
{
	const seo_pg_stmt *s = &acct__stmts.rows[q];
	char sql[512];
	size_t len = 0;
	PGresult *r;
	int n;

	r = PQprepare(db, s->name, s->sql, 0, NULL);
	if (PQresultStatus(r) != PGRES_COMMAND_OK) {
		printf("\n  %s: %s", s->name, PQerrorMessage(db));
		PQclear(r);
		return -1;
	}
	PQclear(r);
	r = PQdescribePrepared(db, s->name);
	n = PQresultStatus(r) == PGRES_COMMAND_OK ? PQnparams(r) : -1;
	PQclear(r);
	if (n < 0)
		return -1;
	/* Whatever the values: the plan is the one made for none. */
	len = (size_t)snprintf(sql, sizeof(sql), "EXPLAIN (COSTS OFF) EXECUTE %s",
			       s->name);
	for (int i = 0; i < n && len < sizeof(sql); i++)
		len += (size_t)snprintf(sql + len, sizeof(sql) - len, "%sNULL",
					i == 0 ? "(" : ", ");
	if (n > 0 && len < sizeof(sql))
		snprintf(sql + len, sizeof(sql) - len, ")");
	r = PQexec(db, sql);
	if (PQresultStatus(r) != PGRES_TUPLES_OK) {
		printf("\n  %s: %s", sql, PQerrorMessage(db));
		PQclear(r);
		return -1;
	}
	len = 0;
	out[0] = '\0';
	for (int i = 0; i < PQntuples(r) && len < size; i++)
		len += (size_t)snprintf(out + len, size - len, "    %s\n",
					PQgetvalue(r, i, 0));
	PQclear(r);
	return 0;
}

static void test_report_plans(void)
{
	char plan[8192];
	int bad = 0, had = 0;

	CU_ASSERT_FATAL(fill_workspaces() == 0);
	CU_ASSERT_FATAL(run("SET plan_cache_mode = force_generic_plan") == 0);
	for (size_t z = 0; z < sizeof(sizes) / sizeof(sizes[0]); z++) {
		CU_ASSERT_FATAL(fill(had, sizes[z]) == 0);
		had = sizes[z];
		CU_ASSERT_FATAL(run("DEALLOCATE ALL") == 0);
		for (size_t i = 0; i < sizeof(report_stmts) / sizeof(report_stmts[0]); i++) {
			const char *name = acct__stmts.rows[report_stmts[i]].name;

			CU_ASSERT_FATAL(generic_plan(report_stmts[i], plan,
						     sizeof(plan)) == 0);
			for (size_t t = 0; t < sizeof(whole) / sizeof(whole[0]); t++) {
				if (strstr(plan, whole[t]) == NULL)
					continue;
				printf("\n  %s, %d rows: %s:\n%s", name, had,
				       whole[t], plan);
				bad++;
			}
		}
	}
	CU_ASSERT_EQUAL(bad, 0);
}

static const acct_testdb_case cases[] = {
	{"a report's generic plans find leases and streams by index",
	 test_report_plans},
};

int main(void)
{
	int rc = acct_testdb_open(&T, "test_acct_lease_plans", "acct_lease_plans");

	if (rc != 0)
		return rc < 0;
	db = T.db;
	return ACCT_TESTDB_RUN(&T, "lease report plans", cases);
}

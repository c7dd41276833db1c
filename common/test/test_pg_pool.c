/*
 * The connection pool and statement tables (common/src/pg_pool.c,
 * pg_stmt.c) and the capped daily counter (pg_counter.c), on a scratch
 * database of SEO_TEST_PG_URL.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <CUnit/Basic.h>
#include <libpq-fe.h>

#include "seo/errors.h"
#include "seo/pg_counter.h"
#include "seo/pg_pool.h"
#include "seo/util.h"
#include "test_pgdb.h"

static test_pgdb pgdb;

enum { Q_ONE, Q_PREPARED, Q_PID, Q__COUNT };

static const seo_pg_stmt rows[Q__COUNT] = {
	[Q_ONE] = {"one", "SELECT $1::int + 1"},
	[Q_PREPARED] = {"prepared",
		"SELECT count(*) FROM pg_prepared_statements WHERE name LIKE 'tp\\_%'"},
	[Q_PID] = {"pid", "SELECT pg_backend_pid()"},
};

static const seo_pg_stmts stmts = {"tp_", rows, Q__COUNT};

static const seo_pg_counter per_key = {"tp_calls", "who", "n"};
static const seo_pg_counter per_day = {"tp_attempts", NULL, "n"};

static int suite_init(void)
{
	PGconn *pg;
	PGresult *r;
	int ok;

	if (test_pgdb_create(&pgdb, getenv("SEO_TEST_PG_URL"), "pg_pool_test") != 0)
		return -1;
	pg = PQconnectdb(pgdb.url);
	r = PQexec(pg, "CREATE TABLE tp_calls (day date NOT NULL, who text NOT NULL, "
		       "n integer NOT NULL CHECK (n >= 0), PRIMARY KEY (day, who)); "
		       "CREATE TABLE tp_attempts (day date PRIMARY KEY, "
		       "n integer NOT NULL CHECK (n >= 0))");
	ok = PQresultStatus(r) == PGRES_COMMAND_OK;
	PQclear(r);
	PQfinish(pg);
	return ok ? 0 : -1;
}

static int suite_clean(void)
{
	return test_pgdb_drop(&pgdb);
}

static seo_pg_pool *pool_of(int size, int wait_ms)
{
	seo_pg_pool_opt opt = {.url = pgdb.url, .size = size, .wait_ms = wait_ms,
			       .stmts = &stmts};
	seo_pg_pool *p = NULL;

	CU_ASSERT_EQUAL(seo_pg_pool_new(&opt, &p), 0);
	return p;
}

static long long value(seo_pg_conn *c, int q, const char *param)
{
	char err[256];
	PGresult *r = NULL;
	long long v = -1;

	if (seo_pg_exec(c, q, param != NULL ? 1 : 0, &param, &r, err, sizeof(err)) == 0)
		v = strtoll(PQgetvalue(r, 0, 0), NULL, 10);
	PQclear(r);
	return v;
}

static void test_statements(void)
{
	seo_pg_pool *p = pool_of(1, 0);
	seo_pg_conn *c = NULL;
	char err[256];

	CU_ASSERT_EQUAL_FATAL(seo_pg_pool_get(p, &c, err, sizeof(err)), 0);
	/* prepared on first use, once per connection */
	CU_ASSERT_EQUAL(value(c, Q_ONE, "41"), 42);
	CU_ASSERT_EQUAL(value(c, Q_ONE, "1"), 2);
	CU_ASSERT_EQUAL(value(c, Q_PREPARED, NULL), 2);
	/* a failing statement names itself */
	CU_ASSERT_EQUAL(seo_pg_exec(c, Q_ONE, 1, (const char *[]){"x"}, NULL, err,
				    sizeof(err)), SEO_EDB);
	CU_ASSERT(strncmp(err, "one failed: ", 12) == 0);
	seo_pg_pool_put(p, c);
	seo_pg_pool_free(p);
}

static void test_bounded_wait(void)
{
	seo_pg_pool *p = pool_of(1, 300);
	seo_pg_conn *c = NULL, *d = NULL;
	char err[256];
	int64_t t0;

	CU_ASSERT_EQUAL_FATAL(seo_pg_pool_get(p, &c, err, sizeof(err)), 0);
	t0 = seo_mono_ms();
	CU_ASSERT_EQUAL(seo_pg_pool_get(p, &d, err, sizeof(err)), SEO_ETIMEDOUT);
	CU_ASSERT(seo_mono_ms() - t0 >= 290);
	CU_ASSERT(seo_mono_ms() - t0 < 2000);
	CU_ASSERT_PTR_NULL(d);
	CU_ASSERT(strstr(err, "300 ms") != NULL);
	seo_pg_pool_put(p, c);
	CU_ASSERT_EQUAL(seo_pg_pool_get(p, &d, err, sizeof(err)), 0);
	seo_pg_pool_put(p, d);
	seo_pg_pool_free(p);
}

static void test_dropped_in_transaction(void)
{
	seo_pg_pool *p = pool_of(1, 0);
	seo_pg_conn *c = NULL;
	char err[256];
	long long pid;

	CU_ASSERT_EQUAL_FATAL(seo_pg_pool_begin(p, &c, err, sizeof(err)), 0);
	pid = value(c, Q_PID, NULL);
	/* given back inside its transaction: closed, the slot reconnects */
	seo_pg_pool_put(p, c);
	CU_ASSERT_EQUAL_FATAL(seo_pg_pool_get(p, &c, err, sizeof(err)), 0);
	CU_ASSERT_NOT_EQUAL(value(c, Q_PID, NULL), pid);
	/* the new connection prepares again: pid and this one */
	CU_ASSERT_EQUAL(value(c, Q_PREPARED, NULL), 2);
	seo_pg_pool_put(p, c);
	seo_pg_pool_free(p);
}

static void test_missing_migrations(void)
{
	static const char *const nowhere[] = {NULL};
	static const seo_pg_set set = {"svc-nowhere", "ex_", SEO_CFG_PG_URL, nowhere};
	seo_pg_pool_opt opt = {.url = pgdb.url, .stmts = &stmts, .migrations = &set};
	seo_pg_pool *p = NULL;
	seo_pg_conn *c = NULL;
	char err[256];

	CU_ASSERT_EQUAL_FATAL(seo_pg_pool_new(&opt, &p), 0);
	CU_ASSERT_EQUAL(seo_pg_pool_get(p, &c, err, sizeof(err)), SEO_ENOTFOUND);
	CU_ASSERT(strstr(err, "svc-nowhere migrations not found; set SEO_PG_URL") != NULL);
	seo_pg_pool_free(p);
}

static void test_counter(void)
{
	seo_pg_pool *p = pool_of(1, 0);
	seo_pg_conn *c = NULL;
	char err[256];
	int64_t deleted = -1;
	/* 2024-05-12T00:00:00Z */
	const int64_t may12 = INT64_C(1715472000000);

	CU_ASSERT_EQUAL_FATAL(seo_pg_pool_get(p, &c, err, sizeof(err)), 0);
	for (int i = 0; i < 3; i++)
		CU_ASSERT_EQUAL(seo_pg_counter_add(c->pg, &per_key, "2024-05-10", "a", 3,
						   err, sizeof(err)), 0);
	CU_ASSERT_EQUAL(seo_pg_counter_add(c->pg, &per_key, "2024-05-10", "a", 3, err,
					   sizeof(err)), SEO_EDENIED);
	CU_ASSERT_EQUAL(seo_pg_counter_add(c->pg, &per_key, "2024-05-10", "b", 3, err,
					   sizeof(err)), 0);
	CU_ASSERT_EQUAL(seo_pg_counter_undo(c->pg, &per_key, "2024-05-10", "a", err,
					    sizeof(err)), 0);
	CU_ASSERT_EQUAL(seo_pg_counter_add(c->pg, &per_key, "2024-05-10", "a", 3, err,
					   sizeof(err)), 0);
	CU_ASSERT_EQUAL(seo_pg_counter_add(c->pg, &per_day, "2024-05-11", NULL, 1, err,
					   sizeof(err)), 0);
	CU_ASSERT_EQUAL(seo_pg_counter_add(c->pg, &per_day, "2024-05-11", NULL, 1, err,
					   sizeof(err)), SEO_EDENIED);
	CU_ASSERT_EQUAL(seo_pg_counter_add(c->pg, &per_day, "2024-05-12", NULL, 1, err,
					   sizeof(err)), 0);
	/* days before the one holding the instant go */
	CU_ASSERT_EQUAL(seo_pg_counter_purge(c->pg, &per_key, may12, &deleted, err,
					     sizeof(err)), 0);
	CU_ASSERT_EQUAL(deleted, 2);
	CU_ASSERT_EQUAL(seo_pg_counter_purge(c->pg, &per_day, may12 + 1000, &deleted,
					     err, sizeof(err)), 0);
	CU_ASSERT_EQUAL(deleted, 1);
	CU_ASSERT_EQUAL(seo_pg_counter_add(c->pg, &per_day, "not a day", NULL, 1, err,
					   sizeof(err)), SEO_EDB);
	CU_ASSERT(strncmp(err, "tp_attempts failed: ", 20) == 0);
	seo_pg_pool_put(p, c);
	seo_pg_pool_free(p);
}

int main(void)
{
	const char *url = getenv("SEO_TEST_PG_URL");
	CU_pSuite s;
	unsigned failed;

	if (url == NULL || url[0] == '\0') {
		printf("test_pg_pool: SEO_TEST_PG_URL is not set, skipped\n");
		return 0;
	}
	if (CU_initialize_registry() != CUE_SUCCESS)
		return 1;
	s = CU_add_suite("pg_pool", suite_init, suite_clean);
	CU_add_test(s, "a statement table, prepared per connection", test_statements);
	CU_add_test(s, "a wait for a free connection is bounded", test_bounded_wait);
	CU_add_test(s, "a connection given back in a transaction is closed",
		    test_dropped_in_transaction);
	CU_add_test(s, "a missing migrations directory names its variable",
		    test_missing_migrations);
	CU_add_test(s, "the capped daily counter", test_counter);
	CU_basic_set_mode(CU_BRM_NORMAL);
	CU_basic_run_tests();
	failed = CU_get_number_of_failures() + CU_get_number_of_suites_failed();
	CU_cleanup_registry();
	return failed ? 1 : 0;
}

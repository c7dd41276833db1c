/*
 * Periodic jobs (common/src/job.c, job_sched.c, clock.c): their schedule,
 * one run across two processes competing for it, and the scheduler
 * running a job at an instant set through the clock. The database parts
 * run on SEO_TEST_PG_URL.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <CUnit/Basic.h>
#include <libpq-fe.h>

#include "seo/clock.h"
#include "seo/errors.h"
#include "seo/job.h"
#include "seo/util.h"
#include "test_pgdb.h"

/* 2026-12-07, a Monday, UTC. */
#define MON_0300 INT64_C(1796612400000)
#define MON_0700 INT64_C(1796626800000)
#define SUN_0300 INT64_C(1796526000000)
#define WED_0000 INT64_C(1796774400000)
#define HOUR_MS INT64_C(3600000)

/* Exit statuses of a competing child. */
#define CHILD_RAN 0
#define CHILD_SKIPPED 10
#define CHILD_FAILED 1

static test_pgdb pgdb;

/* ---- the schedule ------------------------------------------------------------ */

static void test_slots(void)
{
	const seo_job daily = {"d", "t", 86400, 3 * 3600, NULL};
	const seo_job weekly = {"w", "t", 7 * 86400, 4 * 86400 + 7 * 3600, NULL};

	CU_ASSERT_EQUAL(seo_job_slot_ms(&daily, MON_0700), MON_0300);
	CU_ASSERT_EQUAL(seo_job_slot_ms(&daily, MON_0300), MON_0300);
	CU_ASSERT_EQUAL(seo_job_slot_ms(&daily, MON_0300 - 1), SUN_0300);
	/* the offset from Thursday 1 January 1970 makes it Monday */
	CU_ASSERT_EQUAL(seo_job_slot_ms(&weekly, WED_0000), MON_0700);
	CU_ASSERT_EQUAL(seo_job_slot_ms(&weekly, MON_0700 - 1), MON_0700 - 7 * 24 * HOUR_MS);
	/* before the epoch's first slot: still the latest one at or before */
	CU_ASSERT_EQUAL(seo_job_slot_ms(&daily, -1), 3 * HOUR_MS - 24 * HOUR_MS);
}

static void test_clock(void)
{
	int64_t before = seo_now_ms();

	CU_ASSERT(seo_clock_ms() >= before);
	seo_clock_set_ms(MON_0700);
	CU_ASSERT_EQUAL(seo_clock_ms(), MON_0700);
	seo_clock_set_ms(0);
	CU_ASSERT(seo_clock_ms() >= before);
}

/* ---- jobs on the database ------------------------------------------------------ */

static int exec_sql(PGconn *pg, const char *sql, const char *param)
{
	PGresult *r = PQexecParams(pg, sql, param != NULL ? 1 : 0, NULL, &param,
				   NULL, NULL, 0);
	int rc = PQresultStatus(r) == PGRES_COMMAND_OK ||
		 PQresultStatus(r) == PGRES_TUPLES_OK ? 0 : SEO_EDB;

	PQclear(r);
	return rc;
}

static long long query_int(const char *sql)
{
	PGconn *pg = PQconnectdb(pgdb.url);
	PGresult *r = PQexec(pg, sql);
	long long v = -1;

	if (PQresultStatus(r) == PGRES_TUPLES_OK && PQntuples(r) == 1)
		v = strtoll(PQgetvalue(r, 0, 0), NULL, 10);
	PQclear(r);
	PQfinish(pg);
	return v;
}

/* Not idempotent on purpose: two runs at once would leave two rows. */
static int slow_job(PGconn *pg, int64_t at_ms, int64_t *done, char *err,
		    size_t err_len)
{
	char at[24];

	snprintf(at, sizeof(at), "%lld", (long long)at_ms);
	if (exec_sql(pg, "INSERT INTO job_log (at) VALUES ($1::bigint)", at) != 0 ||
	    exec_sql(pg, "SELECT pg_sleep(0.5)", NULL) != 0) {
		snprintf(err, err_len, "slow job failed: %s", PQerrorMessage(pg));
		return SEO_EDB;
	}
	*done = 1;
	return 0;
}

static const seo_job slow = {"slow", "test", 60, 0, slow_job};

static int suite_init(void)
{
	PGconn *pg;
	int rc;

	if (test_pgdb_create(&pgdb, getenv("SEO_TEST_PG_URL"), "jobs_test") != 0)
		return -1;
	pg = PQconnectdb(pgdb.url);
	rc = exec_sql(pg, "CREATE TABLE job_log (at bigint NOT NULL)", NULL);
	PQfinish(pg);
	return rc == 0 ? 0 : -1;
}

static int suite_clean(void)
{
	return test_pgdb_drop(&pgdb);
}

/* A child: waits for the start byte, runs `slow` once, exits with what
 * happened. */
static void compete(int start_fd)
{
	char err[256], go;
	int64_t done = 0;
	int skipped = 0, rc;
	PGconn *pg = PQconnectdb(pgdb.url);

	if (PQstatus(pg) != CONNECTION_OK || read(start_fd, &go, 1) != 1)
		_exit(CHILD_FAILED);
	rc = seo_job_run(pg, &slow, MON_0700, &done, &skipped, err, sizeof(err));
	PQfinish(pg);
	if (rc != 0)
		_exit(CHILD_FAILED);
	_exit(skipped ? CHILD_SKIPPED : done == 1 ? CHILD_RAN : CHILD_FAILED);
}

static void test_two_processes(void)
{
	int start[2], status[2], ran = 0, skipped_n = 0, skipped;
	pid_t pid[2];
	char err[256];
	int64_t done;
	PGconn *pg;

	CU_ASSERT_EQUAL_FATAL(pipe(start), 0);
	for (int i = 0; i < 2; i++) {
		pid[i] = fork();
		CU_ASSERT_FATAL(pid[i] >= 0);
		if (pid[i] == 0)
			compete(start[0]);
	}
	/* Both connected and waiting: let them go at the same instant. */
	CU_ASSERT_EQUAL(write(start[1], "gg", 2), 2);
	for (int i = 0; i < 2; i++) {
		CU_ASSERT_EQUAL(waitpid(pid[i], &status[i], 0), pid[i]);
		CU_ASSERT_FATAL(WIFEXITED(status[i]));
		ran += WEXITSTATUS(status[i]) == CHILD_RAN;
		skipped_n += WEXITSTATUS(status[i]) == CHILD_SKIPPED;
	}
	close(start[0]);
	close(start[1]);
	CU_ASSERT_EQUAL(ran, 1);
	CU_ASSERT_EQUAL(skipped_n, 1);
	CU_ASSERT_EQUAL(query_int("SELECT count(*) FROM job_log"), 1);

	/* the lock was given back: the next run runs */
	pg = PQconnectdb(pgdb.url);
	CU_ASSERT_EQUAL(seo_job_run(pg, &slow, MON_0700, &done, &skipped, err,
				    sizeof(err)), 0);
	CU_ASSERT_EQUAL(skipped, 0);
	CU_ASSERT_EQUAL(done, 1);
	PQfinish(pg);
	CU_ASSERT_EQUAL(query_int("SELECT count(*) FROM job_log"), 2);
}

static int tick_job(PGconn *pg, int64_t at_ms, int64_t *done, char *err,
		    size_t err_len)
{
	char at[24];

	snprintf(at, sizeof(at), "%lld", (long long)at_ms);
	if (exec_sql(pg, "INSERT INTO job_log (at) VALUES ($1::bigint)", at) != 0) {
		snprintf(err, err_len, "tick failed");
		return SEO_EDB;
	}
	*done = 1;
	return 0;
}

static void test_scheduler_clock(void)
{
	/* every hour on the hour */
	static const seo_job tick[] = {{"tick", "test", 3600, 0, tick_job}};
	seo_jobs *s = NULL;
	long long n = 0;

	query_int("WITH d AS (DELETE FROM job_log RETURNING 1) SELECT count(*) FROM d");
	seo_clock_set_ms(MON_0700 - 1000);
	CU_ASSERT_EQUAL_FATAL(seo_jobs_start(pgdb.url, tick, 1, &s), 0);
	/* the clock stands a second before the hour: nothing runs */
	usleep(1500 * 1000);
	CU_ASSERT_EQUAL(query_int("SELECT count(*) FROM job_log"), 0);
	/* half an hour later by the clock: one run, for 07:00 itself */
	seo_clock_set_ms(MON_0700 + HOUR_MS / 2);
	for (int i = 0; i < 50 && n == 0; i++) {
		usleep(100 * 1000);
		n = query_int("SELECT count(*) FROM job_log");
	}
	usleep(1500 * 1000);
	seo_jobs_stop(s);
	seo_clock_set_ms(0);
	CU_ASSERT_EQUAL(query_int("SELECT count(*) FROM job_log"), 1);
	CU_ASSERT_EQUAL(query_int("SELECT at FROM job_log"), (long long)MON_0700);
}

int main(void)
{
	const char *url = getenv("SEO_TEST_PG_URL");
	CU_pSuite s;
	unsigned failed;

	if (CU_initialize_registry() != CUE_SUCCESS)
		return 1;
	s = CU_add_suite("jobs", NULL, NULL);
	CU_add_test(s, "the schedule of a row", test_slots);
	CU_add_test(s, "the settable clock", test_clock);
	if (url != NULL && url[0] != '\0') {
		s = CU_add_suite("jobs_db", suite_init, suite_clean);
		CU_add_test(s, "a job run once across two processes competing for it",
			    test_two_processes);
		CU_add_test(s, "a job at an instant set through the clock",
			    test_scheduler_clock);
	} else {
		printf("test_jobs: SEO_TEST_PG_URL is not set, database tests skipped\n");
	}
	CU_basic_set_mode(CU_BRM_NORMAL);
	CU_basic_run_tests();
	failed = CU_get_number_of_failures() + CU_get_number_of_suites_failed();
	CU_cleanup_registry();
	return failed ? 1 : 0;
}

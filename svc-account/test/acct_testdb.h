/*
 * acct_testdb.h: what svc-account's tests against PostgreSQL set up
 * alike: a scratch database (test_pgdb.h) migrated to the newest
 * migration, a connection to it for the test's own queries, and an
 * acct_service on it without a rate limit.
 */
#ifndef ACCT_TESTDB_H
#define ACCT_TESTDB_H

#include <stddef.h>

#include <CUnit/CUnit.h>
#include <libpq-fe.h>

#include "acct.h"
#include "test_pgdb.h"

typedef struct acct_testdb {
	test_pgdb pgdb;
	PGconn *db;
	acct_service *svc;
} acct_testdb;

/*
 * Sets `t` up on the server of SEO_TEST_PG_URL, in a database named after
 * `prefix`. Returns 0 (acct_testdb_close() undoes it); 1 when
 * SEO_TEST_PG_URL is not set, after printing that `test` is skipped (it
 * passes); -1 after printing why it failed (nothing left to close).
 */
int acct_testdb_open(acct_testdb *t, const char *test, const char *prefix);

/* Frees the service, closes the connection and drops the database. */
void acct_testdb_close(acct_testdb *t);

/* A test of a suite: its name and its function. */
typedef struct acct_testdb_case {
	const char *name;
	CU_TestFunc fn;
} acct_testdb_case;

/*
 * Runs cases[0 .. n) as the CUnit suite `suite` (verbose), then closes
 * `t` (acct_testdb_close()). Returns main()'s exit code: 0 when every
 * test passed, else 1.
 */
int acct_testdb_run(acct_testdb *t, const char *suite,
		    const acct_testdb_case *cases, size_t n);

/* acct_testdb_run() of a test's whole array of cases. */
#define ACCT_TESTDB_RUN(t, suite, cases)                                     \
	acct_testdb_run((t), (suite), (cases), sizeof(cases) / sizeof((cases)[0]))

/*
 * `sql` on `db` with up to 4 text parameters, the list ended by NULL: its
 * first value as an integer; -1 when it has no row, a NULL or failed
 * (then printed).
 */
long long acct_testdb_int(PGconn *db, const char *sql, ...);

#endif

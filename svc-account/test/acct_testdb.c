/* The set-up svc-account's tests against PostgreSQL share (acct_testdb.h). */
#include "acct_testdb.h"

#include <CUnit/Basic.h>

#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int acct_testdb_open(acct_testdb *t, const char *test, const char *prefix)
{
	const char *url = getenv("SEO_TEST_PG_URL");
	const char *src = getenv("SEO_SOURCE_DIR");
	char migrations[PATH_MAX];
	acct_options opt;
	acct_err err = {0};
	int applied;

	memset(t, 0, sizeof(*t));
	if (url == NULL || url[0] == '\0') {
		printf("%s: SEO_TEST_PG_URL is not set, skipped\n", test);
		return 1;
	}
	if (src != NULL)
		snprintf(migrations, sizeof(migrations), "%s/svc-account/migrations", src);
	else if (acct_migrations_dir(migrations, sizeof(migrations)) != 0)
		return -1;
	if (test_pgdb_create(&t->pgdb, url, prefix) != 0)
		return -1;
	t->db = PQconnectdb(t->pgdb.url);
	acct_options_init(&opt);
	opt.pg_url = t->pgdb.url;
	opt.rate_per_min = 0;
	if (PQstatus(t->db) != CONNECTION_OK ||
	    acct_migrate(t->db, migrations, &applied, &err) != 0 ||
	    acct_new(&opt, &t->svc, &err) != 0) {
		fprintf(stderr, "%s: set-up: %s %s\n", test, PQerrorMessage(t->db),
			err.message);
		acct_testdb_close(t);
		return -1;
	}
	return 0;
}

void acct_testdb_close(acct_testdb *t)
{
	acct_free(t->svc);
	PQfinish(t->db);
	test_pgdb_drop(&t->pgdb);
	memset(t, 0, sizeof(*t));
}

int acct_testdb_run(acct_testdb *t, const char *suite,
		    const acct_testdb_case *cases, size_t n)
{
	unsigned failures = 1;
	CU_pSuite s;

	if (CU_initialize_registry() == CUE_SUCCESS) {
		s = CU_add_suite(suite, NULL, NULL);
		for (size_t i = 0; s != NULL && i < n; i++)
			CU_add_test(s, cases[i].name, cases[i].fn);
		CU_basic_set_mode(CU_BRM_VERBOSE);
		CU_basic_run_tests();
		failures = CU_get_number_of_failures() +
			   CU_get_number_of_suites_failed() + (s == NULL);
		CU_cleanup_registry();
	}
	acct_testdb_close(t);
	return failures == 0 ? 0 : 1;
}

long long acct_testdb_int(PGconn *db, const char *sql, ...)
{
	const char *params[4];
	int n = 0;
	va_list ap;
	PGresult *r;
	long long v = -1;

	va_start(ap, sql);
	while (n < 4 && (params[n] = va_arg(ap, const char *)) != NULL)
		n++;
	va_end(ap);
	r = PQexecParams(db, sql, n, NULL, params, NULL, NULL, 0);
	if (PQresultStatus(r) != PGRES_TUPLES_OK &&
	    PQresultStatus(r) != PGRES_COMMAND_OK)
		fprintf(stderr, "query failed: %s: %s", sql, PQerrorMessage(db));
	else if (PQntuples(r) > 0 && !PQgetisnull(r, 0, 0))
		v = strtoll(PQgetvalue(r, 0, 0), NULL, 10);
	PQclear(r);
	return v;
}

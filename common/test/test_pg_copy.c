/*
 * test_pg_copy: COPY text rows (common/src/pg_copy.c) and seo_pg_copy()
 * (common/src/pg_stmt.c): every byte's escape, NULL, integers, row
 * framing, out of memory never half written; then, on a scratch database
 * of SEO_TEST_PG_URL, rows with every special byte read back as written,
 * and a unique violation reported as SEO_EEXIST with the connection
 * usable after the rollback.
 */
#include <CUnit/Basic.h>

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <libpq-fe.h>

#include "seo/errors.h"
#include "seo/pg_copy.h"
#include "seo/pg_stmt.h"
#include "test_pgdb.h"

static test_pgdb pgdb;

static int equal(const seo_copy *w, const char *want)
{
	return w->len == strlen(want) && memcmp(w->data, want, w->len) == 0;
}

/* ---- the text format ---------------------------------------------------------- */

static void test_every_byte(void)
{
	for (int b = 1; b < 256; b++) {
		char in[4] = {'a', (char)b, 'z', '\0'}, want[8];
		seo_copy w;

		switch (b) {
		case '\\': snprintf(want, sizeof(want), "a\\\\z"); break;
		case '\t': snprintf(want, sizeof(want), "a\\tz"); break;
		case '\n': snprintf(want, sizeof(want), "a\\nz"); break;
		case '\r': snprintf(want, sizeof(want), "a\\rz"); break;
		default: snprintf(want, sizeof(want), "a%cz", b);
		}
		seo_copy_init(&w);
		seo_copy_text(&w, in);
		CU_ASSERT(!w.oom);
		if (!equal(&w, want))
			CU_FAIL("byte escaped wrong");
		seo_copy_free(&w);
	}
}

static void test_fields_and_rows(void)
{
	seo_copy w;

	seo_copy_init(&w);
	seo_copy_text(&w, "x");
	seo_copy_text(&w, NULL);
	seo_copy_text(&w, "");
	seo_copy_int(&w, 0);
	seo_copy_row_end(&w);
	seo_copy_int(&w, INT64_MIN);
	seo_copy_int(&w, INT64_MAX);
	seo_copy_int(&w, -1);
	/* A value that looks like the markers stays a value. */
	seo_copy_text(&w, "\\N");
	seo_copy_text(&w, "\\.");
	seo_copy_row_end(&w);
	CU_ASSERT(!w.oom);
	CU_ASSERT(equal(&w, "x\t\\N\t\t0\n"
			    "-9223372036854775808\t9223372036854775807\t-1\t"
			    "\\\\N\t\\\\.\n"));
	seo_copy_free(&w);
	CU_ASSERT_EQUAL(w.len, 0);
	CU_ASSERT_PTR_NULL(w.data);
}

/* A value larger than the first buffer, all of it escaped. */
static void test_growth(void)
{
	size_t n = 100000;
	char *in = malloc(n + 1);
	seo_copy w;
	int ok = 1;

	CU_ASSERT_FATAL(in != NULL);
	memset(in, '\t', n);
	in[n] = '\0';
	seo_copy_init(&w);
	seo_copy_text(&w, in);
	CU_ASSERT_EQUAL_FATAL(w.len, 2 * n);
	for (size_t i = 0; i < n && ok; i++)
		ok = w.data[2 * i] == '\\' && w.data[2 * i + 1] == 't';
	CU_ASSERT(ok);
	seo_copy_free(&w);
	free(in);
}

/* ---- on the database ---------------------------------------------------------- */

enum { Q_COPY, Q_N };

static const seo_pg_stmt rows[Q_N] = {
	[Q_COPY] = {"copy", "COPY t (id, s, n) FROM STDIN"},
};
static const seo_pg_stmts stmts = {"test_", rows, Q_N};

static PGconn *connect_db(void)
{
	PGconn *pg = PQconnectdb(pgdb.url);

	CU_ASSERT_FATAL(PQstatus(pg) == CONNECTION_OK);
	return pg;
}

static void test_round_trip(void)
{
	/* Every ASCII byte, UTF-8 beyond it, the markers as values. */
	const char *values[5] = {NULL, "", "\\N", "\\.", "caf\xc3\xa9 \xe2\x82\xac"};
	char ascii[128], err[256];
	PGconn *pg = connect_db();
	seo_pg_conn c = seo_pg_conn_of(pg, &stmts, 0);
	PGresult *r;
	seo_copy w;

	for (int b = 1; b < 128; b++)
		ascii[b - 1] = (char)b;
	ascii[127] = '\0';
	seo_copy_init(&w);
	for (int i = 0; i < 6; i++) {
		seo_copy_int(&w, i);
		seo_copy_text(&w, i < 5 ? values[i] : ascii);
		seo_copy_int(&w, -i);
		seo_copy_row_end(&w);
	}
	CU_ASSERT_EQUAL(seo_pg_copy(&c, Q_COPY, w.data, w.len, err, sizeof(err)), 0);
	r = PQexec(pg, "SELECT id, s, n FROM t ORDER BY id");
	CU_ASSERT_EQUAL_FATAL(PQntuples(r), 6);
	CU_ASSERT(PQgetisnull(r, 0, 1));
	for (int i = 1; i < 6; i++) {
		CU_ASSERT(!PQgetisnull(r, i, 1));
		CU_ASSERT_STRING_EQUAL(PQgetvalue(r, i, 1), i < 5 ? values[i] : ascii);
		CU_ASSERT_EQUAL(strtoll(PQgetvalue(r, i, 2), NULL, 10), -i);
	}
	PQclear(r);
	seo_copy_free(&w);
	PQfinish(pg);
}

static void test_unique_violation(void)
{
	char err[256];
	PGconn *pg = connect_db();
	seo_pg_conn c = seo_pg_conn_of(pg, &stmts, 0);
	const char *dup = "100\ta\t1\n100\tb\t2\n";
	PGresult *r;

	CU_ASSERT_EQUAL_FATAL(seo_pg_begin(&c, err, sizeof(err)), 0);
	CU_ASSERT_EQUAL(seo_pg_copy(&c, Q_COPY, dup, strlen(dup), err, sizeof(err)),
			SEO_EEXIST);
	CU_ASSERT(strstr(err, "copy failed") == err);
	seo_pg_rollback(&c);
	r = PQexec(pg, "SELECT count(*) FROM t WHERE id = 100");
	CU_ASSERT_STRING_EQUAL(PQgetvalue(r, 0, 0), "0");
	PQclear(r);
	/* Nothing at all is a COPY of no rows. */
	CU_ASSERT_EQUAL(seo_pg_copy(&c, Q_COPY, NULL, 0, err, sizeof(err)), 0);
	PQfinish(pg);
}

static int suite_init(void)
{
	PGconn *pg;
	PGresult *r;
	int ok;

	if (test_pgdb_create(&pgdb, getenv("SEO_TEST_PG_URL"), "pg_copy_test") != 0)
		return -1;
	pg = PQconnectdb(pgdb.url);
	r = PQexec(pg, "CREATE TABLE t (id bigint PRIMARY KEY, s text, n bigint)");
	ok = PQresultStatus(r) == PGRES_COMMAND_OK;
	PQclear(r);
	PQfinish(pg);
	return ok ? 0 : -1;
}

static int suite_clean(void)
{
	return test_pgdb_drop(&pgdb);
}

int main(void)
{
	unsigned failed;
	CU_pSuite s;

	if (CU_initialize_registry() != CUE_SUCCESS)
		return 1;
	s = CU_add_suite("pg_copy", NULL, NULL);
	CU_add_test(s, "every byte escaped or not", test_every_byte);
	CU_add_test(s, "fields, NULL, integers, rows", test_fields_and_rows);
	CU_add_test(s, "a long value", test_growth);
	if (getenv("SEO_TEST_PG_URL") != NULL) {
		s = CU_add_suite("pg_copy_db", suite_init, suite_clean);
		CU_add_test(s, "rows read back as written", test_round_trip);
		CU_add_test(s, "a unique violation, then the connection again",
			    test_unique_violation);
	} else {
		printf("test_pg_copy: SEO_TEST_PG_URL is not set, database tests skipped\n");
	}
	CU_basic_set_mode(CU_BRM_NORMAL);
	CU_basic_run_tests();
	failed = CU_get_number_of_failures() + CU_get_number_of_suites_failed();
	CU_cleanup_registry();
	return failed == 0 ? 0 : 1;
}

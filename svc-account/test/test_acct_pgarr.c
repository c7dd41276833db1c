/*
 * test_acct_pgarr: the array parameters of a batch (lib/pgarr.c), as a
 * literal and as a binary text[], read back equal from PostgreSQL through
 * a prepared and an unprepared statement (seo_pg_exec_bin()): quotes,
 * backslashes, commas, braces, the word NULL, SQL NULLs, non-ASCII, empty
 * strings, integers, a 1 MB element, and no element at all.
 * Without SEO_TEST_PG_URL it prints a skip line and passes.
 */
#include <CUnit/Basic.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <libpq-fe.h>

#include "acct_int.h"
#include "seo/pg_stmt.h"

#define BIG (1024 * 1024)

static const seo_pg_stmt rows[] = {
	{"elements", "SELECT x IS NULL, x FROM unnest($1::text[]) "
		     "WITH ORDINALITY AS t(x, o) ORDER BY o"},
};
static const seo_pg_stmts stmts = {"pgarr_test_", rows, 1};

static PGconn *db;
/* The connection as prepared statements use it, and as oneshot. */
static seo_pg_conn prepared, oneshot;
static char *big;

/* The elements sent (NULL: SQL NULL); `big` is set in main(). */
static const char *values[] = {
	"plain", "", "\"", "\\", "a,b", "{braces}", "NULL", NULL, "say \"hi\"\\n",
	"Zürich 東京 🚀", " spaced ", "'single'", NULL, "}{,\"\\", "",
	NULL /* big */,
};

#define N_VALUES (sizeof(values) / sizeof(values[0]))

/* Sends `a` (done) as $1 through `c` and checks every element read back
 * against values[], then the integers 0, -1, INT64_MAX as their text. */
static void check_round_trip(seo_pg_conn *c, acct__pgarr *a, size_t n,
			     const char *const *want)
{
	const char *p = acct__pgarr_done(a);
	int len = a->binary ? acct__pgarr_len(a) : 0, fmt = a->binary;
	PGresult *r = NULL;
	char err[256];

	CU_ASSERT_PTR_NOT_NULL_FATAL(p);
	if (seo_pg_exec_bin(c, 0, 1, &p, &len, &fmt, &r, err, sizeof(err)) != 0)
		fprintf(stderr, "%s\n", err);
	CU_ASSERT_PTR_NOT_NULL_FATAL(r);
	CU_ASSERT_EQUAL_FATAL(PQntuples(r), (int)n);
	for (size_t i = 0; i < n; i++) {
		int is_null = strcmp(PQgetvalue(r, (int)i, 0), "t") == 0;

		CU_ASSERT_EQUAL(is_null, want[i] == NULL);
		if (want[i] != NULL) {
			CU_ASSERT_EQUAL(PQgetlength(r, (int)i, 1), (int)strlen(want[i]));
			CU_ASSERT_STRING_EQUAL(PQgetvalue(r, (int)i, 1), want[i]);
		}
	}
	PQclear(r);
}

/* Every value, then three integers, in `binary` or literal form. */
static void round_trip(int binary, seo_pg_conn *c)
{
	static const char *const ints[] = {"0", "-1", "9223372036854775807"};
	const char *want[N_VALUES + 3];
	acct__pgarr a;

	if (binary)
		acct__pgarr_init_bin(&a);
	else
		acct__pgarr_init(&a);
	for (size_t i = 0; i < N_VALUES; i++) {
		want[i] = i == N_VALUES - 1 ? big : values[i];
		acct__pgarr_add(&a, want[i]);
	}
	acct__pgarr_addi(&a, 0);
	acct__pgarr_addi(&a, -1);
	acct__pgarr_addi(&a, INT64_MAX);
	for (size_t i = 0; i < 3; i++)
		want[N_VALUES + i] = ints[i];
	check_round_trip(c, &a, N_VALUES + 3, want);
	acct__pgarr_free(&a);
	/* Nothing added: an empty array, no row. */
	if (binary)
		acct__pgarr_init_bin(&a);
	else
		acct__pgarr_init(&a);
	check_round_trip(c, &a, 0, want);
	acct__pgarr_free(&a);
}

static void test_literal_prepared(void) { round_trip(0, &prepared); }
static void test_literal_oneshot(void) { round_trip(0, &oneshot); }
static void test_binary_prepared(void) { round_trip(1, &prepared); }
static void test_binary_oneshot(void) { round_trip(1, &oneshot); }

/* Without a NULL the binary array says it has none: the server agrees. */
static void test_binary_no_nulls(void)
{
	const char *const want[] = {"x", "", "y\"z"};
	acct__pgarr a;

	acct__pgarr_init_bin(&a);
	for (size_t i = 0; i < 3; i++)
		acct__pgarr_add(&a, want[i]);
	check_round_trip(&prepared, &a, 3, want);
	acct__pgarr_free(&a);
}

int main(void)
{
	const char *url = getenv("SEO_TEST_PG_URL");
	CU_pSuite s;
	unsigned failures;

	if (url == NULL || url[0] == '\0') {
		printf("test_acct_pgarr: SEO_TEST_PG_URL is not set, skipped\n");
		return 0;
	}
	db = PQconnectdb(url);
	if (PQstatus(db) != CONNECTION_OK) {
		fprintf(stderr, "test_acct_pgarr: %s", PQerrorMessage(db));
		PQfinish(db);
		return 1;
	}
	prepared = seo_pg_conn_of(db, &stmts, 0);
	oneshot = seo_pg_conn_of(db, &stmts, 1);
	big = malloc(BIG + 1);
	if (big == NULL)
		return 1;
	/* Every byte an array literal must escape or quote, and a character
	 * of two bytes, many times over. */
	{
		static const char part[] = "ab\"\\,{} é";
		size_t at = 0;

		for (; at + sizeof(part) - 1 <= BIG; at += sizeof(part) - 1)
			memcpy(big + at, part, sizeof(part) - 1);
		memset(big + at, 'z', BIG - at);
		big[BIG] = '\0';
	}
	if (CU_initialize_registry() != CUE_SUCCESS)
		return 1;
	s = CU_add_suite("array parameters", NULL, NULL);
	CU_add_test(s, "a literal, prepared", test_literal_prepared);
	CU_add_test(s, "a literal, unprepared", test_literal_oneshot);
	CU_add_test(s, "a binary text[], prepared", test_binary_prepared);
	CU_add_test(s, "a binary text[], unprepared", test_binary_oneshot);
	CU_add_test(s, "a binary text[] without NULLs", test_binary_no_nulls);
	CU_basic_set_mode(CU_BRM_VERBOSE);
	CU_basic_run_tests();
	failures = CU_get_number_of_failures() + CU_get_number_of_suites_failed();
	CU_cleanup_registry();
	free(big);
	PQfinish(db);
	return failures == 0 ? 0 : 1;
}

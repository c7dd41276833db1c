/*
 * test_acct_usage_claim.c: Account/ClaimUsage's statement
 * (svc-account/lib/usage_claim.c) against PostgreSQL: the calling key's
 * rows of the window, each taken by one ref only, also when claims race;
 * the same of calls written in batches (migration 008), a batch cut by
 * the window's start, and both kinds claimed together.
 * Without SEO_TEST_PG_URL it prints a skip line and passes.
 */
#include <CUnit/Basic.h>
#include <limits.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <libpq-fe.h>

#include "test_pgdb.h"
#include "usage_claim.h"

#define RACERS 8
#define RACE_ROWS 400
#define NOW 1800000000000LL
#define HOUR 3600000LL

static test_pgdb pgdb;
static PGconn *db;
static char ws[ACCT_ID_LEN];

static void sql(const char *q)
{
	PGresult *r = PQexec(db, q);

	CU_ASSERT_FATAL(PQresultStatus(r) == PGRES_COMMAND_OK ||
			PQresultStatus(r) == PGRES_TUPLES_OK);
	PQclear(r);
}

/* The first row of `q`, its values joined by '|', into out[0 .. size). */
static const char *first_row(const char *q, char *out, size_t size)
{
	PGresult *r = PQexec(db, q);
	size_t len = 0;

	out[0] = '\0';
	for (int i = 0; PQntuples(r) > 0 && i < PQnfields(r) && len < size; i++)
		len += (size_t)snprintf(out + len, size - len, "%s%s", i > 0 ? "|" : "",
					PQgetvalue(r, 0, i));
	PQclear(r);
	return out;
}

/* A usage row of `key` made `age` ms before NOW. */
static void row(const char *id, const char *key, long long credits, long long age)
{
	char q[512];

	snprintf(q, sizeof(q),
		 "INSERT INTO usage (id, workspace_id, key_id, endpoint, charged, "
		 "credits_used, created_at) VALUES ('%s', '%s', '%s', 'backlinks', "
		 "%lld, %lld, %lld)", id, ws, key, credits, credits, NOW - age);
	sql(q);
}

/* A batch `id` of `key` (usage_batches) of `n` calls of 1 credit each
 * but the first (0: refunded), made `age`, `age` - step, ... ms before
 * NOW, its calls in migration 010's calls_compact or, `old` set, in
 * 008's array in calls. */
static void batch_as(int old, const char *id, const char *key, int n,
		     long long age, long long step)
{
	char *q = malloc(256 + (size_t)n * 64);
	size_t len;

	CU_ASSERT_FATAL(q != NULL);
	len = (size_t)sprintf(q, "INSERT INTO usage_batches (id, workspace_id, key_id, "
			      "first_at, last_at, n_calls, credits_used, unclaimed, "
			      "calls%s) VALUES ('%s', '%s', '%s', %lld, %lld, %d, %d, %d, %s",
			      old ? "" : ", calls_compact", id, ws, key, NOW - age,
			      NOW - age + (n - 1) * step, n, n - 1, n,
			      old ? "'[" : "'[]', '{\"p\":\"req_");
	if (!old)
		len += (size_t)sprintf(q + len, "%s_\",\"c\":[", id);
	for (int i = 0; i < n; i++) {
		if (old)
			len += (size_t)sprintf(q + len, "%s[%lld,\"backlinks\",null,1,%d,"
					       "\"req_%s_%d\",null]", i > 0 ? "," : "",
					       NOW - age + i * step, i > 0, id, i);
		else
			len += (size_t)sprintf(q + len, "%s[%lld,0,null,1,%d,\"%d\"]",
					       i > 0 ? "," : "", i * step, i > 0, i);
	}
	sprintf(q + len, old ? "]')" : "],\"n\":[\"backlinks\"]}')");
	sql(q);
	free(q);
}

static void batch(const char *id, const char *key, int n, long long age,
		  long long step)
{
	batch_as(1, id, key, n, age, step);
}

static void claim(PGconn *c, const char *key, const char *ref, int64_t *credits,
		  int64_t *calls)
{
	acct_err err;

	CU_ASSERT_EQUAL(acct_usage_claim(c, ws, key, ref, NOW - 24 * HOUR, credits,
					 calls, &err), 0);
}

static void test_window_and_key(void)
{
	int64_t credits = -1, calls = -1;

	row("chg_a1", "key_a", 2, HOUR);
	row("chg_a2", "key_a", 3, 23 * HOUR);
	row("chg_a3", "key_a", 0, 2 * HOUR);      /* refunded: a call of 0 */
	row("chg_old", "key_a", 7, 25 * HOUR);    /* before the window */
	row("chg_b1", "key_b", 5, HOUR);          /* another key */
	claim(db, "key_a", "act_1", &credits, &calls);
	CU_ASSERT_EQUAL(credits, 5);
	CU_ASSERT_EQUAL(calls, 3);
	claim(db, "key_a", "act_2", &credits, &calls);
	CU_ASSERT_EQUAL(credits, 0);
	CU_ASSERT_EQUAL(calls, 0);
	claim(db, "key_b", "act_3", &credits, &calls);
	CU_ASSERT_EQUAL(credits, 5);
	CU_ASSERT_EQUAL(calls, 1);
	claim(db, "key_none", "act_4", &credits, &calls);
	CU_ASSERT_EQUAL(calls, 0);
	/* Another workspace's rows of the same key id are not the caller's. */
	{
		acct_err err;
		CU_ASSERT_EQUAL(acct_usage_claim(db, "ws_other", "key_a", "act_5", 0,
						 &credits, &calls, &err), 0);
		CU_ASSERT_EQUAL(calls, 0);
	}
}

/* Batches: the calls of the window only, each once, with the per-call
 * rows of the same key; the batches' JSON keeps every call, the claimed
 * ones naming their ref, and unclaimed counts the others. */
static void test_batches(void)
{
	int64_t credits = -1, calls = -1;
	char got[512];
	PGresult *r;

	row("chg_c1", "key_c", 4, HOUR);
	/* 10 calls an hour apart from 30 hours ago: 6 before the window. */
	batch("ubt_c1", "key_c", 10, 30 * HOUR, HOUR);
	batch_as(0, "ubt_c2", "key_c", 3, 2 * HOUR, 1);
	batch("ubt_old", "key_c", 2, 48 * HOUR, 1);
	batch_as(0, "ubt_d1", "key_d", 5, HOUR, 1);
	claim(db, "key_c", "act_c", &credits, &calls);
	/* 4 of ubt_c1 (1 credit each), 3 of ubt_c2 (0 + 1 + 1), chg_c1. */
	CU_ASSERT_EQUAL(calls, 4 + 3 + 1);
	CU_ASSERT_EQUAL(credits, 4 + 2 + 4);
	r = PQexec(db, "SELECT id, unclaimed FROM usage_batches WHERE key_id = 'key_c' "
		       "ORDER BY id");
	CU_ASSERT_FATAL(PQntuples(r) == 3);
	CU_ASSERT_STRING_EQUAL(PQgetvalue(r, 0, 1), "6");
	CU_ASSERT_STRING_EQUAL(PQgetvalue(r, 1, 1), "0");
	CU_ASSERT_STRING_EQUAL(PQgetvalue(r, 2, 1), "2");
	PQclear(r);
	CU_ASSERT_STRING_EQUAL(first_row("SELECT count(*) FILTER (WHERE "
					 "attributed_to = 'act_c'), count(*) FILTER "
					 "(WHERE attributed_to IS NULL), count(*) "
					 "FILTER (WHERE attributed_to = 'act_c' AND "
					 "created_at < 1800000000000 - 86400000) "
					 "FROM usage_all WHERE key_id = 'key_c'",
					 got, sizeof(got)), "8|8|0");
	claim(db, "key_c", "act_c2", &credits, &calls);
	CU_ASSERT_EQUAL(calls, 0);
	CU_ASSERT_EQUAL(credits, 0);
	claim(db, "key_d", "act_d", &credits, &calls);
	CU_ASSERT_EQUAL(calls, 5);
	CU_ASSERT_EQUAL(credits, 4);
	/* A claimed batch keeps its form, every call named by usage_all. */
	CU_ASSERT_STRING_EQUAL(first_row("SELECT count(*) FILTER (WHERE calls = "
					 "'[]' AND left(calls_compact, 1) = '{'), "
					 "count(*) FILTER (WHERE calls_compact IS "
					 "NULL) FROM usage_batches WHERE key_id IN "
					 "('key_c', 'key_d')", got, sizeof(got)),
			       "2|2");
	CU_ASSERT_STRING_EQUAL(first_row("SELECT string_agg(concat_ws('|', "
					 "request_id, endpoint, coalesce(domain, "
					 "'-'), charged, credits_used, attributed_to, "
					 "created_at - 1800000000000), ' ' ORDER BY "
					 "id) FROM usage_all WHERE key_id = 'key_d'",
					 got, sizeof(got)),
			       "req_ubt_d1_0|backlinks|-|1|0|act_d|-3600000 "
			       "req_ubt_d1_1|backlinks|-|1|1|act_d|-3599999 "
			       "req_ubt_d1_2|backlinks|-|1|1|act_d|-3599998 "
			       "req_ubt_d1_3|backlinks|-|1|1|act_d|-3599997 "
			       "req_ubt_d1_4|backlinks|-|1|1|act_d|-3599996");
	/* A new call of the key after the claim is the next claim's. */
	batch("ubt_c3", "key_c", 1, 1, 1);
	claim(db, "key_c", "act_c3", &credits, &calls);
	CU_ASSERT_EQUAL(calls, 1);
}

static int64_t race_calls[RACERS];

static void *racer(void *arg)
{
	int i = (int)(intptr_t)arg;
	PGconn *c = PQconnectdb(pgdb.url);
	char ref[32];
	int64_t credits;

	snprintf(ref, sizeof(ref), "act_race%d", i);
	if (PQstatus(c) == CONNECTION_OK)
		claim(c, "key_race", ref, &credits, &race_calls[i]);
	PQfinish(c);
	return NULL;
}

static void test_racing_claims_take_each_row_once(void)
{
	pthread_t t[RACERS];
	int64_t total = 0;
	char q[256], got[64];

	snprintf(q, sizeof(q),
		 "INSERT INTO usage (id, workspace_id, key_id, endpoint, charged, "
		 "credits_used, created_at) SELECT 'chg_r' || g, '%s', 'key_race', "
		 "'backlinks', 1, 1, %lld FROM generate_series(1, %d) g",
		 ws, NOW - HOUR, RACE_ROWS);
	sql(q);
	/* As many calls again in batches of 40, of both forms. */
	for (int i = 0; i < RACE_ROWS / 40; i++) {
		snprintf(q, sizeof(q), "ubt_race%02d", i);
		batch_as(i % 2, q, "key_race", 40, HOUR - i * 100, 1);
	}
	for (int i = 0; i < RACERS; i++)
		CU_ASSERT_FATAL(pthread_create(&t[i], NULL, racer, (void *)(intptr_t)i) == 0);
	for (int i = 0; i < RACERS; i++) {
		pthread_join(t[i], NULL);
		total += race_calls[i];
	}
	CU_ASSERT_EQUAL(total, RACE_ROWS * 2);
	CU_ASSERT_STRING_EQUAL(first_row("SELECT count(*), count(DISTINCT id) "
					 "FROM usage_all WHERE key_id = 'key_race' "
					 "AND attributed_to IS NOT NULL", got,
					 sizeof(got)), "800|800");
	CU_ASSERT_STRING_EQUAL(first_row("SELECT count(*) FROM usage_all WHERE "
					 "key_id = 'key_race' AND attributed_to "
					 "IS NULL", got, sizeof(got)), "0");
}

int main(void)
{
	const char *url = getenv("SEO_TEST_PG_URL");
	const char *src = getenv("SEO_SOURCE_DIR");
	char dir[PATH_MAX];
	acct_new_user u;
	acct_err err;
	unsigned failed;
	int applied;
	CU_pSuite s;

	if (url == NULL || url[0] == '\0') {
		printf("test_acct_usage_claim: SEO_TEST_PG_URL is not set, skipped\n");
		return 0;
	}
	if (src != NULL)
		snprintf(dir, sizeof(dir), "%s/svc-account/migrations", src);
	else if (acct_migrations_dir(dir, sizeof(dir)) != 0)
		return 1;
	if (test_pgdb_create(&pgdb, url, "acct_claim") != 0)
		return 1;
	db = PQconnectdb(pgdb.url);
	if (PQstatus(db) != CONNECTION_OK ||
	    acct_migrate(db, dir, &applied, &err) != 0 ||
	    acct_workspace_create(db, "Claims", "claims@example.com", 0, &u, &err) != 0) {
		fprintf(stderr, "setup: %s %s\n", PQerrorMessage(db), err.message);
		return 1;
	}
	snprintf(ws, sizeof(ws), "%s", u.workspace_id);
	if (CU_initialize_registry() != CUE_SUCCESS)
		return 1;
	s = CU_add_suite("usage_claim", NULL, NULL);
	CU_add_test(s, "the key's rows of the window, once", test_window_and_key);
	CU_add_test(s, "calls in batches, the window cutting one",
		    test_batches);
	CU_add_test(s, "racing claims take each row once",
		    test_racing_claims_take_each_row_once);
	CU_basic_set_mode(CU_BRM_VERBOSE);
	CU_basic_run_tests();
	failed = CU_get_number_of_failures();
	CU_cleanup_registry();
	PQfinish(db);
	test_pgdb_drop(&pgdb);
	return failed != 0;
}

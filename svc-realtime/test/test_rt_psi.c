/*
 * test_rt_psi.c: page-performance below the RPC layer: the mapping of
 * PageSpeed Insights v5 answers (full, missing categories, missing
 * audits, no field data, garbage), strategies, days and timestamps, the
 * upstream client's failure, and, against PostgreSQL (SEO_TEST_PG_URL;
 * skipped without it), svc-realtime's migrations, the daily counters
 * under concurrency and the shared cache.
 */
#include "db.h"
#include "rt.h"
#include "test_pgdb.h"

#include <CUnit/Basic.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "seo/errors.h"
#include "seo/pg.h"

/* ---- the mapping ------------------------------------------------------------ */

/* A trimmed runPagespeed answer as the API shapes it. */
static const char full[] =
	"{\"kind\":\"pagespeedonline#result\",\"id\":\"https://a.test/\","
	"\"loadingExperience\":{\"id\":\"https://a.test/\",\"metrics\":{"
	"\"LARGEST_CONTENTFUL_PAINT_MS\":{\"percentile\":2100,\"category\":\"AVERAGE\"}},"
	"\"overall_category\":\"AVERAGE\",\"initial_url\":\"https://a.test/\"},"
	"\"lighthouseResult\":{\"requestedUrl\":\"https://a.test/\","
	"\"finalUrl\":\"https://a.test/\",\"lighthouseVersion\":\"12.0.0\","
	"\"audits\":{"
	"\"largest-contentful-paint\":{\"id\":\"largest-contentful-paint\",\"score\":0.8,"
	"\"numericValue\":2345.6,\"numericUnit\":\"millisecond\"},"
	"\"cumulative-layout-shift\":{\"score\":1,\"numericValue\":0.042},"
	"\"first-contentful-paint\":{\"numericValue\":1200},"
	"\"server-response-time\":{\"numericValue\":180.25},"
	"\"interaction-to-next-paint\":{\"numericValue\":150},"
	"\"speed-index\":{\"numericValue\":2100}},"
	"\"categories\":{\"performance\":{\"id\":\"performance\",\"score\":0.92},"
	"\"accessibility\":{\"score\":0.875},\"best-practices\":{\"score\":0.5},"
	"\"seo\":{\"score\":1}}}}";

static json_t *map(const char *body, const char *strategy, int expect_rc)
{
	json_t *out = NULL, *root = json_loads(body, 0, NULL);
	const char *why = NULL;
	int rc = rt_psi_map(root, "https://a.test/", strategy, &out, &why);

	json_decref(root);

	CU_ASSERT_EQUAL(rc, expect_rc);
	if (rc != 0)
		CU_ASSERT_PTR_NOT_NULL(why);
	return out;
}

static long long ival(const json_t *o, const char *key)
{
	const json_t *v = json_object_get(o, key);

	CU_ASSERT(json_is_integer(v));
	return json_integer_value(v);
}

static const json_t *vital(const json_t *o, const char *key)
{
	return json_object_get(json_object_get(o, "core_web_vitals"), key);
}

static void test_full(void)
{
	json_t *o = map(full, "mobile", 0);

	CU_ASSERT_PTR_NOT_NULL_FATAL(o);
	CU_ASSERT_STRING_EQUAL(json_string_value(json_object_get(o, "url")),
			       "https://a.test/");
	CU_ASSERT_EQUAL(ival(o, "performance_score"), 92);
	CU_ASSERT_EQUAL(ival(o, "accessibility_score"), 88);
	CU_ASSERT_EQUAL(ival(o, "seo_score"), 100);
	CU_ASSERT_DOUBLE_EQUAL(json_number_value(vital(o, "lcp_ms")), 2345.6, 1e-9);
	CU_ASSERT_DOUBLE_EQUAL(json_number_value(vital(o, "cls")), 0.042, 1e-12);
	CU_ASSERT_DOUBLE_EQUAL(json_number_value(vital(o, "fcp_ms")), 1200, 1e-9);
	CU_ASSERT_DOUBLE_EQUAL(json_number_value(vital(o, "ttfb_ms")), 180.25, 1e-9);
	CU_ASSERT_DOUBLE_EQUAL(json_number_value(vital(o, "inp_ms")), 150, 1e-9);
	CU_ASSERT(json_is_true(json_object_get(o, "crux_data")));
	CU_ASSERT_STRING_EQUAL(json_string_value(json_object_get(o, "strategy")),
			       "mobile");
	/* exactly the object's fields: cached_at is the service's */
	CU_ASSERT_EQUAL(json_object_size(o), 7);
	CU_ASSERT_EQUAL(json_object_size(json_object_get(o, "core_web_vitals")), 5);
	json_decref(o);
}

static void test_missing_categories(void)
{
	/* accessibility absent, seo not computed (null), performance a
	 * string: each is 0; scores outside 0..1 are clamped */
	json_t *o = map("{\"lighthouseResult\":{\"categories\":{"
			"\"performance\":{\"score\":\"0.9\"},\"seo\":{\"score\":null}},"
			"\"audits\":{}}}", "desktop", 0);

	CU_ASSERT_PTR_NOT_NULL_FATAL(o);
	CU_ASSERT_EQUAL(ival(o, "performance_score"), 0);
	CU_ASSERT_EQUAL(ival(o, "accessibility_score"), 0);
	CU_ASSERT_EQUAL(ival(o, "seo_score"), 0);
	CU_ASSERT_STRING_EQUAL(json_string_value(json_object_get(o, "strategy")),
			       "desktop");
	json_decref(o);
	o = map("{\"lighthouseResult\":{\"categories\":{"
		"\"performance\":{\"score\":1.7},\"seo\":{\"score\":-0.2},"
		"\"accessibility\":{\"score\":0}}}}", "mobile", 0);
	CU_ASSERT_PTR_NOT_NULL_FATAL(o);
	CU_ASSERT_EQUAL(ival(o, "performance_score"), 100);
	CU_ASSERT_EQUAL(ival(o, "seo_score"), 0);
	CU_ASSERT_EQUAL(ival(o, "accessibility_score"), 0);
	json_decref(o);
}

static void test_missing_audits(void)
{
	/* no audits at all; then an audit without numericValue (an error
	 * audit) and one whose value is not a number */
	json_t *o = map("{\"lighthouseResult\":{}}", "mobile", 0);
	static const char *const names[] = {"lcp_ms", "cls", "inp_ms", "fcp_ms",
					    "ttfb_ms"};

	CU_ASSERT_PTR_NOT_NULL_FATAL(o);
	for (size_t i = 0; i < 5; i++)
		CU_ASSERT(json_is_null(vital(o, names[i])));
	json_decref(o);
	o = map("{\"lighthouseResult\":{\"audits\":{"
		"\"largest-contentful-paint\":{\"scoreDisplayMode\":\"error\"},"
		"\"cumulative-layout-shift\":{\"numericValue\":\"0.1\"},"
		"\"first-contentful-paint\":{\"numericValue\":0}}}}", "mobile", 0);
	CU_ASSERT_PTR_NOT_NULL_FATAL(o);
	CU_ASSERT(json_is_null(vital(o, "lcp_ms")));
	CU_ASSERT(json_is_null(vital(o, "cls")));
	CU_ASSERT(json_is_null(vital(o, "inp_ms")));
	CU_ASSERT(json_is_number(vital(o, "fcp_ms")));
	json_decref(o);
}

static void test_no_field_data(void)
{
	static const char *const bodies[] = {
		"{\"lighthouseResult\":{}}",
		"{\"loadingExperience\":{\"initial_url\":\"https://a.test/\"},"
		"\"lighthouseResult\":{}}",
		"{\"loadingExperience\":{\"metrics\":{}},\"lighthouseResult\":{}}",
		/* the origin's data is not the page's */
		"{\"originLoadingExperience\":{\"metrics\":{\"X\":{}}},"
		"\"lighthouseResult\":{}}",
	};

	for (size_t i = 0; i < sizeof(bodies) / sizeof(bodies[0]); i++) {
		json_t *o = map(bodies[i], "mobile", 0);

		CU_ASSERT_PTR_NOT_NULL_FATAL(o);
		CU_ASSERT(json_is_false(json_object_get(o, "crux_data")));
		json_decref(o);
	}
}

static void test_garbage(void)
{
	static const char *const bodies[] = {
		"", "<html>not json</html>", "[1, 2]", "{\"kind\":\"x\"}",
		"{\"lighthouseResult\":[]}",
		"{\"error\":{\"code\":500,\"message\":\"Lighthouse returned error\"}}",
		"{\"lighthouseResult\":{\"runtimeError\":{\"code\":\"NO_FCP\"}}}",
		"{\"lighthouseResult\":{\"categories\":",
	};

	for (size_t i = 0; i < sizeof(bodies) / sizeof(bodies[0]); i++)
		CU_ASSERT_PTR_NULL(map(bodies[i], "mobile", SEO_EINVAL));
	/* NO_ERROR is Lighthouse's way of saying none */
	json_decref(map("{\"lighthouseResult\":{\"runtimeError\":{\"code\":"
			"\"NO_ERROR\"}}}", "mobile", 0));
}

static void test_strategy_and_days(void)
{
	char day[11], iso[21];
	int64_t left;

	CU_ASSERT_STRING_EQUAL(rt_psi_strategy("desktop"), "desktop");
	CU_ASSERT_STRING_EQUAL(rt_psi_strategy("mobile"), "mobile");
	CU_ASSERT_STRING_EQUAL(rt_psi_strategy(NULL), "mobile");
	CU_ASSERT_STRING_EQUAL(rt_psi_strategy(""), "mobile");
	CU_ASSERT_STRING_EQUAL(rt_psi_strategy("tablet"), "mobile");
	CU_ASSERT_STRING_EQUAL(rt_psi_strategy("DESKTOP"), "mobile");

	/* 2024-05-10T10:00:00.250Z */
	rt_utc_day(INT64_C(1715335200250), day, &left);
	CU_ASSERT_STRING_EQUAL(day, "2024-05-10");
	CU_ASSERT_EQUAL(left, 14 * 3600);
	rt_iso8601(INT64_C(1715335200250), iso);
	CU_ASSERT_STRING_EQUAL(iso, "2024-05-10T10:00:00Z");
	/* the last second of a day, and midnight itself */
	rt_utc_day(INT64_C(1715385599999), day, &left);
	CU_ASSERT_STRING_EQUAL(day, "2024-05-10");
	CU_ASSERT_EQUAL(left, 1);
	rt_utc_day(INT64_C(1715385600000), day, &left);
	CU_ASSERT_STRING_EQUAL(day, "2024-05-11");
	CU_ASSERT_EQUAL(left, 86400);
}

static void test_upstream_unreachable(void)
{
	json_t *out = NULL;
	char why[256];

	/* a port nobody listens on */
	CU_ASSERT_EQUAL(rt_psi_run("http://127.0.0.1:1/", "", "https://a.test/",
				   "mobile", 2000, &out, why, sizeof(why)),
			SEO_EUPSTREAM);
	CU_ASSERT_PTR_NULL(out);
	CU_ASSERT(why[0] != '\0');
}

/* ---- the state in PostgreSQL ------------------------------------------------ */

static char admin_url[1024], migrations[4096];
static test_pgdb pgdb; /* our database on SEO_TEST_PG_URL */
static seo_pg_pool *db;

static int db_suite_init(void)
{
	if (test_pgdb_create(&pgdb, admin_url, "rt_psi_test") != 0)
		return -1;
	return rt_db_pool_new(pgdb.url, migrations, 4, &db) == 0 ? 0 : -1;
}

static int db_suite_clean(void)
{
	seo_pg_pool_free(db);
	return test_pgdb_drop(&pgdb);
}

static long long query_int(PGconn *pg, const char *sql)
{
	PGresult *r = PQexec(pg, sql);
	long long v = -1;

	if (PQresultStatus(r) == PGRES_TUPLES_OK && PQntuples(r) == 1)
		v = strtoll(PQgetvalue(r, 0, 0), NULL, 10);
	PQclear(r);
	return v;
}

static void test_migrations(void)
{
	seo_pg_conn *c = NULL, *again = NULL;
	PGconn *pg;
	char err[256];
	int applied = -1;

	/* the first connection applies them */
	CU_ASSERT_EQUAL_FATAL(rt_db_get(db, &c), 0);
	pg = c->pg;
	CU_ASSERT_EQUAL(query_int(pg, "SELECT count(*) FROM schema_migrations "
				  "WHERE version = 'rt_001_page_performance'"), 1);
	CU_ASSERT_EQUAL(query_int(pg, "SELECT count(*) FROM rt_psi_cache"), 0);
	/* again: nothing left to apply; svc-account's files are not ours */
	CU_ASSERT_EQUAL(seo_pg_migrate(pg, &rt_migrations, migrations, &applied,
				       err, sizeof(err)), 0);
	CU_ASSERT_EQUAL(applied, 0);
	CU_ASSERT_EQUAL(query_int(pg, "SELECT count(*) FROM schema_migrations "
				  "WHERE version NOT LIKE 'rt\\_%'"), 0);
	/* two lent at once are two connections */
	CU_ASSERT_EQUAL_FATAL(rt_db_get(db, &again), 0);
	CU_ASSERT_PTR_NOT_EQUAL(pg, again->pg);
	seo_pg_pool_put(db, again);
	seo_pg_pool_put(db, c);
}

static void test_unreachable_database(void)
{
	seo_pg_pool *down = NULL;
	seo_pg_conn *c = NULL;

	/* port 1: refused at once, and nothing lent */
	CU_ASSERT_EQUAL_FATAL(rt_db_pool_new("postgresql://seo@127.0.0.1:1/x",
					     migrations, 1, &down), 0);
	CU_ASSERT_EQUAL(rt_db_get(down, &c), SEO_EDB);
	CU_ASSERT_PTR_NULL(c);
	CU_ASSERT_EQUAL(rt_db_get(down, &c), SEO_EDB);
	seo_pg_pool_free(down);
	CU_ASSERT_EQUAL_FATAL(rt_db_pool_new(pgdb.url, NULL, 1, &down), 0);
	CU_ASSERT_EQUAL(rt_db_get(down, &c), SEO_ENOTFOUND);
	seo_pg_pool_free(down);
}

#define THREADS 8
#define TRIES 20

typedef struct counter_run {
	int (*count)(seo_pg_conn *c, int i);
	int counted, refused, failed;
} counter_run;

static int count_call(seo_pg_conn *c, int i)
{
	(void)i;
	return rt_db_count(c, &rt_db_user_calls, "2024-05-10", "usr_a", 50);
}

static int count_attempt(seo_pg_conn *c, int i)
{
	(void)i;
	return rt_db_count(c, &rt_db_attempts, "2024-05-10", NULL, 25);
}

static pthread_mutex_t run_mu = PTHREAD_MUTEX_INITIALIZER;

static void *counter_thread(void *arg)
{
	counter_run *run = arg;

	for (int i = 0; i < TRIES; i++) {
		seo_pg_conn *c;
		int rc = rt_db_get(db, &c);

		if (rc == 0) {
			rc = run->count(c, i);
			seo_pg_pool_put(db, c);
		}
		pthread_mutex_lock(&run_mu);
		if (rc == 0)
			run->counted++;
		else if (rc == SEO_EDENIED)
			run->refused++;
		else
			run->failed++;
		pthread_mutex_unlock(&run_mu);
	}
	return NULL;
}

static void race(counter_run *run)
{
	pthread_t t[THREADS];

	for (int i = 0; i < THREADS; i++)
		CU_ASSERT_EQUAL_FATAL(pthread_create(&t[i], NULL, counter_thread, run), 0);
	for (int i = 0; i < THREADS; i++)
		pthread_join(t[i], NULL);
}

static void test_counters(void)
{
	counter_run calls = {count_call, 0, 0, 0}, attempts = {count_attempt, 0, 0, 0};
	seo_pg_conn *c;
	PGconn *pg;

	/* 160 tries by 8 threads on 4 connections: exactly the cap passes */
	race(&calls);
	CU_ASSERT_EQUAL(calls.counted, 50);
	CU_ASSERT_EQUAL(calls.refused, THREADS * TRIES - 50);
	CU_ASSERT_EQUAL(calls.failed, 0);
	race(&attempts);
	CU_ASSERT_EQUAL(attempts.counted, 25);
	CU_ASSERT_EQUAL(attempts.failed, 0);

	CU_ASSERT_EQUAL_FATAL(rt_db_get(db, &c), 0);
	pg = c->pg;
	CU_ASSERT_EQUAL(query_int(pg, "SELECT calls FROM rt_psi_user_calls "
				  "WHERE user_id = 'usr_a'"), 50);
	/* another person, another day: counted apart */
	CU_ASSERT_EQUAL(rt_db_count(c, &rt_db_user_calls, "2024-05-10", "usr_b", 50), 0);
	CU_ASSERT_EQUAL(rt_db_count(c, &rt_db_user_calls, "2024-05-11", "usr_a", 50), 0);
	/* a call taken back makes room for one more, never below zero */
	CU_ASSERT_EQUAL(rt_db_uncount(c, &rt_db_user_calls, "2024-05-10", "usr_a"), 0);
	CU_ASSERT_EQUAL(rt_db_count(c, &rt_db_user_calls, "2024-05-10", "usr_a", 50), 0);
	CU_ASSERT_EQUAL(rt_db_count(c, &rt_db_user_calls, "2024-05-10", "usr_a", 50),
			SEO_EDENIED);
	CU_ASSERT_EQUAL(rt_db_uncount(c, &rt_db_user_calls, "2024-05-09", "usr_z"), 0);
	CU_ASSERT_EQUAL(query_int(pg, "SELECT count(*) FROM rt_psi_user_calls "
				  "WHERE calls < 0"), 0);
	/* a malformed day is a database error, not a count */
	CU_ASSERT_EQUAL(rt_db_count(c, &rt_db_user_calls, "not a day", "usr_a", 50),
			SEO_EDB);
	seo_pg_pool_put(db, c);
}

static void test_cache(void)
{
	seo_pg_conn *pg;
	char *text = NULL;
	int64_t at = 0;
	const int64_t day = INT64_C(86400000), t0 = INT64_C(1715335200000);

	CU_ASSERT_EQUAL_FATAL(rt_db_get(db, &pg), 0);
	CU_ASSERT_EQUAL(rt_db_psi_cache_get(pg, "https://a.test/", "mobile", 0,
					    &text, &at), SEO_ENOTFOUND);
	CU_ASSERT_EQUAL(rt_db_psi_cache_put(pg, "https://a.test/", "mobile",
					    "{\"v\": 1}", t0, t0 - day, &text, &at), 0);
	CU_ASSERT_PTR_NOT_NULL_FATAL(text);
	CU_ASSERT_STRING_EQUAL(text, "{\"v\": 1}");
	CU_ASSERT_EQUAL(at, t0);
	free(text);
	/* a second writer within the day keeps the first result */
	CU_ASSERT_EQUAL(rt_db_psi_cache_put(pg, "https://a.test/", "mobile",
					    "{\"v\": 2}", t0 + 5000, t0 + 5000 - day,
					    &text, &at), 0);
	CU_ASSERT_STRING_EQUAL(text, "{\"v\": 1}");
	CU_ASSERT_EQUAL(at, t0);
	free(text);
	/* the other strategy and another spelling of the URL are apart */
	CU_ASSERT_EQUAL(rt_db_psi_cache_get(pg, "https://a.test/", "desktop",
					    t0 - day, &text, &at), SEO_ENOTFOUND);
	CU_ASSERT_EQUAL(rt_db_psi_cache_get(pg, "https://a.test", "mobile",
					    t0 - day, &text, &at), SEO_ENOTFOUND);
	/* fresh until 24 h, then replaced */
	CU_ASSERT_EQUAL(rt_db_psi_cache_get(pg, "https://a.test/", "mobile",
					    t0 + day - 1 - day, &text, &at), 0);
	free(text);
	CU_ASSERT_EQUAL(rt_db_psi_cache_get(pg, "https://a.test/", "mobile",
					    t0 + day - day, &text, &at), SEO_ENOTFOUND);
	CU_ASSERT_EQUAL(rt_db_psi_cache_put(pg, "https://a.test/", "mobile",
					    "{\"v\": 3}", t0 + day, t0, &text, &at), 0);
	CU_ASSERT_STRING_EQUAL(text, "{\"v\": 3}");
	CU_ASSERT_EQUAL(at, t0 + day);
	free(text);
	/* not JSON: refused by the column */
	CU_ASSERT_EQUAL(rt_db_psi_cache_put(pg, "https://b.test/", "mobile",
					    "not json", t0, t0 - day, &text, &at),
			SEO_EDB);
	CU_ASSERT_PTR_NULL(text);
	seo_pg_pool_put(db, pg);
}

int main(void)
{
	const char *url = getenv("SEO_TEST_PG_URL");
	const char *src = getenv("SEO_SOURCE_DIR");
	CU_pSuite s;
	unsigned failed;

	if (CU_initialize_registry() != CUE_SUCCESS)
		return 1;
	s = CU_add_suite("rt_psi", NULL, NULL);
	CU_add_test(s, "a full answer", test_full);
	CU_add_test(s, "missing categories", test_missing_categories);
	CU_add_test(s, "missing audits", test_missing_audits);
	CU_add_test(s, "no field data", test_no_field_data);
	CU_add_test(s, "garbage", test_garbage);
	CU_add_test(s, "strategies, days, timestamps", test_strategy_and_days);
	CU_add_test(s, "upstream unreachable", test_upstream_unreachable);
	if (url != NULL && url[0] != '\0') {
		snprintf(admin_url, sizeof(admin_url), "%s", url);
		if (src != NULL)
			snprintf(migrations, sizeof(migrations),
				 "%s/svc-realtime/migrations", src);
		else if (seo_pg_migrations_dir(&rt_migrations, migrations,
					       sizeof(migrations)) != 0)
			return 1;
		s = CU_add_suite("rt_psi_db", db_suite_init, db_suite_clean);
		CU_add_test(s, "migrations", test_migrations);
		CU_add_test(s, "an unreachable database", test_unreachable_database);
		CU_add_test(s, "daily counters under concurrency", test_counters);
		CU_add_test(s, "the shared cache", test_cache);
	} else {
		printf("test_rt_psi: SEO_TEST_PG_URL is not set, database tests skipped\n");
	}
	CU_basic_set_mode(CU_BRM_NORMAL);
	CU_basic_run_tests();
	failed = CU_get_number_of_failures() + CU_get_number_of_suites_failed();
	CU_cleanup_registry();
	return failed ? 1 : 0;
}

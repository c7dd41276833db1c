/*
 * test_acct_usage_rows: a leased call's usage row (migrations 007 and 008,
 * docs/decisions.md "Credit leases") against PostgreSQL: 007 and 008
 * applied to a database at 006 holding rows; a per-call debit retried
 * under its request id debited once, never taken for a leased row; a
 * leased row listed and claimable; the statements reading usage served by
 * its indexes (the ledger writer's session scans no table). Batches
 * (008) at scale: test_acct_usage_batches.
 * Without SEO_TEST_PG_URL it prints a skip line and passes.
 */
#include <CUnit/Basic.h>

#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <libpq-fe.h>

#include "acct_int.h"
#include "seo/util.h"
#include "test_pgdb.h"
#include "usage_claim.h"

typedef Seo__Account__V1__LeaseRequest LeaseRequest;
typedef Seo__Account__V1__LeaseCall LeaseCall;

/* The migrations before 007. */
static const char *const before[] = {
	"001_accounts.sql", "002_outcomes.sql", "003_usage_attribution.sql",
	"004_leases.sql", "005_lease_streams.sql", "006_usage_unreferenced.sql"};
#define N_BEFORE (sizeof(before) / sizeof(before[0]))

static test_pgdb pgdb;
static char migrations[PATH_MAX];
static char old_dir[64];
static PGconn *db;
static acct_service *svc;
static acct_new_user first; /* its rows were written at 006 */

/* The first value of `sql` (parameters: up to 2 strings, NULL-ended) as
 * text in `out` (n bytes), "" without a row. 0, or -1 when it failed. */
static int q_text(char *out, size_t n, const char *sql, ...)
{
	const char *params[2];
	int np = 0, rc = 0;
	va_list ap;
	PGresult *r;

	va_start(ap, sql);
	while (np < 2 && (params[np] = va_arg(ap, const char *)) != NULL)
		np++;
	va_end(ap);
	r = PQexecParams(db, sql, np, NULL, params, NULL, NULL, 0);
	out[0] = '\0';
	if (PQresultStatus(r) != PGRES_TUPLES_OK &&
	    PQresultStatus(r) != PGRES_COMMAND_OK)
		rc = -1;
	else if (PQntuples(r) > 0 && !PQgetisnull(r, 0, 0))
		snprintf(out, n, "%s", PQgetvalue(r, 0, 0));
	PQclear(r);
	return rc;
}

/* The first value of `sql` ($1 `p1`) as an integer; -1 when it failed
 * or gave nothing. */
static long long q_int(const char *sql, const char *p1)
{
	char v[32];

	return q_text(v, sizeof(v), sql, p1, NULL) == 0 && v[0] != '\0'
		       ? atoll(v) : -1;
}

static long long balance(const char *ws)
{
	return q_int("SELECT balance FROM workspaces WHERE id = $1", ws);
}

/* A usage row of `first` as the writers before 007 made them: `request`
 * NULL or an id, `settle` "NULL" or a time, `outcome` "NULL" or a quoted
 * word. 0, or -1 when refused. */
static int put_row(const char *id, const char *request, const char *settle,
		   const char *outcome)
{
	const char *params[2] = {first.workspace_id, request};
	char q[512];
	PGresult *r;
	int ok;

	snprintf(q, sizeof(q),
		 "INSERT INTO usage (id, workspace_id, endpoint, charged, "
		 "credits_used, request_id, settle_by, outcome, created_at) "
		 "VALUES ('%s', $1, 'backlinks', 2, 2, $2, %s, %s, 1000)",
		 id, settle, outcome);
	r = PQexecParams(db, q, 2, NULL, params, NULL, NULL, 0);
	ok = PQresultStatus(r) == PGRES_COMMAND_OK;
	PQclear(r);
	return ok ? 0 : -1;
}

/* A new directory (old_dir) linking the migrations before 007. */
static int migrations_before(void)
{
	char from[PATH_MAX * 2], to[PATH_MAX * 2];

	snprintf(old_dir, sizeof(old_dir), "/tmp/test_acct_usage_rows_XXXXXX");
	if (mkdtemp(old_dir) == NULL)
		return -1;
	for (size_t i = 0; i < N_BEFORE; i++) {
		snprintf(from, sizeof(from), "%s/%s", migrations, before[i]);
		snprintf(to, sizeof(to), "%s/%s", old_dir, before[i]);
		if (symlink(from, to) != 0)
			return -1;
	}
	return 0;
}

static void migrations_before_free(void)
{
	char path[PATH_MAX];

	for (size_t i = 0; i < N_BEFORE && old_dir[0] != '\0'; i++) {
		snprintf(path, sizeof(path), "%s/%s", old_dir, before[i]);
		unlink(path);
	}
	if (old_dir[0] != '\0')
		rmdir(old_dir);
}

/* ---- tests ------------------------------------------------------------ */

/* 006 with rows of every kind, then 007 to 010: the rows kept
 * (and shown by usage_all), the request index holding per-call debits
 * only, the listing's index ascending. */
static void test_migrate_from_006(void)
{
	acct_options opt;
	acct_err err;
	char def[512];
	int applied = -1;

	CU_ASSERT_EQUAL_FATAL(put_row("chg_percall", "rows-pc", "5000", "NULL"), 0);
	CU_ASSERT_EQUAL_FATAL(put_row("chg_leased", "rows-ls", "NULL", "'earned'"), 0);
	CU_ASSERT_EQUAL_FATAL(put_row("chg_old", NULL, "NULL", "NULL"), 0);
	CU_ASSERT_EQUAL_FATAL(acct_migrate(db, migrations, &applied, &err), 0);
	CU_ASSERT_EQUAL(applied, 4);
	CU_ASSERT_EQUAL(q_int("SELECT count(*) FROM usage WHERE workspace_id = $1",
			      first.workspace_id), 3);
	CU_ASSERT_EQUAL(q_int("SELECT count(*) FROM usage_all WHERE workspace_id = $1",
			      first.workspace_id), 3);
	CU_ASSERT_EQUAL(q_text(def, sizeof(def), "SELECT indexdef FROM pg_indexes "
			       "WHERE indexname = 'usage_request'", NULL), 0);
	CU_ASSERT_PTR_NOT_NULL(strstr(def, "UNIQUE INDEX usage_request ON public.usage "
				      "USING btree (request_id) WHERE ((request_id IS "
				      "NOT NULL) AND (settle_by IS NOT NULL))"));
	CU_ASSERT_EQUAL(q_text(def, sizeof(def), "SELECT indexdef FROM pg_indexes "
			       "WHERE indexname = 'usage_workspace'", NULL), 0);
	CU_ASSERT_PTR_NOT_NULL(strstr(def, "(workspace_id, created_at, id) "
				      "WITH (deduplicate_items=off)"));
	/* A per-call debit's request id stays unique; a leased row's is
	 * outside the index. */
	CU_ASSERT_EQUAL(put_row("chg_percall2", "rows-pc", "6000", "NULL"), -1);
	CU_ASSERT_EQUAL(put_row("chg_leased2", "rows-ls", "NULL", "'earned'"), 0);
	CU_ASSERT_EQUAL(put_row("chg_leased3", "rows-pc", "NULL", "'earned'"), 0);

	acct_options_init(&opt);
	opt.pg_url = pgdb.url;
	opt.rate_per_min = 0;
	CU_ASSERT_FATAL(acct_new(&opt, &svc, &err) == 0);
}

/* Authorize with a cost under `request`: 0 or an error. */
static int debit(const acct_new_user *w, int64_t cost, const char *request,
		 acct_authorization *out, acct_err *err)
{
	char hash[ACCT_HASH_LEN];
	acct_authorize_req req = {
		.key_hash = hash,
		.endpoint = "backlinks",
		.cost = cost,
		.call = {request, 60000, 0},
	};

	seo_sha256_hex(w->api_key, strlen(w->api_key), hash);
	return acct_authorize(svc, &req, out, err);
}

/* A per-call debit retried under its request id applies once, and a
 * leased row of the same request id is not taken for its first try. */
static void test_debit_retried_once(void)
{
	acct_authorization a, again;
	acct_err err;
	long long was = balance(first.workspace_id);

	CU_ASSERT_FATAL(svc != NULL);
	CU_ASSERT_EQUAL_FATAL(debit(&first, 3, "rows-ls", &a, &err), 0);
	CU_ASSERT_STRING_NOT_EQUAL(a.charge_id, "chg_leased");
	CU_ASSERT_EQUAL(balance(first.workspace_id), was - 3);
	CU_ASSERT_EQUAL_FATAL(debit(&first, 3, "rows-ls", &again, &err), 0);
	CU_ASSERT_STRING_EQUAL(again.charge_id, a.charge_id);
	CU_ASSERT_EQUAL(balance(first.workspace_id), was - 3);
	/* The row of 006's per-call debit answers its retry too. */
	CU_ASSERT_EQUAL_FATAL(debit(&first, 2, "rows-pc", &again, &err), 0);
	CU_ASSERT_STRING_EQUAL(again.charge_id, "chg_percall");
	CU_ASSERT_EQUAL(balance(first.workspace_id), was - 3);
	CU_ASSERT_EQUAL(q_int("SELECT count(*) FROM usage WHERE request_id = $1 "
			      "AND settle_by IS NOT NULL", "rows-ls"), 1);
}

/* One Lease report of `n` calls of key `key` (first numbered 1), `want`
 * credits wanted. */
static int report(const char *ws, LeaseCall **calls, size_t n, int64_t want,
		  acct__lease_out *out, acct_err *err)
{
	LeaseRequest req = SEO__ACCOUNT__V1__LEASE_REQUEST__INIT;

	req.holder = "gw-rows";
	req.workspace_id = (char *)ws;
	req.calls = calls;
	req.n_calls = n;
	req.want = want;
	req.stream = "rows";
	req.first_seq = 1;
	return acct__lease(svc, &req, out, err);
}

/* Leased calls' rows are listed (newest first) and claimed by their key
 * as any other. */
static void test_leased_rows_listed_and_claimed(void)
{
	acct_new_user w;
	LeaseCall c[2], *cp[2] = {&c[0], &c[1]};
	Seo__Account__V1__ListUsageResponse *list;
	seo_arena *arena = seo_arena_new(0);
	char hash[ACCT_HASH_LEN];
	acct__lease_out o;
	acct_caller who;
	int64_t credits = -1, calls = -1;
	acct_err err;

	CU_ASSERT_FATAL(svc != NULL && arena != NULL);
	CU_ASSERT_FATAL(acct_workspace_create(db, "Rows", "rows@example.com",
					      100000, &w, &err) == 0);
	seo_sha256_hex(w.api_key, strlen(w.api_key), hash);
	who = (acct_caller){w.workspace_id, w.user_id, hash, ACCT_ROLE_OWNER};
	CU_ASSERT_EQUAL_FATAL(report(w.workspace_id, NULL, 0, 1000, &o, &err), 0);
	for (int i = 0; i < 2; i++) {
		seo__account__v1__lease_call__init(&c[i]);
		c[i].request_id = i == 0 ? "rows-l-1" : "rows-l-2";
		c[i].user_id = w.user_id;
		c[i].key_id = hash;
		c[i].endpoint = i == 0 ? "domain-rank" : "backlinks";
		c[i].domain = "example.com";
		c[i].charged = 2;
		c[i].credits_used = i == 0 ? 2 : 1;
		c[i].created_at = 2000 + i;
	}
	CU_ASSERT_EQUAL_FATAL(report(w.workspace_id, cp, 2, 0, &o, &err), 0);
	CU_ASSERT_EQUAL(o.used, 3);
	CU_ASSERT_EQUAL_FATAL(acct_list_usage(svc, &who, NULL, arena, &list, &err), 0);
	CU_ASSERT_EQUAL(list->total, 2);
	CU_ASSERT_EQUAL_FATAL(list->n_usage, 2);
	CU_ASSERT_STRING_EQUAL(list->usage[0]->endpoint, "backlinks");
	CU_ASSERT_EQUAL(list->usage[0]->credits_used, 1);
	CU_ASSERT_STRING_EQUAL(list->usage[1]->endpoint, "domain-rank");
	CU_ASSERT_EQUAL(acct_usage_claim(db, w.workspace_id, hash, "act_rows", 0,
					 &credits, &calls, &err), 0);
	CU_ASSERT_EQUAL(calls, 2);
	CU_ASSERT_EQUAL(credits, 3);
	CU_ASSERT_EQUAL(acct_usage_claim(db, w.workspace_id, hash, "act_again", 0,
					 &credits, &calls, &err), 0);
	CU_ASSERT_EQUAL(calls, 0);
	seo_arena_free(arena);
}

/* A report's calls of one key make one batch, its id from a draw of
 * randomness for many (lease.c, acct__new_time_ids()) beginning with the
 * time; usage_all shows each call as a row of its own id, in the order
 * reported. */
static void test_report_one_batch(void)
{
	enum { N = 150 };
	static LeaseCall c[N];
	static LeaseCall *cp[N];
	static char req[N][24];
	acct_new_user w;
	acct__lease_out o;
	acct_err err;

	CU_ASSERT_FATAL(svc != NULL);
	CU_ASSERT_FATAL(acct_workspace_create(db, "Ids", "ids@example.com",
					      100000, &w, &err) == 0);
	CU_ASSERT_EQUAL_FATAL(report(w.workspace_id, NULL, 0, 1000, &o, &err), 0);
	for (int i = 0; i < N; i++) {
		seo__account__v1__lease_call__init(&c[i]);
		snprintf(req[i], sizeof(req[i]), "rows-id-%03d", i);
		c[i].request_id = req[i];
		c[i].endpoint = "backlinks";
		c[i].charged = 1;
		c[i].credits_used = 1;
		cp[i] = &c[i];
	}
	CU_ASSERT_EQUAL_FATAL(report(w.workspace_id, cp, N, 0, &o, &err), 0);
	CU_ASSERT_EQUAL(q_int("SELECT count(*) FROM usage_batches WHERE workspace_id = $1 "
			      "AND id ~ '^ubt_[0-9a-f]{11}[A-Za-z0-9_-]{9}$' "
			      "AND n_calls = 150 AND credits_used = 150",
			      w.workspace_id), 1);
	CU_ASSERT_EQUAL(q_int("SELECT count(DISTINCT id) FROM usage_all "
			      "WHERE workspace_id = $1", w.workspace_id), N);
	/* In the order reported: ids and request ids sort alike. */
	CU_ASSERT_EQUAL(q_int("SELECT count(*) FROM (SELECT request_id, row_number() "
			      "OVER (ORDER BY id) AS a, row_number() OVER "
			      "(ORDER BY request_id) AS b FROM usage_all "
			      "WHERE workspace_id = $1) t WHERE a = b", w.workspace_id), N);
}

/* The plan of statement `q` of the library's table, executed with
 * `args` (literals, as EXECUTE's list), in `out` (n bytes), its lines
 * joined. */
static void plan_of(acct__q q, const char *args, char *out, size_t n)
{
	const seo_pg_stmt *s = &acct__stmts.rows[q];
	char explain[256];
	PGresult *r = PQprepare(db, s->name, s->sql, 0, NULL);
	size_t len = 0;

	CU_ASSERT_FATAL(PQresultStatus(r) == PGRES_COMMAND_OK);
	PQclear(r);
	snprintf(explain, sizeof(explain), "EXPLAIN EXECUTE %s(%s)", s->name, args);
	r = PQexec(db, explain);
	CU_ASSERT_FATAL(PQresultStatus(r) == PGRES_TUPLES_OK);
	out[0] = '\0';
	for (int i = 0; i < PQntuples(r) && len < n; i++)
		len += (size_t)snprintf(out + len, n - len, "%s\n",
					PQgetvalue(r, i, 0));
	PQclear(r);
}

/* Each reads its rows through an index, in the index's order: nothing
 * scanned, even when the planner may not. The page sorts only what it
 * merges: at most limit + offset per-call rows and the batches that may
 * hold one of the calls asked for. */
static void test_statements_use_the_indexes(void)
{
	char page[128], count[64], plan[4096], v[8];

	snprintf(page, sizeof(page), "'%s', 50, 0", first.workspace_id);
	snprintf(count, sizeof(count), "'%s'", first.workspace_id);
	CU_ASSERT_EQUAL_FATAL(q_text(v, sizeof(v), "SET enable_seqscan = off", NULL), 0);
	CU_ASSERT_EQUAL_FATAL(q_text(v, sizeof(v), "SET enable_bitmapscan = off", NULL), 0);
	CU_ASSERT_EQUAL_FATAL(q_text(v, sizeof(v), "SET enable_sort = off", NULL), 0);
	plan_of(ACCT_Q_LEDGER_BY_REQUEST, "'{rows-pc,rows-ls}'", plan, sizeof(plan));
	CU_ASSERT_PTR_NOT_NULL(strstr(plan, "Index Scan using usage_request on usage"));
	plan_of(ACCT_Q_USAGE_PAGE, page, plan, sizeof(plan));
	CU_ASSERT_PTR_NOT_NULL(strstr(plan, "Index Scan Backward using usage_workspace"));
	CU_ASSERT_PTR_NOT_NULL(strstr(plan, "Index Scan Backward using usage_batches_workspace"));
	CU_ASSERT_PTR_NOT_NULL(strstr(plan, "using usage_batches_workspace on usage_batches b"));
	CU_ASSERT_PTR_NULL(strstr(plan, "Seq Scan"));
	plan_of(ACCT_Q_USAGE_COUNT, count, plan, sizeof(plan));
	CU_ASSERT_PTR_NOT_NULL(strstr(plan, "using usage_workspace"));
	CU_ASSERT_PTR_NOT_NULL(strstr(plan, "using usage_batches_workspace"));
	CU_ASSERT_PTR_NULL(strstr(plan, "Seq Scan"));
}

int main(void)
{
	const char *url = getenv("SEO_TEST_PG_URL");
	const char *src = getenv("SEO_SOURCE_DIR");
	acct_err err;
	CU_pSuite s;
	unsigned failures;
	int applied = -1;

	if (url == NULL || url[0] == '\0') {
		printf("test_acct_usage_rows: SEO_TEST_PG_URL is not set, skipped\n");
		return 0;
	}
	if (src != NULL)
		snprintf(migrations, sizeof(migrations), "%s/svc-account/migrations", src);
	else if (acct_migrations_dir(migrations, sizeof(migrations)) != 0)
		return 1;
	if (test_pgdb_create(&pgdb, url, "acct_usage_rows") != 0)
		return 1;
	db = PQconnectdb(pgdb.url);
	if (PQstatus(db) != CONNECTION_OK || migrations_before() != 0 ||
	    acct_migrate(db, old_dir, &applied, &err) != 0 ||
	    applied != (int)N_BEFORE ||
	    acct_workspace_create(db, "Old", "old@example.com", 100000, &first,
				  &err) != 0) {
		fprintf(stderr, "setup at 006: %s %s\n", PQerrorMessage(db),
			err.message);
		migrations_before_free();
		return 1;
	}
	migrations_before_free();
	if (CU_initialize_registry() != CUE_SUCCESS)
		return 1;
	s = CU_add_suite("usage_rows", NULL, NULL);
	CU_add_test(s, "007 applied to a database at 006 with rows",
		    test_migrate_from_006);
	CU_add_test(s, "a per-call debit retried applies once",
		    test_debit_retried_once);
	CU_add_test(s, "leased rows listed and claimed",
		    test_leased_rows_listed_and_claimed);
	CU_add_test(s, "a report's calls of one key, one batch",
		    test_report_one_batch);
	CU_add_test(s, "the statements read usage by its indexes",
		    test_statements_use_the_indexes);
	CU_basic_set_mode(CU_BRM_VERBOSE);
	CU_basic_run_tests();
	failures = CU_get_number_of_failures() + CU_get_number_of_suites_failed();
	CU_cleanup_registry();
	acct_free(svc);
	PQfinish(db);
	test_pgdb_drop(&pgdb);
	return failures == 0 ? 0 : 1;
}

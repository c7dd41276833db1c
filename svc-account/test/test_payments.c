/*
 * test_payments.c: checkout pricing and the provider request (against
 * tests/fakes/fake_payments.py), webhook signatures and exactly-once
 * crediting under replay and concurrency, and the mail outbox through
 * tests/fakes/fake_smtp.py.
 *
 * Needs PostgreSQL: SEO_TEST_PG_URL (skipped when unset). Runs in its own
 * database pay_test_<pid>, dropped at exit.
 */
#include "acct.h"
#include "seo/mail.h"
#include "payments.h"

#include "seo/errors.h"
#include "seo/log.h"
#include "seo/provider.h"
#include "seo/util.h"
#include "test_config.h"

#include <CUnit/Basic.h>
#include <curl/curl.h>
#include <dirent.h>
#include <jansson.h>
#include <limits.h>
#include <openssl/evp.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#define PAY_KEY "sk_test_unit"
#define WEBHOOK_SECRET "whsec_unit_test"
#define MAIL_FROM "billing@seo.test"
#define WS "ws_paytest"
#define USER "usr_paytest"

typedef struct fake {
	pid_t pid;
	int port;
	char dir[64]; /* fake_smtp's message directory */
} fake;

static char dbname[64];
static PGconn *admin, *db;
static char *conninfo; /* of the test database */
static seo_pg_pool *pool; /* on conninfo, for checkouts */
static fake pay = {.pid = -1}, smtp_ok = {.pid = -1},
	    smtp_flaky = {.pid = -1}, smtp_refuse = {.pid = -1};
static char pay_url[64], smtp_ok_url[64], smtp_flaky_url[64],
	smtp_refuse_url[64];

/* ---- helpers ------------------------------------------------------------ */

/* Starts tests/fakes/<script> with `args` (NULL-terminated) and reads the
 * port it prints on its first line. */
static int fake_start(fake *f, const char *script, const char *const *args)
{
	const char *src = getenv("SEO_SOURCE_DIR");
	char path[4096], line[32];
	const char *argv[16];
	int fds[2], n = 0;
	FILE *in;

	snprintf(path, sizeof(path), "%s/tests/fakes/%s", src ? src : ".", script);
	argv[n++] = "python3";
	argv[n++] = path;
	while (*args != NULL && n < 15)
		argv[n++] = *args++;
	argv[n] = NULL;
	if (pipe(fds) != 0)
		return -1;
	f->pid = fork();
	if (f->pid == 0) {
		dup2(fds[1], 1);
		close(fds[0]);
		close(fds[1]);
		execv("/usr/bin/python3", (char *const *)argv);
		_exit(127);
	}
	close(fds[1]);
	in = fdopen(fds[0], "r");
	if (in == NULL || fgets(line, sizeof(line), in) == NULL) {
		if (in != NULL)
			fclose(in);
		return -1;
	}
	fclose(in);
	f->port = atoi(line);
	return f->port > 0 ? 0 : -1;
}

static void fake_stop(fake *f)
{
	if (f->pid > 0) {
		kill(f->pid, SIGTERM);
		waitpid(f->pid, NULL, 0);
		f->pid = -1;
	}
}

static int smtp_start(fake *f, const char *fail_first, const char *code,
		      char *url, size_t urlsz)
{
	const char *args[] = {"--dir", f->dir, "--fail-first", fail_first,
			      "--fail-code", code, NULL};

	snprintf(f->dir, sizeof(f->dir), "/tmp/pay_test_mail_XXXXXX");
	if (mkdtemp(f->dir) == NULL || fake_start(f, "fake_smtp.py", args) != 0)
		return -1;
	snprintf(url, urlsz, "smtp://127.0.0.1:%d", f->port);
	return 0;
}

static void dir_remove(const char *dir)
{
	char path[512];
	struct dirent *e;
	DIR *d = opendir(dir);

	if (d == NULL)
		return;
	while ((e = readdir(d)) != NULL) {
		if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0)
			continue;
		snprintf(path, sizeof(path), "%s/%s", dir, e->d_name);
		unlink(path);
	}
	closedir(d);
	rmdir(dir);
}

/* Runs `sql` with up to two text parameters; returns the result, which
 * the caller clears, or NULL after a failed assertion. */
static PGresult *sql(PGconn *c, const char *q, const char *p1, const char *p2)
{
	const char *params[2] = {p1, p2};
	int n = p2 != NULL ? 2 : p1 != NULL ? 1 : 0;
	PGresult *res = PQexecParams(c, q, n, NULL, params, NULL, NULL, 0);
	ExecStatusType st = PQresultStatus(res);

	if (st != PGRES_COMMAND_OK && st != PGRES_TUPLES_OK) {
		fprintf(stderr, "%s: %s", q, PQerrorMessage(c));
		CU_FAIL("sql failed");
		PQclear(res);
		return NULL;
	}
	return res;
}

static void sql_exec(const char *q, const char *p1, const char *p2)
{
	PQclear(sql(db, q, p1, p2));
}

/* The first cell as an integer; LLONG_MIN when absent or NULL. */
static long long sql_int(const char *q, const char *p1, const char *p2)
{
	PGresult *res = sql(db, q, p1, p2);
	long long v = LLONG_MIN;

	if (res != NULL && PQntuples(res) > 0 && !PQgetisnull(res, 0, 0))
		v = strtoll(PQgetvalue(res, 0, 0), NULL, 10);
	PQclear(res);
	return v;
}

static long long balance(void)
{
	return sql_int("SELECT balance FROM workspaces WHERE id = $1", WS, NULL);
}

/* GET or POST (empty body) on the payments fake, through the provider
 * client; its answer in *a. */
static void fake_call(const char *method, const char *path, seo_provider_answer *a)
{
	const seo_provider fake = {.name = "payments fake", .base_url = pay_url};
	const seo_provider_call call = {.method = method, .path = path};
	char why[128];

	CU_ASSERT_EQUAL(seo_provider_do(&fake, &call, a, why, sizeof(why)), 0);
}

static void fake_post(const char *path)
{
	seo_provider_answer a;

	fake_call("POST", path, &a);
	seo_provider_answer_free(&a);
}

static void fake_mode(const char *mode)
{
	char path[64];

	snprintf(path, sizeof(path), "/_control/fail?mode=%s", mode);
	fake_post(path);
}

/* The checkout requests the fake received. */
static json_t *fake_requests(void)
{
	seo_provider_answer a;
	json_t *j;

	fake_call("GET", "/_requests", &a);
	j = json_incref(a.json);
	seo_provider_answer_free(&a);
	CU_ASSERT_PTR_NOT_NULL(j);
	return j;
}

/* A `t=..,v1=..` header over "<t>.<payload>". */
static void sign(const char *payload, long long t, const char *secret,
		 char *out, size_t n)
{
	char hex[65], *msg;

	/* Also called from threads: no CUnit assertion here. */
	out[0] = '\0';
	if (asprintf(&msg, "%lld.%s", t, payload) < 0)
		return;
	seo_hmac_sha256_hex(secret, strlen(secret), msg, strlen(msg), hex);
	snprintf(out, n, "t=%lld,v1=%s", t, hex);
	free(msg);
}

/* An event as the provider sends it; malloc'd. */
static char *event(const char *id, const char *type, const char *session,
		   const char *status, const char *meta_credits)
{
	json_t *j = json_pack("{s:s, s:s, s:s, s:{s:{s:s, s:s, s:s, s:s, s:{s:s, s:s}}}}",
			      "id", id, "object", "event", "type", type, "data",
			      "object", "id", session, "object", "checkout.session",
			      "payment_status", status, "client_reference_id", WS,
			      "metadata", "workspace_id", WS, "credits", meta_credits);
	char *s = json_dumps(j, JSON_COMPACT);

	json_decref(j);
	return s;
}

/* Delivers a paid checkout.session.completed for `session`, signed now. */
static int deliver(PGconn *c, const char *event_id, const char *session,
		   const char **code)
{
	char *ev = event(event_id, "checkout.session.completed", session, "paid", "100");
	char hdr[128];
	int rc;

	sign(ev, seo_now_ms() / 1000, WEBHOOK_SECRET, hdr, sizeof(hdr));
	rc = acct_payment_webhook_apply(c, ev, strlen(ev), hdr, code, NULL, 0);
	free(ev);
	return rc;
}

static void open_payment(const char *session, const char *credits)
{
	sql_exec("INSERT INTO payments (id, workspace_id, user_id, credits,"
		 " amount_cents, status, created_at)"
		 " VALUES ($1, '" WS "', '" USER "', $2, $2, 'open', 0)",
		 session, credits);
}

static void assert_ledger_matches_balance(void)
{
	CU_ASSERT_EQUAL(sql_int("SELECT coalesce(sum(delta), 0) FROM ledger"
				" WHERE workspace_id = $1", WS, NULL),
			balance());
}

/* ---- checkout ----------------------------------------------------------- */

static void test_checkout_invalid_credits(void)
{
	static const long long bad[] = {99, 0, -1, -100, LLONG_MIN};
	long long payments = sql_int("SELECT count(*) FROM payments", NULL, NULL);
	const char *code;
	json_t *reqs;
	char *url;

	fake_post("/_reset");
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		url = (char *)"unset";
		code = NULL;
		CU_ASSERT_EQUAL(acct_checkout_create(pool, WS, USER, bad[i], &url, &code),
				SEO_EINVAL);
		CU_ASSERT_PTR_NULL(url);
		CU_ASSERT_STRING_EQUAL(code ? code : "", "invalid_credits");
	}
	reqs = fake_requests();
	CU_ASSERT_EQUAL(json_array_size(reqs), 0);
	json_decref(reqs);
	CU_ASSERT_EQUAL(sql_int("SELECT count(*) FROM payments", NULL, NULL), payments);
}

/* Checks out `credits` and returns the recorded amount in cents. */
static long long checkout_cents(long long credits)
{
	char prefix[96], scredits[24];
	const char *code = NULL;
	char *url = NULL;
	long long cents = -1;
	PGresult *res;

	if (acct_checkout_create(pool, WS, USER, credits, &url, &code) != 0) {
		CU_FAIL("checkout failed");
		return -1;
	}
	snprintf(prefix, sizeof(prefix), "%s/pay/cs_test_", pay_url);
	CU_ASSERT_EQUAL(strncmp(url, prefix, strlen(prefix)), 0);
	CU_ASSERT_PTR_NULL(code);
	res = sql(db, "SELECT credits, amount_cents, status, workspace_id, user_id,"
		  " completed_at FROM payments WHERE id = $1",
		  strstr(url, "/pay/") + 5, NULL);
	if (res != NULL && PQntuples(res) == 1) {
		snprintf(scredits, sizeof(scredits), "%lld", credits);
		CU_ASSERT_STRING_EQUAL(PQgetvalue(res, 0, 0), scredits);
		CU_ASSERT_STRING_EQUAL(PQgetvalue(res, 0, 2), "open");
		CU_ASSERT_STRING_EQUAL(PQgetvalue(res, 0, 3), WS);
		CU_ASSERT_STRING_EQUAL(PQgetvalue(res, 0, 4), USER);
		CU_ASSERT(PQgetisnull(res, 0, 5));
		cents = strtoll(PQgetvalue(res, 0, 1), NULL, 10);
	} else {
		CU_FAIL("payment not recorded");
	}
	PQclear(res);
	free(url);
	return cents;
}

static void test_checkout_tiers(void)
{
	/* Default tiers: 100 at $0.01, 1000 at $0.008, 10000 at $0.006,
	 * 100000 at $0.004. */
	static const long long cases[][2] = {
		{100, 100},      {101, 101},       {999, 999},
		{1000, 800},     {9999, 7999},     {10000, 6000},
		{10001, 6001},   {99999, 59999},   {100000, 40000},
		{123457, 49383},
	};

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		long long got = checkout_cents(cases[i][0]);

		if (got != cases[i][1])
			fprintf(stderr, "%lld credits: %lld cents, want %lld\n",
				cases[i][0], got, cases[i][1]);
		CU_ASSERT_EQUAL(got, cases[i][1]);
	}
	/* 500500 credits at $0.00001 is 500.5 cents: half a cent rounds up,
	 * exactly (a double would give 500.49999...). */
	sql_exec("INSERT INTO price_tiers VALUES (500000, 0.00001)", NULL, NULL);
	CU_ASSERT_EQUAL(checkout_cents(500500), 501);
	CU_ASSERT_EQUAL(checkout_cents(500499), 500);
	sql_exec("DELETE FROM price_tiers WHERE min_credits = 500000", NULL, NULL);
}

static const char *form_get(json_t *form, const char *name)
{
	const char *v = json_string_value(json_object_get(form, name));

	return v ? v : "(missing)";
}

static void test_checkout_request_fields(void)
{
	const char *code = NULL;
	json_t *reqs, *r, *form;
	char *url = NULL;

	fake_post("/_reset");
	CU_ASSERT_EQUAL_FATAL(acct_checkout_create(pool, WS, USER, 2500, &url, &code), 0);
	reqs = fake_requests();
	CU_ASSERT_EQUAL_FATAL(json_array_size(reqs), 1);
	r = json_array_get(reqs, 0);
	form = json_object_get(r, "form");
	CU_ASSERT_STRING_EQUAL(json_string_value(json_object_get(r, "path")),
			       "/v1/checkout/sessions");
	CU_ASSERT_STRING_EQUAL(json_string_value(json_object_get(r, "authorization")),
			       "Bearer " PAY_KEY);
	CU_ASSERT_STRING_EQUAL(json_string_value(json_object_get(r, "content_type")),
			       "application/x-www-form-urlencoded");
	CU_ASSERT_STRING_EQUAL(form_get(form, "mode"), "payment");
	CU_ASSERT_STRING_EQUAL(form_get(form, "client_reference_id"), WS);
	CU_ASSERT_STRING_EQUAL(form_get(form, "line_items[0][quantity]"), "1");
	CU_ASSERT_STRING_EQUAL(form_get(form, "line_items[0][price_data][currency]"), "usd");
	CU_ASSERT_STRING_EQUAL(form_get(form, "line_items[0][price_data][unit_amount]"), "2000");
	CU_ASSERT_STRING_EQUAL(form_get(form, "line_items[0][price_data][product_data][name]"),
			       "2500 credits");
	CU_ASSERT_STRING_EQUAL(form_get(form, "metadata[workspace_id]"), WS);
	CU_ASSERT_STRING_EQUAL(form_get(form, "metadata[credits]"), "2500");
	CU_ASSERT_EQUAL(strncmp(form_get(form, "success_url"), "http://", 7), 0);
	CU_ASSERT_EQUAL(strncmp(form_get(form, "cancel_url"), "http://", 7), 0);
	CU_ASSERT_EQUAL(json_object_size(form), 10);
	/* Brackets travel percent-encoded, as Stripe's own clients send them. */
	CU_ASSERT_PTR_NOT_NULL(strstr(json_string_value(json_object_get(r, "raw")),
				      "line_items%5B0%5D%5Bquantity%5D=1"));
	json_decref(reqs);
	free(url);
}

static void expect_checkout_failed(const char *what)
{
	const char *code = NULL;
	char *url = (char *)"unset";
	int rc = acct_checkout_create(pool, WS, USER, 1000, &url, &code);

	if (rc == 0)
		fprintf(stderr, "checkout succeeded despite: %s\n", what);
	CU_ASSERT(rc < 0);
	CU_ASSERT_PTR_NULL(url);
	CU_ASSERT_STRING_EQUAL(code ? code : "", "checkout_failed");
}

static void test_checkout_provider_failure(void)
{
	static const char *const modes[] = {"500", "nourl", "badjson"};
	long long payments = sql_int("SELECT count(*) FROM payments", NULL, NULL);
	int64_t t0;

	fake_post("/_reset");
	for (size_t i = 0; i < sizeof(modes) / sizeof(modes[0]); i++) {
		fake_mode(modes[i]);
		expect_checkout_failed(modes[i]);
	}
	fake_mode("none");

	seo_test_config_set("SEO_PAYMENTS_KEY", "sk_test_wrong");
	expect_checkout_failed("wrong key");
	seo_test_config_set("SEO_PAYMENTS_KEY", PAY_KEY);

	seo_test_config_set("SEO_PAYMENTS_API_URL", "http://127.0.0.1:1");
	expect_checkout_failed("unreachable");
	seo_test_config_set("SEO_PAYMENTS_API_URL", "");
	expect_checkout_failed("no provider configured");
	seo_test_config_set("SEO_PAYMENTS_API_URL", pay_url);

	/* A provider that never answers costs the 10 s timeout, no more. */
	fake_mode("hang");
	t0 = seo_mono_ms();
	expect_checkout_failed("hang");
	CU_ASSERT(seo_mono_ms() - t0 < 13000);
	fake_mode("none");

	CU_ASSERT_EQUAL(sql_int("SELECT count(*) FROM payments", NULL, NULL), payments);
	CU_ASSERT_EQUAL(sql_int("SELECT count(*) FROM payments WHERE status = 'completed'",
				NULL, NULL), 0);
}

/* ---- webhook ------------------------------------------------------------ */

static void expect_denied(const char *payload, const char *header, const char *what)
{
	const char *code = NULL;
	int rc = acct_payment_webhook_apply(db, payload, strlen(payload), header, &code, NULL, 0);

	if (rc != SEO_EDENIED)
		fprintf(stderr, "webhook accepted (%d) despite: %s\n", rc, what);
	CU_ASSERT_EQUAL(rc, SEO_EDENIED);
	CU_ASSERT_STRING_EQUAL(code ? code : "", "invalid_signature");
}

static void test_webhook_signature(void)
{
	long long now = seo_now_ms() / 1000, before = balance();
	char *ev, *tampered, hdr[128], two[320], good[128];
	const char *code = NULL;

	open_payment("cs_sig", "300");
	ev = event("evt_sig", "checkout.session.completed", "cs_sig", "paid", "300");

	seo_test_config_set("SEO_PAYMENTS_WEBHOOK_SECRET", NULL);
	sign(ev, now, WEBHOOK_SECRET, hdr, sizeof(hdr));
	expect_denied(ev, hdr, "no secret configured");
	seo_test_config_set("SEO_PAYMENTS_WEBHOOK_SECRET", WEBHOOK_SECRET);

	expect_denied(ev, NULL, "no header");
	expect_denied(ev, "", "empty header");
	expect_denied(ev, "garbage", "garbage header");
	snprintf(hdr, sizeof(hdr), "t=%lld", now);
	expect_denied(ev, hdr, "no v1");
	sign(ev, now, WEBHOOK_SECRET, hdr, sizeof(hdr));
	expect_denied(ev, strchr(hdr, ',') + 1, "no timestamp");
	sign(ev, now, "whsec_other", hdr, sizeof(hdr));
	expect_denied(ev, hdr, "other secret");
	/* The signature covers the exact bytes: one changed digit fails. */
	tampered = strdup(ev);
	*strstr(tampered, "300") = '9';
	sign(ev, now, WEBHOOK_SECRET, hdr, sizeof(hdr));
	expect_denied(tampered, hdr, "tampered payload");
	/* a minute past the 300 s tolerance: `now` was read before the checks
	 * above, which take seconds under the sanitizers */
	sign(ev, now - 360, WEBHOOK_SECRET, hdr, sizeof(hdr));
	expect_denied(ev, hdr, "stale timestamp");
	sign(ev, now + 360, WEBHOOK_SECRET, hdr, sizeof(hdr));
	expect_denied(ev, hdr, "future timestamp");
	/* The timestamp is signed too: a fresh t on an old signature fails. */
	sign(ev, now - 400, WEBHOOK_SECRET, hdr, sizeof(hdr));
	snprintf(two, sizeof(two), "t=%lld,%s", now, strchr(hdr, ',') + 1);
	expect_denied(ev, two, "replayed signature with a new timestamp");

	CU_ASSERT_EQUAL(balance(), before);
	CU_ASSERT_EQUAL(sql_int("SELECT count(*) FROM payments WHERE id = 'cs_sig'"
				" AND status = 'open'", NULL, NULL), 1);

	/* While the provider rolls its secret it sends two v1: either may
	 * match, at the edge of the tolerance. */
	sign(ev, now - 290, WEBHOOK_SECRET, good, sizeof(good));
	sign(ev, now - 290, "whsec_old", hdr, sizeof(hdr));
	snprintf(two, sizeof(two), "%s,v0=abc,%s", hdr, strchr(good, ',') + 1);
	CU_ASSERT_EQUAL(acct_payment_webhook_apply(db, ev, strlen(ev), two, &code, NULL, 0), 0);
	CU_ASSERT_PTR_NULL(code);
	CU_ASSERT_EQUAL(balance(), before + 300);
	CU_ASSERT_EQUAL(sql_int("SELECT completed_at FROM payments WHERE id = 'cs_sig'"
				" AND status = 'completed'", NULL, NULL) > 0, 1);
	assert_ledger_matches_balance();
	free(tampered);
	free(ev);
}

static void test_webhook_replay(void)
{
	long long before = balance();
	const char *code = NULL;

	open_payment("cs_replay", "700");
	CU_ASSERT_EQUAL(deliver(db, "evt_r1", "cs_replay", &code), 0);
	CU_ASSERT_EQUAL(balance(), before + 700);
	CU_ASSERT_EQUAL(deliver(db, "evt_r1", "cs_replay", &code), 0);
	CU_ASSERT_EQUAL(deliver(db, "evt_r2", "cs_replay", &code), 0);
	CU_ASSERT_EQUAL(deliver(db, "evt_r1", "cs_replay", &code), 0);
	CU_ASSERT_EQUAL(balance(), before + 700);
	CU_ASSERT_EQUAL(sql_int("SELECT count(*) FROM ledger WHERE ref = 'cs_replay'"
				" AND reason = 'purchase' AND delta = 700", NULL, NULL), 1);
	assert_ledger_matches_balance();
}

static void test_webhook_ignored(void)
{
	long long now = seo_now_ms() / 1000, before = balance();
	const char *code = NULL;
	char hdr[128], *ev;

	open_payment("cs_ignored", "100");
	/* Not a completion, not paid, not JSON, not ours: acknowledged and
	 * without effect. */
	ev = event("evt_i1", "checkout.session.expired", "cs_ignored", "unpaid", "100");
	sign(ev, now, WEBHOOK_SECRET, hdr, sizeof(hdr));
	CU_ASSERT_EQUAL(acct_payment_webhook_apply(db, ev, strlen(ev), hdr, &code, NULL, 0), 0);
	free(ev);
	ev = event("evt_i2", "checkout.session.completed", "cs_ignored", "unpaid", "100");
	sign(ev, now, WEBHOOK_SECRET, hdr, sizeof(hdr));
	CU_ASSERT_EQUAL(acct_payment_webhook_apply(db, ev, strlen(ev), hdr, &code, NULL, 0), 0);
	free(ev);
	sign("not json", now, WEBHOOK_SECRET, hdr, sizeof(hdr));
	CU_ASSERT_EQUAL(acct_payment_webhook_apply(db, "not json", 8, hdr, &code, NULL, 0), 0);
	CU_ASSERT_EQUAL(deliver(db, "evt_i3", "cs_unknown", &code), 0);
	CU_ASSERT_EQUAL(balance(), before);
	CU_ASSERT_EQUAL(sql_int("SELECT count(*) FROM payments WHERE id = 'cs_ignored'"
				" AND status = 'open'", NULL, NULL), 1);

	/* The metadata is the buyer's to fill: credits come from our row. */
	ev = event("evt_i4", "checkout.session.completed", "cs_ignored", "paid", "1000000");
	sign(ev, now, WEBHOOK_SECRET, hdr, sizeof(hdr));
	CU_ASSERT_EQUAL(acct_payment_webhook_apply(db, ev, strlen(ev), hdr, &code, NULL, 0), 0);
	free(ev);
	CU_ASSERT_EQUAL(balance(), before + 100);
	assert_ledger_matches_balance();
}

typedef struct racer {
	pthread_barrier_t *go;
	char event_id[32];
	char session[32];
	int rc;
} racer;

static void *race(void *arg)
{
	racer *r = arg;
	PGconn *c = PQconnectdb(conninfo);
	const char *code;

	pthread_barrier_wait(r->go);
	r->rc = PQstatus(c) == CONNECTION_OK ? deliver(c, r->event_id, r->session, &code)
					     : SEO_EDB;
	PQfinish(c);
	return NULL;
}

static void test_webhook_concurrent(void)
{
	enum { ROUNDS = 12 };
	long long before = balance(), added = 0;
	pthread_barrier_t go;
	pthread_t t[2];
	racer r[2];
	char credits[24];

	for (int i = 0; i < ROUNDS; i++) {
		pthread_barrier_init(&go, NULL, 2);
		for (int k = 0; k < 2; k++) {
			r[k].go = &go;
			snprintf(r[k].session, sizeof(r[k].session), "cs_race_%d", i);
			/* Even rounds: the same event twice; odd: two events. */
			snprintf(r[k].event_id, sizeof(r[k].event_id), "evt_race_%d_%d",
				 i, i % 2 ? k : 0);
		}
		snprintf(credits, sizeof(credits), "%d", 100 + i);
		open_payment(r[0].session, credits);
		added += 100 + i;
		for (int k = 0; k < 2; k++)
			pthread_create(&t[k], NULL, race, &r[k]);
		for (int k = 0; k < 2; k++) {
			pthread_join(t[k], NULL);
			CU_ASSERT_EQUAL(r[k].rc, 0);
		}
		pthread_barrier_destroy(&go);
	}
	CU_ASSERT_EQUAL(balance(), before + added);
	CU_ASSERT_EQUAL(sql_int("SELECT count(*) FROM ledger WHERE ref LIKE 'cs_race_%'",
				NULL, NULL), ROUNDS);
	CU_ASSERT_EQUAL(sql_int("SELECT count(*) FROM payments WHERE id LIKE 'cs_race_%'"
				" AND status = 'completed'", NULL, NULL), ROUNDS);
	assert_ledger_matches_balance();
}

/* A checkout followed by the provider's own signed delivery: the whole
 * purchase, end to end through both fakes' formats. */
static void test_purchase_end_to_end(void)
{
	long long before = balance();
	const char *code = NULL;
	char *url = NULL, *session;

	CU_ASSERT_EQUAL_FATAL(acct_checkout_create(pool, WS, USER, 1000, &url, &code), 0);
	session = strstr(url, "/pay/") + 5;
	CU_ASSERT_EQUAL(deliver(db, "evt_e2e", session, &code), 0);
	CU_ASSERT_EQUAL(balance(), before + 1000);
	CU_ASSERT_EQUAL(sql_int("SELECT count(*) FROM ledger WHERE ref = $1"
				" AND reason = 'purchase' AND delta = 1000", session, NULL), 1);
	assert_ledger_matches_balance();
	free(url);
}

/* ---- mail --------------------------------------------------------------- */

/* Message n (1-based) the fake SMTP server stored in `dir`. */
static json_t *stored_mail(const char *dir, int n)
{
	char path[256];

	snprintf(path, sizeof(path), "%s/%06d.json", dir, n);
	return json_load_file(path, 0, NULL);
}

static int stored_count(const char *dir)
{
	int n = 0;
	json_t *j;

	while ((j = stored_mail(dir, n + 1)) != NULL) {
		json_decref(j);
		n++;
	}
	return n;
}

/* Decodes the RFC 2047 encoded words of the Subject header; malloc'd. */
static char *decoded_subject(const char *data)
{
	const char *p = strstr(data, "\r\nSubject: "), *q;
	unsigned char buf[256];
	char *out = calloc(1, 1024);
	size_t len = 0;
	int n;

	if (p == NULL || out == NULL)
		return out;
	for (p += 11; strncmp(p, "=?UTF-8?B?", 10) == 0; p = q + 5) {
		q = strstr(p + 10, "?=");
		n = EVP_DecodeBlock(buf, (const unsigned char *)p + 10, (int)(q - p - 10));
		n -= (q[-1] == '=') + (q[-2] == '=');
		/* Each word must start on a character, not inside one. */
		CU_ASSERT(n > 0 && (buf[0] & 0xC0) != 0x80);
		memcpy(out + len, buf, (size_t)n);
		len += (size_t)n;
		if (strncmp(q + 2, "\r\n ", 3) != 0)
			break;
	}
	return out;
}

static void test_mail_enqueue(void)
{
	sql_exec("DELETE FROM outbox", NULL, NULL);
	CU_ASSERT_EQUAL(seo_mail_enqueue(db, &acct_outbox, WS, "", "s", "b"), SEO_EINVAL);
	CU_ASSERT_EQUAL(seo_mail_enqueue(db, &acct_outbox, WS, NULL, "s", "b"), SEO_EINVAL);
	CU_ASSERT_EQUAL(seo_mail_enqueue(db, &acct_outbox, WS, "a@b.test\r\nBcc: x@y.test", "s", "b"),
			SEO_EINVAL);
	CU_ASSERT_EQUAL(seo_mail_enqueue(db, &acct_outbox, WS, "a@b.test", "s\nBcc: x@y.test", "b"),
			SEO_EINVAL);
	/* Part of the caller's transaction: a rollback takes the mail too. */
	sql_exec("BEGIN", NULL, NULL);
	CU_ASSERT_EQUAL(seo_mail_enqueue(db, &acct_outbox, WS, "a@b.test", "s", "b"), 0);
	sql_exec("ROLLBACK", NULL, NULL);
	CU_ASSERT_EQUAL(sql_int("SELECT count(*) FROM outbox", NULL, NULL), 0);
	sql_exec("BEGIN", NULL, NULL);
	CU_ASSERT_EQUAL(seo_mail_enqueue(db, &acct_outbox, NULL, "a@b.test", "s", "b"), 0);
	sql_exec("COMMIT", NULL, NULL);
	CU_ASSERT_EQUAL(sql_int("SELECT count(*) FROM outbox WHERE sent_at IS NULL"
				" AND attempts = 0", NULL, NULL), 1);
}

static void test_mail_without_smtp(void)
{
	int sent = -1;

	sql_exec("DELETE FROM outbox", NULL, NULL);
	CU_ASSERT_EQUAL(seo_mail_enqueue(db, &acct_outbox, WS, "kept@b.test", "s", "b"), 0);
	CU_ASSERT_EQUAL(seo_mail_drain_once(db, &acct_outbox, "", &sent), 0);
	CU_ASSERT_EQUAL(sent, 0);
	CU_ASSERT_EQUAL(seo_mail_drain_once(db, &acct_outbox, NULL, &sent), 0);
	CU_ASSERT_EQUAL(sql_int("SELECT count(*) FROM outbox WHERE sent_at IS NULL"
				" AND attempts = 0 AND last_error IS NULL", NULL, NULL), 1);
}

static void test_mail_delivered(void)
{
	static const char subject[] = "Clé créée — ✓ "
		"une très longue ligne d'objet qui dépasse largement une ligne";
	int base = stored_count(smtp_ok.dir), sent = -1;
	const char *data;
	char *subj;
	json_t *m;

	sql_exec("DELETE FROM outbox", NULL, NULL);
	CU_ASSERT_EQUAL(seo_mail_enqueue(db, &acct_outbox, WS, "owner@example.test", "New API key",
					  "Hello\n.dot line\nbye"), 0);
	CU_ASSERT_EQUAL(seo_mail_enqueue(db, &acct_outbox, WS, "second@example.test", subject,
					  "Zweite\r\n"), 0);
	CU_ASSERT_EQUAL(seo_mail_drain_once(db, &acct_outbox, smtp_ok_url, &sent), 0);
	CU_ASSERT_EQUAL(sent, 2);
	CU_ASSERT_EQUAL(sql_int("SELECT count(*) FROM outbox WHERE sent_at IS NOT NULL",
				NULL, NULL), 2);
	/* Sent once: a second pass finds nothing. */
	CU_ASSERT_EQUAL(seo_mail_drain_once(db, &acct_outbox, smtp_ok_url, &sent), 0);
	CU_ASSERT_EQUAL(sent, 0);
	CU_ASSERT_EQUAL(stored_count(smtp_ok.dir), base + 2);

	m = stored_mail(smtp_ok.dir, base + 1);
	CU_ASSERT_PTR_NOT_NULL_FATAL(m);
	CU_ASSERT_STRING_EQUAL(json_string_value(json_object_get(m, "mail_from")), MAIL_FROM);
	CU_ASSERT_STRING_EQUAL(json_string_value(json_array_get(json_object_get(m, "rcpt_to"), 0)),
			       "owner@example.test");
	data = json_string_value(json_object_get(m, "data"));
	CU_ASSERT_EQUAL(strncmp(data, "Date: ", 6), 0);
	CU_ASSERT_PTR_NOT_NULL(strstr(data, " +0000\r\n"));
	CU_ASSERT_PTR_NOT_NULL(strstr(data, "\r\nFrom: " MAIL_FROM "\r\n"));
	CU_ASSERT_PTR_NOT_NULL(strstr(data, "\r\nTo: owner@example.test\r\n"));
	CU_ASSERT_PTR_NOT_NULL(strstr(data, "\r\nSubject: New API key\r\n"));
	CU_ASSERT_PTR_NOT_NULL(strstr(data, "\r\nMessage-ID: <outbox."));
	CU_ASSERT_PTR_NOT_NULL(strstr(data, "@seo.test>\r\n"));
	CU_ASSERT_PTR_NOT_NULL(strstr(data, "\r\nContent-Type: text/plain; charset=utf-8\r\n"));
	/* A body line starting with a dot survives the SMTP transparency. */
	CU_ASSERT_PTR_NOT_NULL(strstr(data, "\r\n\r\nHello\r\n.dot line\r\nbye\r\n"));
	json_decref(m);

	m = stored_mail(smtp_ok.dir, base + 2);
	CU_ASSERT_PTR_NOT_NULL_FATAL(m);
	data = json_string_value(json_object_get(m, "data"));
	subj = decoded_subject(data);
	CU_ASSERT_STRING_EQUAL(subj, subject);
	/* Every header line fits the 78-character recommendation. */
	for (const char *l = data, *e; (e = strstr(l, "\r\n")) != NULL && e != l; l = e + 2)
		CU_ASSERT(e - l <= 78);
	CU_ASSERT_PTR_NOT_NULL(strstr(data, "\r\n\r\nZweite\r\n"));
	free(subj);
	json_decref(m);
}

static long long next_attempt_in_ms(void)
{
	return sql_int("SELECT next_attempt_at FROM outbox WHERE sent_at IS NULL",
		       NULL, NULL) - seo_now_ms();
}

static void test_mail_retry(void)
{
	int base = stored_count(smtp_flaky.dir), sent = -1;
	long long in;
	PGresult *res;

	sql_exec("DELETE FROM outbox", NULL, NULL);
	CU_ASSERT_EQUAL(seo_mail_enqueue(db, &acct_outbox, WS, "retry@example.test", "Retry", "b"), 0);

	/* The server refuses the first two transactions (451). */
	CU_ASSERT_EQUAL(seo_mail_drain_once(db, &acct_outbox, smtp_flaky_url, &sent), 0);
	CU_ASSERT_EQUAL(sent, 0);
	res = sql(db, "SELECT attempts, last_error FROM outbox", NULL, NULL);
	CU_ASSERT_STRING_EQUAL(PQgetvalue(res, 0, 0), "1");
	CU_ASSERT_PTR_NOT_NULL(strstr(PQgetvalue(res, 0, 1), "451"));
	PQclear(res);
	in = next_attempt_in_ms();
	CU_ASSERT(in > 28000 && in <= 30000);

	/* Not due yet: a pass leaves it alone. */
	CU_ASSERT_EQUAL(seo_mail_drain_once(db, &acct_outbox, smtp_flaky_url, &sent), 0);
	CU_ASSERT_EQUAL(sql_int("SELECT attempts FROM outbox", NULL, NULL), 1);

	/* Time passes; the second failure doubles the delay. */
	sql_exec("UPDATE outbox SET next_attempt_at = 0", NULL, NULL);
	CU_ASSERT_EQUAL(seo_mail_drain_once(db, &acct_outbox, smtp_flaky_url, &sent), 0);
	CU_ASSERT_EQUAL(sql_int("SELECT attempts FROM outbox", NULL, NULL), 2);
	in = next_attempt_in_ms();
	CU_ASSERT(in > 58000 && in <= 60000);

	sql_exec("UPDATE outbox SET next_attempt_at = 0", NULL, NULL);
	CU_ASSERT_EQUAL(seo_mail_drain_once(db, &acct_outbox, smtp_flaky_url, &sent), 0);
	CU_ASSERT_EQUAL(sent, 1);
	CU_ASSERT_EQUAL(sql_int("SELECT count(*) FROM outbox WHERE sent_at IS NOT NULL"
				" AND attempts = 2", NULL, NULL), 1);
	CU_ASSERT_EQUAL(stored_count(smtp_flaky.dir), base + 1);
}

static void test_mail_backoff_cap(void)
{
	int sent = -1;
	long long in;

	sql_exec("DELETE FROM outbox", NULL, NULL);
	CU_ASSERT_EQUAL(seo_mail_enqueue(db, &acct_outbox, WS, "cap@example.test", "Cap", "b"), 0);
	sql_exec("UPDATE outbox SET attempts = 30", NULL, NULL);
	/* A permanent refusal is retried too, at most an hour apart. */
	CU_ASSERT_EQUAL(seo_mail_drain_once(db, &acct_outbox, smtp_refuse_url, &sent), 0);
	CU_ASSERT_EQUAL(sent, 0);
	CU_ASSERT_EQUAL(sql_int("SELECT attempts FROM outbox", NULL, NULL), 31);
	in = next_attempt_in_ms();
	CU_ASSERT(in > 3598000 && in <= 3600000);

	/* No server at all: recorded the same way, not an error. */
	sql_exec("UPDATE outbox SET next_attempt_at = 0, attempts = 3", NULL, NULL);
	CU_ASSERT_EQUAL(seo_mail_drain_once(db, &acct_outbox, "smtp://127.0.0.1:1", &sent), 0);
	CU_ASSERT_EQUAL(sql_int("SELECT attempts FROM outbox", NULL, NULL), 4);
	in = next_attempt_in_ms();
	CU_ASSERT(in > 238000 && in <= 240000);
	CU_ASSERT_EQUAL(sql_int("SELECT count(*) FROM outbox WHERE last_error <> ''",
				NULL, NULL), 1);
}

static void test_mailer_thread(void)
{
	seo_mailer *m = NULL;
	int64_t t0;

	sql_exec("DELETE FROM outbox", NULL, NULL);
	seo_test_config_set("SEO_SMTP_URL", smtp_ok_url);
	CU_ASSERT_EQUAL_FATAL(seo_mailer_start(conninfo, &acct_outbox, &m), 0);
	/* Let its first pass end, so that only the notification can wake it
	 * before its 10 s idle timeout. */
	usleep(500 * 1000);
	t0 = seo_mono_ms();
	CU_ASSERT_EQUAL(seo_mail_enqueue(db, &acct_outbox, WS, "thread@example.test", "Thread", "b"), 0);
	while (seo_mono_ms() - t0 < 8000 &&
	       sql_int("SELECT count(*) FROM outbox WHERE sent_at IS NOT NULL", NULL, NULL) == 0)
		usleep(50 * 1000);
	CU_ASSERT(seo_mono_ms() - t0 < 5000);
	CU_ASSERT_EQUAL(sql_int("SELECT count(*) FROM outbox WHERE sent_at IS NOT NULL",
				NULL, NULL), 1);
	t0 = seo_mono_ms();
	seo_mailer_stop(m);
	CU_ASSERT(seo_mono_ms() - t0 < 2000);
	seo_test_config_set("SEO_SMTP_URL", NULL);

	/* Without SMTP the thread runs and stops, and mail stays queued. */
	CU_ASSERT_EQUAL_FATAL(seo_mailer_start(conninfo, &acct_outbox, &m), 0);
	CU_ASSERT_EQUAL(seo_mail_enqueue(db, &acct_outbox, WS, "queued@example.test", "Queued", "b"), 0);
	usleep(300 * 1000);
	seo_mailer_stop(m);
	CU_ASSERT_EQUAL(sql_int("SELECT count(*) FROM outbox WHERE sent_at IS NULL",
				NULL, NULL), 1);
}

/* ---- setup -------------------------------------------------------------- */

/* "key='value' ..." of the open connection, for a second one. */
static char *conninfo_of(PGconn *c)
{
	PQconninfoOption *opts = PQconninfo(c), *o;
	char *out = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&out, &len);

	for (o = opts; o != NULL && o->keyword != NULL; o++) {
		if (o->val == NULL || o->val[0] == '\0')
			continue;
		fprintf(f, "%s='", o->keyword);
		for (const char *p = o->val; *p; p++)
			fprintf(f, "%s%c", (*p == '\'' || *p == '\\') ? "\\" : "", *p);
		fputs("' ", f);
	}
	fclose(f);
	PQconninfoFree(opts);
	return out;
}

static int setup(const char *url)
{
	const char *src = getenv("SEO_SOURCE_DIR");
	const char *keys[] = {"dbname", "dbname", NULL};
	const char *vals[] = {url, dbname, NULL};
	const char *pay_args[] = {"--key", PAY_KEY, NULL};
	seo_pg_pool_opt po = {.size = 2};
	char q[128], dir[4096];
	acct_err err;
	int applied;

	snprintf(dbname, sizeof(dbname), "pay_test_%d", (int)getpid());
	admin = PQconnectdb(url);
	if (PQstatus(admin) != CONNECTION_OK)
		return -1;
	snprintf(q, sizeof(q), "DROP DATABASE IF EXISTS %s", dbname);
	PQclear(PQexec(admin, q));
	snprintf(q, sizeof(q), "CREATE DATABASE %s", dbname);
	PQclear(PQexec(admin, q));
	db = PQconnectdbParams(keys, vals, 1);
	if (PQstatus(db) != CONNECTION_OK)
		return -1;
	conninfo = conninfo_of(db);
	po.url = conninfo;
	if (conninfo == NULL || seo_pg_pool_new(&po, &pool) != 0)
		return -1;
	snprintf(dir, sizeof(dir), "%s/svc-account/migrations", src ? src : ".");
	if (acct_migrate(db, dir, &applied, &err) != 0) {
		fprintf(stderr, "migrations: %s\n", err.message);
		return -1;
	}
	PQclear(PQexec(db, "INSERT INTO workspaces (id, name, created_at) VALUES ('" WS "', 'pay', 0);"
			   "INSERT INTO users (id, workspace_id, email, role, created_at)"
			   " VALUES ('" USER "', '" WS "', 'owner@example.test', 'owner', 0)"));

	if (fake_start(&pay, "fake_payments.py", pay_args) != 0 ||
	    smtp_start(&smtp_ok, "0", "451", smtp_ok_url, sizeof(smtp_ok_url)) != 0 ||
	    smtp_start(&smtp_flaky, "2", "451", smtp_flaky_url, sizeof(smtp_flaky_url)) != 0 ||
	    smtp_start(&smtp_refuse, "-1", "554", smtp_refuse_url, sizeof(smtp_refuse_url)) != 0)
		return -1;
	snprintf(pay_url, sizeof(pay_url), "http://127.0.0.1:%d", pay.port);
	seo_test_config_set("SEO_PAYMENTS_API_URL", pay_url);
	seo_test_config_set("SEO_PAYMENTS_KEY", PAY_KEY);
	seo_test_config_set("SEO_PAYMENTS_WEBHOOK_SECRET", WEBHOOK_SECRET);
	seo_test_config_set("SEO_MAIL_FROM", MAIL_FROM);
	seo_test_config_set("SEO_SMTP_URL", NULL);
	return 0;
}

static void teardown(void)
{
	fake *fakes[] = {&pay, &smtp_ok, &smtp_flaky, &smtp_refuse};
	char q[128];

	for (size_t i = 0; i < sizeof(fakes) / sizeof(fakes[0]); i++) {
		fake_stop(fakes[i]);
		if (fakes[i]->dir[0] != '\0')
			dir_remove(fakes[i]->dir);
	}
	seo_pg_pool_free(pool);
	PQfinish(db);
	if (admin != NULL && PQstatus(admin) == CONNECTION_OK) {
		snprintf(q, sizeof(q), "DROP DATABASE IF EXISTS %s WITH (FORCE)", dbname);
		PQclear(PQexec(admin, q));
	}
	PQfinish(admin);
	free(conninfo);
}

int main(void)
{
	const char *url = getenv("SEO_TEST_PG_URL");
	unsigned failed;
	CU_pSuite s;

	if (url == NULL || *url == '\0') {
		printf("test_payments: SEO_TEST_PG_URL is not set, skipped\n");
		return 0;
	}
	seo_log_init("test_payments");
	curl_global_init(CURL_GLOBAL_DEFAULT);
	if (setup(url) != 0) {
		fprintf(stderr, "test_payments: setup failed: %s",
			db ? PQerrorMessage(db) : "no connection\n");
		teardown();
		curl_global_cleanup();
		return 1;
	}
	if (CU_initialize_registry() != CUE_SUCCESS) {
		teardown();
		curl_global_cleanup();
		return 1;
	}
	s = CU_add_suite("payments", NULL, NULL);
	CU_add_test(s, "checkout below 100 credits is refused", test_checkout_invalid_credits);
	CU_add_test(s, "checkout is priced by tier, half a cent up", test_checkout_tiers);
	CU_add_test(s, "the provider gets the stripe fields", test_checkout_request_fields);
	CU_add_test(s, "provider failures are checkout_failed", test_checkout_provider_failure);
	CU_add_test(s, "webhook signatures are checked", test_webhook_signature);
	CU_add_test(s, "a replayed webhook credits once", test_webhook_replay);
	CU_add_test(s, "other events change nothing", test_webhook_ignored);
	CU_add_test(s, "concurrent deliveries credit once", test_webhook_concurrent);
	CU_add_test(s, "checkout then webhook", test_purchase_end_to_end);
	s = CU_add_suite("mail", NULL, NULL);
	CU_add_test(s, "mail is queued in the caller's transaction", test_mail_enqueue);
	CU_add_test(s, "without smtp mail stays queued", test_mail_without_smtp);
	CU_add_test(s, "queued mail is delivered once", test_mail_delivered);
	CU_add_test(s, "refused mail is retried with back-off", test_mail_retry);
	CU_add_test(s, "back-off is capped at an hour", test_mail_backoff_cap);
	CU_add_test(s, "the mailer thread wakes on new mail", test_mailer_thread);
	CU_basic_set_mode(CU_BRM_VERBOSE);
	CU_basic_run_tests();
	failed = CU_get_number_of_failures();
	CU_cleanup_registry();
	teardown();
	curl_global_cleanup();
	return failed == 0 ? 0 : 1;
}

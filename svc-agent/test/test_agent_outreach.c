/*
 * test_agent_outreach: the outreach_send kind's prepare and run, and a
 * reviewer's removal, on PostgreSQL (SEO_TEST_PG_URL; skipped when unset):
 * campaigns, the 500-contact campaign and 100-contact proposals at real
 * sizes, suppression, the result counts and outreach.sent_daily. The
 * proposals part's table rows are written here as its create would.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <CUnit/Basic.h>

#include "agent_int.h"
#include "outreach.h"
#include "parts.h"
#include "proposals.h"
#include "seo/errors.h"
#include "seo/pg.h"
#include "seo/util.h"
#include "test_pgdb.h"

#define WS "ws_outreach"
#define SITE "site_a"
#define SITE_B "site_b"

static test_pgdb pgdb;
static PGconn *pg;
static seo_arena *arena;
static int proposal_seq;

static Seo__Account__V1__Site site_rows[2];
static Seo__Account__V1__Site *sites[2] = {&site_rows[0], &site_rows[1]};

static Seo__Agent__V1__Contact contacts[AGENT_OUTREACH_PER_PROPOSAL];
static Seo__Agent__V1__Contact *contact_ptrs[AGENT_OUTREACH_PER_PROPOSAL];
static Seo__Agent__V1__CreateProposalRequest req;

static void exec(const char *sql)
{
	PGresult *r = PQexec(pg, sql);

	if (PQresultStatus(r) != PGRES_COMMAND_OK && PQresultStatus(r) != PGRES_TUPLES_OK)
		fprintf(stderr, "%s: %s", sql, PQerrorMessage(pg));
	PQclear(r);
}

static long long query_int(const char *fmt, const char *arg)
{
	char sql[1024];
	PGresult *r;
	long long v = -1;

	snprintf(sql, sizeof(sql), fmt, arg);
	r = PQexec(pg, sql);
	if (PQresultStatus(r) == PGRES_TUPLES_OK && PQntuples(r) == 1)
		v = atoll(PQgetvalue(r, 0, 0));
	else
		fprintf(stderr, "%s: %s", sql, PQerrorMessage(pg));
	PQclear(r);
	return v;
}

/* `n` contacts on domains <tag>0.example... with bodies of `body_len`
 * characters, for campaign `name` (NULL: campaign_id `id`). */
static void request(const char *name, const char *id, const char *tag,
		    size_t n, size_t body_len)
{
	char *body = seo_arena_alloc(arena, body_len + 1);

	memset(body, 'b', body_len);
	body[body_len] = '\0';
	seo__agent__v1__create_proposal_request__init(&req);
	req.kind = "outreach_send";
	req.campaign_name = (char *)name;
	req.campaign_id = (char *)id;
	req.site_id = name != NULL ? SITE : NULL;
	for (size_t i = 0; i < n; i++) {
		seo__agent__v1__contact__init(&contacts[i]);
		contacts[i].email = seo_arena_printf(arena, "editor@%s%zu.example", tag, i);
		contacts[i].domain = seo_arena_printf(arena, "%s%zu.example", tag, i);
		contacts[i].subject = "A resource for your readers";
		contacts[i].body = body;
		contact_ptrs[i] = &contacts[i];
	}
	req.contacts = contact_ptrs;
	req.n_contacts = n;
}

typedef struct created {
	int rc;
	int dedupe_hit;
	agent_err err;
	agent_proposal_draft d;
	char id[32];
} created;

/* Prepares req in a transaction and stores the proposal row as the
 * proposals part does (superseding pending ones of the campaign); rolls
 * back on failure. */
static created create(void)
{
	agent_call call = {.arena = arena, .workspace_id = WS};
	created c = {0};

	exec("BEGIN");
	c.rc = agent_outreach_prepare(&call, pg, &req, sites, 2, &c.d, &c.err);
	if (c.rc != 0) {
		exec("ROLLBACK");
		return c;
	}
	{
		const char *key[] = {c.d.dedupe_key};
		PGresult *r = PQexecParams(pg,
			"SELECT id FROM agent_proposals WHERE dedupe_key = $1 AND "
			"status IN ('pending', 'approved', 'executing')",
			1, NULL, key, NULL, NULL, 0);

		c.dedupe_hit = PQntuples(r) == 1;
		if (c.dedupe_hit)
			snprintf(c.id, sizeof(c.id), "%s", PQgetvalue(r, 0, 0));
		PQclear(r);
		if (c.dedupe_hit) {
			exec("ROLLBACK");
			return c;
		}
	}
	snprintf(c.id, sizeof(c.id), "prp_test%d", ++proposal_seq);
	{
		const char *p[] = {c.id, c.d.payload_json, c.d.dedupe_key,
				   c.d.supersede_key, c.d.title, c.d.site_id};
		PGresult *r = PQexecParams(pg,
			"INSERT INTO agent_proposals (id, workspace_id, kind, status, "
			"title, site_id, source, estimated_credits, payload, dedupe_key, "
			"supersede_key, created_at, expires_at, created_user_id, "
			"created_role) VALUES ($1, '" WS "', 'outreach_send', 'pending', "
			"$5, $6, 'agent', 0, $2::jsonb, $3, $4, 0, 9e15, 'u', 'owner')",
			6, NULL, p, NULL, NULL, 0);

		CU_ASSERT_EQUAL(PQresultStatus(r), PGRES_COMMAND_OK);
		PQclear(r);
		r = PQexecParams(pg,
			"UPDATE agent_proposals SET status = 'superseded' WHERE "
			"supersede_key = $1 AND status = 'pending' AND id <> $2",
			2, NULL, (const char *[]){c.d.supersede_key, c.id}, NULL, NULL, 0);
		PQclear(r);
	}
	exec("COMMIT");
	return c;
}

static void approve(const char *id, long long at)
{
	char sql[256];

	snprintf(sql, sizeof(sql), "UPDATE agent_proposals SET status = 'approved', "
		 "decided_at = %lld WHERE id = '%s'", at, id);
	exec(sql);
}

/* Runs proposal `c` as the worker does; the result object's text into
 * *result (on the arena). */
static int run(const created *c, const char **status, const char **result)
{
	agent_proposal_run r = {.arena = arena, .proposal_id = c->id,
				.workspace_id = WS, .payload_json = c->d.payload_json,
				.now_ms = seo_now_ms()};
	agent_proposal_outcome out;
	int rc = agent_outreach_run(&r, pg, &out);

	*status = out.status;
	*result = out.result_json;
	return rc;
}

static void test_inline_campaign(void)
{
	created a, b, again;
	const char *status, *result;

	request("Spring", NULL, "in", 2, 20);
	a = create();
	CU_ASSERT_EQUAL_FATAL(a.rc, 0);
	CU_ASSERT_STRING_EQUAL(a.d.site_id, SITE);
	CU_ASSERT_STRING_EQUAL(a.d.title, "Send 2 outreach emails for a.example");
	CU_ASSERT_EQUAL(strlen(a.d.dedupe_key), 64);
	CU_ASSERT_EQUAL(strncmp(a.d.supersede_key, "cmp_", 4), 0);
	CU_ASSERT_PTR_NOT_NULL(strstr(a.d.payload_json, a.d.supersede_key));
	/* the same content again: the same key, nothing new held */
	again = create();
	CU_ASSERT_EQUAL(again.dedupe_hit, 1);
	CU_ASSERT_STRING_EQUAL(again.id, a.id);
	CU_ASSERT_STRING_EQUAL(again.d.supersede_key, a.d.supersede_key);
	/* one more contact: the live campaign of that name, another key */
	request("Spring", NULL, "in", 3, 20);
	b = create();
	CU_ASSERT_EQUAL_FATAL(b.rc, 0);
	CU_ASSERT_STRING_EQUAL(b.d.supersede_key, a.d.supersede_key);
	CU_ASSERT_STRING_NOT_EQUAL(b.d.dedupe_key, a.d.dedupe_key);
	CU_ASSERT_STRING_EQUAL(b.d.title, "Send 3 outreach emails for a.example");
	CU_ASSERT_EQUAL(query_int("SELECT count(*) FROM agent_contacts WHERE "
				  "campaign_id = '%s'", a.d.supersede_key), 3);
	/* everything sent: the campaign is no longer live, the name starts
	 * a new one, and the addresses emailed are skipped there */
	approve(b.id, seo_now_ms());
	CU_ASSERT_EQUAL(run(&b, &status, &result), 0);
	CU_ASSERT_STRING_EQUAL(status, "succeeded");
	request("Spring", NULL, "in", 4, 20);
	again = create();
	CU_ASSERT_EQUAL_FATAL(again.rc, 0);
	CU_ASSERT_STRING_NOT_EQUAL(again.d.supersede_key, a.d.supersede_key);
	CU_ASSERT_STRING_EQUAL(again.d.title, "Send 1 outreach email for a.example");
	request("Spring", NULL, "in", 3, 20);
	again = create();
	CU_ASSERT_EQUAL(again.rc, SEO_EINVAL);
	CU_ASSERT_PTR_NOT_NULL(strstr(again.err.message, "already emailed"));
}

static void test_campaign_rules(void)
{
	created c, first;

	request("Rules", NULL, "ru", 1, 20);
	req.site_id = "site_elsewhere";
	c = create();
	CU_ASSERT_EQUAL(c.rc, SEO_EINVAL);
	CU_ASSERT_STRING_EQUAL(c.err.code, "site_not_found");
	request("Rules", NULL, "ru", 1, 20);
	first = create();
	CU_ASSERT_EQUAL_FATAL(first.rc, 0);
	/* existing campaigns: owned, on its website, of a known form */
	request(NULL, "cmp_aaaaaaaaaaaaaaaaaaaaaaaa", "ru", 0, 20);
	c = create();
	CU_ASSERT_EQUAL(c.rc, SEO_EINVAL);
	CU_ASSERT_STRING_EQUAL(c.err.message, "campaign_id names no campaign of the workspace");
	request(NULL, "cmp_'; DROP TABLE x; --", "ru", 0, 20);
	CU_ASSERT_EQUAL(create().rc, SEO_EINVAL);
	request(NULL, first.d.supersede_key, "ru", 0, 20);
	req.site_id = SITE_B;
	c = create();
	CU_ASSERT_EQUAL(c.rc, SEO_EINVAL);
	CU_ASSERT_STRING_EQUAL(c.err.message, "site_id is not the campaign's website");
	exec("UPDATE agent_campaigns SET workspace_id = 'ws_other' WHERE name = 'Rules'");
	request(NULL, first.d.supersede_key, "ru", 0, 20);
	CU_ASSERT_EQUAL(create().rc, SEO_EINVAL);
	exec("UPDATE agent_campaigns SET workspace_id = '" WS "', site_id = 'site_gone' "
	     "WHERE name = 'Rules'");
	request(NULL, first.d.supersede_key, "ru", 0, 20);
	c = create();
	CU_ASSERT_EQUAL(c.rc, SEO_EINVAL);
	CU_ASSERT_STRING_EQUAL(c.err.message, "the campaign's website is no longer connected");
}

/* Five proposals of 100 contacts with 10,000-character bodies fill a
 * campaign; one contact more is refused and nothing of it stays. */
static void test_campaign_of_500(void)
{
	const char *campaign = NULL;
	created c;
	char tag[8];

	for (int i = 0; i < 5; i++) {
		snprintf(tag, sizeof(tag), "f%dx", i);
		request("Full", NULL, tag, AGENT_OUTREACH_PER_PROPOSAL,
			AGENT_OUTREACH_BODY_MAX);
		c = create();
		CU_ASSERT_EQUAL_FATAL(c.rc, 0);
		CU_ASSERT_STRING_EQUAL(c.d.title, "Send 100 outreach emails for a.example");
		if (campaign == NULL)
			campaign = seo_arena_strdup(arena, c.d.supersede_key);
		CU_ASSERT_STRING_EQUAL(c.d.supersede_key, campaign);
	}
	CU_ASSERT_EQUAL(query_int("SELECT count(*) FROM agent_contacts WHERE "
				  "campaign_id = '%s' AND length(body) = 10000",
				  campaign), 500);
	request("Full", NULL, "f5x", 1, 20);
	c = create();
	CU_ASSERT_EQUAL(c.rc, SEO_EINVAL);
	CU_ASSERT_PTR_NOT_NULL(strstr(c.err.message, "more than 500"));
	CU_ASSERT_EQUAL(query_int("SELECT count(*) FROM agent_contacts WHERE "
				  "campaign_id = '%s'", campaign), 500);
	/* a known contact with a new copy still fits */
	request("Full", NULL, "f0x", 1, 30);
	CU_ASSERT_EQUAL(create().rc, 0);
	/* without contacts: the oldest 100 copy-ready ones */
	request(NULL, campaign, "", 0, 0);
	c = create();
	CU_ASSERT_EQUAL_FATAL(c.rc, 0);
	CU_ASSERT_STRING_EQUAL(c.d.title, "Send 100 outreach emails for a.example");
}

static void test_run_counts(void)
{
	created a, b, other;
	const char *status, *result;
	agent_outreach_removal rm;
	char err[256];
	long long decided = seo_now_ms() - 1000;

	request("Counts", NULL, "rc", 5, 100);
	a = create();
	CU_ASSERT_EQUAL_FATAL(a.rc, 0);
	/* the reviewer removes one address (any case) */
	CU_ASSERT_EQUAL(agent_outreach_remove(pg, a.id, "EDITOR@rc4.example", seo_now_ms(),
					      &rm, err, sizeof(err)), 0);
	CU_ASSERT_STRING_EQUAL(rm.status, "pending");
	CU_ASSERT_EQUAL(rm.removed, 1);
	CU_ASSERT_EQUAL(rm.held, 4);
	CU_ASSERT_EQUAL(agent_outreach_remove(pg, a.id, "editor@rc4.example", seo_now_ms(),
					      &rm, err, sizeof(err)), SEO_EINVAL);
	approve(a.id, decided);
	/* after approval: rc0 emailed by another campaign, rc1's copy
	 * changed by a later proposal */
	request("Other", NULL, "rc", 1, 100);
	other = create();
	CU_ASSERT_EQUAL_FATAL(other.rc, 0);
	approve(other.id, decided);
	CU_ASSERT_EQUAL(run(&other, &status, &result), 0);
	request("Counts", NULL, "rc", 2, 100);
	contacts[1].subject = "A better subject";
	req.contacts = &contact_ptrs[1];
	req.n_contacts = 1;
	b = create();
	CU_ASSERT_EQUAL_FATAL(b.rc, 0);
	CU_ASSERT_EQUAL(run(&a, &status, &result), 0);
	CU_ASSERT_STRING_EQUAL(status, "partially_succeeded");
	CU_ASSERT_STRING_EQUAL(result, "{\"queued\":2,\"suppressed\":1,\"changed\":1,"
			       "\"already_queued\":0,\"removed\":1,"
			       "\"changed_since_review\":1}");
	CU_ASSERT_EQUAL(query_int("SELECT count(*) FROM agent_outbox WHERE "
				  "workspace_id = '%s' AND length(body) = 100", WS), 3);
	/* again (a retry): nothing queued twice */
	CU_ASSERT_EQUAL(run(&a, &status, &result), 0);
	CU_ASSERT_STRING_EQUAL(result, "{\"queued\":0,\"suppressed\":1,\"changed\":1,"
			       "\"already_queued\":2,\"removed\":1,"
			       "\"changed_since_review\":1}");
	/* the reviewer removes the last address of b: cancelled */
	CU_ASSERT_EQUAL(agent_outreach_remove(pg, b.id, "editor@rc1.example", seo_now_ms(),
					      &rm, err, sizeof(err)), 0);
	CU_ASSERT_STRING_EQUAL(rm.status, "cancelled");
	CU_ASSERT_EQUAL(rm.held, 0);
	CU_ASSERT_EQUAL(query_int("SELECT count(*) FROM agent_proposals WHERE id = '%s' "
				  "AND status = 'cancelled'", b.id), 1);
	CU_ASSERT_EQUAL(agent_outreach_remove(pg, b.id, "editor@rc0.example", seo_now_ms(),
					      &rm, err, sizeof(err)), SEO_EINVAL);
	CU_ASSERT_EQUAL(agent_outreach_remove(pg, "prp_none", "a@b.example", seo_now_ms(),
					      &rm, err, sizeof(err)), SEO_ENOTFOUND);
}

static void test_sent_daily(void)
{
	/* 2026-11-26 23:59 and 2026-11-27 00:01 UTC */
	exec("UPDATE agent_outbox SET sent_at = 1795737540000 WHERE id IN "
	     "(SELECT id FROM agent_outbox ORDER BY id LIMIT 2)");
	exec("UPDATE agent_outbox SET sent_at = 1795737660000 WHERE sent_at IS NULL");
	CU_ASSERT_EQUAL(query_int("SELECT (params->>'count')::int FROM agent_activity "
				  "WHERE verb = 'outreach.sent_daily' AND "
				  "params->>'date' = '%s' AND visible", "2026-11-26"), 2);
	/* one event per website and day, counting every mail sent */
	CU_ASSERT_EQUAL(query_int("SELECT sum((params->>'count')::int) FROM agent_activity "
				  "WHERE verb = '%s'", "outreach.sent_daily"),
			query_int("SELECT count(*) FROM agent_outbox WHERE %s", "sent_at IS NOT NULL"));
	CU_ASSERT_EQUAL(query_int("SELECT count(*) FROM agent_activity WHERE verb = '%s'",
				  "outreach.sent_daily"), 2);
}

/* Delivered mail after 30 days, and holds of proposals no longer kept. */
static void test_retention(void)
{
	char err[128];
	int64_t done = -1;
	long long held = query_int("SELECT count(*) FROM agent_outreach_held %s", "");
	long long gone = query_int("SELECT count(*) FROM agent_outreach_held WHERE hold_id = "
				   "(SELECT payload->>'hold_id' FROM agent_proposals "
				   "WHERE id = '%s')", "prp_test1");

	exec("DELETE FROM agent_proposals WHERE id = 'prp_test1'");
	/* 2026-11-26 23:59 UTC + 30 days: nothing sent is old enough yet */
	CU_ASSERT_EQUAL(agent__outreach_retention(pg, 1795737540000LL + 30LL * 86400000,
						  &done, err, sizeof(err)), 0);
	CU_ASSERT_EQUAL(done, gone);
	CU_ASSERT_EQUAL(query_int("SELECT count(*) FROM agent_outreach_held %s", ""),
			held - gone);
	CU_ASSERT_EQUAL(agent__outreach_retention(pg, 1795737540000LL + 30LL * 86400000 + 1,
						  &done, err, sizeof(err)), 0);
	CU_ASSERT_EQUAL(done, 2);
	CU_ASSERT_EQUAL(query_int("SELECT count(*) FROM agent_outbox WHERE %s",
				  "sent_at IS NULL"), 0);
}

int main(void)
{
	const char *url = getenv("SEO_TEST_PG_URL");
	const char *src = getenv("SEO_SOURCE_DIR");
	char dir[4096], err[256];
	CU_pSuite s;
	unsigned failed;
	int applied;

	if (url == NULL || *url == '\0') {
		printf("test_agent_outreach: SEO_TEST_PG_URL is not set, skipped\n");
		return 0;
	}
	snprintf(dir, sizeof(dir), "%s/svc-agent/migrations", src != NULL ? src : "..");
	if (test_pgdb_create(&pgdb, url, "agent_outreach_test") != 0)
		return 1;
	pg = PQconnectdb(pgdb.url);
	if (PQstatus(pg) != CONNECTION_OK ||
	    seo_pg_migrate(pg, &agent_migrations, dir, &applied, err, sizeof(err)) != 0) {
		fprintf(stderr, "%s %s\n", PQerrorMessage(pg), err);
		return 1;
	}
	arena = seo_arena_new(0);
	for (int i = 0; i < 2; i++)
		seo__account__v1__site__init(&site_rows[i]);
	site_rows[0].id = SITE;
	site_rows[0].host = "a.example";
	site_rows[1].id = SITE_B;
	site_rows[1].host = "b.example";
	if (CU_initialize_registry() != CUE_SUCCESS)
		return 1;
	s = CU_add_suite("agent_outreach", NULL, NULL);
	CU_add_test(s, "inline campaigns: live by name, keys, titles", test_inline_campaign);
	CU_add_test(s, "campaign rules", test_campaign_rules);
	CU_add_test(s, "a campaign of 500 with 10,000-character bodies", test_campaign_of_500);
	CU_add_test(s, "run counts, removal and cancel", test_run_counts);
	CU_add_test(s, "outreach.sent_daily as mail is sent", test_sent_daily);
	CU_add_test(s, "retention", test_retention);
	CU_basic_set_mode(CU_BRM_VERBOSE);
	CU_basic_run_tests();
	failed = CU_get_number_of_failures();
	CU_cleanup_registry();
	seo_arena_free(arena);
	PQfinish(pg);
	if (getenv("KEEP_DB") == NULL)
		test_pgdb_drop(&pgdb);
	return failed != 0;
}

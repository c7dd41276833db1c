/*
 * The outreach_send kind: campaigns and their contacts at a proposal's
 * creation (prepare) and the run of an approved one (proposals.h,
 * outreach.h).
 */
#include "outreach.h"
#include "proposals.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "seo/errors.h"
#include "seo/log.h"
#include "seo/mail.h"
#include "seo/util.h"

/* Room for the printed int64 of a time. */
#define NUM_LEN 24

enum {
	Q_LOCK,
	Q_CAMPAIGN_GET,
	Q_CAMPAIGN_LIVE,
	Q_CAMPAIGN_ADD,
	Q_EMAILED,
	Q_CONTACT_PUT,
	Q_CAMPAIGN_SIZE,
	Q_READY,
	Q_KEY,
	Q_HOLD,
	Q_DECIDED,
	Q_HELD,
	Q_SUPPRESSED,
	Q_MARK,
	Q__COUNT
};

/* A contact's copy, hashed into the dedupe key in a fixed order. */
#define COPY_TEXT \
	"k.domain || chr(1) || k.email || chr(1) || k.subject || chr(1) || " \
	"k.body || chr(1) || coalesce(k.name, '') || chr(1) || " \
	"coalesce(k.domain_authority::text, '')"

static const seo_pg_stmt rows[Q__COUNT] = {
	/* Campaign sizes, live campaigns and "already emailed" are decided
	 * one transaction at a time per workspace. */
	[Q_LOCK] = {"lock",
		"SELECT pg_advisory_xact_lock(hashtext('agent_outreach'), hashtext($1))"},
	[Q_CAMPAIGN_GET] = {"campaign_get",
		"SELECT site_id FROM agent_campaigns WHERE id = $1 AND workspace_id = $2"},
	[Q_CAMPAIGN_LIVE] = {"campaign_live",
		"SELECT c.id FROM agent_campaigns c WHERE c.workspace_id = $1 "
		"AND c.site_id = $2 AND c.name = $3 AND EXISTS (SELECT 1 FROM "
		"agent_contacts k WHERE k.campaign_id = c.id AND k.state = 'ready') "
		"ORDER BY c.created_at DESC, c.id LIMIT 1"},
	[Q_CAMPAIGN_ADD] = {"campaign_add",
		"INSERT INTO agent_campaigns (id, workspace_id, site_id, name, "
		"created_at) VALUES ($1, $2, $3, $4, $5::bigint)"},
	[Q_EMAILED] = {"emailed",
		"SELECT 1 FROM agent_contacts WHERE workspace_id = $1 AND "
		"email_key = $2 AND state = 'queued' UNION ALL SELECT 1 FROM "
		"agent_contacts WHERE campaign_id = $3 AND domain = $4 AND "
		"state = 'queued' LIMIT 1"},
	/* A new copy of a contact not yet emailed replaces the old one and
	 * counts as a change; the same copy changes nothing. */
	[Q_CONTACT_PUT] = {"contact_put",
		"INSERT INTO agent_contacts AS k (campaign_id, domain, workspace_id, "
		"email, email_key, name, subject, body, domain_authority, "
		"created_at, updated_at) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, "
		"$9::double precision, $10::bigint, $10::bigint) "
		"ON CONFLICT (campaign_id, domain) DO UPDATE SET "
		"email = EXCLUDED.email, email_key = EXCLUDED.email_key, "
		"name = EXCLUDED.name, subject = EXCLUDED.subject, "
		"body = EXCLUDED.body, domain_authority = EXCLUDED.domain_authority, "
		"rev = k.rev + 1, state = 'ready', updated_at = EXCLUDED.updated_at "
		"WHERE k.state = 'removed' OR (k.email, k.name, k.subject, k.body, "
		"k.domain_authority) IS DISTINCT FROM (EXCLUDED.email, EXCLUDED.name, "
		"EXCLUDED.subject, EXCLUDED.body, EXCLUDED.domain_authority)"},
	[Q_CAMPAIGN_SIZE] = {"campaign_size",
		"SELECT count(*) FROM agent_contacts WHERE campaign_id = $1"},
	[Q_READY] = {"ready",
		"SELECT k.domain FROM agent_contacts k WHERE k.campaign_id = $1 AND "
		"k.state = 'ready' AND NOT EXISTS (SELECT 1 FROM agent_contacts q "
		"WHERE q.workspace_id = k.workspace_id AND q.email_key = k.email_key "
		"AND q.state = 'queued') ORDER BY k.created_at, k.domain "
		"LIMIT $2::integer"},
	[Q_KEY] = {"key",
		"SELECT encode(sha256(convert_to('outreach_send' || chr(2) || $1 || "
		"chr(2) || string_agg(" COPY_TEXT ", chr(2) ORDER BY k.domain), "
		"'UTF8')), 'hex') FROM agent_contacts k WHERE k.campaign_id = $1 "
		"AND k.domain = ANY ($2::text[])"},
	[Q_HOLD] = {"hold",
		"INSERT INTO agent_outreach_held (hold_id, campaign_id, domain, "
		"rev, email, subject, body, position) SELECT $1, k.campaign_id, "
		"k.domain, k.rev, k.email, k.subject, k.body, "
		"array_position($3::text[], k.domain) FROM agent_contacts k "
		"WHERE k.campaign_id = $2 AND k.domain = ANY ($3::text[])"},
	[Q_DECIDED] = {"decided",
		"SELECT coalesce(decided_at, 0) FROM agent_proposals WHERE id = $1"},
	[Q_HELD] = {"held",
		"SELECT h.campaign_id, h.domain, h.email, h.subject, h.body, "
		"h.removed_at IS NOT NULL, k.state, k.rev = h.rev, k.updated_at, "
		"lower(h.email) FROM agent_outreach_held h LEFT JOIN agent_contacts k "
		"ON k.campaign_id = h.campaign_id AND k.domain = h.domain "
		"WHERE h.hold_id = $1 ORDER BY h.position"},
	[Q_SUPPRESSED] = {"suppressed",
		"SELECT 1 FROM agent_contacts WHERE workspace_id = $1 AND "
		"email_key = $2 AND state = 'queued' LIMIT 1"},
	[Q_MARK] = {"mark",
		"UPDATE agent_contacts SET state = 'queued', queued_at = $3::bigint, "
		"outbox_id = currval(pg_get_serial_sequence('agent_outbox', 'id')) "
		"WHERE campaign_id = $1 AND domain = $2"},
};

static const seo_pg_stmts stmts = {"agent_or_", rows, Q__COUNT};

/* What a prepare holds; strings on the call's arena. */
typedef struct hold_plan {
	const char *site_id;  /* the campaign's website */
	const char *campaign_id;
	const char **domains; /* the held contacts, in order */
	size_t n_held;        /* 1..100 */
} hold_plan;

/* Runs row `q`; *out is 1 when it gave a row (its first value into *val
 * on `arena` when `val` is not NULL). */
static int one_row(PGconn *pg, int q, int n, const char *const *params,
		   seo_arena *arena, const char **val, int *out)
{
	PGresult *r = NULL;
	int rc = agent__db_exec(pg, &stmts, q, n, params, &r);

	*out = 0;
	if (rc == 0 && PQntuples(r) > 0) {
		*out = 1;
		if (val != NULL) {
			*val = seo_arena_strdup(arena, PQgetvalue(r, 0, 0));
			if (*val == NULL)
				rc = SEO_ENOMEM;
		}
	}
	PQclear(r);
	return rc;
}

/* The existing campaign of `in`, which must be the workspace's, on one of
 * its websites, and on `in->site_id` when given. */
static int campaign_existing(agent_call *call, PGconn *pg,
			     const agent_outreach_input *in,
			     hold_plan *plan, agent_err *err)
{
	const char *params[] = {in->campaign_id, call->workspace_id};
	const char *site = NULL;
	int found = 0, rc = 0;

	if (agent__outreach_campaign_id_ok(in->campaign_id))
		rc = one_row(pg, Q_CAMPAIGN_GET, 2, params, call->arena, &site, &found);
	if (rc != 0)
		return rc;
	if (!found)
		return agent__err(err, SEO_EINVAL, "invalid_proposal_input",
				  "campaign_id names no campaign of the workspace");
	if (in->site_id != NULL && strcmp(in->site_id, site) != 0)
		return agent__err(err, SEO_EINVAL, "invalid_proposal_input",
				  "site_id is not the campaign's website");
	plan->campaign_id = in->campaign_id;
	plan->site_id = site;
	return 0;
}

/* The website's live campaign named `in->campaign_name`, or a new one. */
static int campaign_inline(agent_call *call, PGconn *pg,
			   const agent_outreach_input *in,
			   hold_plan *plan, int64_t now)
{
	const char *find[] = {call->workspace_id, in->site_id, in->campaign_name};
	char at[NUM_LEN];
	const char *id;
	int found, rc;

	rc = one_row(pg, Q_CAMPAIGN_LIVE, 3, find, call->arena, &id, &found);
	if (rc != 0)
		return rc;
	if (!found) {
		const char *add[] = {NULL, call->workspace_id, in->site_id,
				     in->campaign_name, at};

		id = add[0] = agent__new_id(call->arena, "cmp_");
		if (id == NULL)
			return SEO_ENOMEM;
		snprintf(at, sizeof(at), "%" PRId64, now);
		rc = agent__db_exec(pg, &stmts, Q_CAMPAIGN_ADD, 5, add, NULL);
		if (rc != 0)
			return rc;
	}
	plan->campaign_id = id;
	plan->site_id = in->site_id;
	return 0;
}

/* Stores contact `c` in the campaign unless its address or its domain
 * there was emailed already: *held is 1 when it was stored. */
static int contact_put(agent_call *call, PGconn *pg, const char *campaign_id,
		       const agent_contact *c, int64_t now, int *held)
{
	const char *check[] = {call->workspace_id, c->email_key, campaign_id,
			       c->domain};
	char at[NUM_LEN], authority[NUM_LEN];
	const char *put[] = {campaign_id, c->domain, call->workspace_id,
			     c->email, c->email_key, c->name, c->subject, c->body,
			     c->has_authority ? authority : NULL, at};
	int emailed, rc;

	rc = one_row(pg, Q_EMAILED, 4, check, NULL, NULL, &emailed);
	*held = rc == 0 && !emailed;
	if (!*held)
		return rc;
	snprintf(at, sizeof(at), "%" PRId64, now);
	snprintf(authority, sizeof(authority), "%.17g", c->authority);
	return agent__db_exec(pg, &stmts, Q_CONTACT_PUT, 10, put, NULL);
}

/* `domains` as a PostgreSQL array literal: normalised DNS names need no
 * quoting. */
static char *array_text(seo_arena *arena, const char **domains, size_t n)
{
	size_t len = 3;
	char *s, *p;

	for (size_t i = 0; i < n; i++)
		len += strlen(domains[i]) + 1;
	s = p = seo_arena_alloc(arena, len);
	if (s == NULL)
		return NULL;
	*p++ = '{';
	for (size_t i = 0; i < n; i++)
		p += sprintf(p, "%s%s", i > 0 ? "," : "", domains[i]);
	strcpy(p, "}");
	return s;
}

/* The given contacts stored and held, those already emailed skipped. */
static int hold_given(agent_call *call, PGconn *pg,
		      const agent_outreach_input *in, hold_plan *plan,
		      int64_t now, agent_err *err)
{
	const char *size_params[] = {plan->campaign_id};
	const char *size = "0";
	int found, rc;

	for (size_t i = 0; i < in->n_contacts; i++) {
		int held;

		rc = contact_put(call, pg, plan->campaign_id, &in->contacts[i], now,
				 &held);
		if (rc != 0)
			return rc;
		if (held)
			plan->domains[plan->n_held++] = in->contacts[i].domain;
	}
	rc = one_row(pg, Q_CAMPAIGN_SIZE, 1, size_params, call->arena, &size,
		     &found);
	if (rc != 0)
		return rc;
	if (atol(size) > AGENT_OUTREACH_PER_CAMPAIGN)
		return agent__err(err, SEO_EINVAL, "invalid_proposal_input",
				  "the campaign would hold %s contacts, more than %d",
				  size, AGENT_OUTREACH_PER_CAMPAIGN);
	if (plan->n_held == 0)
		return agent__err(err, SEO_EINVAL, "invalid_proposal_input",
				  "every contact was already emailed");
	return 0;
}

/* The campaign's oldest copy-ready contacts, at most 100. */
static int hold_ready(agent_call *call, PGconn *pg, hold_plan *plan,
		      agent_err *err)
{
	char limit[NUM_LEN];
	const char *params[] = {plan->campaign_id, limit};
	PGresult *r = NULL;
	int rc;

	snprintf(limit, sizeof(limit), "%d", AGENT_OUTREACH_PER_PROPOSAL);
	rc = agent__db_exec(pg, &stmts, Q_READY, 2, params, &r);
	for (int i = 0; rc == 0 && i < PQntuples(r); i++) {
		const char *d = seo_arena_strdup(call->arena, PQgetvalue(r, i, 0));

		if (d == NULL)
			rc = SEO_ENOMEM;
		else
			plan->domains[plan->n_held++] = d;
	}
	PQclear(r);
	if (rc == 0 && plan->n_held == 0)
		return agent__err(err, SEO_EINVAL, "invalid_proposal_input",
				  "the campaign has no copy-ready contacts");
	return rc;
}

/* The dedupe key: the campaign and every held copy. */
static int content_key(agent_call *call, PGconn *pg, const char *campaign_id,
		       const char *domains, const char **key)
{
	const char *params[] = {campaign_id, domains};
	int found;

	return one_row(pg, Q_KEY, 2, params, call->arena, key, &found);
}

/* The campaign, its contacts and what is held for `req`: the draft's
 * site, keys and payload. */
static int prepare(agent_call *call, PGconn *pg, const agent_outreach_input *in,
		   Seo__Account__V1__Site *const *sites, size_t n_sites,
		   agent_proposal_draft *out, agent_err *err)
{
	const char *lock[] = {call->workspace_id};
	const char *hold[] = {agent__new_id(call->arena, "hld_"), NULL, NULL};
	int64_t now = seo_now_ms();
	hold_plan plan = {0};
	const Seo__Account__V1__Site *site;
	const char *host, *domains;
	int locked, rc;

	plan.domains = seo_arena_calloc(call->arena, AGENT_OUTREACH_PER_PROPOSAL *
					sizeof(*plan.domains));
	if (plan.domains == NULL || hold[0] == NULL)
		return SEO_ENOMEM;
	rc = one_row(pg, Q_LOCK, 1, lock, NULL, NULL, &locked);
	if (rc == 0)
		rc = in->campaign_id != NULL
			     ? campaign_existing(call, pg, in, &plan, err)
			     : campaign_inline(call, pg, in, &plan, now);
	if (rc != 0)
		return rc;
	/* A campaign whose website left the workspace has no mail pipeline
	 * any more. */
	site = agent__site_in(sites, n_sites, plan.site_id);
	if (site == NULL)
		return agent__err(err, SEO_EINVAL, "invalid_proposal_input",
				  "the campaign's website is no longer connected");
	host = site->host;
	rc = in->n_contacts > 0 ? hold_given(call, pg, in, &plan, now, err)
				: hold_ready(call, pg, &plan, err);
	if (rc != 0)
		return rc;
	domains = hold[2] = array_text(call->arena, plan.domains, plan.n_held);
	if (domains == NULL)
		return SEO_ENOMEM;
	hold[1] = plan.campaign_id;
	rc = agent__db_exec(pg, &stmts, Q_HOLD, 3, hold, NULL);
	if (rc == 0)
		rc = content_key(call, pg, plan.campaign_id, domains, &out->dedupe_key);
	if (rc != 0)
		return rc;
	out->site_id = plan.site_id;
	out->supersede_key = plan.campaign_id;
	out->payload_json = seo_arena_printf(call->arena,
		"{\"campaign_id\":\"%s\",\"hold_id\":\"%s\",\"contacts\":%zu}",
		plan.campaign_id, hold[0], plan.n_held);
	out->title = seo_arena_printf(call->arena, "Send %zu outreach email%s for %s",
				      plan.n_held, plan.n_held == 1 ? "" : "s", host);
	return out->payload_json == NULL || out->title == NULL ? SEO_ENOMEM : 0;
}

int agent_outreach_prepare(agent_call *c, PGconn *pg,
			   const Seo__Agent__V1__CreateProposalRequest *req,
			   Seo__Account__V1__Site *const *sites, size_t n_sites,
			   agent_proposal_draft *out, agent_err *err)
{
	agent_outreach_input in;
	int rc;

	memset(out, 0, sizeof(*out));
	rc = agent__outreach_read(req, c->arena, &in, err);
	if (rc == 0 && in.site_id != NULL && agent__site_in(sites, n_sites, in.site_id) == NULL)
		rc = agent__err(err, SEO_EINVAL, "site_not_found",
				"site_id is not a website of the workspace");
	if (rc == 0)
		rc = prepare(c, pg, &in, sites, n_sites, out, err);
	if (rc == SEO_ENOMEM || rc == SEO_EDB)
		agent__err(err, rc, "internal_error", "outreach could not be prepared");
	return rc;
}

/* What a run did with the contacts a proposal held (the specification's
 * Proposal.result, and `held`). */
typedef struct run_counts {
	int64_t held;           /* at review: the reviewer's removals aside */
	int64_t queued;         /* mail put in the outbox now */
	int64_t suppressed;     /* the address was emailed already */
	int64_t changed;        /* the campaign's copy is no longer the one held */
	int64_t already_queued; /* the campaign had queued its mail already */
	int64_t removed;        /* taken out by the reviewer */
	int64_t changed_since_review; /* of `changed`, changed after approval */
} run_counts;

/* Columns of Q_HELD. */
enum { H_CAMPAIGN, H_DOMAIN, H_EMAIL, H_SUBJECT, H_BODY, H_REMOVED, H_STATE,
       H_SAME_REV, H_UPDATED_AT, H_EMAIL_KEY };

/* Queues the mail of held row `i` unless a rule keeps it back, and counts
 * the outcome. */
static int run_one(PGconn *pg, PGresult *r, int i, const char *workspace_id,
		   int64_t decided_at_ms, const char *now, run_counts *n)
{
	const char *state = PQgetisnull(r, i, H_STATE) ? NULL : PQgetvalue(r, i, H_STATE);
	const char *check[] = {workspace_id, PQgetvalue(r, i, H_EMAIL_KEY)};
	const char *mark[] = {PQgetvalue(r, i, H_CAMPAIGN), PQgetvalue(r, i, H_DOMAIN),
			      now};
	int emailed, rc;

	if (strcmp(PQgetvalue(r, i, H_REMOVED), "t") == 0) {
		n->removed++;
		return 0;
	}
	n->held++;
	if (state != NULL && strcmp(state, "queued") == 0) {
		n->already_queued++;
		return 0;
	}
	if (state == NULL || strcmp(state, "removed") == 0 ||
	    strcmp(PQgetvalue(r, i, H_SAME_REV), "t") != 0) {
		n->changed++;
		if (state == NULL ||
		    strtoll(PQgetvalue(r, i, H_UPDATED_AT), NULL, 10) > decided_at_ms)
			n->changed_since_review++;
		return 0;
	}
	rc = one_row(pg, Q_SUPPRESSED, 2, check, NULL, NULL, &emailed);
	if (rc != 0 || emailed) {
		n->suppressed += emailed;
		return rc;
	}
	rc = seo_mail_enqueue(pg, &agent_outbox, workspace_id,
			      PQgetvalue(r, i, H_EMAIL), PQgetvalue(r, i, H_SUBJECT),
			      PQgetvalue(r, i, H_BODY));
	if (rc == 0)
		rc = agent__db_exec(pg, &stmts, Q_MARK, 3, mark, NULL);
	if (rc == 0)
		n->queued++;
	return rc;
}

/* The hold id of a stored payload, on `arena`; NULL when it names none. */
static const char *payload_hold(seo_arena *arena, const char *payload)
{
	json_t *p = json_loads(payload != NULL ? payload : "", 0, NULL);
	const char *hold = json_string_value(json_object_get(p, "hold_id"));
	char *out = hold != NULL ? seo_arena_strdup(arena, hold) : NULL;

	json_decref(p);
	return out;
}

/* The run in its transaction: the workspace's lock, then each held
 * contact. */
static int run_held(PGconn *pg, const agent_proposal_run *r, const char *hold,
		    run_counts *n)
{
	const char *lock[] = {r->workspace_id};
	const char *held[] = {hold};
	const char *proposal[] = {r->proposal_id};
	const char *decided = "0";
	char now[NUM_LEN];
	PGresult *res = NULL;
	int found, rc;

	snprintf(now, sizeof(now), "%" PRId64, r->now_ms);
	rc = one_row(pg, Q_LOCK, 1, lock, NULL, NULL, &found);
	if (rc == 0)
		rc = one_row(pg, Q_DECIDED, 1, proposal, r->arena, &decided, &found);
	if (rc == 0)
		rc = agent__db_exec(pg, &stmts, Q_HELD, 1, held, &res);
	for (int i = 0; rc == 0 && i < PQntuples(res); i++)
		rc = run_one(pg, res, i, r->workspace_id, strtoll(decided, NULL, 10),
			     now, n);
	PQclear(res);
	return rc;
}

int agent_outreach_run(const agent_proposal_run *r, PGconn *pg,
		       agent_proposal_outcome *out)
{
	const char *hold = payload_hold(r->arena, r->payload_json);
	run_counts n = {0};
	int rc;

	memset(out, 0, sizeof(*out));
	if (hold == NULL) {
		log_error("svc-agent: outreach proposal %s holds no hold_id",
			  r->proposal_id);
		return SEO_EINVAL;
	}
	rc = agent__db_begin(pg);
	if (rc == 0)
		rc = run_held(pg, r, hold, &n);
	if (rc == 0)
		rc = agent__db_commit(pg);
	else
		agent__db_rollback(pg);
	if (rc != 0)
		return rc;
	/* Fewer queued than held (changed after review or suppressed). */
	out->status = n.queued < n.held ? "partially_succeeded" : "succeeded";
	out->result_json = seo_arena_printf(r->arena,
		"{\"queued\":%" PRId64 ",\"suppressed\":%" PRId64
		",\"changed\":%" PRId64 ",\"already_queued\":%" PRId64
		",\"removed\":%" PRId64 ",\"changed_since_review\":%" PRId64 "}",
		n.queued, n.suppressed, n.changed, n.already_queued, n.removed,
		n.changed_since_review);
	return out->result_json == NULL ? SEO_ENOMEM : 0;
}

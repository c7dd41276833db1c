/*
 * Proposals: POST /v1/proposals, GET /v1/proposals, GET /v1/proposals/:id,
 * the creation shared with the agent-origin IndexNow flow, and the kinds
 * table (proposals.h, proposals_int.h).
 */
#include "agent_int.h"
#include "parts.h"
#include "proposals_int.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "seo/errors.h"
#include "seo/log.h"
#include "seo/util.h"

#define DAY_MS ((int64_t)24 * 3600 * 1000)
#define NOTE_MAX_CHARS 1000
#define REQUEST_ID_MAX 64
#define LIST_DEFAULT 25
#define LIST_MAX 100
#define ID_MAX 64

static const agent__kind agent__kinds[] = {
	{"indexnow_submit", 7 * DAY_MS, 1, "indexnow", 0, agent__indexnow_prepare,
	 agent__indexnow_run},
	{"outreach_send", 14 * DAY_MS, 0, "outreach", 1, agent_outreach_prepare,
	 agent_outreach_run},
};

#define N_KINDS (sizeof(agent__kinds) / sizeof(agent__kinds[0]))

/* The statuses of the specification, in its order. */
static const char *const statuses[] = {
	"pending", "approved", "executing", "succeeded", "partially_succeeded",
	"failed", "skipped", "expired", "superseded", "cancelled",
};

#define N_STATUSES (sizeof(statuses) / sizeof(statuses[0]))

const agent__kind *agent__kind_find(const char *name)
{
	for (size_t i = 0; name != NULL && i < N_KINDS; i++)
		if (strcmp(agent__kinds[i].name, name) == 0)
			return &agent__kinds[i];
	return NULL;
}

enum { Q_INSERT, Q_OPEN, Q_SUPERSEDE, Q_GET, Q_LIST, Q__COUNT };

#define COLUMNS                                                              \
	"id, kind, status, title, site_id, source, estimated_credits, "     \
	"created_at, expires_at, decided_at, decided_via, result::text, "   \
	"CASE WHEN status = 'failed' THEN error_code END"

static const seo_pg_stmt rows[Q__COUNT] = {
	[Q_INSERT] = {"insert",
		"INSERT INTO agent_proposals (id, workspace_id, kind, status, "
		"title, site_id, source, estimated_credits, payload, dedupe_key, "
		"supersede_key, note, created_at, expires_at, decided_at, "
		"decided_via, created_user_id, created_key_id, created_role, "
		"attempts, started_at) VALUES ($1, $2, $3, $4, $5, $6, 'agent', "
		"$7::integer, $8::jsonb, $9, $10, $11, $12::bigint, $13::bigint, "
		"$14::bigint, $15, $16, $17, $18, $19::integer, $20::bigint) "
		"ON CONFLICT (workspace_id, kind, dedupe_key) "
		"WHERE status IN ('pending', 'approved', 'executing') DO NOTHING "
		"RETURNING id"},
	[Q_OPEN] = {"open",
		"SELECT id, status, title FROM agent_proposals "
		"WHERE workspace_id = $1 AND kind = $2 AND dedupe_key = $3 "
		"AND status IN ('pending', 'approved', 'executing')"},
	[Q_SUPERSEDE] = {"supersede",
		"UPDATE agent_proposals SET status = 'superseded', "
		"finished_at = $5::bigint WHERE workspace_id = $1 AND kind = $2 "
		"AND supersede_key = $3 AND status = 'pending' AND id <> $4"},
	[Q_GET] = {"get",
		"SELECT " COLUMNS " FROM agent_proposals "
		"WHERE id = $1 AND workspace_id = $2"},
	[Q_LIST] = {"list",
		"SELECT " COLUMNS " FROM agent_proposals WHERE workspace_id = $1 "
		"AND ($2::text IS NULL OR status = $2) "
		"AND ($3::text IS NULL OR site_id = $3) "
		"ORDER BY created_at DESC, id DESC LIMIT $4::integer"},
};

static const seo_pg_stmts stmts = {"agent_prc_", rows, Q__COUNT};

static char *num(seo_arena *a, int64_t v)
{
	return seo_arena_printf(a, "%" PRId64, v);
}

static int oom(agent_err *err)
{
	return agent__err(err, SEO_ENOMEM, "internal_error", "out of memory");
}

static int db_failed(agent_err *err)
{
	return agent__err(err, SEO_EDB, "service_unavailable",
			  "the proposals store is unavailable");
}

static int invalid(agent_err *err, const char *what)
{
	return agent__err(err, SEO_EINVAL, "invalid_proposal_input", "%s", what);
}

/* ---- creation ---------------------------------------------------------------- */

static const char *review_url(seo_arena *a, const char *id)
{
	return seo_arena_printf(a, "/proposals/%s", id);
}

/* The answer for the open proposal identical to `d`, found on `pg`. */
static int dedupe_answer(agent_call *c, PGconn *pg, const agent__kind *k,
			 const agent_proposal_draft *d,
			 agent_proposal_answer *out, agent_err *err)
{
	const char *params[] = {c->workspace_id, k->name, d->dedupe_key};
	PGresult *r = NULL;
	int rc = agent__db_exec(pg, &stmts, Q_OPEN, 3, params, &r);

	if (rc != 0 || PQntuples(r) != 1) {
		/* it finished between our insert and this read: rare enough to
		 * let the client try again */
		PQclear(r);
		return rc != 0 ? db_failed(err)
			       : agent__err(err, SEO_EIO, "service_unavailable",
					    "an identical proposal just changed; "
					    "try again");
	}
	out->proposal_id = seo_arena_strdup(c->arena, PQgetvalue(r, 0, 0));
	out->title = seo_arena_strdup(c->arena, PQgetvalue(r, 0, 2));
	out->dedupe_hit = 1;
	if (strcmp(PQgetvalue(r, 0, 1), "pending") == 0) {
		out->status = "awaiting_approval";
		out->message = "an identical proposal already awaits approval";
	} else {
		out->status = "approved";
		out->message = "an identical proposal is already approved";
	}
	PQclear(r);
	if (out->proposal_id == NULL || out->title == NULL ||
	    (out->review_url = review_url(c->arena, out->proposal_id)) == NULL)
		return oom(err);
	return 0;
}

/*
 * Inserts the proposal of draft `d` (kind `k`, `note` or NULL) in the
 * transaction open on `pg`, superseding what it replaces. *id is its id;
 * NULL (with 0) when an identical one is open. Returns 0 or a failure
 * with *err.
 */
static int insert(agent_call *c, PGconn *pg, const agent__kind *k,
		  const agent_proposal_draft *d, const char *note, int64_t now,
		  const char **id, agent_err *err)
{
	const char *new_id = agent__new_id(c->arena, "prp_");
	const char *now_s = num(c->arena, now);
	const char *params[] = {
		new_id, c->workspace_id, k->name,
		d->automatic ? "executing" : "pending", d->title, d->site_id,
		num(c->arena, k->credits), d->payload_json, d->dedupe_key,
		d->supersede_key, note, now_s, num(c->arena, now + k->expiry_ms),
		d->automatic ? now_s : NULL, d->automatic ? "policy" : NULL,
		c->user_id, c->key_id, c->role, d->automatic ? "1" : "0",
		d->automatic ? now_s : NULL,
	};
	PGresult *r = NULL;
	int rc;

	if (new_id == NULL || now_s == NULL || params[6] == NULL ||
	    params[12] == NULL)
		return oom(err);
	rc = agent__db_exec(pg, &stmts, Q_INSERT, 20, params, &r);
	*id = rc == 0 && PQntuples(r) == 1 ? new_id : NULL;
	PQclear(r);
	if (rc != 0)
		return db_failed(err);
	if (*id != NULL && d->supersede_key != NULL) {
		const char *sp[] = {c->workspace_id, k->name, d->supersede_key,
				    new_id, now_s};

		if (agent__db_exec(pg, &stmts, Q_SUPERSEDE, 5, sp, NULL) != 0)
			return db_failed(err);
	}
	return 0;
}

/* Runs the proposal just created executing (policy automatic) and makes
 * *out its answer. */
static int run_now(agent_call *c, const agent__kind *k,
		   const agent_proposal_draft *d, int charge,
		   agent_proposal_answer *out, agent_err *err)
{
	rpc_identity who = {rpc_ctx_meta(c->ctx, "x-request-id"), c->workspace_id,
			    c->user_id, c->key_id, c->role};
	agent_proposal_run r = {
		.svc = c->svc, .arena = c->arena, .proposal_id = out->proposal_id,
		.workspace_id = c->workspace_id, .site_id = d->site_id,
		.payload_json = d->payload_json, .ctx = c->ctx, .who = &who,
		.charge = charge, .attempt = 1, .now_ms = seo_now_ms(),
	};
	agent_proposal_outcome *o = &out->outcome;

	if (agent__proposal_execute(k, &r, o) != 0)
		return agent__err(err, SEO_EDB, "service_unavailable",
				  "the run's outcome could not be saved");
	if (o->retry) {
		out->status = "approved";
		out->review_url = NULL;
		out->title = NULL;
		out->message = "the run could not start now; it is queued and "
			       "retried within the hour";
		return 0;
	}
	out->status = "executed";
	out->message = strcmp(o->status, "failed") == 0 ? "the run failed"
							: "the run succeeded";
	return 0;
}

/*
 * Creates the proposal of draft `d` for `c` (the kind's checks done, its
 * transaction open on `pg`): *out is the answer, but for a new proposal
 * its policy runs at once (*run 1; run_now() then answers, without `pg`:
 * a run takes connections of its own).
 */
static int create(agent_call *c, PGconn *pg, const agent__kind *k,
		  const agent_proposal_draft *d, const char *note, int *run,
		  agent_proposal_answer *out, agent_err *err)
{
	const char *id = NULL;
	int rc = insert(c, pg, k, d, note, seo_now_ms(), &id, err);

	*run = 0;
	if (rc != 0 || id == NULL) {
		agent__db_rollback(pg);
		return rc != 0 ? rc : dedupe_answer(c, pg, k, d, out, err);
	}
	if (agent__db_commit(pg) != 0)
		return db_failed(err);
	out->proposal_id = id;
	out->title = d->title;
	out->review_url = review_url(c->arena, id);
	if (out->review_url == NULL)
		return oom(err);
	*run = d->automatic;
	out->status = "awaiting_approval";
	out->message = "the proposal awaits a person's approval";
	return 0;
}

/* 1..64 of A-Z a-z 0-9 _ - */
static int request_id_ok(const char *s)
{
	size_t n = strlen(s);

	return n >= 1 && n <= REQUEST_ID_MAX &&
	       strspn(s, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"
			 "0123456789_-") == n;
}

/* *err from svc-account's failure `res`. */
static int peer_failed(const rpc_result *res, agent_err *err)
{
	return agent__err(err, SEO_EUPSTREAM,
			  res->code != NULL ? res->code : "service_unavailable",
			  "%s", res->code != NULL ? res->message
						  : "the account service is unavailable");
}

static void answer_to(const agent_proposal_answer *a,
		      Seo__Agent__V1__CreateProposalResponse *m,
		      Seo__Agent__V1__Outcome *o, Seo__Common__RawJson *result)
{
	m->status = (char *)a->status;
	m->proposal_id = (char *)a->proposal_id;
	m->review_url = (char *)a->review_url;
	m->title = (char *)a->title;
	m->message = (char *)a->message;
	/* a queued retry's body carries only status, id and message */
	m->has_dedupe_hit = a->title != NULL;
	m->dedupe_hit = a->dedupe_hit;
	if (strcmp(a->status, "executed") != 0)
		return;
	o->status = (char *)a->outcome.status;
	if (a->outcome.result_json != NULL) {
		result->json = (char *)a->outcome.result_json;
		o->result = result;
	}
	o->errorcode = (char *)a->outcome.err.code;
	m->outcome = o;
}

/* Checks the request's shared fields and prepares its kind's part. */
static int prepare(agent_call *c, PGconn *pg,
		   const Seo__Agent__V1__CreateProposalRequest *in,
		   const agent__kind **k, const char **note,
		   agent_proposal_draft *d, agent_err *err)
{
	Seo__Account__V1__ListSitesResponse *sites;
	char *cleaned = NULL;
	rpc_result res;
	int rc;

	*k = agent__kind_find(in->kind);
	if (*k == NULL)
		return invalid(err, "kind must be indexnow_submit or outreach_send");
	if (in->client_request_id != NULL && !request_id_ok(in->client_request_id))
		return invalid(err, "client_request_id must be 1 to 64 characters "
				    "of A-Z a-z 0-9 _ -");
	if (in->note != NULL &&
	    agent__text_clean(c->arena, in->note, NOTE_MAX_CHARS, &cleaned) != 0)
		return oom(err);
	*note = cleaned;
	if (agent__sites(c, &sites, &res) != 0)
		return peer_failed(&res, err);
	if (in->site_id != NULL && agent__site_in(sites->sites, sites->n_sites, in->site_id) == NULL)
		return agent__err(err, SEO_ENOTFOUND, "site_not_found",
				  "no such website");
	memset(d, 0, sizeof(*d));
	if (agent__db_begin(pg) != 0)
		return db_failed(err);
	rc = (*k)->prepare(c, pg, in, sites->sites, sites->n_sites, d, err);
	if (rc != 0)
		agent__db_rollback(pg);
	return rc;
}

int agent__rpc_create_proposal(rpc_ctx *ctx, const ProtobufCMessage *req,
			       ProtobufCMessage **resp)
{
	const Seo__Agent__V1__CreateProposalRequest *in = (const void *)req;
	Seo__Agent__V1__CreateProposalResponse *m;
	Seo__Agent__V1__Outcome *o;
	Seo__Common__RawJson *result;
	agent_proposal_answer a = {0};
	agent_proposal_draft d;
	const agent__kind *k;
	const char *note = NULL;
	seo_pg_conn *conn;
	agent_call c;
	agent_err err;
	int rc, run = 0;

	if (agent__call_of(ctx, &c) != 0)
		return -1;
	if (agent__db_get(c.svc, &conn) != 0) {
		db_failed(&err);
		return agent__fail(ctx, &err);
	}
	rc = prepare(&c, conn->pg, in, &k, &note, &d, &err);
	if (rc == 0)
		rc = create(&c, conn->pg, k, &d, note, &run, &a, &err);
	agent__db_put(c.svc, conn);
	if (rc == 0 && run)
		rc = run_now(&c, k, &d, 1, &a, &err);
	if (rc != 0)
		return agent__fail(ctx, &err);
	m = seo_arena_alloc(c.arena, sizeof(*m));
	o = seo_arena_alloc(c.arena, sizeof(*o));
	result = seo_arena_alloc(c.arena, sizeof(*result));
	if (m == NULL || o == NULL || result == NULL)
		return rpc_ctx_fail(ctx, "internal_error", "out of memory");
	seo__agent__v1__create_proposal_response__init(m);
	seo__agent__v1__outcome__init(o);
	seo__common__raw_json__init(result);
	answer_to(&a, m, o, result);
	rpc_ctx_set_http_status(ctx, strcmp(a.status, "executed") == 0 ? 200 : 202);
	*resp = &m->base;
	return 0;
}

/* out's host, url_count and key_location from its IndexNow result. */
static int submitted(seo_arena *arena, agent_proposal_answer *out,
		     agent_err *err)
{
	json_t *r = json_loads(out->outcome.result_json, 0, NULL);
	const char *host = json_string_value(json_object_get(r, "host"));
	const char *loc = json_string_value(json_object_get(r, "key_location"));

	out->url_count = json_integer_value(json_object_get(r, "url_count"));
	out->host = host != NULL ? seo_arena_strdup(arena, host) : NULL;
	out->key_location = loc != NULL ? seo_arena_strdup(arena, loc) : NULL;
	json_decref(r);
	return out->host != NULL && out->key_location != NULL ? 0 : oom(err);
}

int agent_proposal_indexnow_from_agent(agent_call *c, PGconn *pg,
				       const char *site_id, int automatic,
				       const char *host,
				       const char *const *urls, size_t n,
				       agent_proposal_answer *out,
				       agent_err *err)
{
	const agent__kind *k = agent__kind_find("indexnow_submit");
	agent_proposal_draft d;
	int rc, run;

	memset(out, 0, sizeof(*out));
	if (agent__indexnow_draft(c->arena, site_id, automatic, host, urls, n,
				  &d) != 0)
		return oom(err);
	if (agent__db_begin(pg) != 0)
		return db_failed(err);
	rc = create(c, pg, k, &d, NULL, &run, out, err);
	if (rc == 0 && run)
		rc = run_now(c, k, &d, 0, out, err);
	if (rc == 0 && out->outcome.result_json != NULL)
		rc = submitted(c->arena, out, err);
	return rc;
}

/* ---- reading ----------------------------------------------------------------- */

static int64_t int_at(PGresult *r, int row, int col, protobuf_c_boolean *has)
{
	*has = !PQgetisnull(r, row, col);
	return *has ? strtoll(PQgetvalue(r, row, col), NULL, 10) : 0;
}

static char *str_at(seo_arena *a, PGresult *r, int row, int col, int *fail)
{
	char *s;

	if (PQgetisnull(r, row, col))
		return NULL;
	s = seo_arena_strdup(a, PQgetvalue(r, row, col));
	*fail |= s == NULL;
	return s;
}

/* Row `row` of a COLUMNS result as a Proposal on `a`; NULL when out of
 * memory. */
static Seo__Agent__V1__Proposal *proposal_of(seo_arena *a, PGresult *r, int row)
{
	Seo__Agent__V1__Proposal *p = seo_arena_alloc(a, sizeof(*p));
	Seo__Common__RawJson *result = seo_arena_alloc(a, sizeof(*result));
	int fail = p == NULL || result == NULL;

	if (fail)
		return NULL;
	seo__agent__v1__proposal__init(p);
	seo__common__raw_json__init(result);
	p->id = str_at(a, r, row, 0, &fail);
	p->kind = str_at(a, r, row, 1, &fail);
	p->status = str_at(a, r, row, 2, &fail);
	p->title = str_at(a, r, row, 3, &fail);
	p->site_id = str_at(a, r, row, 4, &fail);
	p->source = str_at(a, r, row, 5, &fail);
	p->estimated_credits = int_at(r, row, 6, &p->has_estimated_credits);
	p->created_at = int_at(r, row, 7, &p->has_created_at);
	p->expires_at = int_at(r, row, 8, &p->has_expires_at);
	p->decided_at = int_at(r, row, 9, &p->has_decided_at);
	p->decided_via = str_at(a, r, row, 10, &fail);
	result->json = str_at(a, r, row, 11, &fail);
	p->result = result->json != NULL ? result : NULL;
	p->error_code = str_at(a, r, row, 12, &fail);
	return fail ? NULL : p;
}

/* The limit of a list: an integer 1..100, larger clamped, anything else
 * the default. */
static int list_limit(const char *s)
{
	char *end;
	long long v;

	if (s == NULL || s[0] < '0' || s[0] > '9')
		return LIST_DEFAULT;
	v = strtoll(s, &end, 10);
	if (*end != '\0' || v < 1)
		return LIST_DEFAULT;
	return v > LIST_MAX ? LIST_MAX : (int)v;
}

static int status_known(const char *s)
{
	for (size_t i = 0; i < N_STATUSES; i++)
		if (strcmp(statuses[i], s) == 0)
			return 1;
	return 0;
}

/* Runs `q` with `params` on a pooled connection; fails the call on error. */
static int query(agent_call *c, int q, int n, const char *const *params,
		 PGresult **r)
{
	seo_pg_conn *conn;
	agent_err err;
	int rc = agent__db_get(c->svc, &conn);

	if (rc == 0) {
		rc = agent__db_exec(conn->pg, &stmts, q, n, params, r);
		agent__db_put(c->svc, conn);
	}
	if (rc != 0) {
		db_failed(&err);
		return agent__fail(c->ctx, &err);
	}
	return 0;
}

int agent__rpc_list_proposals(rpc_ctx *ctx, const ProtobufCMessage *req,
			      ProtobufCMessage **resp)
{
	const Seo__Agent__V1__ListProposalsRequest *in = (const void *)req;
	Seo__Agent__V1__ListProposalsResponse *out;
	const Seo__Account__V1__Site *site;
	const char *params[4];
	PGresult *r = NULL;
	rpc_result res;
	agent_call c;
	int n, rc;

	if (agent__call_of(ctx, &c) != 0)
		return -1;
	if (in->status != NULL && !status_known(in->status))
		return rpc_ctx_fail(ctx, "invalid_proposal_input",
				    "status must be one of pending, approved, "
				    "executing, succeeded, partially_succeeded, "
				    "failed, skipped, expired, superseded, cancelled");
	if (in->site_id != NULL) {
		rc = agent__site_find(&c, in->site_id, &site, &res);
		if (rc == SEO_ENOTFOUND)
			return rpc_ctx_fail(ctx, "site_not_found", "no such website");
		if (rc != 0)
			return rpc_peer_fail(ctx, &res);
	}
	params[0] = c.workspace_id;
	params[1] = in->status;
	params[2] = in->site_id;
	params[3] = num(c.arena, list_limit(in->limit));
	if (params[3] == NULL)
		return rpc_ctx_fail(ctx, "internal_error", "out of memory");
	if (query(&c, Q_LIST, 4, params, &r) != 0)
		return -1;
	n = PQntuples(r);
	out = seo_arena_alloc(c.arena, sizeof(*out));
	if (out != NULL) {
		seo__agent__v1__list_proposals_response__init(out);
		out->proposals = seo_arena_alloc(c.arena, (size_t)(n + 1) *
							 sizeof(*out->proposals));
	}
	for (int i = 0; out != NULL && out->proposals != NULL && i < n; i++) {
		out->proposals[i] = proposal_of(c.arena, r, i);
		if (out->proposals[i] == NULL)
			out = NULL;
		else
			out->n_proposals++;
	}
	PQclear(r);
	if (out == NULL || out->proposals == NULL)
		return rpc_ctx_fail(ctx, "internal_error", "out of memory");
	*resp = &out->base;
	return 0;
}

int agent__rpc_get_proposal(rpc_ctx *ctx, const ProtobufCMessage *req,
			    ProtobufCMessage **resp)
{
	const Seo__Agent__V1__GetProposalRequest *in = (const void *)req;
	Seo__Agent__V1__GetProposalResponse *out;
	const char *id = in->id != NULL ? in->id : "";
	size_t len = strlen(id);
	PGresult *r = NULL;
	agent_call c;

	if (agent__call_of(ctx, &c) != 0)
		return -1;
	/* a malformed id is as absent as an unknown one */
	if (len <= 4 || len > ID_MAX || strncmp(id, "prp_", 4) != 0 ||
	    strspn(id + 4, SEO_URLSAFE) != len - 4)
		return rpc_ctx_fail(ctx, "proposal_not_found", "no such proposal");
	if (query(&c, Q_GET, 2, (const char *const[]){id, c.workspace_id}, &r) != 0)
		return -1;
	if (PQntuples(r) != 1) {
		PQclear(r);
		return rpc_ctx_fail(ctx, "proposal_not_found", "no such proposal");
	}
	out = seo_arena_alloc(c.arena, sizeof(*out));
	if (out != NULL) {
		seo__agent__v1__get_proposal_response__init(out);
		out->proposal = proposal_of(c.arena, r, 0);
	}
	PQclear(r);
	if (out == NULL || out->proposal == NULL)
		return rpc_ctx_fail(ctx, "internal_error", "out of memory");
	*resp = &out->base;
	return 0;
}

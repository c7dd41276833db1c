/*
 * Agent tasks: GET /v1/agent-tasks, POST /v1/agent-tasks/:id/claim and
 * /complete, by the specification's state table. A task past its expiry
 * counts as expired here even before the expire job records it.
 */
#include "agent_int.h"
#include "parts.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "seo/agent/v1/agent.pb-c.h"
#include "seo/errors.h"
#include "seo/util.h"

typedef Seo__Agent__V1__AgentTask AgentTask;

#define LIST_MAX 50
#define SUMMARY_MAX_CHARS 2000

/* The list's status filter; any other value reads as the first row. */
static const struct {
	const char *name;
	const char *statuses; /* a text[] literal */
} filters[] = {
	{"open", "{open}"},
	{"claimed", "{claimed}"},
	{"all", "{open,claimed,done}"},
};

/* Every statement returning tasks returns these columns, in this order. */
#define COLS "id, site_id, site_host, prompt, status, origin, created_at, " \
	     "expires_at, claimed_at, completed_at, result_summary, claimed_by"
enum { C_ID, C_SITE_ID, C_SITE_HOST, C_PROMPT, C_STATUS, C_ORIGIN,
       C_CREATED, C_EXPIRES, C_CLAIMED, C_COMPLETED, C_SUMMARY, C_CLAIMED_BY };

enum { Q_LIST, Q_CLAIM, Q_GET, Q_LOCK, Q_DONE, Q__COUNT };

static const seo_pg_stmt rows[Q__COUNT] = {
	[Q_LIST] = {"task_list",
		"SELECT " COLS " FROM agent_tasks WHERE workspace_id = $1 "
		"AND status = ANY($2::text[]) AND expires_at > $3::bigint "
		"AND ($4::text IS NULL OR site_id = $4) "
		"ORDER BY created_at DESC, id DESC LIMIT $5::int"},
	[Q_CLAIM] = {"task_claim",
		"UPDATE agent_tasks SET status = 'claimed', claimed_by = $3, "
		"claimed_at = $4::bigint WHERE id = $1 AND workspace_id = $2 "
		"AND status = 'open' AND expires_at > $4::bigint RETURNING " COLS},
	[Q_GET] = {"task_get",
		"SELECT " COLS " FROM agent_tasks WHERE id = $1 AND workspace_id = $2"},
	[Q_LOCK] = {"task_lock",
		"SELECT " COLS " FROM agent_tasks WHERE id = $1 AND workspace_id = $2 "
		"FOR UPDATE"},
	/* Completing an open task claims it too. */
	[Q_DONE] = {"task_done",
		"UPDATE agent_tasks SET status = 'done', "
		"claimed_by = coalesce(claimed_by, $2), "
		"claimed_at = coalesce(claimed_at, $3::bigint), "
		"completed_at = $3::bigint, ended_at = $3::bigint, "
		"result_summary = $4, event_id = $5 WHERE id = $1 RETURNING " COLS},
};

static const seo_pg_stmts stmts = {"agent_tsk_", rows, Q__COUNT};

static int oom(rpc_ctx *ctx)
{
	return rpc_ctx_fail(ctx, "internal_error", "out of memory");
}

static int db_fail(rpc_ctx *ctx)
{
	return rpc_ctx_fail(ctx, "service_unavailable",
			    "agent tasks are unavailable, try again");
}

static char *col(seo_arena *a, PGresult *r, int row, int c, int *bad)
{
	char *s;

	if (PQgetisnull(r, row, c))
		return NULL;
	s = seo_arena_strdup(a, PQgetvalue(r, row, c));
	*bad |= s == NULL;
	return s;
}

static int64_t col_ms(PGresult *r, int row, int c, protobuf_c_boolean *has)
{
	*has = !PQgetisnull(r, row, c);
	return *has ? strtoll(PQgetvalue(r, row, c), NULL, 10) : 0;
}

/* Row `row` of `r` as a task on `a`; NULL when out of memory. */
static AgentTask *task_of(seo_arena *a, PGresult *r, int row)
{
	AgentTask *t = seo_arena_alloc(a, sizeof(*t));
	protobuf_c_boolean has;
	int bad = 0;

	if (t == NULL)
		return NULL;
	seo__agent__v1__agent_task__init(t);
	t->id = col(a, r, row, C_ID, &bad);
	t->site_id = col(a, r, row, C_SITE_ID, &bad);
	t->site_host = col(a, r, row, C_SITE_HOST, &bad);
	t->prompt = col(a, r, row, C_PROMPT, &bad);
	t->status = col(a, r, row, C_STATUS, &bad);
	t->origin = col(a, r, row, C_ORIGIN, &bad);
	t->created_at = col_ms(r, row, C_CREATED, &has);
	t->expires_at = col_ms(r, row, C_EXPIRES, &t->has_expires_at);
	t->claimed_at = col_ms(r, row, C_CLAIMED, &t->has_claimed_at);
	t->completed_at = col_ms(r, row, C_COMPLETED, &t->has_completed_at);
	t->result_summary = col(a, r, row, C_SUMMARY, &bad);
	return bad ? NULL : t;
}

/* {task} of row 0 of `r` into *resp. */
static int task_response(rpc_ctx *ctx, PGresult *r, ProtobufCMessage **resp)
{
	seo_arena *a = rpc_ctx_arena(ctx);
	Seo__Agent__V1__AgentTaskResponse *out = seo_arena_alloc(a, sizeof(*out));

	if (out == NULL)
		return oom(ctx);
	seo__agent__v1__agent_task_response__init(out);
	if ((out->task = task_of(a, r, 0)) == NULL)
		return oom(ctx);
	*resp = &out->base;
	return 0;
}

int agent__rpc_list_agent_tasks(rpc_ctx *ctx, const ProtobufCMessage *req,
				ProtobufCMessage **resp)
{
	const Seo__Agent__V1__ListAgentTasksRequest *in = (const void *)req;
	Seo__Agent__V1__ListAgentTasksResponse *out;
	const Seo__Account__V1__Site *site = NULL;
	const char *statuses = filters[0].statuses;
	rpc_result res;
	char now[24], limit[8];
	const char *params[5];
	seo_pg_conn *c;
	agent_call call;
	PGresult *r = NULL;
	int rc;

	if (agent__call_of(ctx, &call) != 0)
		return -1;
	for (size_t i = 0; in->status != NULL && i < sizeof(filters) / sizeof(filters[0]); i++)
		if (strcmp(in->status, filters[i].name) == 0)
			statuses = filters[i].statuses;
	if (in->site_id != NULL) {
		rc = agent__site_find(&call, in->site_id, &site, &res);
		if (rc == SEO_ENOTFOUND)
			return rpc_ctx_fail(ctx, "site_not_found",
					    "no website %.100s in this workspace",
					    in->site_id);
		if (rc != 0)
			return rpc_peer_fail(ctx, &res);
	}
	snprintf(now, sizeof(now), "%" PRId64, seo_now_ms());
	params[0] = call.workspace_id;
	params[1] = statuses;
	params[2] = now;
	params[3] = in->site_id;
	snprintf(limit, sizeof(limit), "%d", LIST_MAX);
	params[4] = limit;
	if (agent__db_get(call.svc, &c) != 0)
		return db_fail(ctx);
	rc = agent__db_exec(c->pg, &stmts, Q_LIST, 5, params, &r);
	agent__db_put(call.svc, c);
	if (rc != 0)
		return db_fail(ctx);
	out = seo_arena_alloc(call.arena, sizeof(*out));
	if (out == NULL)
		goto oom;
	seo__agent__v1__list_agent_tasks_response__init(out);
	out->n_tasks = (size_t)PQntuples(r);
	out->tasks = seo_arena_alloc(call.arena, out->n_tasks * sizeof(*out->tasks) + 1);
	if (out->tasks == NULL)
		goto oom;
	for (int i = 0; i < PQntuples(r); i++)
		if ((out->tasks[i] = task_of(call.arena, r, i)) == NULL)
			goto oom;
	PQclear(r);
	*resp = &out->base;
	return 0;
oom:
	PQclear(r);
	return oom(ctx);
}

/* Whether the task of row 0 of `r` is claimed, unexpired, by `key_id`
 * as of `now_ms`. */
static int claimed_by(PGresult *r, const char *key_id, int64_t now_ms)
{
	return strcmp(PQgetvalue(r, 0, C_STATUS), "claimed") == 0 &&
	       !PQgetisnull(r, 0, C_CLAIMED_BY) &&
	       strcmp(PQgetvalue(r, 0, C_CLAIMED_BY), key_id) == 0 &&
	       strtoll(PQgetvalue(r, 0, C_EXPIRES), NULL, 10) > now_ms;
}

/* 409 for the task of row 0 of `r`, which the caller may not claim or
 * complete as of `now_ms`, saying why. */
static int not_claimable(rpc_ctx *ctx, PGresult *r, int64_t now_ms)
{
	const char *status = PQgetvalue(r, 0, C_STATUS);
	const char *why = status;

	if (strcmp(status, "open") == 0 || strcmp(status, "claimed") == 0)
		why = strtoll(PQgetvalue(r, 0, C_EXPIRES), NULL, 10) <= now_ms
			      ? "expired" : "claimed by another key";
	return rpc_ctx_fail(ctx, "task_not_claimable", "the task is %s", why);
}

static int key_of(agent_call *call)
{
	if (call->key_id != NULL && call->key_id[0] != '\0')
		return 0;
	return rpc_ctx_fail(call->ctx, "invalid_api_key", "the call carries no key");
}

int agent__rpc_claim_agent_task(rpc_ctx *ctx, const ProtobufCMessage *req,
				ProtobufCMessage **resp)
{
	const Seo__Agent__V1__ClaimAgentTaskRequest *in = (const void *)req;
	int64_t now_ms = seo_now_ms();
	char now[24];
	const char *params[4];
	seo_pg_conn *c;
	agent_call call;
	PGresult *r = NULL;
	int rc;

	if (agent__call_of(ctx, &call) != 0 || key_of(&call) != 0)
		return -1;
	if (in->id == NULL)
		return rpc_ctx_fail(ctx, "task_not_found", "no such task");
	snprintf(now, sizeof(now), "%" PRId64, now_ms);
	params[0] = in->id;
	params[1] = call.workspace_id;
	params[2] = call.key_id;
	params[3] = now;
	if (agent__db_get(call.svc, &c) != 0)
		return db_fail(ctx);
	rc = agent__db_exec(c->pg, &stmts, Q_CLAIM, 4, params, &r);
	if (rc == 0 && PQntuples(r) == 0) {
		PQclear(r);
		r = NULL;
		rc = agent__db_exec(c->pg, &stmts, Q_GET, 2, params, &r);
	}
	agent__db_put(call.svc, c);
	if (rc != 0)
		rc = db_fail(ctx);
	else if (PQntuples(r) == 0)
		rc = rpc_ctx_fail(ctx, "task_not_found", "no such task");
	/* Claimed now, or already by this key: the task either way. */
	else if (!claimed_by(r, call.key_id, now_ms))
		rc = not_claimable(ctx, r, now_ms);
	else
		rc = task_response(ctx, r, resp);
	PQclear(r);
	return rc;
}

/* The completion of the task locked in `r` (open, or claimed by the
 * caller) on `pg`, inside its transaction: the task.completed event,
 * private until a person shares it, then the task. *done is its row. */
static int complete(agent_call *call, PGconn *pg, PGresult *r,
		    const char *summary, int64_t now_ms, PGresult **done)
{
	agent_event e = {
		.workspace_id = call->workspace_id,
		.site_id = PQgetisnull(r, 0, C_SITE_ID) ? NULL
							: PQgetvalue(r, 0, C_SITE_ID),
		.verb = "task.completed",
		.agent_text = summary,
		.occurred_at_ms = now_ms,
	};
	char event_id[32], now[24];
	const char *params[] = {PQgetvalue(r, 0, C_ID), call->key_id, now,
				summary, event_id};
	int rc = agent__event_add(pg, &e, event_id);

	snprintf(now, sizeof(now), "%" PRId64, now_ms);
	if (rc == 0)
		rc = agent__db_exec(pg, &stmts, Q_DONE, 5, params, done);
	return rc;
}

int agent__rpc_complete_agent_task(rpc_ctx *ctx, const ProtobufCMessage *req,
				   ProtobufCMessage **resp)
{
	const Seo__Agent__V1__CompleteAgentTaskRequest *in = (const void *)req;
	int64_t now_ms = seo_now_ms();
	char *summary = NULL;
	const char *params[2];
	seo_pg_conn *c;
	agent_call call;
	PGresult *r = NULL, *done = NULL;
	int rc = 0, committed = 0;

	if (agent__call_of(ctx, &call) != 0 || key_of(&call) != 0)
		return -1;
	if (in->summary != NULL &&
	    agent__text_clean(call.arena, in->summary, SUMMARY_MAX_CHARS,
			      &summary) != 0)
		return oom(ctx);
	if (summary == NULL || summary[0] == '\0')
		return rpc_ctx_fail(ctx, "invalid_task_summary",
				    "summary must be a non-empty string");
	if (in->id == NULL)
		return rpc_ctx_fail(ctx, "task_not_found", "no such task");
	params[0] = in->id;
	params[1] = call.workspace_id;
	if (agent__db_get(call.svc, &c) != 0)
		return db_fail(ctx);
	if (agent__db_begin(c->pg) != 0 ||
	    agent__db_exec(c->pg, &stmts, Q_LOCK, 2, params, &r) != 0)
		rc = db_fail(ctx);
	else if (PQntuples(r) == 0)
		rc = rpc_ctx_fail(ctx, "task_not_found", "no such task");
	else if (!(strcmp(PQgetvalue(r, 0, C_STATUS), "open") == 0 &&
		   strtoll(PQgetvalue(r, 0, C_EXPIRES), NULL, 10) > now_ms) &&
		 !claimed_by(r, call.key_id, now_ms))
		rc = not_claimable(ctx, r, now_ms);
	else if (complete(&call, c->pg, r, summary, now_ms, &done) != 0 ||
		 agent__db_commit(c->pg) != 0)
		rc = db_fail(ctx);
	else
		committed = 1;
	if (!committed)
		agent__db_rollback(c->pg);
	agent__db_put(call.svc, c);
	if (committed)
		rc = task_response(ctx, done, resp);
	PQclear(r);
	PQclear(done);
	return rc;
}

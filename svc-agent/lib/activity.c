/*
 * Activity notes: POST /v1/activity. A note is an agent.note activity row
 * (private until a person shares it) and an agent_notes row holding the
 * calls it took over: the key's usage rows of the last 24 hours that no
 * note has (Account/ClaimUsage, svc-account owning usage). Notes of one
 * workspace are written one at a time, so that the daily limit and a
 * client_request_id repeated concurrently are decided on committed rows.
 */
#include "agent_int.h"
#include "parts.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "seo/agent/v1/agent.pb-c.h"
#include "seo/errors.h"
#include "seo/json_text.h"
#include "seo/util.h"

#define DAY_MS ((int64_t)86400 * 1000)
#define SUMMARY_KEPT_CHARS 500
#define NOTES_PER_DAY 200
#define REFS_MAX 5
#define REQUEST_ID_MAX 64
/* The calls a note takes over (docs/decisions.md). */
#define CLAIM_WINDOW_MS DAY_MS

#define CLAIM_USAGE "/seo.account.v1.Account/ClaimUsage"
#define BAD "invalid_activity_input"
#define ID_CHARS "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_-"

static const char *const kind_hints[] = {"research", "draft", "analysis"};
static const char *const ref_types[] = {"campaign", "proposal", "task"};

#define N(a) (sizeof(a) / sizeof((a)[0]))

enum { Q_LOCK, Q_FIND, Q_COUNT, Q_INSERT, Q__COUNT };

static const seo_pg_stmt rows[Q__COUNT] = {
	[Q_LOCK] = {"note_lock",
		"SELECT pg_advisory_xact_lock(hashtextextended('agent_notes:' || $1, 0))"},
	[Q_FIND] = {"note_find",
		"SELECT id, credits, calls FROM agent_notes "
		"WHERE key_id = $1 AND client_request_id = $2"},
	[Q_COUNT] = {"note_count",
		"SELECT count(*) FROM agent_notes "
		"WHERE workspace_id = $1 AND created_at >= $2::bigint"},
	[Q_INSERT] = {"note_insert",
		"INSERT INTO agent_notes (id, workspace_id, key_id, client_request_id, "
		"kind_hint, credits, calls, created_at) "
		"VALUES ($1, $2, $3, $4, $5, $6::bigint, $7::bigint, $8::bigint)"},
};

static const seo_pg_stmts stmts = {"agent_note_", rows, Q__COUNT};

typedef Seo__Agent__V1__ActivityNote ActivityNote;

static int one_of(const char *s, const char *const *set, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (strcmp(s, set[i]) == 0)
			return 1;
	return 0;
}

/* 1 to 64 of A-Z a-z 0-9 _ -. */
static int id_ok(const char *s)
{
	size_t len = strlen(s);

	return len >= 1 && len <= REQUEST_ID_MAX && strspn(s, ID_CHARS) == len;
}

/* object_refs: an array of at most 5 objects {type, id} and nothing else
 * (validated, not stored). */
static int refs_check(const char *json, agent_err *err)
{
	json_error_t jerr;
	int nomem;
	json_t *v = seo_json_loadb(json, strlen(json), JSON_DECODE_ANY, &jerr,
				   &nomem);
	const char *type, *id;
	size_t i;
	json_t *ref;
	int rc = 0;

	if (nomem)
		return agent__err(err, SEO_ENOMEM, "internal_error", "out of memory");
	if (!json_is_array(v) || json_array_size(v) > REFS_MAX)
		rc = agent__err(err, SEO_EINVAL, BAD,
				"object_refs must be an array of at most %d "
				"{type, id} objects", REFS_MAX);
	json_array_foreach(rc == 0 ? v : NULL, i, ref) {
		type = json_string_value(json_object_get(ref, "type"));
		id = json_string_value(json_object_get(ref, "id"));
		if (!json_is_object(ref) || json_object_size(ref) != 2 ||
		    type == NULL || id == NULL ||
		    !one_of(type, ref_types, N(ref_types)) || !id_ok(id)) {
			rc = agent__err(err, SEO_EINVAL, BAD,
					"object_refs[%zu] must be {type: campaign, "
					"proposal or task, id: its id}", i);
			break;
		}
	}
	json_decref(v);
	return rc;
}

/* The input's own rules (the website is checked with svc-account). */
static int input_check(const Seo__Agent__V1__LogActivityRequest *in,
		       agent_call *call, char **summary, agent_err *err)
{
	if (in->summary == NULL ||
	    agent__text_clean(call->arena, in->summary, SUMMARY_KEPT_CHARS,
			      summary) != 0)
		return agent__err(err, SEO_ENOMEM, "internal_error", "out of memory");
	if ((*summary)[0] == '\0')
		return agent__err(err, SEO_EINVAL, BAD,
				  "summary must have visible characters");
	if (in->kind_hint != NULL &&
	    !one_of(in->kind_hint, kind_hints, N(kind_hints)))
		return agent__err(err, SEO_EINVAL, BAD,
				  "kind_hint must be research, draft or analysis");
	if (in->client_request_id != NULL && !id_ok(in->client_request_id))
		return agent__err(err, SEO_EINVAL, BAD,
				  "client_request_id must be 1 to 64 of A-Z, a-z, "
				  "0-9, _ and -");
	if (in->object_refs != NULL && in->object_refs->json != NULL)
		return refs_check(in->object_refs->json, err);
	return 0;
}

/* The calls of the last CLAIM_WINDOW_MS of the caller's key, taken over
 * by note `id`. Returns 0, or SEO_EUPSTREAM after failing the call. */
static int claim_usage(agent_call *call, const char *id, int64_t now_ms,
		       ActivityNote *note)
{
	Seo__Account__V1__ClaimUsageRequest req =
		SEO__ACCOUNT__V1__CLAIM_USAGE_REQUEST__INIT;
	Seo__Account__V1__ClaimUsageResponse *resp;
	rpc_result res;

	req.ref = (char *)id;
	req.has_since_ms = 1;
	req.since_ms = now_ms - CLAIM_WINDOW_MS;
	if (rpc_peer_call(call->svc->account, call->ctx, CLAIM_USAGE, &req.base,
			  &seo__account__v1__claim_usage_response__descriptor,
			  call->arena, &res) != 0) {
		rpc_peer_fail(call->ctx, &res);
		return SEO_EUPSTREAM;
	}
	resp = (Seo__Account__V1__ClaimUsageResponse *)res.response;
	note->credits = resp->credits;
	note->calls = resp->calls;
	return 0;
}

/* What the request logs. */
typedef struct note_in {
	const Seo__Agent__V1__LogActivityRequest *req;
	const char *summary; /* cleaned */
	int64_t now_ms;
} note_in;

/* The earlier note of the key's client_request_id into *note; 1 when
 * there is one. Returns SEO_EDB on failure. */
static int note_find(PGconn *pg, agent_call *call, const char *request_id,
		     ActivityNote *note)
{
	const char *params[] = {call->key_id, request_id};
	PGresult *r = NULL;
	int rc = agent__db_exec(pg, &stmts, Q_FIND, 2, params, &r);

	if (rc == 0 && PQntuples(r) == 1) {
		note->id = seo_arena_strdup(call->arena, PQgetvalue(r, 0, 0));
		note->credits = strtoll(PQgetvalue(r, 0, 1), NULL, 10);
		note->calls = strtoll(PQgetvalue(r, 0, 2), NULL, 10);
		note->duplicate = 1;
		rc = note->id != NULL ? 1 : SEO_ENOMEM;
	}
	PQclear(r);
	return rc;
}

/* The notes of the workspace since the start of the UTC day. */
static int notes_today(PGconn *pg, agent_call *call, int64_t now_ms,
		       int64_t *count)
{
	char day[24];
	const char *params[] = {call->workspace_id, day};
	PGresult *r = NULL;
	int rc;

	snprintf(day, sizeof(day), "%" PRId64, now_ms - now_ms % DAY_MS);
	rc = agent__db_exec(pg, &stmts, Q_COUNT, 2, params, &r);
	if (rc == 0)
		*count = strtoll(PQgetvalue(r, 0, 0), NULL, 10);
	PQclear(r);
	return rc;
}

/* Writes a new note inside the caller's transaction: its activity row,
 * the calls it takes over, its row. Returns 0, SEO_EDB, SEO_ENOMEM, SEO_EIO,
 * or SEO_EUPSTREAM after failing the call with svc-account's failure. */
static int note_write(PGconn *pg, agent_call *call, const note_in *n,
		      ActivityNote *note)
{
	agent_event e = {
		.workspace_id = call->workspace_id,
		.site_id = n->req->site_id,
		.verb = "agent.note",
		.agent_text = n->summary,
		.occurred_at_ms = n->now_ms,
	};
	char id[32], credits[24], calls[24], now[24];
	const char *params[] = {id, call->workspace_id, call->key_id,
				n->req->client_request_id, n->req->kind_hint,
				credits, calls, now};
	int rc = agent__event_add(pg, &e, id);

	if (rc != 0)
		return rc;
	rc = claim_usage(call, id, n->now_ms, note);
	if (rc != 0)
		return rc;
	snprintf(credits, sizeof(credits), "%" PRId64, note->credits);
	snprintf(calls, sizeof(calls), "%" PRId64, note->calls);
	snprintf(now, sizeof(now), "%" PRId64, n->now_ms);
	rc = agent__db_exec(pg, &stmts, Q_INSERT, 8, params, NULL);
	if (rc == 0 && (note->id = seo_arena_strdup(call->arena, id)) == NULL)
		rc = SEO_ENOMEM;
	return rc;
}

/* The note of `n` into *note: an earlier one with its client_request_id,
 * or a new one within the daily limit. Returns 0, or -1 after failing the
 * call. */
static int note_log(agent_call *call, const note_in *n, ActivityNote *note)
{
	const char *request_id = n->req->client_request_id;
	seo_pg_conn *c;
	int64_t today = 0;
	int rc, found = 0, committed = 0;

	if (agent__db_get(call->svc, &c) != 0)
		return rpc_ctx_fail(call->ctx, "service_unavailable",
				    "activity notes are unavailable, try again");
	rc = agent__db_begin(c->pg);
	if (rc == 0)
		rc = agent__db_exec(c->pg, &stmts, Q_LOCK, 1,
				    &call->workspace_id, NULL);
	if (rc == 0 && request_id != NULL) {
		found = note_find(c->pg, call, request_id, note);
		rc = found < 0 ? found : 0;
	}
	if (rc == 0 && !found)
		rc = notes_today(c->pg, call, n->now_ms, &today);
	if (rc == 0 && !found && today >= NOTES_PER_DAY) {
		rpc_ctx_fail(call->ctx, "activity_limit_reached",
			     "%d notes were already logged today (UTC)",
			     NOTES_PER_DAY);
		rc = SEO_EDENIED;
	} else if (rc == 0 && !found) {
		rc = note_write(c->pg, call, n, note);
	}
	if (rc == 0 && agent__db_commit(c->pg) == 0)
		committed = 1;
	if (!committed)
		agent__db_rollback(c->pg);
	agent__db_put(call->svc, c);
	if (committed)
		return 0;
	if (rc == SEO_EDENIED || rc == SEO_EUPSTREAM)
		return -1;
	return rpc_ctx_fail(call->ctx, rc == SEO_ENOMEM ? "internal_error"
							: "service_unavailable",
			    "the note could not be logged, try again");
}

int agent__rpc_log_activity(rpc_ctx *ctx, const ProtobufCMessage *req,
			    ProtobufCMessage **resp)
{
	const Seo__Agent__V1__LogActivityRequest *in = (const void *)req;
	const Seo__Account__V1__Site *site;
	note_in n = {.req = in, .now_ms = seo_now_ms()};
	ActivityNote *note;
	agent_call call;
	agent_err err;
	rpc_result res;
	char *summary;
	int rc;

	if (agent__call_of(ctx, &call) != 0)
		return -1;
	if (call.key_id == NULL || call.key_id[0] == '\0')
		return rpc_ctx_fail(ctx, "invalid_api_key", "the call carries no key");
	if (input_check(in, &call, &summary, &err) != 0)
		return agent__fail(ctx, &err);
	n.summary = summary;
	if (in->site_id != NULL) {
		rc = agent__site_find(&call, in->site_id, &site, &res);
		if (rc == SEO_ENOTFOUND)
			return rpc_ctx_fail(ctx, BAD,
					    "site_id is not an active website "
					    "of this workspace");
		if (rc != 0)
			return rpc_peer_fail(ctx, &res);
	}
	note = seo_arena_alloc(call.arena, sizeof(*note));
	if (note == NULL)
		return rpc_ctx_fail(ctx, "internal_error", "out of memory");
	seo__agent__v1__activity_note__init(note);
	if (note_log(&call, &n, note) != 0)
		return -1;
	*resp = &note->base;
	return 0;
}

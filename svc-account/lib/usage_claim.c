/*
 * Account/ClaimUsage (usage_claim.h). Its one statement runs unprepared on
 * a lent connection, outside the library's statement table.
 */
#include "usage_claim.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>

#include "acct_int.h"
#include "seo/account/v1/account.pb-c.h"
#include "seo/errors.h"
#include "seo/pg_stmt.h"

enum { Q_CLAIM, Q__COUNT };

/* The UPDATEs take each row's lock: a row another claim took meanwhile
 * no longer has attributed_to NULL when re-read, and is skipped; so is a
 * batch (migration 008) left without unclaimed calls. A batch's claimed
 * calls get the ref as their last element, and the batch is written
 * again in its own form (migration 010's calls_compact, or 008's array
 * in calls). */
static const seo_pg_stmt rows[Q__COUNT] = {
	[Q_CLAIM] = {"usage_claim",
		"WITH c AS (UPDATE usage SET attributed_to = $3 "
		"WHERE key_id = $2 AND workspace_id = $1 AND created_at >= $4::bigint "
		"AND attributed_to IS NULL RETURNING credits_used), "
		"b AS (SELECT id, calls, calls_compact, first_at FROM usage_batches "
		"WHERE key_id = $2 "
		"AND workspace_id = $1 AND last_at >= $4::bigint AND unclaimed > 0 "
		"FOR UPDATE), "
		"e AS (SELECT b.id, x.o, x.e, x.credits_used, "
		"x.attributed_to IS NULL AS free, x.attributed_to IS NULL "
		"AND x.created_at >= $4::bigint AS hit FROM b, "
		"usage_batch_calls(b.calls, b.calls_compact, b.first_at) AS x), "
		"s AS (SELECT id, json_agg(CASE WHEN hit THEN json_build_array(e->0, "
		"e->1, e->2, e->3, e->4, e->5, $3::text) ELSE e END ORDER BY o) "
		"AS calls, "
		"count(*) FILTER (WHERE free AND NOT hit) AS unclaimed, "
		"count(*) FILTER (WHERE hit) AS n, "
		"coalesce(sum(credits_used) FILTER (WHERE hit), 0) AS credits "
		"FROM e GROUP BY id), "
		"u AS (UPDATE usage_batches ub SET calls = CASE WHEN "
		"ub.calls_compact IS NULL THEN s.calls::text ELSE ub.calls END, "
		"calls_compact = jsonb_set(ub.calls_compact::jsonb, '{c}', "
		"s.calls::jsonb)::text, unclaimed = s.unclaimed "
		"FROM s WHERE ub.id = s.id AND s.n > 0 RETURNING s.credits, s.n) "
		"SELECT (SELECT coalesce(sum(credits_used), 0) FROM c) + "
		"(SELECT coalesce(sum(credits), 0) FROM u), "
		"(SELECT count(*) FROM c) + (SELECT coalesce(sum(n), 0) FROM u)"},
};

static const seo_pg_stmts stmts = {"acct_claim_", rows, Q__COUNT};

int acct_usage_claim(PGconn *db, const char *workspace_id, const char *key_id,
		     const char *ref, int64_t since_ms, int64_t *credits,
		     int64_t *calls, acct_err *err)
{
	seo_pg_conn c = seo_pg_conn_of(db, &stmts, 1);
	char since[24];
	const char *params[] = {workspace_id, key_id, ref, since};
	PGresult *r = NULL;
	int rc;

	snprintf(since, sizeof(since), "%" PRId64, since_ms);
	err->code = "internal_error";
	rc = seo_pg_exec(&c, Q_CLAIM, 4, params, &r, err->message,
			 sizeof(err->message));
	if (rc == 0) {
		*credits = strtoll(PQgetvalue(r, 0, 0), NULL, 10);
		*calls = strtoll(PQgetvalue(r, 0, 1), NULL, 10);
	} else {
		rc = SEO_EDB;
	}
	PQclear(r);
	return rc;
}

int acct_rpc_claim_usage(rpc_ctx *ctx, const ProtobufCMessage *req,
			 ProtobufCMessage **resp)
{
	const Seo__Account__V1__ClaimUsageRequest *in = (const void *)req;
	Seo__Account__V1__ClaimUsageResponse *out;
	acct_service *a = rpc_ctx_service(ctx);
	acct_caller who;
	acct_err err;
	PGconn *db;
	int rc;

	if (acct_rpc_caller(ctx, &who, &err) != 0)
		return acct_rpc_fail(ctx, &err);
	if (who.key_id == NULL || who.key_id[0] == '\0')
		return rpc_ctx_fail(ctx, "invalid_api_key", "the call carries no key");
	if (in->ref == NULL || in->ref[0] == '\0')
		return rpc_ctx_fail(ctx, "invalid_parameter", "ref is required");
	out = seo_arena_alloc(rpc_ctx_arena(ctx), sizeof(*out));
	if (out == NULL)
		return rpc_ctx_fail(ctx, "internal_error", "out of memory");
	seo__account__v1__claim_usage_response__init(out);
	if (acct_db_acquire(a, &db, &err) != 0)
		return acct_rpc_fail(ctx, &err);
	rc = acct_usage_claim(db, who.workspace_id, who.key_id, in->ref,
			      in->has_since_ms ? in->since_ms : 0, &out->credits,
			      &out->calls, &err);
	acct_db_release(a, db);
	if (rc != 0)
		return acct_rpc_fail(ctx, &err);
	*resp = &out->base;
	return 0;
}

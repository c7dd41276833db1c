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

/* The UPDATE takes each row's lock: a row another claim took meanwhile
 * no longer has attributed_to NULL when re-read, and is skipped. */
static const seo_pg_stmt rows[Q__COUNT] = {
	[Q_CLAIM] = {"usage_claim",
		"WITH c AS (UPDATE usage SET attributed_to = $3 "
		"WHERE key_id = $2 AND workspace_id = $1 AND created_at >= $4::bigint "
		"AND attributed_to IS NULL RETURNING credits_used) "
		"SELECT coalesce(sum(credits_used), 0), count(*) FROM c"},
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

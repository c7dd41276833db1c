/*
 * usage_claim.h: Account/ClaimUsage, a key's unattributed usage rows taken
 * over at once by an id of the caller's (svc-agent's activity notes: the
 * calls a note reports).
 */
#ifndef ACCT_USAGE_CLAIM_H
#define ACCT_USAGE_CLAIM_H

#include <stdint.h>

#include <libpq-fe.h>
#include <protobuf-c/protobuf-c.h>

#include "acct.h"
#include "seo/rpc.h"

/*
 * On `db` (idle; one statement, its own transaction): the usage rows of
 * key `key_id` in `workspace_id` made at or after `since_ms` and claimed
 * by nobody become claimed by `ref`. A row claimed concurrently by another
 * ref is not taken again. *credits sums their credits_used, *calls counts
 * them (0 and 0 when none). Returns 0 or SEO_EDB (err filled).
 */
int acct_usage_claim(PGconn *db, const char *workspace_id, const char *key_id,
		     const char *ref, int64_t since_ms, int64_t *credits,
		     int64_t *calls, acct_err *err);

/*
 * Account/ClaimUsage: ClaimUsageRequest -> ClaimUsageResponse for the
 * calling key (metadata seo-workspace-id, seo-key-id); invalid_api_key
 * without one, invalid_parameter without a ref.
 */
int acct_rpc_claim_usage(rpc_ctx *ctx, const ProtobufCMessage *req,
			 ProtobufCMessage **resp);

#endif

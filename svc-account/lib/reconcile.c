/*
 * The reconcile job: a debit made under an idempotency key stays open
 * until its caller reports the call's outcome (acct_settle()). One still
 * open ACCT_RECONCILE_GRACE_MS after its settle time lost its caller (a
 * gateway that died, an answer lost with the connection, a commit that
 * landed after the caller gave up): it is refunded in full, as a call
 * that was never answered must cost nothing.
 *
 * Locks as the ledger writer does, charges first, then workspaces, each
 * in id order; a charge whose outcome arrives meanwhile drops out of the
 * lock query (FOR UPDATE checks the condition again).
 */
#include "acct_int.h"

#include <stdio.h>
#include <stdlib.h>

#include "seo/errors.h"

/* Charges refunded per transaction. */
#define RECONCILE_BATCH 500

/* One transaction: refunds up to RECONCILE_BATCH open charges whose
 * settle time is before `cutoff`; *n how many. */
static int reconcile_batch(seo_pg_conn *c, const char *cutoff,
			   const char *now, int64_t *n, char *err,
			   size_t err_len)
{
	PGresult *open = NULL, *res = NULL;
	acct__pgarr ids;
	char limit[24];
	const char *params[2] = {cutoff, limit};
	int rc;

	*n = 0;
	acct__pgarr_init(&ids);
	rc = seo_pg_begin(c, err, err_len);
	if (rc != 0)
		return rc;
	snprintf(limit, sizeof(limit), "%d", RECONCILE_BATCH);
	rc = seo_pg_exec(c, ACCT_Q_RECONCILE_LOCK, 2, params, &open, err, err_len);
	if (rc != 0 || PQntuples(open) == 0)
		goto out;
	for (int i = 0; i < PQntuples(open); i++)
		acct__pgarr_add(&ids, PQgetvalue(open, i, 0));
	params[0] = acct__pgarr_done(&ids);
	params[1] = now;
	if (params[0] == NULL) {
		snprintf(err, err_len, "out of memory");
		rc = SEO_ENOMEM;
		goto out;
	}
	rc = seo_pg_exec(c, ACCT_Q_RECONCILE_LOCK_WORKSPACES, 1, params, NULL,
			 err, err_len);
	if (rc == 0)
		rc = seo_pg_exec(c, ACCT_Q_RECONCILE_REFUND, 2, params, &res, err,
				 err_len);
	if (rc == 0)
		*n = strtoll(PQgetvalue(res, 0, 0), NULL, 10);
out:
	if (rc == 0)
		rc = seo_pg_commit(c, err, err_len);
	else
		seo_pg_rollback(c);
	PQclear(open);
	PQclear(res);
	acct__pgarr_free(&ids);
	return rc;
}

int acct_reconcile(PGconn *pg, int64_t at_ms, int64_t *done, char *err,
		   size_t err_len)
{
	seo_pg_conn c = seo_pg_conn_of(pg, &acct__stmts, 1);
	char cutoff[24], now[24];
	int64_t n;
	int rc;

	snprintf(cutoff, sizeof(cutoff), "%lld",
		 (long long)(at_ms - ACCT_RECONCILE_GRACE_MS));
	snprintf(now, sizeof(now), "%lld", (long long)at_ms);
	*done = 0;
	do {
		rc = reconcile_batch(&c, cutoff, now, &n, err, err_len);
		*done += n;
	} while (rc == 0 && n == RECONCILE_BATCH);
	return rc;
}

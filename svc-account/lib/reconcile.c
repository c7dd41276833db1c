/*
 * The reconcile job: a debit made under an idempotency key stays open
 * until its caller reports the call's outcome (acct_settle()). One still
 * open ACCT_RECONCILE_GRACE_MS after its settle time lost its caller (a
 * gateway that died, an answer lost with the connection, a commit that
 * landed after the caller gave up): it is refunded in full, as a call
 * that was never answered must cost nothing.
 *
 * The same job closes the credit leases not reported on for
 * ACCT_LEASE_TTL_MS (acct__lease_expire()), as their holder would.
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

/* One transaction; *locked how many rows, *n the last step's count. */
static int sweep_batch(seo_pg_conn *c, const acct__sweep *s,
		       const char *cutoff, const char *now, int64_t *locked,
		       int64_t *n, char *err, size_t err_len)
{
	PGresult *open = NULL, *res = NULL;
	acct__pgarr ids;
	char limit[24];
	const char *params[3] = {cutoff, limit, NULL};
	int rc;

	*locked = *n = 0;
	acct__pgarr_init(&ids);
	rc = seo_pg_begin(c, err, err_len);
	if (rc != 0)
		return rc;
	snprintf(limit, sizeof(limit), "%d", s->limit);
	rc = seo_pg_exec(c, s->lock, 2, params, &open, err, err_len);
	if (rc != 0 || PQntuples(open) == 0)
		goto out;
	*locked = PQntuples(open);
	for (int i = 0; i < PQntuples(open); i++)
		acct__pgarr_add(&ids, PQgetvalue(open, i, 0));
	params[0] = acct__pgarr_done(&ids);
	params[1] = now;
	params[2] = cutoff;
	if (params[0] == NULL) {
		snprintf(err, err_len, "out of memory");
		rc = SEO_ENOMEM;
		goto out;
	}
	for (size_t i = 0; rc == 0 && i < s->n_steps; i++) {
		PQclear(res);
		res = NULL;
		rc = seo_pg_exec(c, s->steps[i].q, s->steps[i].nparams, params,
				 &res, err, err_len);
	}
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

int acct__sweep_run(seo_pg_conn *c, const acct__sweep *s, int64_t cutoff_ms,
		    int64_t now_ms, int64_t *done, char *err, size_t err_len)
{
	char cutoff[24], now[24];
	int64_t locked, n;
	int rc;

	snprintf(cutoff, sizeof(cutoff), "%lld", (long long)cutoff_ms);
	snprintf(now, sizeof(now), "%lld", (long long)now_ms);
	*done = 0;
	do {
		rc = sweep_batch(c, s, cutoff, now, &locked, &n, err, err_len);
		*done += n;
	} while (rc == 0 && locked == s->limit);
	return rc;
}

/* Open charges past their settle time and grace: refunded in full. */
static const acct__sweep refunds = {
	ACCT_Q_RECONCILE_LOCK, RECONCILE_BATCH,
	{{ACCT_Q_RECONCILE_LOCK_WORKSPACES, 1}, {ACCT_Q_RECONCILE_REFUND, 2}}, 2,
};

int acct_reconcile(PGconn *pg, int64_t at_ms, int64_t *done, char *err,
		   size_t err_len)
{
	seo_pg_conn c = seo_pg_conn_of(pg, &acct__stmts, 1);
	int64_t n;
	int rc = acct__sweep_run(&c, &refunds, at_ms - ACCT_RECONCILE_GRACE_MS,
			     at_ms, done, err, err_len);

	/* Credit leases whose holder stopped reporting (lease.c). */
	if (rc == 0)
		rc = acct__lease_expire(&c, at_ms - ACCT_LEASE_TTL_MS, at_ms, &n,
					err, err_len);
	if (rc == 0)
		*done += n;
	return rc;
}

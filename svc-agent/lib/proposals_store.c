/*
 * Proposals' changes that need no service process: a person's decision
 * (`seoctl proposal decide`, agent_store.h), the cancel of an outreach
 * proposal whose reviewer removed every email (proposals.h), the expiry
 * of pending proposals and of runs that stopped, the hourly retry of
 * queued runs and the retention of finished proposals and their notes
 * (the jobs `expire`, `indexnow-retry` and `retention`, parts.h). An
 * approval and a retry notify channel agent_proposals, on which
 * svc-agent's worker waits (proposals_worker.c).
 */
#include "agent_int.h"
#include "parts.h"
#include "proposals.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "seo/errors.h"

/* A queued automatic run is retried until this long after its approval,
 * then fails with its last error (docs/decisions.md). */
#define RETRY_FOR_MS ((int64_t)24 * 3600 * 1000)
/* A run still executing after this long was cut off (the process ended
 * during it): it fails with run_interrupted. */
#define RUN_LOST_MS ((int64_t)15 * 60 * 1000)
/* The specification's retention: finished proposals 400 days, the
 * agent's note on them 90. */
#define KEEP_MS ((int64_t)400 * 24 * 3600 * 1000)
#define KEEP_NOTE_MS ((int64_t)90 * 24 * 3600 * 1000)

#define FINISHED                                                            \
	"status IN ('succeeded', 'partially_succeeded', 'failed', "         \
	"'skipped', 'expired', 'superseded', 'cancelled')"

enum {
	Q_APPROVE,
	Q_SKIP,
	Q_STATUS,
	Q_EXPIRE,
	Q_LOST,
	Q_GIVE_UP,
	Q_RETRY,
	Q_FORGET,
	Q_FORGET_NOTE,
	Q_CANCEL,
	Q__COUNT
};

#define NOTIFY_EACH "SELECT pg_notify('agent_proposals', id) FROM u"

static const seo_pg_stmt rows[Q__COUNT] = {
	/* pending and not yet past expiry, or failed (the app's retry) */
	[Q_APPROVE] = {"approve",
		"WITH u AS (UPDATE agent_proposals SET status = 'approved', "
		"decided_at = $2::bigint, decided_via = 'web', result = NULL, "
		"error_code = NULL, finished_at = NULL, queued_at = NULL "
		"WHERE id = $1 AND (status = 'pending' AND expires_at > $2::bigint "
		"OR status = 'failed') RETURNING id) " NOTIFY_EACH},
	[Q_SKIP] = {"skip",
		"UPDATE agent_proposals SET status = 'skipped', "
		"decided_at = $2::bigint, decided_via = 'web', "
		"finished_at = $2::bigint "
		"WHERE id = $1 AND status = 'pending' AND expires_at > $2::bigint"},
	[Q_STATUS] = {"status",
		"SELECT status, expires_at <= $2::bigint AND status = 'pending' "
		"FROM agent_proposals WHERE id = $1"},
	[Q_EXPIRE] = {"expire",
		"UPDATE agent_proposals SET status = 'expired', "
		"finished_at = $1::bigint "
		"WHERE status = 'pending' AND expires_at <= $1::bigint"},
	[Q_LOST] = {"lost",
		"UPDATE agent_proposals SET status = 'failed', "
		"error_code = 'run_interrupted', finished_at = $1::bigint "
		"WHERE status = 'executing' AND started_at <= $1::bigint - $2::bigint"},
	[Q_GIVE_UP] = {"give_up",
		"UPDATE agent_proposals SET status = 'failed', queued_at = NULL, "
		"finished_at = $1::bigint "
		"WHERE status = 'approved' AND queued_at IS NOT NULL "
		"AND decided_at <= $1::bigint - $2::bigint"},
	/* queued within the job's second too: its instant is whole seconds
	 * (`seoctl job run`), a run queued is in milliseconds */
	[Q_RETRY] = {"retry",
		"WITH u AS (UPDATE agent_proposals SET queued_at = NULL "
		"WHERE status = 'approved' AND queued_at IS NOT NULL "
		"AND queued_at < $1::bigint + 1000 RETURNING id) " NOTIFY_EACH},
	[Q_FORGET] = {"forget",
		"DELETE FROM agent_proposals WHERE " FINISHED
		" AND finished_at <= $1::bigint - $2::bigint"},
	[Q_FORGET_NOTE] = {"forget_note",
		"UPDATE agent_proposals SET note = NULL WHERE " FINISHED
		" AND note IS NOT NULL AND finished_at <= $1::bigint - $2::bigint"},
	[Q_CANCEL] = {"cancel",
		"UPDATE agent_proposals SET status = 'cancelled', "
		"finished_at = $2::bigint WHERE id = $1 AND status = 'pending'"},
};

static const seo_pg_stmts stmts = {"agent_prp_", rows, Q__COUNT};

static int64_t changed(PGresult *r)
{
	return PQresultStatus(r) == PGRES_TUPLES_OK ? PQntuples(r)
						    : strtoll(PQcmdTuples(r), NULL, 10);
}

/* Why a decision changed nothing: proposal_not_found or its status. */
static int refused(PGconn *pg, const char *id, const char *at, int approve,
		   char *err, size_t err_len)
{
	const char *params[] = {id, at};
	PGresult *r = NULL;
	int rc = agent__db_exec(pg, &stmts, Q_STATUS, 2, params, &r);

	if (rc != 0) {
		snprintf(err, err_len, "the proposal could not be read");
	} else if (PQntuples(r) == 0) {
		snprintf(err, err_len, "no proposal %s", id);
		rc = SEO_ENOTFOUND;
	} else {
		snprintf(err, err_len, "proposal %s is %s: it cannot be %s", id,
			 PQgetvalue(r, 0, 1)[0] == 't' ? "past its expiry"
						       : PQgetvalue(r, 0, 0),
			 approve ? "approved" : "skipped");
		rc = SEO_EINVAL;
	}
	PQclear(r);
	return rc;
}

int agent_proposal_decide(PGconn *pg, const char *id, int approve,
			  int64_t at_ms, const char **status, char *err,
			  size_t err_len)
{
	char at[24];
	const char *params[] = {id, at};
	PGresult *r = NULL;
	int rc;

	snprintf(at, sizeof(at), "%" PRId64, at_ms);
	rc = agent__db_exec(pg, &stmts, approve ? Q_APPROVE : Q_SKIP, 2, params,
			    &r);
	if (rc == SEO_EEXIST) {
		snprintf(err, err_len,
			 "an identical proposal is open: %s cannot be approved again",
			 id);
		return rc;
	}
	if (rc != 0) {
		snprintf(err, err_len, "the decision could not be saved");
		return rc;
	}
	rc = changed(r) == 1 ? 0 : refused(pg, id, at, approve, err, err_len);
	PQclear(r);
	*status = approve ? "approved" : "skipped";
	return rc;
}

/* Runs `q` with `at_ms` and, when `span_ms` is not 0, that span; adds the
 * rows it changed to *done. */
static int run_count(PGconn *pg, int q, int64_t at_ms, int64_t span_ms,
		     int64_t *done, char *err, size_t err_len)
{
	char at[24], span[24];
	const char *params[] = {at, span};
	PGresult *r = NULL;
	int rc;

	snprintf(at, sizeof(at), "%" PRId64, at_ms);
	snprintf(span, sizeof(span), "%" PRId64, span_ms);
	rc = agent__db_exec(pg, &stmts, q, span_ms != 0 ? 2 : 1, params, &r);
	if (rc != 0)
		snprintf(err, err_len, "proposal %s failed", rows[q].name);
	else
		*done += changed(r);
	PQclear(r);
	return rc;
}

int agent__proposal_expire(PGconn *pg, int64_t at_ms, int64_t *done,
			   char *err, size_t err_len)
{
	*done = 0;
	if (run_count(pg, Q_EXPIRE, at_ms, 0, done, err, err_len) != 0)
		return SEO_EDB;
	return run_count(pg, Q_LOST, at_ms, RUN_LOST_MS, done, err, err_len);
}

int agent__proposal_retry(PGconn *pg, int64_t at_ms, int64_t *done,
			  char *err, size_t err_len)
{
	*done = 0;
	if (run_count(pg, Q_GIVE_UP, at_ms, RETRY_FOR_MS, done, err, err_len) != 0)
		return SEO_EDB;
	return run_count(pg, Q_RETRY, at_ms, 0, done, err, err_len);
}

int agent__proposal_retention(PGconn *pg, int64_t at_ms, int64_t *done,
			      char *err, size_t err_len)
{
	*done = 0;
	if (run_count(pg, Q_FORGET, at_ms, KEEP_MS, done, err, err_len) != 0)
		return SEO_EDB;
	return run_count(pg, Q_FORGET_NOTE, at_ms, KEEP_NOTE_MS, done, err,
			 err_len);
}

int agent_proposal_cancel(PGconn *pg, const char *proposal_id, int64_t at_ms)
{
	char at[24];
	const char *params[] = {proposal_id, at};
	PGresult *r = NULL;
	int rc;

	snprintf(at, sizeof(at), "%" PRId64, at_ms);
	rc = agent__db_exec(pg, &stmts, Q_CANCEL, 2, params, &r);
	if (rc == 0 && strcmp(PQcmdTuples(r), "1") != 0)
		rc = SEO_ENOTFOUND;
	PQclear(r);
	return rc;
}

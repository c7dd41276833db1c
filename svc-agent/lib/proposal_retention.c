/*
 * The retention of proposals (the specification's Retention; parts.h):
 * the agent's note on a finished proposal is cleared 90 days after it
 * finished, the proposal itself deleted after 400 days.
 */
#include "agent_int.h"
#include "parts.h"

#define DAY_MS ((int64_t)86400 * 1000)
#define NOTE_RETENTION_MS (90 * DAY_MS)
#define RETENTION_MS (400 * DAY_MS)

/* Finished: a status no run or person moves on from (a failed proposal a
 * person retries starts again with finished_at unset). */
#define FINISHED_BEFORE_1 \
	"finished_at < $1::bigint AND status IN ('succeeded', " \
	"'partially_succeeded', 'failed', 'skipped', 'expired', " \
	"'superseded', 'cancelled')"

enum { Q_CLEAR_NOTES, Q_DELETE, Q__COUNT };

static const seo_pg_stmt rows[Q__COUNT] = {
	[Q_CLEAR_NOTES] = {"proposal_note_clearing",
		"UPDATE agent_proposals SET note = NULL WHERE note IS NOT NULL "
		"AND " FINISHED_BEFORE_1},
	[Q_DELETE] = {"proposal_retention",
		"DELETE FROM agent_proposals WHERE " FINISHED_BEFORE_1},
};

static const seo_pg_stmts stmts = {"agent_pr_", rows, Q__COUNT};

int agent__proposal_note_retention(PGconn *pg, int64_t at_ms, int64_t *done,
				   char *err, size_t err_len)
{
	return agent__db_count_at(pg, &stmts, Q_CLEAR_NOTES,
				  at_ms - NOTE_RETENTION_MS, done, err, err_len);
}

int agent__proposal_retention(PGconn *pg, int64_t at_ms, int64_t *done,
			      char *err, size_t err_len)
{
	return agent__db_count_at(pg, &stmts, Q_DELETE, at_ms - RETENTION_MS,
				  done, err, err_len);
}

/*
 * Outreach's part of the "retention" job (parts.h): delivered mail, and
 * the copies held for proposals that retention removed.
 */
#include "agent_int.h"
#include "parts.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>

#include "seo/mail.h"

/* Delivered mail is kept this long, as svc-account keeps its own. */
#define MAIL_KEEP_MS ((int64_t)30 * 86400 * 1000)

enum { Q_HELD_ORPHANS, Q__COUNT };

static const seo_pg_stmt rows[Q__COUNT] = {
	/* A hold outlives its proposal only while the proposal's creating
	 * transaction is open, and then it is not visible here. */
	[Q_HELD_ORPHANS] = {"held_orphans",
		"DELETE FROM agent_outreach_held WHERE hold_id NOT IN (SELECT "
		"payload->>'hold_id' FROM agent_proposals WHERE kind = "
		"'outreach_send' AND payload ? 'hold_id')"},
};

static const seo_pg_stmts stmts = {"agent_ort_", rows, Q__COUNT};

int agent__outreach_retention(PGconn *pg, int64_t at_ms, int64_t *done,
			      char *err, size_t err_len)
{
	PGresult *r = NULL;
	int64_t mail = 0;
	int rc = seo_mail_purge(pg, &agent_outbox, at_ms - MAIL_KEEP_MS, &mail);

	if (rc == 0)
		rc = agent__db_exec(pg, &stmts, Q_HELD_ORPHANS, 0, NULL, &r);
	if (rc == 0)
		*done = mail + strtoll(PQcmdTuples(r), NULL, 10);
	else
		snprintf(err, err_len, "outreach retention failed");
	PQclear(r);
	return rc;
}

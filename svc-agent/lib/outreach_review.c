/*
 * A reviewer's edit of a pending outreach proposal: an email taken out
 * (`seoctl proposal remove-email`, agent_store.h), standing in for the
 * web app's review screen.
 */
#include "agent_int.h"
#include "proposals.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "seo/errors.h"

enum { Q_PROPOSAL, Q_REMOVE, Q_CONTACT, Q_LEFT, Q__COUNT };

static const seo_pg_stmt rows[Q__COUNT] = {
	[Q_PROPOSAL] = {"proposal",
		"SELECT payload->>'hold_id', status, expires_at <= $2::bigint "
		"FROM agent_proposals WHERE id = $1 AND kind = 'outreach_send' "
		"FOR UPDATE"},
	[Q_REMOVE] = {"remove",
		"UPDATE agent_outreach_held SET removed_at = $3::bigint "
		"WHERE hold_id = $1 AND lower(email) = lower($2) AND removed_at "
		"IS NULL RETURNING campaign_id, domain"},
	/* Never sent from any proposal once a reviewer took it out; a later
	 * proposal with the contact makes it copy-ready again. */
	[Q_CONTACT] = {"contact",
		"UPDATE agent_contacts SET state = 'removed', updated_at = $3::bigint "
		"WHERE campaign_id = $1 AND domain = $2 AND state = 'ready'"},
	[Q_LEFT] = {"left",
		"SELECT count(*) FROM agent_outreach_held WHERE hold_id = $1 "
		"AND removed_at IS NULL"},
};

static const seo_pg_stmts stmts = {"agent_rv_", rows, Q__COUNT};

/* The pending proposal's hold id into `hold` (32 bytes). */
static int pending_hold(PGconn *pg, const char *id, const char *at,
			char hold[32], char *err, size_t err_len)
{
	const char *params[] = {id, at};
	PGresult *r = NULL;
	int rc = agent__db_exec(pg, &stmts, Q_PROPOSAL, 2, params, &r);

	if (rc != 0) {
		snprintf(err, err_len, "the proposal could not be read");
	} else if (PQntuples(r) == 0) {
		snprintf(err, err_len, "no outreach proposal %s", id);
		rc = SEO_ENOTFOUND;
	} else if (strcmp(PQgetvalue(r, 0, 1), "pending") != 0 ||
		   PQgetvalue(r, 0, 2)[0] == 't') {
		snprintf(err, err_len, "proposal %s is %s: its emails cannot change",
			 id, PQgetvalue(r, 0, 2)[0] == 't' ? "past its expiry"
							   : PQgetvalue(r, 0, 1));
		rc = SEO_EINVAL;
	} else {
		snprintf(hold, 32, "%s", PQgetvalue(r, 0, 0));
	}
	PQclear(r);
	return rc;
}

/* Takes `email` out of hold `hold` and its campaign's copy-ready
 * contacts; *removed counts the held contacts it was. */
static int remove_email(PGconn *pg, const char *hold, const char *email,
			const char *at, int64_t *removed)
{
	const char *params[] = {hold, email, at};
	PGresult *r = NULL;
	int rc = agent__db_exec(pg, &stmts, Q_REMOVE, 3, params, &r);

	*removed = rc == 0 ? PQntuples(r) : 0;
	for (int i = 0; rc == 0 && i < PQntuples(r); i++) {
		const char *contact[] = {PQgetvalue(r, i, 0), PQgetvalue(r, i, 1), at};

		rc = agent__db_exec(pg, &stmts, Q_CONTACT, 3, contact, NULL);
	}
	PQclear(r);
	return rc;
}

static int remove_in_tx(PGconn *pg, const char *id, const char *email,
			int64_t at_ms, agent_outreach_removal *out, char *err,
			size_t err_len)
{
	char at[24], hold[32];
	const char *left[] = {hold};
	PGresult *r = NULL;
	int rc;

	snprintf(at, sizeof(at), "%" PRId64, at_ms);
	rc = pending_hold(pg, id, at, hold, err, err_len);
	if (rc != 0)
		return rc;
	rc = remove_email(pg, hold, email, at, &out->removed);
	if (rc == 0 && out->removed == 0) {
		snprintf(err, err_len, "proposal %s holds no email %s", id, email);
		return SEO_EINVAL;
	}
	if (rc == 0)
		rc = agent__db_exec(pg, &stmts, Q_LEFT, 1, left, &r);
	if (rc == 0)
		out->held = strtoll(PQgetvalue(r, 0, 0), NULL, 10);
	PQclear(r);
	out->status = "pending";
	/* Nothing left to send: the proposal ends cancelled. */
	if (rc == 0 && out->held == 0) {
		rc = agent_proposal_cancel(pg, id, at_ms);
		out->status = "cancelled";
	}
	if (rc != 0 && err[0] == '\0')
		snprintf(err, err_len, "the removal could not be saved");
	return rc;
}

int agent_outreach_remove(PGconn *pg, const char *id, const char *email,
			  int64_t at_ms, agent_outreach_removal *out, char *err,
			  size_t err_len)
{
	int rc;

	err[0] = '\0';
	memset(out, 0, sizeof(*out));
	rc = agent__db_begin(pg);
	if (rc == 0)
		rc = remove_in_tx(pg, id, email, at_ms, out, err, err_len);
	if (rc == 0)
		rc = agent__db_commit(pg);
	else
		agent__db_rollback(pg);
	if (rc != 0 && err[0] == '\0')
		snprintf(err, err_len, "the removal could not be saved");
	return rc;
}

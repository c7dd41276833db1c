/*
 * Activity rows: the specification's Events (agent_int.h).
 */
#include "agent_int.h"

#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "seo/errors.h"
#include "seo/util.h"

#define ID_RANDOM 24

/* The specification's retention of activity. */
#define RETENTION_MS ((int64_t)400 * 86400 * 1000)

enum { Q_ADD, Q_RETENTION, Q__COUNT };

static const seo_pg_stmt rows[Q__COUNT] = {
	[Q_ADD] = {"event_add",
		"INSERT INTO agent_activity (id, workspace_id, site_id, verb, "
		"params, agent_text, visible, occurred_at) "
		"VALUES ($1, $2, $3, $4, coalesce($5::jsonb, '{}'::jsonb), $6, "
		"$7::boolean, $8::bigint)"},
	[Q_RETENTION] = {"event_retention",
		"DELETE FROM agent_activity WHERE occurred_at < $1::bigint"},
};

static const seo_pg_stmts stmts = {"agent_ev_", rows, Q__COUNT};

int agent__event_add(PGconn *pg, const agent_event *e, char *id_out)
{
	char id[4 + ID_RANDOM + 1] = "act_", at[24];
	const char *params[] = {id, e->workspace_id, e->site_id, e->verb,
				e->params, e->agent_text,
				e->visible ? "true" : "false", at};
	int rc;

	if (seo_random_string(id + 4, ID_RANDOM, SEO_URLSAFE) != 0)
		return SEO_EIO;
	snprintf(at, sizeof(at), "%" PRId64, e->occurred_at_ms);
	rc = agent__db_exec(pg, &stmts, Q_ADD, 8, params, NULL);
	if (rc == 0 && id_out != NULL)
		memcpy(id_out, id, sizeof(id));
	return rc;
}

int agent__event_retention(PGconn *pg, int64_t at_ms, int64_t *done,
			   char *err, size_t err_len)
{
	return agent__db_count_at(pg, &stmts, Q_RETENTION,
				  at_ms - RETENTION_MS, done, err, err_len);
}

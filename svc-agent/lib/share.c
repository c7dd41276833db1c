/*
 * Sharing a note or a task summary with the client (agent_store.h): the
 * stand-in for the web app's share button.
 */
#include "agent_int.h"

#include <stdio.h>
#include <string.h>

#include "seo/errors.h"

enum { Q_SHARE, Q__COUNT };

static const seo_pg_stmt rows[Q__COUNT] = {
	/* the row (a task's id names its summary), its verb, and whether it
	 * is one a person shares */
	[Q_SHARE] = {"share",
		"WITH t AS (SELECT coalesce((SELECT event_id FROM agent_tasks "
		"WHERE id = $1), $1) AS id), "
		"s AS (UPDATE agent_activity a SET visible = true FROM t "
		"WHERE a.id = t.id AND a.verb IN ('agent.note', 'task.completed') "
		"RETURNING a.id) "
		"SELECT a.id, a.verb, EXISTS (SELECT 1 FROM s) FROM agent_activity a "
		"JOIN t ON a.id = t.id"},
};

static const seo_pg_stmts stmts = {"agent_sh_", rows, Q__COUNT};

int agent_activity_share(PGconn *pg, const char *id, char *act_id,
			 size_t act_len, char *verb, size_t verb_len)
{
	const char *params[] = {id};
	PGresult *r = NULL;
	int rc = agent__db_exec(pg, &stmts, Q_SHARE, 1, params, &r);

	if (rc == 0 && PQntuples(r) != 1)
		rc = SEO_ENOTFOUND;
	if (rc == 0) {
		snprintf(act_id, act_len, "%s", PQgetvalue(r, 0, 0));
		snprintf(verb, verb_len, "%s", PQgetvalue(r, 0, 1));
		if (strcmp(PQgetvalue(r, 0, 2), "t") != 0)
			rc = SEO_EINVAL;
	}
	PQclear(r);
	return rc;
}

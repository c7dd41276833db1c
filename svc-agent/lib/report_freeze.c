/*
 * The client report's saved weeks as jobs (parts.h): `freeze` saves each
 * past week with client-visible activity from the Monday 07:00 UTC after
 * it; `retention` deletes saved weeks 400 days after their end.
 */
#include "agent_int.h"
#include "parts.h"
#include "report.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>

#include "seo/errors.h"

/* A week is saved from 07:00 UTC on the Monday that ends it. */
#define FREEZE_AFTER_MS ((int64_t)7 * 3600 * 1000)
/* The specification's retention of saved weeks, counted from their end. */
#define RETENTION_MS (400 * AGENT_DAY_MS)

/* The Monday of occurred_at, as agent__week_of() computes it. */
#define WEEK_OF_ROW "occurred_at - (occurred_at - 345600000) % 604800000"

enum { Q_WEEKS, Q_RETENTION, Q__COUNT };

static const seo_pg_stmt rows[Q__COUNT] = {
	/* $1 agent__client_verbs, weeks from $2 and before $3 */
	[Q_WEEKS] = {"weeks",
		"SELECT DISTINCT workspace_id, site_id, " WEEK_OF_ROW
		" AS week_start FROM agent_activity a WHERE visible "
		"AND site_id IS NOT NULL AND verb = ANY($1::text[]) "
		"AND occurred_at >= $2::bigint AND occurred_at < $3::bigint "
		"AND NOT EXISTS (SELECT 1 FROM agent_report_weeks w "
		"WHERE w.site_id = a.site_id AND w.week_start = " WEEK_OF_ROW ") "
		"ORDER BY week_start, site_id"},
	[Q_RETENTION] = {"report_week_retention",
		"DELETE FROM agent_report_weeks WHERE week_start < $1::bigint"},
};

static const seo_pg_stmts stmts = {"agent_rf_", rows, Q__COUNT};

/* The first week still kept at `at_ms`: every earlier one ended 400 days
 * ago or more. */
static int64_t first_kept(int64_t at_ms)
{
	return agent__week_of(at_ms - RETENTION_MS);
}

int agent__report_freeze(PGconn *pg, int64_t at_ms, int64_t *done,
			 char *err, size_t err_len)
{
	char from[24], before[24];
	const char *params[] = {agent__client_verbs, from, before};
	PGresult *r = NULL;
	int saved, rc;

	*done = 0;
	snprintf(from, sizeof(from), "%" PRId64, first_kept(at_ms));
	snprintf(before, sizeof(before), "%" PRId64,
		 agent__week_of(at_ms - FREEZE_AFTER_MS));
	rc = agent__db_exec(pg, &stmts, Q_WEEKS, 3, params, &r);
	for (int i = 0; rc == 0 && i < PQntuples(r); i++) {
		rc = agent__week_save(pg, PQgetvalue(r, i, 0),
				      PQgetvalue(r, i, 1),
				      strtoll(PQgetvalue(r, i, 2), NULL, 10),
				      at_ms, &saved);
		*done += saved;
	}
	PQclear(r);
	if (rc != 0)
		snprintf(err, err_len, "client-report freeze failed");
	return rc;
}

int agent__report_retention(PGconn *pg, int64_t at_ms, int64_t *done,
			    char *err, size_t err_len)
{
	return agent__db_count_at(pg, &stmts, Q_RETENTION, first_kept(at_ms),
				  done, err, err_len);
}

/*
 * Agent tasks outside calls: created and cancelled by a person (seoctl,
 * standing in for the web app; agent_store.h), expired and removed by
 * jobs (parts.h). The routes are tasks.c's.
 */
#include "agent_int.h"
#include "parts.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "seo/errors.h"
#include "seo/util.h"

#define DAY_MS ((int64_t)86400 * 1000)
/* An unfinished task stops being offered a week after it was queued
 * (docs/decisions.md). */
#define TASK_TTL_MS (7 * DAY_MS)
#define RETENTION_MS (400 * DAY_MS)
#define PROMPT_MAX_CHARS 4000

static const char *const origins[] = {"task_box", "proposal", "rankings_row",
				      "domain_view"};

enum { Q_INSERT, Q_CANCEL, Q_STATUS, Q_EXPIRE, Q_RETENTION, Q__COUNT };

static const seo_pg_stmt rows[Q__COUNT] = {
	[Q_INSERT] = {"task_insert",
		"INSERT INTO agent_tasks (id, workspace_id, site_id, site_host, "
		"prompt, origin, status, created_at, expires_at) "
		"VALUES ($1, $2, $3, $4, $5, $6, 'open', $7::bigint, "
		"$7::bigint + $8::bigint)"},
	[Q_CANCEL] = {"task_cancel",
		"UPDATE agent_tasks SET status = 'cancelled', ended_at = $2::bigint "
		"WHERE id = $1 AND status IN ('open', 'claimed') RETURNING id"},
	[Q_STATUS] = {"task_status",
		"SELECT status FROM agent_tasks WHERE id = $1"},
	/* Expired at its expiry, whenever the job gets to it. */
	[Q_EXPIRE] = {"task_expire",
		"UPDATE agent_tasks SET status = 'expired', ended_at = expires_at "
		"WHERE status IN ('open', 'claimed') AND expires_at <= $1::bigint"},
	[Q_RETENTION] = {"task_retention",
		"DELETE FROM agent_tasks WHERE ended_at < $1::bigint"},
};

static const seo_pg_stmts stmts = {"agent_tks_", rows, Q__COUNT};

static int fail(const char **code, char *err, size_t err_len, int rc,
		const char *c, const char *msg)
{
	*code = c;
	snprintf(err, err_len, "%s", msg);
	return rc;
}

/* Characters (code points) of valid UTF-8 `s`. */
static size_t chars(const char *s)
{
	size_t n = 0;

	for (; *s != '\0'; s++)
		n += ((unsigned char)*s & 0xc0) != 0x80;
	return n;
}

static const char *origin_of(const char *origin)
{
	if (origin == NULL)
		return origins[0];
	for (size_t i = 0; i < sizeof(origins) / sizeof(origins[0]); i++)
		if (strcmp(origin, origins[i]) == 0)
			return origins[i];
	return NULL;
}

int agent_task_create(PGconn *db, const agent_task_spec *spec,
		      char id_out[AGENT_TASK_ID_LEN], const char **code,
		      char *err, size_t err_len)
{
	seo_arena *arena = seo_arena_new(0);
	char now[24], ttl[24], *prompt = NULL, *id = NULL;
	const char *origin = origin_of(spec->origin);
	int rc;

	if (arena == NULL ||
	    agent__text_clean(arena, spec->prompt, PROMPT_MAX_CHARS + 1,
			      &prompt) != 0 ||
	    (id = agent__new_id(arena, "tsk_")) == NULL) {
		rc = fail(code, err, err_len, SEO_ENOMEM, "internal_error",
			  "out of memory");
		goto out;
	}
	if (origin == NULL) {
		rc = fail(code, err, err_len, SEO_EINVAL, "invalid_parameter",
			  "origin must be task_box, proposal, rankings_row or "
			  "domain_view");
		goto out;
	}
	if (prompt[0] == '\0' || chars(prompt) > PROMPT_MAX_CHARS) {
		rc = fail(code, err, err_len, SEO_EINVAL, "invalid_parameter",
			  "prompt must have 1 to 4000 visible characters");
		goto out;
	}
	snprintf(now, sizeof(now), "%" PRId64, seo_now_ms());
	snprintf(ttl, sizeof(ttl), "%" PRId64, TASK_TTL_MS);
	{
		const char *params[] = {id, spec->workspace_id, spec->site_id,
					spec->site_id != NULL ? spec->site_host : NULL,
					prompt, origin, now, ttl};
		rc = agent__db_exec(db, &stmts, Q_INSERT, 8, params, NULL);
	}
	if (rc != 0) {
		rc = fail(code, err, err_len, SEO_EDB, "internal_error",
			  "the task could not be stored");
		goto out;
	}
	snprintf(id_out, AGENT_TASK_ID_LEN, "%s", id);
out:
	seo_arena_free(arena);
	return rc;
}

int agent_task_cancel(PGconn *db, const char *task_id, const char **code,
		      char *err, size_t err_len)
{
	char now[24];
	const char *params[] = {task_id, now};
	PGresult *r = NULL;
	int rc;

	snprintf(now, sizeof(now), "%" PRId64, seo_now_ms());
	rc = agent__db_exec(db, &stmts, Q_CANCEL, 2, params, &r);
	if (rc == 0 && PQntuples(r) == 0) {
		PQclear(r);
		r = NULL;
		rc = agent__db_exec(db, &stmts, Q_STATUS, 1, params, &r);
		if (rc == 0 && PQntuples(r) == 0)
			rc = fail(code, err, err_len, SEO_ENOTFOUND,
				  "task_not_found", "no such task");
		else if (rc == 0 &&
			 strcmp(PQgetvalue(r, 0, 0), "cancelled") != 0)
			rc = fail(code, err, err_len, SEO_EDENIED,
				  "task_not_claimable",
				  strcmp(PQgetvalue(r, 0, 0), "done") == 0
					  ? "the task is done"
					  : "the task has expired");
	}
	if (rc == SEO_EDB)
		fail(code, err, err_len, rc, "internal_error",
		     "the task could not be cancelled");
	PQclear(r);
	return rc;
}

/* A statement of `at_ms` counting its rows into *done. */
static int job_exec(PGconn *pg, int q, int64_t at_ms, int64_t *done,
		    char *err, size_t err_len)
{
	char at[24];
	const char *params[] = {at};
	PGresult *r = NULL;
	int rc;

	snprintf(at, sizeof(at), "%" PRId64, at_ms);
	rc = agent__db_exec(pg, &stmts, q, 1, params, &r);
	if (rc == 0)
		*done = strtoll(PQcmdTuples(r), NULL, 10);
	else
		snprintf(err, err_len, "%s failed", rows[q].name);
	PQclear(r);
	return rc;
}

int agent__task_expire(PGconn *pg, int64_t at_ms, int64_t *done, char *err,
		       size_t err_len)
{
	return job_exec(pg, Q_EXPIRE, at_ms, done, err, err_len);
}

int agent__task_retention(PGconn *pg, int64_t at_ms, int64_t *done, char *err,
			  size_t err_len)
{
	return job_exec(pg, Q_RETENTION, at_ms - RETENTION_MS, done, err, err_len);
}

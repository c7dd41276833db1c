/*
 * seoctl.h: what seoctl.c (the command table) and its command files
 * share.
 */
#ifndef SEOCTL_H
#define SEOCTL_H

#include <jansson.h>
#include <libpq-fe.h>

#include "acct.h"

/*
 * `seoctl job run NAME [--at TIME]`: runs every component's row of job
 * `name` on `db` as of `at` (ISO 8601 UTC, "2026-12-07T07:00:00Z"; NULL:
 * now), after applying those components' migrations, and adds "job", "at"
 * and "done" (the sum of what the rows counted; 0 for a row another
 * process was running) to `out`. Fails with unknown_job for a name no
 * component has, invalid_parameter for a malformed time.
 */
int seoctl_job_run(PGconn *db, const char *name, const char *at, json_t *out,
		   acct_err *err);

/* Applies svc-agent's migrations on `db`, for commands on its tables.
 * Returns 0, or a failure with *err set. */
int seoctl_agent_migrate(PGconn *db, acct_err *err);

#endif

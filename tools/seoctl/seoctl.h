/*
 * seoctl.h: what seoctl.c (the command table) and its command files
 * share.
 */
#ifndef SEOCTL_H
#define SEOCTL_H

#include <jansson.h>
#include <libpq-fe.h>

#include "acct.h"
#include "seo/pg.h"

/*
 * `seoctl proposal remove-email --id P --email EMAIL`: a reviewer takes an
 * address out of a pending outreach proposal (agent_outreach_remove());
 * adds "proposal_id", "status" (pending, or cancelled when nothing is left
 * to send), "removed" and "held" to `out`. Fails with proposal_not_found
 * or invalid_parameter.
 */
int seoctl_outreach_remove(PGconn *db, const char *id, const char *email,
			   json_t *out, acct_err *err);

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

/* Applies the migrations of `set` on `db`: 0, or fails with
 * internal_error (the directory not found, a migration failed). */
int seoctl_migrate_set(PGconn *db, const seo_pg_set *set, acct_err *err);

/*
 * `seoctl activity share --id ID`: shares agent note or task summary `id`
 * (an activity id, or a done task's) with the client (agent_store.h)
 * after applying svc-agent's migrations, and adds "id" (the activity's),
 * "verb" and "shared" (true) to `out`. Fails with activity_not_found for
 * an unknown id, not_shareable for another row.
 */
int seoctl_activity_share(PGconn *db, const char *id, json_t *out,
			  acct_err *err);

/* `seoctl task create --workspace W [--site S] --prompt TEXT [--origin
 * ORIGIN]` -> {"task_id"}, and `seoctl task cancel --id T` -> {"task_id",
 * "status"}: what a person does in the web app (task.c). */
int seoctl_task_create(PGconn *db, const char *const *v, json_t *out,
		       acct_err *err);
int seoctl_task_cancel(PGconn *db, const char *const *v, json_t *out,
		       acct_err *err);

#endif

/*
 * agent_store.h: what of svc-agent's PostgreSQL state others may run
 * (library agent_store, without the service's network stack): its
 * migration set, its periodic jobs, and the operator's commands of
 * `seoctl` that stand in for the web app.
 */
#ifndef AGENT_STORE_H
#define AGENT_STORE_H

#include <stddef.h>

#include "seo/job.h"
#include "seo/mail.h"
#include "seo/pg.h"

/* agent_NNN_name.sql in svc-agent/migrations, or SEO_AGENT_MIGRATIONS_DIR
 * (seo/pg.h). */
extern const seo_pg_set agent_migrations;

/* The jobs of the contract's `seoctl job run` that svc-agent owns
 * (seo/job.h). */
extern const seo_job agent_jobs[];
extern const size_t agent_n_jobs;

/*
 * `seoctl activity share --id ID`: a team member shares the agent note or
 * task summary of activity row `id` (verb agent.note or task.completed)
 * with the client: it is client-visible from now on, in the reports of its
 * week while that week is not saved. Sharing again changes nothing. The
 * row's verb is copied into `verb` (`verb_len` bytes). Returns 0,
 * SEO_ENOTFOUND when no row has that id, SEO_EINVAL when the row is
 * neither a note nor a summary (other rows are visible as written or
 * never), or SEO_EDB (logged).
 */
int agent_activity_share(PGconn *pg, const char *id, char *verb,
			 size_t verb_len);

/* svc-agent's outbox (the agent_outbox table): outreach mail, queued by
 * approved proposals' runs and sent by the mailer svc-agent runs
 * (seo/mail.h). */
extern const seo_outbox agent_outbox;

/* ---- agent tasks (seoctl task create, task cancel) -------------------------- */

/* A task id ("tsk_" + 24 characters) with its NUL. */
#define AGENT_TASK_ID_LEN 29

/* What a person queues for an agent. */
typedef struct agent_task_spec {
	const char *workspace_id;
	const char *site_id;   /* NULL: workspace-wide */
	const char *site_host; /* the website's host, with site_id */
	const char *prompt;    /* cleaned as summaries are; 1 to 4000 characters */
	const char *origin;    /* task_box (NULL), proposal, rankings_row,
				* domain_view */
} agent_task_spec;

/*
 * Creates an open task of *spec on `db` (idle; svc-agent's migrations
 * applied), expiring 7 days later, into id_out. Returns 0, or SEO_EINVAL
 * (invalid_parameter: prompt or origin), SEO_ENOMEM or SEO_EDB with *code
 * (static) and err (err_len bytes) set.
 */
int agent_task_create(PGconn *db, const agent_task_spec *spec,
		      char id_out[AGENT_TASK_ID_LEN], const char **code,
		      char *err, size_t err_len);

/*
 * Cancels task `task_id` (open or claimed) on `db`, as a person withdrawing
 * it in the web app; cancelling a cancelled task again does nothing.
 * Returns 0, or SEO_ENOTFOUND (task_not_found), SEO_EDENIED
 * (task_not_claimable: done or expired) or SEO_EDB, with *code and err.
 */
int agent_task_cancel(PGconn *db, const char *task_id, const char **code,
		      char *err, size_t err_len);

#endif

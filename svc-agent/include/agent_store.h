/*
 * agent_store.h: what of svc-agent's PostgreSQL state others may run
 * (library agent_store, without the service's network stack): its
 * migration set, its periodic jobs, and the operator's commands of
 * `seoctl` that stand in for the web app.
 */
#ifndef AGENT_STORE_H
#define AGENT_STORE_H

#include <stddef.h>
#include <stdint.h>

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

/* What `seoctl proposal remove-email` did. */
typedef struct agent_outreach_removal {
	const char *status; /* "pending", or "cancelled" when none is left */
	int64_t removed;    /* held contacts of that address (one per domain) */
	int64_t held;       /* contacts the proposal still holds */
} agent_outreach_removal;

/*
 * `seoctl proposal remove-email`: the reviewer of pending outreach proposal
 * `id` takes address `email` (any case) out of it, on `pg` (migrated) as
 * of `at_ms`, as the web app's review screen would. The campaign's contact
 * stops being copy-ready (no proposal sends it) until a later proposal
 * brings it again. When nothing is left to send the proposal becomes
 * cancelled. Fills *out (static strings). Returns 0; SEO_ENOTFOUND (no
 * outreach proposal `id`); SEO_EINVAL (not pending, past its expiry, or
 * it holds no such address still); SEO_EDB. `err` (not NULL) receives a
 * lowercase message on failure.
 */
int agent_outreach_remove(PGconn *pg, const char *id, const char *email,
			  int64_t at_ms, agent_outreach_removal *out, char *err,
			  size_t err_len);

/*
 * `seoctl activity share --id ID`: a team member shares an agent note or
 * a task summary with the client: activity row `id` (verb agent.note or
 * task.completed), or the summary of done task `id`. It is client-visible
 * from now on, in the reports of its week while that week is not saved.
 * Sharing again changes nothing. The row's id and verb are copied into
 * `act_id` and `verb` (`act_len`, `verb_len` bytes). Returns 0,
 * SEO_ENOTFOUND when no row or done task has that id, SEO_EINVAL when the
 * row is neither a note nor a summary (other rows are visible as written
 * or never), or SEO_EDB (logged).
 */
int agent_activity_share(PGconn *pg, const char *id, char *act_id,
			 size_t act_len, char *verb, size_t verb_len);

/* svc-agent's outbox (the agent_outbox table): outreach mail, queued by
 * approved proposals' runs and sent by the mailer svc-agent runs
 * (seo/mail.h). */
extern const seo_outbox agent_outbox;

/*
 * `seoctl proposal decide`: what a reviewer does in the web app, on `pg`
 * (migrated) as of `at_ms`. Approving (`approve` 1) makes a pending
 * proposal, or a failed one (the app's retry), approved: svc-agent's
 * worker runs it. Skipping makes a pending one skipped. *status is the new
 * status (a static string). Returns 0; SEO_ENOTFOUND (no such proposal);
 * SEO_EINVAL (its status allows no such decision); SEO_EEXIST (approving a
 * failed proposal while an identical one is open); SEO_EDB. `err` (not
 * NULL) receives a lowercase message on failure.
 */
int agent_proposal_decide(PGconn *pg, const char *id, int approve,
			  int64_t at_ms, const char **status, char *err,
			  size_t err_len);
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

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

#endif

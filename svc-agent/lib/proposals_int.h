/*
 * proposals_int.h: what the proposals part's files share: the kinds
 * table, the run of an approved proposal and the service's worker.
 */
#ifndef AGENT_PROPOSALS_INT_H
#define AGENT_PROPOSALS_INT_H

#include "proposals.h"

/* One creatable kind: a row of agent__kinds. */
typedef struct agent__kind {
	const char *name;          /* "indexnow_submit" */
	int64_t expiry_ms;         /* a pending proposal's life */
	int64_t credits;           /* estimated_credits, charged per run */
	const char *usage;         /* the charge's usage row endpoint */
	int run_pg;                /* 1: its run is lent a connection; 0: it
				    * takes its own (a pool's connection held
				    * across a long run would starve others) */
	agent_proposal_prepare_fn prepare;
	agent_proposal_run_fn run;
} agent__kind;

/* The kind named `name`, or NULL. */
const agent__kind *agent__kind_find(const char *name);

/* IndexNow's hooks (proposals_indexnow.c). */
int agent__indexnow_prepare(agent_call *c, PGconn *pg,
			    const Seo__Agent__V1__CreateProposalRequest *req,
			    Seo__Account__V1__Site *const *sites, size_t n_sites,
			    agent_proposal_draft *out, agent_err *err);
int agent__indexnow_run(const agent_proposal_run *r, PGconn *pg,
			agent_proposal_outcome *out);

/*
 * The draft of an IndexNow proposal of `n` checked `urls` on `host`, of
 * website `site_id` (policy automatic when `automatic`): the list
 * de-duplicated and sorted into the payload, its title and keys, on
 * `arena`. Returns 0 or SEO_ENOMEM.
 */
int agent__indexnow_draft(seo_arena *arena, const char *site_id,
			  int automatic, const char *host,
			  const char *const *urls, size_t n,
			  agent_proposal_draft *out);

/*
 * Runs `r`, claimed (status executing) on behalf of its creator: charges
 * the kind's credits when `r->charge`, runs the kind's hook, gives the
 * charge back unless the run succeeded, and saves the outcome (finished,
 * or approved and queued for the hourly retry) with a connection of the
 * pool. *out is the outcome. Returns 0, or SEO_EDB when the outcome could
 * not be saved (logged; the expire job fails the run later).
 */
int agent__proposal_execute(const agent__kind *k, const agent_proposal_run *r,
			    agent_proposal_outcome *out);

/* The worker running approved proposals (proposals_worker.c): started
 * with the service, stopped before it is freed. */
typedef struct agent__worker agent__worker;
int agent__worker_start(agent_svc *svc, const char *pg_url,
			agent__worker **out);
void agent__worker_stop(agent__worker *w);

#endif

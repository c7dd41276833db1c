/*
 * proposals.h: the proposals part (proposals*.c) as the other parts see
 * it.
 *
 * - The indexnow part's agent-origin flow (POST /v1/indexnow with
 *   X-Service-Client: mcp) holds or runs its submission as a proposal
 *   through agent_proposal_indexnow_from_agent().
 * - Each creatable kind is a row of the proposals part's kinds table
 *   naming two hooks: `prepare` (validate the request's kind-specific
 *   fields, snapshot what a run will do, title, dedupe and supersede keys)
 *   and `run` (do it, as the worker or an automatic policy asks). The
 *   outreach part implements agent_outreach_prepare() and
 *   agent_outreach_run() below (its own .c files; a stub answers
 *   internal_error until then, proposals_stub_outreach.c: delete it when
 *   landing the real ones).
 * - agent_proposal_cancel(): a pending proposal whose reviewer removed
 *   every contact becomes `cancelled` (outreach).
 *
 * Strings given in are the caller's; strings set in out-parameters are
 * on the call's arena (agent_call.arena, agent_proposal_run.arena).
 */
#ifndef AGENT_PROPOSALS_H
#define AGENT_PROPOSALS_H

#include <stddef.h>
#include <stdint.h>

#include <libpq-fe.h>

#include "agent_int.h"
#include "seo/account/v1/account.pb-c.h"
#include "seo/agent/v1/agent.pb-c.h"
#include "seo/rpc_peer.h"

/* ---- the kind hooks ---------------------------------------------------------- */

/* What a kind's prepare makes of a create request. */
typedef struct agent_proposal_draft {
	const char *site_id;       /* the website acted on; NULL: none */
	const char *payload_json;  /* the snapshot a run executes: a JSON
				    * object's text, stored as is */
	const char *dedupe_key;    /* equal for identical content: an open
				    * proposal of the workspace with the
				    * same kind and key is a dedupe hit */
	const char *supersede_key; /* NULL, or: pending proposals of the
				    * kind with this key and another
				    * dedupe_key become `superseded` by the
				    * new one (outreach: the campaign id) */
	const char *title;         /* counts and host only: never a URL, an
				    * address, a subject or a body */
	int automatic;             /* 1: the website's policy runs it at once
				    * (IndexNow only; outreach leaves 0) */
} agent_proposal_draft;

/*
 * Prepares the kind-specific part of `req` (kind, site_id, note and
 * client_request_id are checked already; *out is zeroed) for the workspace of `c`, inside
 * the creating transaction on `pg` (a kind may write its own rows there:
 * they stay only if the proposal is created). `sites` are the workspace's
 * active websites (Account/ListSites), `n_sites` of them.
 * Returns 0 and fills *out; SEO_EINVAL with *err set to the client's error
 * (400 invalid_proposal_input, indexnow_key_not_found, 404
 * site_not_found...); another negative SEO_E* with *err set
 * (internal_error, logged) for a failure of our own.
 */
typedef int (*agent_proposal_prepare_fn)(
	agent_call *c, PGconn *pg,
	const Seo__Agent__V1__CreateProposalRequest *req,
	Seo__Account__V1__Site *const *sites, size_t n_sites,
	agent_proposal_draft *out, agent_err *err);

/* One run of an approved proposal. */
typedef struct agent_proposal_run {
	agent_svc *svc;
	seo_arena *arena;
	const char *proposal_id;
	const char *workspace_id;
	const char *site_id;       /* NULL: none */
	const char *payload_json;  /* the draft's, as stored */
	/* Whom peer calls act for: the proposal's creator. Inside a call
	 * (an automatic run at creation) `ctx` is that call and peers are
	 * called with it; else NULL and rpc_peer_call_as(who). */
	rpc_ctx *ctx;
	const rpc_identity *who;
	int charge;                /* 1: the run pays its own credits; 0:
				    * the call it runs in was billed */
	int attempt;               /* 1 for the first run, then 2, 3... */
	int64_t now_ms;
} agent_proposal_run;

/* How a run ended. */
typedef struct agent_proposal_outcome {
	const char *status;      /* "succeeded", "partially_succeeded",
				  * "failed" */
	const char *result_json; /* the proposal's `result` object's text, or
				  * NULL */
	agent_err err;           /* failed: the proposal's error_code and a
				  * message for a call that waits on it */
	int retry;               /* failed for a while only (the upstream's
				  * rate limit or absence): queued for the
				  * hourly retry instead of failing */
} agent_proposal_outcome;

/*
 * Runs `r` on `pg` (idle, left idle: a run opens its own transactions;
 * NULL for a kind whose row asks for none, IndexNow).
 * Returns 0 with *out set, whatever the outcome; a negative SEO_E* only
 * for a failure of our own (logged), which fails the proposal with
 * error_code internal_error.
 */
typedef int (*agent_proposal_run_fn)(const agent_proposal_run *r, PGconn *pg,
				     agent_proposal_outcome *out);

/* The outreach part's hooks of kind `outreach_send`. */
int agent_outreach_prepare(agent_call *c, PGconn *pg,
			   const Seo__Agent__V1__CreateProposalRequest *req,
			   Seo__Account__V1__Site *const *sites, size_t n_sites,
			   agent_proposal_draft *out, agent_err *err);
int agent_outreach_run(const agent_proposal_run *r, PGconn *pg,
		       agent_proposal_outcome *out);

/* ---- the agent-origin IndexNow flow ---------------------------------------- */

/* What a create answered (POST /v1/proposals' body; the agent-origin
 * IndexNow flow answers from it). */
typedef struct agent_proposal_answer {
	const char *status;      /* "awaiting_approval", "approved",
				  * "executed" */
	const char *proposal_id;
	const char *review_url;  /* NULL for a queued automatic run */
	const char *title;
	int dedupe_hit;
	const char *message;
	/* "executed" only: the run's outcome (outcome.err.code set when it
	 * failed; nothing was charged then) */
	agent_proposal_outcome outcome;
	/* IndexNow "executed" and succeeded: what was submitted */
	const char *host;
	int64_t url_count;
	const char *key_location;
} agent_proposal_answer;

/*
 * The agent-origin submission of `n` `urls` (valid, all on `host`, their
 * key found: the indexnow part's checks come first) on the workspace's
 * website `site_id`, whose IndexNow policy is automatic when `automatic`
 * is 1, for the caller of `c`, on `pg` (idle, left idle):
 * - policy approval: held as a pending proposal (or the identical open
 *   one: dedupe_hit), status "awaiting_approval", nothing submitted;
 * - an identical proposal already approved or executing: "approved";
 * - policy automatic: created approved (decided_via policy) and run now
 *   without charging (the call is billed by its route): "executed" with
 *   its outcome, or "approved" when the run was queued for the hourly
 *   retry (nothing submitted).
 * Only "executed" and succeeded submitted anything: for every other
 * answer, the call's charge is to be given back.
 * Returns 0 with *out; SEO_EDB or SEO_ENOMEM (logged, *err set to
 * internal_error).
 */
int agent_proposal_indexnow_from_agent(agent_call *c, PGconn *pg,
				       const char *site_id, int automatic,
				       const char *host,
				       const char *const *urls, size_t n,
				       agent_proposal_answer *out,
				       agent_err *err);

/*
 * Makes pending proposal `proposal_id` `cancelled` as of `at_ms` (its
 * reviewer removed every contact), on `pg` (inside the caller's
 * transaction, if any). Returns 0; SEO_ENOTFOUND when it is not pending;
 * SEO_EDB.
 */
int agent_proposal_cancel(PGconn *pg, const char *proposal_id, int64_t at_ms);

#endif

/*
 * The run of an approved proposal (proposals_int.h): the kind's credits
 * charged through svc-account on behalf of the proposal's creator, the
 * kind's hook, the charge closed (kept on success, given back otherwise)
 * and the outcome saved.
 */
#include "proposals_int.h"

#include <inttypes.h>
#include <string.h>

#include "seo/account/v1/account.pb-c.h"
#include "seo/errors.h"
#include "seo/log.h"

/* A charge left open longer (the process ended) is given back by
 * svc-account's reconcile job. */
#define SETTLE_WITHIN_MS (15 * 60 * 1000)

enum { Q_FINISH, Q_QUEUE, Q__COUNT };

static const seo_pg_stmt rows[Q__COUNT] = {
	[Q_FINISH] = {"finish",
		"UPDATE agent_proposals SET status = $2, result = $3::jsonb, "
		"error_code = $4, finished_at = $5::bigint, queued_at = NULL "
		"WHERE id = $1 AND status = 'executing'"},
	[Q_QUEUE] = {"queue",
		"UPDATE agent_proposals SET status = 'approved', error_code = $2, "
		"queued_at = $3::bigint WHERE id = $1 AND status = 'executing'"},
};

static const seo_pg_stmts stmts = {"agent_prr_", rows, Q__COUNT};

static int account(const agent_proposal_run *r, const char *method,
		   ProtobufCMessage *req, const ProtobufCMessageDescriptor *d,
		   rpc_result *res)
{
	char path[64];

	snprintf(path, sizeof(path), "/seo.account.v1.Account/%s", method);
	return r->ctx != NULL
		       ? rpc_peer_call(r->svc->account, r->ctx, path, req, d,
				       r->arena, res)
		       : rpc_peer_call_as(r->svc->account, r->who, path, req, d,
					  r->arena, res);
}

/* Debits the kind's credits: 0 with *charge_id, or the outcome of a run
 * that could not be paid for in *out. */
static int charge(const agent__kind *k, const agent_proposal_run *r,
		  const char **charge_id, agent_proposal_outcome *out)
{
	Seo__Account__V1__ChargeRequest req = SEO__ACCOUNT__V1__CHARGE_REQUEST__INIT;
	rpc_result res;

	req.endpoint = (char *)k->usage;
	req.amount = k->credits;
	/* one debit per attempt, however often the call is repeated */
	req.request_id = seo_arena_printf(r->arena, "%s-%d", r->proposal_id,
					  r->attempt);
	req.has_settle_within_ms = 1;
	req.settle_within_ms = SETTLE_WITHIN_MS;
	if (req.request_id != NULL &&
	    account(r, "Charge", &req.base,
		    &seo__account__v1__charge_response__descriptor, &res) == 0) {
		*charge_id = ((Seo__Account__V1__ChargeResponse *)res.response)
				     ->charge_id;
		return 0;
	}
	out->status = "failed";
	if (req.request_id != NULL && res.code != NULL &&
	    (strcmp(res.code, "insufficient_credits") == 0 ||
	     strcmp(res.code, "spend_cap_reached") == 0)) {
		agent__err(&out->err, SEO_EDENIED, res.code, "%s", res.message);
		return SEO_EDENIED;
	}
	agent__err(&out->err, SEO_EIO, "service_unavailable",
		   "the credits could not be charged now");
	out->retry = 1;
	return SEO_EIO;
}

/* Closes the charge at `credits`: the rest goes back. A failure leaves it
 * to svc-account's reconcile job, which gives it all back. */
static void settle(const agent_proposal_run *r, const char *charge_id,
		   int64_t credits)
{
	Seo__Account__V1__RefundRequest req = SEO__ACCOUNT__V1__REFUND_REQUEST__INIT;
	rpc_result res;

	req.charge_id = (char *)charge_id;
	req.has_credits_used = 1;
	req.credits_used = credits;
	if (account(r, "Refund", &req.base,
		    &seo__account__v1__refund_response__descriptor, &res) != 0)
		log_warn("proposal %s: charge %s not settled: %s", r->proposal_id,
			 charge_id, res.message);
}

static int save(agent_svc *svc, const agent_proposal_run *r,
		const agent_proposal_outcome *out)
{
	char now[24];
	seo_pg_conn *conn;
	PGresult *res = NULL;
	int rc;

	snprintf(now, sizeof(now), "%" PRId64, r->now_ms);
	if (agent__db_get(svc, &conn) != 0)
		return SEO_EDB;
	if (out->retry)
		rc = agent__db_exec(conn->pg, &stmts, Q_QUEUE, 3,
				    (const char *const[]){r->proposal_id,
							  out->err.code, now},
				    &res);
	else
		rc = agent__db_exec(conn->pg, &stmts, Q_FINISH, 5,
				    (const char *const[]){r->proposal_id,
							  out->status,
							  out->result_json,
							  out->err.code, now},
				    &res);
	agent__db_put(svc, conn);
	PQclear(res);
	if (rc != 0)
		log_error("proposal %s: its outcome %s was not saved",
			  r->proposal_id, out->status);
	return rc;
}

int agent__proposal_execute(const agent__kind *k, const agent_proposal_run *r,
			    agent_proposal_outcome *out)
{
	const char *charge_id = NULL;
	seo_pg_conn *conn;
	int rc = 0;

	memset(out, 0, sizeof(*out));
	if (r->charge && k->credits > 0)
		rc = charge(k, r, &charge_id, out);
	if (rc == 0 && !k->run_pg) {
		rc = k->run(r, NULL, out);
	} else if (rc == 0) {
		rc = agent__db_get(r->svc, &conn);
		if (rc == 0) {
			rc = k->run(r, conn->pg, out);
			agent__db_put(r->svc, conn);
		}
		if (rc != 0) {
			log_error("proposal %s: its run failed (%d)",
				  r->proposal_id, rc);
			memset(out, 0, sizeof(*out));
			out->status = "failed";
			agent__err(&out->err, rc, "internal_error",
				   "the run failed");
		}
	}
	if (charge_id != NULL)
		settle(r, charge_id,
		       strcmp(out->status, "failed") == 0 ? 0 : k->credits);
	return save(r->svc, r, out);
}

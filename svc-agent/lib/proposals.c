/*
 * Proposals: POST /v1/proposals, GET /v1/proposals, GET /v1/proposals/:id.
 * The part arrives with its helper; until then each method answers
 * internal_error.
 */
#include "agent_int.h"
#include "parts.h"
#include "proposals.h"

#include "seo/errors.h"

static int not_built(rpc_ctx *ctx)
{
	return rpc_ctx_fail(ctx, "internal_error", "proposals are not built yet");
}

int agent__rpc_create_proposal(rpc_ctx *ctx, const ProtobufCMessage *req,
			       ProtobufCMessage **resp)
{
	(void)req;
	(void)resp;
	return not_built(ctx);
}

int agent__rpc_list_proposals(rpc_ctx *ctx, const ProtobufCMessage *req,
			      ProtobufCMessage **resp)
{
	(void)req;
	(void)resp;
	return not_built(ctx);
}

int agent__rpc_get_proposal(rpc_ctx *ctx, const ProtobufCMessage *req,
			    ProtobufCMessage **resp)
{
	(void)req;
	(void)resp;
	return not_built(ctx);
}

int agent_proposal_indexnow_from_agent(agent_call *c, PGconn *pg,
				       const char *site_id, int automatic,
				       const char *host,
				       const char *const *urls, size_t n,
				       agent_proposal_answer *out,
				       agent_err *err)
{
	(void)c;
	(void)pg;
	(void)site_id;
	(void)automatic;
	(void)host;
	(void)urls;
	(void)n;
	(void)out;
	return agent__err(err, SEO_EIO, "internal_error",
			  "proposals are not built yet");
}

int agent_proposal_cancel(PGconn *pg, const char *proposal_id, int64_t at_ms)
{
	(void)pg;
	(void)proposal_id;
	(void)at_ms;
	return SEO_ENOTFOUND;
}

/*
 * Proposals: POST /v1/proposals, GET /v1/proposals, GET /v1/proposals/:id.
 * The part arrives with its helper; until then each method answers
 * internal_error.
 */
#include "agent_int.h"
#include "parts.h"

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

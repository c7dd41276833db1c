/*
 * A call's caller and its errors (agent_int.h).
 */
#include "agent_int.h"

#include <stdarg.h>
#include <stdio.h>

int agent__call_of(rpc_ctx *ctx, agent_call *out)
{
	out->svc = rpc_ctx_service(ctx);
	out->ctx = ctx;
	out->arena = rpc_ctx_arena(ctx);
	out->workspace_id = rpc_ctx_meta(ctx, "seo-workspace-id");
	out->user_id = rpc_ctx_meta(ctx, "seo-user-id");
	out->key_id = rpc_ctx_meta(ctx, "seo-key-id");
	out->role = rpc_ctx_meta(ctx, "seo-role");
	out->service_client = rpc_ctx_meta(ctx, "x-service-client");
	if (out->workspace_id == NULL || *out->workspace_id == '\0')
		return rpc_ctx_fail(ctx, "invalid_api_key",
				    "the call carries no workspace");
	return 0;
}

int agent__err(agent_err *err, int rc, const char *code, const char *fmt, ...)
{
	va_list ap;

	err->code = code;
	va_start(ap, fmt);
	vsnprintf(err->message, sizeof(err->message), fmt, ap);
	va_end(ap);
	return rc;
}

int agent__fail(rpc_ctx *ctx, const agent_err *err)
{
	return rpc_ctx_fail(ctx, err->code, "%s", err->message);
}

/*
 * svc-example's methods. Hello asks svc-account who the caller is
 * (Account/GetMe, on the caller's identity that the gateway sent and the
 * peer call carries on) and greets them; Stages and Card show what a route
 * row's stages carry (forwarded metadata, a chosen status and header, an
 * answer of bytes).
 */
#include "example.h"

#include <string.h>

#include "seo/account/v1/account.pb-c.h"
#include "seo/arena.h"
#include "seo/example/v1/example.pb-c.h"

#define GET_ME "/seo.account.v1.Account/GetMe"

int ex_service_init(ex_service *s)
{
	return rpc_peer_open(SEO_SVC_EXAMPLE, SEO_SVC_ACCOUNT, &s->account);
}

void ex_service_free(ex_service *s)
{
	rpc_peer_free(s->account);
	s->account = NULL;
}

static int hello(rpc_ctx *ctx, const ProtobufCMessage *req,
		 ProtobufCMessage **resp)
{
	const Seo__Example__V1__HelloRequest *in = (const void *)req;
	ex_service *s = rpc_ctx_service(ctx);
	seo_arena *arena = rpc_ctx_arena(ctx);
	Seo__Account__V1__Empty empty = SEO__ACCOUNT__V1__EMPTY__INIT;
	const Seo__Account__V1__User *me;
	Seo__Example__V1__HelloResponse *out;
	rpc_result res;

	if (rpc_peer_call(s->account, ctx, GET_ME, &empty.base,
			  &seo__account__v1__user__descriptor, arena, &res) != 0)
		return rpc_peer_fail(ctx, &res);
	me = (const void *)res.response;
	out = seo_arena_alloc(arena, sizeof(*out));
	if (out == NULL)
		return rpc_ctx_fail(ctx, "internal_error", "out of memory");
	seo__example__v1__hello_response__init(out);
	out->email = me->email;
	out->greeting = seo_arena_printf(arena, "hello, %s",
					 in->name != NULL && *in->name != '\0'
						 ? in->name
						 : me->email != NULL ? me->email : me->id);
	out->request_id = (char *)rpc_ctx_meta(ctx, "x-request-id");
	if (out->greeting == NULL)
		return rpc_ctx_fail(ctx, "internal_error", "out of memory");
	*resp = &out->base;
	return 0;
}

/* Stages: echoes what the gateway forwarded, answers the status and
 * Retry-After asked for, and always sets a header no route lists (the
 * gateway must drop it). */
static int stages(rpc_ctx *ctx, const ProtobufCMessage *req,
		  ProtobufCMessage **resp)
{
	const Seo__Example__V1__StagesRequest *in = (const void *)req;
	Seo__Example__V1__StagesResponse *out;

	out = seo_arena_alloc(rpc_ctx_arena(ctx), sizeof(*out));
	if (out == NULL)
		return rpc_ctx_fail(ctx, "internal_error", "out of memory");
	seo__example__v1__stages_response__init(out);
	out->client_ip = (char *)rpc_ctx_meta(ctx, "seo-client-ip");
	out->service_client = (char *)rpc_ctx_meta(ctx, "x-service-client");
	out->workspace_id = (char *)rpc_ctx_meta(ctx, "seo-workspace-id");
	if ((in->has_status && in->status != 0 &&
	     rpc_ctx_set_http_status(ctx, in->status) != 0) ||
	    (in->retry_after != NULL &&
	     rpc_ctx_set_meta(ctx, "retry-after", in->retry_after) != 0))
		return rpc_ctx_fail(ctx, "invalid_parameter",
				    "status or retry_after not allowed");
	if (rpc_ctx_set_meta(ctx, "x-internal", "not for clients") != 0)
		return rpc_ctx_fail(ctx, "internal_error", "out of memory");
	*resp = &out->base;
	return 0;
}

/* Card: a one-page PDF naming `name`, kept minimal (no xref table). */
static int card(rpc_ctx *ctx, const ProtobufCMessage *req,
		ProtobufCMessage **resp)
{
	const Seo__Example__V1__CardRequest *in = (const void *)req;
	Seo__Example__V1__CardResponse *out;
	char *pdf;

	out = seo_arena_alloc(rpc_ctx_arena(ctx), sizeof(*out));
	pdf = seo_arena_printf(rpc_ctx_arena(ctx),
			       "%%PDF-1.4\n%% card for %s\n%%%%EOF\n",
			       in->name != NULL ? in->name : "you");
	if (out == NULL || pdf == NULL)
		return rpc_ctx_fail(ctx, "internal_error", "out of memory");
	seo__example__v1__card_response__init(out);
	out->has_pdf = 1;
	out->pdf.data = (uint8_t *)pdf;
	out->pdf.len = strlen(pdf);
	*resp = &out->base;
	return 0;
}

const rpc_method ex_methods[] = {
	{"/seo.example.v1.Example/Hello",
	 &seo__example__v1__hello_request__descriptor,
	 &seo__example__v1__hello_response__descriptor, hello},
	{"/seo.example.v1.Example/Stages",
	 &seo__example__v1__stages_request__descriptor,
	 &seo__example__v1__stages_response__descriptor, stages},
	{"/seo.example.v1.Example/Card",
	 &seo__example__v1__card_request__descriptor,
	 &seo__example__v1__card_response__descriptor, card},
};

const size_t ex_n_methods = sizeof(ex_methods) / sizeof(ex_methods[0]);

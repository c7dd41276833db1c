/*
 * svc-example's one method, Hello: asks svc-account who the caller is
 * (Account/GetMe, on the caller's identity that the gateway sent and the
 * peer call carries on) and greets them.
 */
#include "example.h"

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

const rpc_method ex_methods[] = {
	{"/seo.example.v1.Example/Hello",
	 &seo__example__v1__hello_request__descriptor,
	 &seo__example__v1__hello_response__descriptor, hello},
};

const size_t ex_n_methods = sizeof(ex_methods) / sizeof(ex_methods[0]);

/*
 * The seo.account.v1.Account gRPC methods: each handler reads the caller
 * identity the gateway attached, calls the library and builds the reply on
 * the call's arena.
 */
#include "acct_int.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "grpc/health/v1/health.pb-c.h"
#include "payments.h"
#include "usage_claim.h"
#include "seo/errors.h"
#include "seo/log.h"

typedef Seo__Account__V1__AuthorizeRequest AuthorizeRequest;
typedef Seo__Account__V1__AuthorizeResponse AuthorizeResponse;
typedef Seo__Account__V1__RateLimitState RateLimitState;
typedef Seo__Account__V1__RefundRequest RefundRequest;
typedef Seo__Account__V1__RefundResponse RefundResponse;

int acct_rpc_caller(rpc_ctx *ctx, acct_caller *out, acct_err *err)
{
	const char *role = rpc_ctx_meta(ctx, "seo-role");

	out->workspace_id = rpc_ctx_meta(ctx, "seo-workspace-id");
	out->user_id = rpc_ctx_meta(ctx, "seo-user-id");
	out->key_id = rpc_ctx_meta(ctx, "seo-key-id");
	if (out->workspace_id == NULL || out->user_id == NULL ||
	    acct_role_parse(role, &out->role) != 0)
		return acct__fail(err, SEO_EINVAL, "invalid_api_key",
				  "the call carries no caller identity");
	return 0;
}

int acct_rpc_fail(rpc_ctx *ctx, const acct_err *err)
{
	if (err->code == NULL || strcmp(err->code, "internal_error") == 0 ||
	    seo_error_lookup(err->code) == NULL) {
		log_error("%s", err->message);
		return rpc_ctx_fail(ctx, "internal_error", "internal error");
	}
	return rpc_ctx_fail(ctx, err->code, "%s", err->message);
}

static int oom(rpc_ctx *ctx)
{
	return rpc_ctx_fail(ctx, "internal_error", "out of memory");
}

static void *msg_new(rpc_ctx *ctx, const ProtobufCMessageDescriptor *d)
{
	ProtobufCMessage *m = seo_arena_alloc(rpc_ctx_arena(ctx), d->sizeof_message);

	if (m != NULL)
		protobuf_c_message_init(d, m);
	return m;
}

/*
 * A refusal after the key resolved still reports the rate state, so that
 * the gateway sends its RateLimit headers with 429, 403 and 402 as well:
 * {"retry_after" (rate_limited only), "ratelimit_limit",
 * "ratelimit_remaining", "ratelimit_reset"}.
 */
static void authorize_extra(rpc_ctx *ctx, const acct_authorization *az)
{
	char extra[160];
	int n;

	if (az->key_id[0] == '\0')
		return;
	if (az->retry_after > 0)
		n = snprintf(extra, sizeof(extra), "{\"retry_after\": %lld, ",
			     (long long)az->retry_after);
	else
		n = snprintf(extra, sizeof(extra), "{");
	snprintf(extra + n, sizeof(extra) - (size_t)n,
		 "\"ratelimit_limit\": %lld, \"ratelimit_remaining\": %lld, "
		 "\"ratelimit_reset\": %lld}",
		 (long long)az->rate.limit, (long long)az->rate.remaining,
		 (long long)az->rate.reset_s);
	rpc_ctx_fail_extra(ctx, extra);
}

static int rpc_authorize(rpc_ctx *ctx, const ProtobufCMessage *req,
			 ProtobufCMessage **resp)
{
	const AuthorizeRequest *in = (const AuthorizeRequest *)req;
	acct_authorize_req ar = {
		.key_hash = in->key_hash,
		.endpoint = in->endpoint,
		.cost = in->cost,
		.roles_allowed = in->roles_allowed,
		.usage_domain = in->usage_domain,
		.rate_limited = in->rate_limited,
		.call = {in->request_id,
			 in->has_settle_within_ms ? in->settle_within_ms : 0,
			 rpc_ctx_deadline(ctx)},
		.earned = (const char *const *)in->earned,
		.n_earned = in->n_earned,
		.no_balance = in->no_balance,
		.rate_want = in->rate_want,
	};
	seo_arena *arena = rpc_ctx_arena(ctx);
	acct_authorization az;
	AuthorizeResponse *out;
	RateLimitState *rate;
	acct_err err;

	if (acct_authorize(rpc_ctx_service(ctx), &ar, &az, &err) != 0) {
		authorize_extra(ctx, &az);
		return acct_rpc_fail(ctx, &err);
	}
	out = msg_new(ctx, &seo__account__v1__authorize_response__descriptor);
	rate = msg_new(ctx, &seo__account__v1__rate_limit_state__descriptor);
	if (out == NULL || rate == NULL)
		return oom(ctx);
	out->workspace_id = seo_arena_strdup(arena, az.workspace_id);
	out->user_id = seo_arena_strdup(arena, az.user_id);
	out->key_id = seo_arena_strdup(arena, az.key_id);
	out->role = (char *)acct_role_name(az.role);
	out->charge_id = seo_arena_strdup(arena, az.charge_id);
	if (out->workspace_id == NULL || out->user_id == NULL ||
	    out->key_id == NULL || out->charge_id == NULL)
		return oom(ctx);
	out->credits_remaining = az.credits_remaining;
	rate->limit = az.rate.limit;
	rate->remaining = az.rate.remaining;
	rate->reset_s = az.rate.reset_s;
	rate->granted = az.rate.granted;
	out->rate = rate;
	*resp = &out->base;
	return 0;
}

/* The gateway attaches the caller when it has one; Refund works without. */
static int rpc_refund(rpc_ctx *ctx, const ProtobufCMessage *req,
		      ProtobufCMessage **resp)
{
	const RefundRequest *in = (const RefundRequest *)req;
	RefundResponse *out;
	acct_caller who;
	acct_err err;
	int64_t remaining, used;
	int known = acct_rpc_caller(ctx, &who, &err) == 0;

	if ((in->has_credits_used
		     ? acct_settle(rpc_ctx_service(ctx), known ? &who : NULL,
				   in->charge_id, in->credits_used,
				   rpc_ctx_deadline(ctx), &remaining, &used, &err)
		     : acct_refund(rpc_ctx_service(ctx), known ? &who : NULL,
				   in->charge_id, in->amount, &remaining, &used,
				   &err)) != 0)
		return acct_rpc_fail(ctx, &err);
	out = msg_new(ctx, &seo__account__v1__refund_response__descriptor);
	if (out == NULL)
		return oom(ctx);
	out->credits_remaining = remaining;
	out->credits_used = used;
	*resp = &out->base;
	return 0;
}

/* The gateway's outcomes of many calls that earned their charge. */
static int rpc_settle(rpc_ctx *ctx, const ProtobufCMessage *req,
		      ProtobufCMessage **resp)
{
	const Seo__Account__V1__SettleRequest *in = (const void *)req;
	ProtobufCMessage *out;
	acct_err err;

	if (acct_settle_earned(rpc_ctx_service(ctx),
			       (const char *const *)in->earned, in->n_earned,
			       rpc_ctx_deadline(ctx), &err) != 0)
		return acct_rpc_fail(ctx, &err);
	out = msg_new(ctx, &seo__account__v1__settle_response__descriptor);
	if (out == NULL)
		return oom(ctx);
	*resp = out;
	return 0;
}

/* A gateway's long poll for what stops the keys it holds (watch.c); it
 * gives back the rate tokens it did not spend on the way. */
static int rpc_watch(rpc_ctx *ctx, const ProtobufCMessage *req,
		     ProtobufCMessage **resp)
{
	const Seo__Account__V1__WatchRequest *in = (const void *)req;
	acct_service *a = rpc_ctx_service(ctx);
	seo_arena *arena = rpc_ctx_arena(ctx);
	acct__watch_batch *b = seo_arena_alloc(arena, sizeof(*b));
	Seo__Account__V1__WatchResponse *out =
		msg_new(ctx, &seo__account__v1__watch_response__descriptor);
	size_t bytes;

	if (b == NULL || out == NULL)
		return oom(ctx);
	for (size_t i = 0; i < in->n_rate_back; i++)
		acct__limiter_give(&a->limiter, in->rate_back[i]->key_hash,
				   in->rate_back[i]->tokens);
	acct__watch_wait(&a->watch, in->watcher, in->instance, in->since,
			 in->stop ? 0 : ACCT_WATCH_WAIT_MS, b);
	if (in->stop)
		acct__watch_gone(&a->watch, in->watcher);
	bytes = (b->n + 1) * sizeof(char *);
	out->instance = seo_arena_strdup(arena, b->instance);
	out->keys = seo_arena_alloc(arena, bytes);
	out->users = seo_arena_alloc(arena, bytes);
	out->recall = seo_arena_alloc(arena, bytes);
	out->balances = seo_arena_alloc(arena, bytes);
	out->rate_recall = seo_arena_alloc(arena, bytes);
	if (out->instance == NULL || out->keys == NULL || out->users == NULL ||
	    out->recall == NULL || out->balances == NULL ||
	    out->rate_recall == NULL)
		return oom(ctx);
	for (size_t i = 0; i < b->n; i++) {
		char *id = seo_arena_strdup(arena, b->ev[i].id);

		if (id == NULL)
			return oom(ctx);
		if (b->ev[i].kind == ACCT_WATCH_USER)
			out->users[out->n_users++] = id;
		else if (b->ev[i].kind == ACCT_WATCH_RECALL)
			out->recall[out->n_recall++] = id;
		else if (b->ev[i].kind == ACCT_WATCH_BALANCE)
			out->balances[out->n_balances++] = id;
		else if (b->ev[i].kind == ACCT_WATCH_RATE)
			out->rate_recall[out->n_rate_recall++] = id;
		else
			out->keys[out->n_keys++] = id;
	}
	out->seq = b->seq;
	out->reset = b->reset;
	*resp = &out->base;
	return 0;
}

/* A LeaseResponse on the call's arena, or NULL when out of memory. */
static Seo__Account__V1__LeaseResponse *lease_response(rpc_ctx *ctx,
						       const acct__lease_out *lo)
{
	Seo__Account__V1__LeaseResponse *out =
		msg_new(ctx, &seo__account__v1__lease_response__descriptor);

	if (out == NULL ||
	    (out->lease_id = seo_arena_strdup(rpc_ctx_arena(ctx), lo->lease_id)) == NULL)
		return NULL;
	out->granted = lo->granted;
	out->used = lo->used;
	out->outside = lo->outside;
	out->ttl_ms = lo->ttl_ms;
	return out;
}

/* A gateway's report of the calls it served from its credit lease, and
 * its top-up or close (lease.c). */
static int rpc_lease(rpc_ctx *ctx, const ProtobufCMessage *req,
		     ProtobufCMessage **resp)
{
	Seo__Account__V1__LeaseResponse *out;
	acct__lease_out lo;
	acct_err err;

	if (acct__lease(rpc_ctx_service(ctx), (const void *)req, &lo, &err) != 0)
		return acct_rpc_fail(ctx, &err);
	if ((out = lease_response(ctx, &lo)) == NULL)
		return oom(ctx);
	*resp = &out->base;
	return 0;
}

/* One report's answer in a LeaseBatch: its LeaseResponse, or its error
 * as Lease would have failed with it. */
static Seo__Account__V1__LeaseResult *lease_result(rpc_ctx *ctx,
						   const acct__lease_result *r)
{
	Seo__Account__V1__LeaseResult *out =
		msg_new(ctx, &seo__account__v1__lease_result__descriptor);
	const seo_error_def *def;

	if (out == NULL)
		return NULL;
	if (r->rc == 0)
		return (out->lease = lease_response(ctx, &r->out)) != NULL ? out : NULL;
	def = seo_error_lookup(r->err.code);
	if (def == NULL)
		def = seo_error_lookup("internal_error");
	out->has_status = 1;
	out->status = def->grpc_status;
	out->error = seo_arena_strdup(rpc_ctx_arena(ctx), def->code);
	out->message = seo_arena_strdup(rpc_ctx_arena(ctx), r->err.message);
	return out->error != NULL && out->message != NULL ? out : NULL;
}

/* A gateway's reports of many workspaces in one transaction (lease.c),
 * `leases` read from `in` (its reports, or their copies with the columns
 * read). */
static int lease_batch(rpc_ctx *ctx, const Seo__Account__V1__LeaseBatchRequest *in,
		       const Seo__Account__V1__LeaseRequest *const *leases,
		       ProtobufCMessage **resp)
{
	Seo__Account__V1__LeaseBatchResponse *out;
	acct__lease_result *res = malloc((in->n_leases + 1) * sizeof(*res));
	acct_err err;
	int rc = 0;

	if (res == NULL)
		return oom(ctx);
	if (acct__lease_batch(rpc_ctx_service(ctx), leases, in->n_leases, res,
			      &err) != 0) {
		free(res);
		return acct_rpc_fail(ctx, &err);
	}
	out = msg_new(ctx, &seo__account__v1__lease_batch_response__descriptor);
	if (out == NULL ||
	    (out->results = seo_arena_alloc(rpc_ctx_arena(ctx),
					    (in->n_leases + 1) * sizeof(*out->results))) == NULL)
		rc = -1;
	for (size_t i = 0; rc == 0 && i < in->n_leases; i++)
		if ((out->results[out->n_results++] = lease_result(ctx, &res[i])) == NULL)
			rc = -1;
	free(res);
	if (rc != 0)
		return oom(ctx);
	*resp = &out->base;
	return 0;
}

static int rpc_lease_batch(rpc_ctx *ctx, const ProtobufCMessage *req,
			   ProtobufCMessage **resp)
{
	const Seo__Account__V1__LeaseBatchRequest *in = (const void *)req;

	return lease_batch(ctx, in,
			   (const Seo__Account__V1__LeaseRequest *const *)in->leases,
			   resp);
}

/* The same with each report's calls as columns (lease_columns.c). */
static int rpc_lease_batch_columns(rpc_ctx *ctx, const ProtobufCMessage *req,
				   ProtobufCMessage **resp)
{
	const Seo__Account__V1__LeaseBatchRequest *in = (const void *)req;
	Seo__Account__V1__LeaseRequest **leases;
	acct_err err;

	leases = seo_arena_alloc(rpc_ctx_arena(ctx),
				 (in->n_leases + 1) * sizeof(*leases));
	if (leases == NULL)
		return oom(ctx);
	for (size_t i = 0; i < in->n_leases; i++)
		if (acct__lease_columns(rpc_ctx_arena(ctx), in->leases[i],
					&leases[i], &err) != 0)
			return acct_rpc_fail(ctx, &err);
	return lease_batch(ctx, in,
			   (const Seo__Account__V1__LeaseRequest *const *)leases,
			   resp);
}

/* The caller is the identity of the call authorized before its work. */
static int rpc_charge(rpc_ctx *ctx, const ProtobufCMessage *req,
		      ProtobufCMessage **resp)
{
	const Seo__Account__V1__ChargeRequest *in = (const void *)req;
	Seo__Account__V1__ChargeResponse *out;
	acct_call call = {in->request_id,
			  in->has_settle_within_ms ? in->settle_within_ms : 0,
			  rpc_ctx_deadline(ctx)};
	char charge_id[ACCT_ID_LEN];
	acct_caller who;
	acct_err err;
	int64_t remaining;

	if (acct_rpc_caller(ctx, &who, &err) != 0 ||
	    acct_charge(rpc_ctx_service(ctx), &who, &call, in->endpoint, in->amount,
			in->usage_domain, charge_id, &remaining, &err) != 0)
		return acct_rpc_fail(ctx, &err);
	out = msg_new(ctx, &seo__account__v1__charge_response__descriptor);
	if (out == NULL ||
	    (out->charge_id = seo_arena_strdup(rpc_ctx_arena(ctx), charge_id)) == NULL)
		return oom(ctx);
	out->credits_remaining = remaining;
	*resp = &out->base;
	return 0;
}

static int rpc_get_me(rpc_ctx *ctx, const ProtobufCMessage *req,
		      ProtobufCMessage **resp)
{
	Seo__Account__V1__User *out;
	acct_caller who;
	acct_err err;

	(void)req;
	if (acct_rpc_caller(ctx, &who, &err) != 0 ||
	    acct_get_me(rpc_ctx_service(ctx), &who, rpc_ctx_arena(ctx), &out,
			&err) != 0)
		return acct_rpc_fail(ctx, &err);
	*resp = &out->base;
	return 0;
}

static int rpc_get_credits(rpc_ctx *ctx, const ProtobufCMessage *req,
			   ProtobufCMessage **resp)
{
	Seo__Account__V1__Credits *out;
	acct_caller who;
	acct_err err;
	int64_t credits;

	(void)req;
	if (acct_rpc_caller(ctx, &who, &err) != 0 ||
	    acct_get_credits(rpc_ctx_service(ctx), &who, &credits, &err) != 0)
		return acct_rpc_fail(ctx, &err);
	out = msg_new(ctx, &seo__account__v1__credits__descriptor);
	if (out == NULL)
		return oom(ctx);
	out->credits = credits;
	*resp = &out->base;
	return 0;
}

static int rpc_list_keys(rpc_ctx *ctx, const ProtobufCMessage *req,
			 ProtobufCMessage **resp)
{
	Seo__Account__V1__ListKeysResponse *out;
	acct_caller who;
	acct_err err;

	(void)req;
	if (acct_rpc_caller(ctx, &who, &err) != 0 ||
	    acct_list_keys(rpc_ctx_service(ctx), &who, rpc_ctx_arena(ctx), &out,
			   &err) != 0)
		return acct_rpc_fail(ctx, &err);
	*resp = &out->base;
	return 0;
}

static int rpc_create_key(rpc_ctx *ctx, const ProtobufCMessage *req,
			  ProtobufCMessage **resp)
{
	const Seo__Account__V1__CreateKeyRequest *in = (const void *)req;
	Seo__Account__V1__CreatedKey *out;
	acct_caller who;
	acct_err err;

	if (acct_rpc_caller(ctx, &who, &err) != 0 ||
	    acct_create_key(rpc_ctx_service(ctx), &who, in->name,
			    rpc_ctx_arena(ctx), &out, &err) != 0)
		return acct_rpc_fail(ctx, &err);
	*resp = &out->base;
	return 0;
}

static int rpc_revoke_key(rpc_ctx *ctx, const ProtobufCMessage *req,
			  ProtobufCMessage **resp)
{
	const Seo__Account__V1__RevokeKeyRequest *in = (const void *)req;
	Seo__Account__V1__Success *out;
	acct_caller who;
	acct_err err;

	if (acct_rpc_caller(ctx, &who, &err) != 0 ||
	    acct_revoke_key(rpc_ctx_service(ctx), &who, in->id, &err) != 0)
		return acct_rpc_fail(ctx, &err);
	out = msg_new(ctx, &seo__account__v1__success__descriptor);
	if (out == NULL)
		return oom(ctx);
	out->success = 1;
	*resp = &out->base;
	return 0;
}

static int rpc_list_usage(rpc_ctx *ctx, const ProtobufCMessage *req,
			  ProtobufCMessage **resp)
{
	Seo__Account__V1__ListUsageResponse *out;
	acct_caller who;
	acct_err err;

	if (acct_rpc_caller(ctx, &who, &err) != 0 ||
	    acct_list_usage(rpc_ctx_service(ctx), &who, (const void *)req,
			    rpc_ctx_arena(ctx), &out, &err) != 0)
		return acct_rpc_fail(ctx, &err);
	*resp = &out->base;
	return 0;
}

/* Public: the gateway calls it without a key. */
static int rpc_get_pricing(rpc_ctx *ctx, const ProtobufCMessage *req,
			   ProtobufCMessage **resp)
{
	Seo__Account__V1__PricingResponse *out;
	acct_err err;

	(void)req;
	if (acct_get_pricing(rpc_ctx_service(ctx), rpc_ctx_arena(ctx), &out,
			     &err) != 0)
		return acct_rpc_fail(ctx, &err);
	*resp = &out->base;
	return 0;
}

static int rpc_list_websites(rpc_ctx *ctx, const ProtobufCMessage *req,
			     ProtobufCMessage **resp)
{
	Seo__Account__V1__ListWebsitesResponse *out;
	acct_caller who;
	acct_err err;

	(void)req;
	if (acct_rpc_caller(ctx, &who, &err) != 0 ||
	    acct_list_websites(rpc_ctx_service(ctx), &who, rpc_ctx_arena(ctx),
			       &out, &err) != 0)
		return acct_rpc_fail(ctx, &err);
	*resp = &out->base;
	return 0;
}

static int rpc_list_sites(rpc_ctx *ctx, const ProtobufCMessage *req,
			  ProtobufCMessage **resp)
{
	Seo__Account__V1__ListSitesResponse *out;
	acct_caller who;
	acct_err err;

	(void)req;
	if (acct_rpc_caller(ctx, &who, &err) != 0 ||
	    acct_list_sites(rpc_ctx_service(ctx), &who, rpc_ctx_arena(ctx),
			    &out, &err) != 0)
		return acct_rpc_fail(ctx, &err);
	*resp = &out->base;
	return 0;
}

/* Replaces the server's built-in check (a service's own methods come
 * first): svc-account serves nothing useful without its database, so it is
 * NOT_SERVING while the database does not answer. */
static int rpc_health(rpc_ctx *ctx, const ProtobufCMessage *req,
		      ProtobufCMessage **resp)
{
	Grpc__Health__V1__HealthCheckResponse *out;
	acct_err err;

	(void)req;
	out = msg_new(ctx, &grpc__health__v1__health_check_response__descriptor);
	if (out == NULL)
		return oom(ctx);
	out->has_status = 1;
	out->status = acct_db_check(rpc_ctx_service(ctx), &err) == 0
		? GRPC__HEALTH__V1__HEALTH_CHECK_RESPONSE__SERVING_STATUS__SERVING
		: GRPC__HEALTH__V1__HEALTH_CHECK_RESPONSE__SERVING_STATUS__NOT_SERVING;
	*resp = &out->base;
	return 0;
}

#define ACCOUNT_PATH "/seo.account.v1.Account/"
#define MSG(name) &seo__account__v1__##name##__descriptor

const rpc_method acct_rpc_methods[] = {
	{ACCOUNT_PATH "Authorize", MSG(authorize_request), MSG(authorize_response), rpc_authorize},
	{ACCOUNT_PATH "Refund", MSG(refund_request), MSG(refund_response), rpc_refund},
	{ACCOUNT_PATH "Settle", MSG(settle_request), MSG(settle_response), rpc_settle},
	{ACCOUNT_PATH "Watch", MSG(watch_request), MSG(watch_response), rpc_watch},
	{ACCOUNT_PATH "Lease", MSG(lease_request), MSG(lease_response), rpc_lease},
	{ACCOUNT_PATH "LeaseBatch", MSG(lease_batch_request), MSG(lease_batch_response), rpc_lease_batch},
	{ACCOUNT_PATH "LeaseBatchColumns", MSG(lease_batch_request), MSG(lease_batch_response), rpc_lease_batch_columns},
	{ACCOUNT_PATH "Charge", MSG(charge_request), MSG(charge_response), rpc_charge},
	{ACCOUNT_PATH "GetMe", MSG(empty), MSG(user), rpc_get_me},
	{ACCOUNT_PATH "GetCredits", MSG(empty), MSG(credits), rpc_get_credits},
	{ACCOUNT_PATH "ListKeys", MSG(empty), MSG(list_keys_response), rpc_list_keys},
	{ACCOUNT_PATH "CreateKey", MSG(create_key_request), MSG(created_key), rpc_create_key},
	{ACCOUNT_PATH "RevokeKey", MSG(revoke_key_request), MSG(success), rpc_revoke_key},
	{ACCOUNT_PATH "ListUsage", MSG(list_usage_request), MSG(list_usage_response), rpc_list_usage},
	{ACCOUNT_PATH "GetPricing", MSG(empty), MSG(pricing_response), rpc_get_pricing},
	{ACCOUNT_PATH "ListWebsites", MSG(empty), MSG(list_websites_response), rpc_list_websites},
	{ACCOUNT_PATH "ListSites", MSG(empty), MSG(list_sites_response), rpc_list_sites},
	{ACCOUNT_PATH "CreateCheckout", MSG(checkout_request), MSG(checkout_response), acct_rpc_create_checkout},
	{ACCOUNT_PATH "PaymentWebhook", MSG(payment_webhook_request), MSG(payment_webhook_response), acct_rpc_payment_webhook},
	{ACCOUNT_PATH "ClaimUsage", MSG(claim_usage_request), MSG(claim_usage_response), acct_rpc_claim_usage},
	{"/grpc.health.v1.Health/Check", &grpc__health__v1__health_check_request__descriptor,
	 &grpc__health__v1__health_check_response__descriptor, rpc_health},
};

const size_t acct_rpc_n_methods = sizeof(acct_rpc_methods) / sizeof(acct_rpc_methods[0]);

/*
 * payments.h: buying credits through a payment-provider checkout session,
 * and applying the provider's signed webhook events.
 *
 * The provider speaks Stripe's wire format: checkout sessions are created
 * with POST {SEO_PAYMENTS_API_URL}/v1/checkout/sessions (form-encoded,
 * bearer SEO_PAYMENTS_KEY), and events arrive signed with
 * SEO_PAYMENTS_WEBHOOK_SECRET in a `t=<unix>,v1=<hex>` header.
 *
 * A checkout records a `payments` row (status open) keyed by the session
 * id. The credits of that row, never the event's metadata, are added when
 * a paid checkout.session.completed event arrives; the row's transition
 * open -> completed is what makes the purchase count exactly once, however
 * often or concurrently the provider delivers.
 *
 * All functions return 0 or a negative SEO_E* code. Where an err_code
 * out-parameter exists it is set on failure to a public error code of
 * seo/errors.h (a static string, never freed).
 */
#ifndef ACCT_PAYMENTS_H
#define ACCT_PAYMENTS_H

#include <stddef.h>

#include <libpq-fe.h>
#include <protobuf-c/protobuf-c.h>

#include "seo/pg_pool.h"
#include "seo/rpc.h"

/* Smallest purchase, in credits. */
#define ACCT_CHECKOUT_MIN_CREDITS 100

/*
 * Account/CreateCheckout: CheckoutRequest -> CheckoutResponse. Owner and
 * admin only (capability_missing otherwise); reads the caller from the
 * seo-workspace-id, seo-user-id and seo-role metadata.
 */
int acct_rpc_create_checkout(rpc_ctx *ctx, const ProtobufCMessage *req,
			     ProtobufCMessage **resp);

/*
 * Account/PaymentWebhook: PaymentWebhookRequest -> PaymentWebhookResponse.
 * No caller identity: the signature is the authentication.
 */
int acct_rpc_payment_webhook(rpc_ctx *ctx, const ProtobufCMessage *req,
			     ProtobufCMessage **resp);

/*
 * Prices `credits` by the price_tiers table, creates a provider checkout
 * session and records it as an open payment of `workspace_id` by `user_id`
 * (may be NULL). On success *url_out is the session's URL, malloc'd; the
 * caller frees it. A connection of `pool` is held for the pricing and for
 * the record, never across the provider's call (up to 10 s).
 *
 * Failures: SEO_EINVAL with invalid_credits (below the minimum);
 * SEO_EUPSTREAM with checkout_failed (provider not configured, unreachable,
 * slow past 10 s, non-2xx, or an answer without id and url); SEO_EDB or
 * SEO_ENOMEM with checkout_failed (nothing priced or recorded); SEO_EDB or
 * SEO_ETIMEDOUT with service_unavailable (the database is away or no
 * connection was free in time).
 */
int acct_checkout_create(seo_pg_pool *pool, const char *workspace_id,
			 const char *user_id, long long credits,
			 char **url_out, const char **err_code);

/*
 * Verifies `signature_header` over the exact `payload` bytes, then applies
 * the event. Events other than a paid checkout.session.completed, replays,
 * and sessions we never created are accepted and change nothing (so that
 * the provider stops retrying); the caller answers received=true for all
 * of them.
 *
 * Failures: SEO_EDENIED with invalid_signature (header missing, malformed,
 * wrong, older or newer than 300 s, or no secret configured); SEO_EDB with
 * internal_error (nothing applied; the provider retries).
 * Runs its own transaction: `db` must be idle. When the event credited a
 * workspace, its id is copied to `credited` (caller's buffer of
 * `credited_len` bytes; may be NULL), else it is left as it was.
 */
int acct_payment_webhook_apply(PGconn *db, const void *payload, size_t len,
			       const char *signature_header,
			       const char **err_code, char *credited,
			       size_t credited_len);

#endif

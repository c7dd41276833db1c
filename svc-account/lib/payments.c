/*
 * payments.c: checkout sessions at the payment provider and the webhook
 * that turns a paid session into credits (see payments.h).
 */
#include "payments.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "acct.h"
#include "acct_int.h"
#include "seo/account/v1/account.pb-c.h"
#include "seo/config.h"
#include "seo/errors.h"
#include "seo/log.h"
#include "seo/provider.h"
#include "seo/util.h"

#define PROVIDER_TIMEOUT_MS 10000L
/* A session object is a few KB; anything far larger is not one. */
#define PROVIDER_MAX_BODY (256 * 1024)
#define WEBHOOK_TOLERANCE_S 300

/* ---- pricing ------------------------------------------------------------ */

/*
 * Price of `credits` in cents at the highest tier whose minimum is at or
 * below it. Computed in numeric so that half a cent rounds up exactly.
 */
static int checkout_price(PGconn *db, long long credits, long long *cents)
{
	char cbuf[24];
	const char *params[1] = {cbuf};
	PGresult *res;
	char *end;
	long long v;
	int rc = SEO_EDB;

	snprintf(cbuf, sizeof(cbuf), "%lld", credits);
	res = PQexecParams(db,
			   "SELECT round($1::numeric * price_per_credit * 100)"
			   " FROM price_tiers WHERE min_credits <= $1::bigint"
			   " ORDER BY min_credits DESC LIMIT 1",
			   1, NULL, params, NULL, NULL, 0);
	if (PQresultStatus(res) != PGRES_TUPLES_OK) {
		log_error("could not price %lld credits: %s", credits,
			  PQerrorMessage(db));
		goto out;
	}
	if (PQntuples(res) == 0) {
		log_error("no price tier covers %lld credits", credits);
		rc = SEO_ENOTFOUND;
		goto out;
	}
	errno = 0;
	v = strtoll(PQgetvalue(res, 0, 0), &end, 10);
	if (errno != 0 || *end != '\0' || v <= 0) {
		log_error("price of %lld credits is out of range: %s", credits,
			  PQgetvalue(res, 0, 0));
		rc = SEO_ETOOBIG;
		goto out;
	}
	*cents = v;
	rc = 0;
out:
	PQclear(res);
	return rc;
}

/* ---- provider ----------------------------------------------------------- */

/* Takes the session id and URL out of the provider's answer (malloc'd). */
static int session_parse(const json_t *root, char **id_out, char **url_out)
{
	const char *id, *url;

	if (root == NULL) {
		log_warn("payment provider answered with no json object");
		return SEO_EUPSTREAM;
	}
	id = json_string_value(json_object_get(root, "id"));
	url = json_string_value(json_object_get(root, "url"));
	if (id == NULL || *id == '\0' || url == NULL || *url == '\0') {
		log_warn("payment provider answered without session id or url");
		return SEO_EUPSTREAM;
	}
	*id_out = strdup(id);
	*url_out = strdup(url);
	if (*id_out == NULL || *url_out == NULL) {
		free(*id_out);
		free(*url_out);
		*id_out = *url_out = NULL;
		return SEO_ENOMEM;
	}
	return 0;
}

/*
 * Creates the provider's checkout session; *id_out and *url_out are
 * malloc'd. There is no public base URL in the configuration, so the
 * buyer returns to the gateway's own address.
 */
static int provider_create_session(const char *workspace_id, long long credits,
				   long long cents, char **id_out,
				   char **url_out)
{
	const seo_provider provider = {
		.name = "payment provider",
		.base_url = seo_config(SEO_CFG_PAYMENTS_API_URL),
		.auth = SEO_AUTH_BEARER,
		.key = seo_config(SEO_CFG_PAYMENTS_KEY),
		.timeout_ms = PROVIDER_TIMEOUT_MS,
		.connect_timeout_ms = PROVIDER_TIMEOUT_MS,
		.max_body = PROVIDER_MAX_BODY,
	};
	const char *gw = seo_config(SEO_CFG_HTTP_ADDR);
	char *success = NULL, *cancel = NULL, why[256];
	char scredits[24], scents[24], name[48];
	seo_provider_answer ans = {0};
	int rc = SEO_ENOMEM;

	if (asprintf(&success, "http://%s/checkout/success?session_id={CHECKOUT_SESSION_ID}", gw) < 0)
		return SEO_ENOMEM;
	if (asprintf(&cancel, "http://%s/checkout/cancel", gw) < 0) {
		free(success);
		return SEO_ENOMEM;
	}
	snprintf(scredits, sizeof(scredits), "%lld", credits);
	snprintf(scents, sizeof(scents), "%lld", cents);
	snprintf(name, sizeof(name), "%lld credits", credits);
	{
		const seo_param form[] = {
			{"mode", "payment"},
			{"success_url", success},
			{"cancel_url", cancel},
			{"client_reference_id", workspace_id},
			{"line_items[0][quantity]", "1"},
			{"line_items[0][price_data][currency]", "usd"},
			{"line_items[0][price_data][unit_amount]", scents},
			{"line_items[0][price_data][product_data][name]", name},
			{"metadata[workspace_id]", workspace_id},
			{"metadata[credits]", scredits},
		};
		/* A second POST would open a second session: no retries. */
		const seo_provider_call call = {
			.method = "POST",
			.path = "/v1/checkout/sessions",
			.form = form,
			.n_form = sizeof(form) / sizeof(form[0]),
		};

		rc = seo_provider_do(&provider, &call, &ans, why, sizeof(why));
	}
	if (rc == SEO_EUPSTREAM)
		log_warn("payment provider unreachable: %s", why);
	else if (rc == 0 && (ans.status < 200 || ans.status > 299)) {
		log_warn("payment provider refused the checkout session: http %ld: %.200s",
			 ans.status, ans.body);
		rc = SEO_EUPSTREAM;
	} else if (rc == 0) {
		rc = session_parse(ans.json, id_out, url_out);
	}
	seo_provider_answer_free(&ans);
	free(success);
	free(cancel);
	return rc;
}

/* A pooled connection for one step of a checkout; the code says whether
 * the database is away. */
static int checkout_conn(seo_pg_pool *pool, seo_pg_conn **c,
			 const char **err_code)
{
	char why[256];
	int rc = seo_pg_pool_get(pool, c, why, sizeof(why));

	if (rc != 0) {
		log_warn("checkout without a database connection: %s", why);
		*err_code = rc == SEO_ETIMEDOUT || !seo_pg_pool_reachable(pool)
				    ? "service_unavailable" : "checkout_failed";
	}
	return rc;
}

int acct_checkout_create(seo_pg_pool *pool, const char *workspace_id,
			 const char *user_id, long long credits,
			 char **url_out, const char **err_code)
{
	char scredits[24], scents[24], snow[24];
	const char *params[6];
	char *id = NULL, *url = NULL;
	PGresult *res = NULL;
	seo_pg_conn *c;
	long long cents = 0;
	int rc;

	*url_out = NULL;
	if (credits < ACCT_CHECKOUT_MIN_CREDITS) {
		*err_code = "invalid_credits";
		return SEO_EINVAL;
	}
	*err_code = "checkout_failed";
	rc = checkout_conn(pool, &c, err_code);
	if (rc < 0)
		return rc;
	rc = checkout_price(c->pg, credits, &cents);
	seo_pg_pool_put(pool, c);
	if (rc < 0)
		goto out;
	/* No connection is held while the provider answers: a slow provider
	 * must not take the pool from key checks. */
	rc = provider_create_session(workspace_id, credits, cents, &id, &url);
	if (rc < 0)
		goto out;
	rc = checkout_conn(pool, &c, err_code);
	if (rc < 0) {
		log_error("could not record checkout session %s", id);
		goto out;
	}

	snprintf(scredits, sizeof(scredits), "%lld", credits);
	snprintf(scents, sizeof(scents), "%lld", cents);
	snprintf(snow, sizeof(snow), "%lld", (long long)seo_now_ms());
	params[0] = id;
	params[1] = workspace_id;
	params[2] = user_id;
	params[3] = scredits;
	params[4] = scents;
	params[5] = snow;
	res = PQexecParams(c->pg,
			   "INSERT INTO payments (id, workspace_id, user_id, credits,"
			   " amount_cents, status, created_at)"
			   " VALUES ($1, $2, $3, $4, $5, 'open', $6)",
			   6, NULL, params, NULL, NULL, 0);
	if (PQresultStatus(res) != PGRES_COMMAND_OK) {
		/* The session exists at the provider, but without our row a
		 * payment could not be credited: do not hand out its URL. */
		log_error("could not record checkout session %s: %s", id,
			  PQerrorMessage(c->pg));
		seo_pg_pool_put(pool, c);
		rc = SEO_EDB;
		goto out;
	}
	seo_pg_pool_put(pool, c);
	log_info("checkout session %s opened for workspace %s: %lld credits, %lld cents",
		 id, workspace_id, credits, cents);
	*url_out = url;
	url = NULL;
	*err_code = NULL;
	rc = 0;
out:
	PQclear(res);
	free(id);
	free(url);
	return rc;
}

/* ---- webhook ------------------------------------------------------------ */

/*
 * Checks a `t=<unix>,v1=<hex>[,v1=<hex>...]` header (several v1 while the
 * provider rotates its secret): some v1 must be the HMAC-SHA256 of
 * "<t>.<payload>", and t within the tolerance of now, so that a captured
 * event cannot be replayed later.
 */
static int webhook_verify(const char *secret, const void *payload, size_t len,
			  const char *header)
{
	char expected[65], cand[65];
	const char *p, *item, *eq;
	size_t n;
	long long t = -1, now;
	char *msg = NULL, *end;
	int prefix, ok = 0;

	for (p = header; *p != '\0'; p = item + n + (item[n] == ',')) {
		item = p;
		n = strcspn(item, ",");
		if (n > 2 && strncmp(item, "t=", 2) == 0) {
			errno = 0;
			t = strtoll(item + 2, &end, 10);
			if (errno != 0 || end != item + n || item[2] < '0' || item[2] > '9')
				return SEO_EDENIED;
		}
	}
	if (t < 0)
		return SEO_EDENIED;
	now = seo_now_ms() / 1000;
	if (t < now - WEBHOOK_TOLERANCE_S || t > now + WEBHOOK_TOLERANCE_S) {
		log_warn("payment webhook timestamp %lld is outside the tolerance", t);
		return SEO_EDENIED;
	}

	prefix = snprintf(NULL, 0, "%lld.", t);
	msg = malloc((size_t)prefix + len + 1);
	if (msg == NULL)
		return SEO_ENOMEM;
	snprintf(msg, (size_t)prefix + 1, "%lld.", t);
	if (len > 0)
		memcpy(msg + prefix, payload, len);
	seo_hmac_sha256_hex(secret, strlen(secret), msg, (size_t)prefix + len,
			    expected);
	free(msg);

	for (p = header; *p != '\0'; p = item + n + (item[n] == ',')) {
		item = p;
		n = strcspn(item, ",");
		eq = memchr(item, '=', n);
		if (eq == NULL || eq - item != 2 || strncmp(item, "v1", 2) != 0 ||
		    n - 3 != 64)
			continue;
		memcpy(cand, eq + 1, 64);
		cand[64] = '\0';
		ok |= seo_secure_streq(cand, expected);
	}
	return ok ? 0 : SEO_EDENIED;
}

/*
 * Credits the payment of `session_id` once. The event row makes a replayed
 * event a no-op; the open -> completed update, whose row lock a concurrent
 * delivery waits for and then re-checks, makes a second event for the same
 * session a no-op.
 */
static int webhook_credit(PGconn *db, const char *event_id,
			  const char *session_id, char *credited,
			  size_t credited_len)
{
	char snow[24];
	const char *params[3] = {event_id, session_id, snow};
	PGresult *res;
	int rc = SEO_EDB;

	snprintf(snow, sizeof(snow), "%lld", (long long)seo_now_ms());
	if (acct__exec_sql(db, "BEGIN") < 0)
		return SEO_EDB;
	res = PQexecParams(db,
			   "INSERT INTO payment_events (event_id, payment_id, received_at)"
			   " VALUES ($1, $2, $3) ON CONFLICT (event_id) DO NOTHING",
			   3, NULL, params, NULL, NULL, 0);
	if (PQresultStatus(res) != PGRES_COMMAND_OK)
		goto out;
	if (strcmp(PQcmdTuples(res), "0") == 0) {
		log_info("payment event %s already applied", event_id);
		rc = 0;
		goto out;
	}
	PQclear(res);
	res = PQexecParams(db,
			   "WITH p AS (UPDATE payments SET status = 'completed', completed_at = $2"
			   "           WHERE id = $1 AND status = 'open'"
			   "           RETURNING workspace_id, credits),"
			   " l AS (INSERT INTO ledger (workspace_id, delta, reason, ref, created_at)"
			   "       SELECT workspace_id, credits, 'purchase', $1, $2 FROM p)"
			   " UPDATE workspaces w SET balance = w.balance + p.credits"
			   " FROM p WHERE w.id = p.workspace_id"
			   " RETURNING w.id, p.credits, w.balance,"
			   " pg_notify('" ACCT_AUTH_CHANNEL "', '" ACCT_AUTH_BALANCE_PREFIX "' || w.id)",
			   2, NULL, params + 1, NULL, NULL, 0);
	if (PQresultStatus(res) != PGRES_TUPLES_OK)
		goto out;
	if (PQntuples(res) == 0)
		log_warn("payment event %s ignored: checkout session %s is unknown or already completed",
			 event_id, session_id);
	else {
		log_info("checkout session %s paid: workspace %s +%s credits, balance %s",
			 session_id, PQgetvalue(res, 0, 0), PQgetvalue(res, 0, 1),
			 PQgetvalue(res, 0, 2));
		if (credited != NULL)
			snprintf(credited, credited_len, "%s", PQgetvalue(res, 0, 0));
	}
	rc = 0;
out:
	if (rc < 0)
		log_error("could not apply payment event %s: %s", event_id,
			  PQerrorMessage(db));
	PQclear(res);
	/* A failed statement already aborted the transaction: roll it back so
	 * the connection is idle again for the next call. */
	if (acct__exec_sql(db, rc == 0 ? "COMMIT" : "ROLLBACK") < 0)
		rc = SEO_EDB;
	return rc;
}

int acct_payment_webhook_apply(PGconn *db, const void *payload, size_t len,
			       const char *signature_header,
			       const char **err_code, char *credited,
			       size_t credited_len)
{
	const char *secret = seo_config(SEO_CFG_PAYMENTS_WEBHOOK_SECRET);
	const char *event_id, *type, *session_id, *paid;
	json_error_t jerr;
	json_t *root = NULL, *object;
	int rc;

	*err_code = "invalid_signature";
	if (*secret == '\0') {
		log_warn("payment webhook refused: SEO_PAYMENTS_WEBHOOK_SECRET is not set");
		return SEO_EDENIED;
	}
	rc = webhook_verify(secret, payload, len,
			    signature_header ? signature_header : "");
	if (rc < 0) {
		if (rc != SEO_EDENIED)
			*err_code = "internal_error";
		return rc;
	}

	*err_code = "internal_error";
	/* Signed by the provider: anything we cannot use is acknowledged and
	 * logged, since a retry would carry the same bytes. */
	root = json_loadb(payload, len, 0, &jerr);
	if (root == NULL) {
		log_warn("payment event ignored: invalid json: %s", jerr.text);
		rc = 0;
		goto out;
	}
	event_id = json_string_value(json_object_get(root, "id"));
	type = json_string_value(json_object_get(root, "type"));
	object = json_object_get(json_object_get(root, "data"), "object");
	session_id = json_string_value(json_object_get(object, "id"));
	paid = json_string_value(json_object_get(object, "payment_status"));
	if (event_id == NULL || type == NULL) {
		log_warn("payment event ignored: no id or type");
		rc = 0;
		goto out;
	}
	if (strcmp(type, "checkout.session.completed") != 0 || paid == NULL ||
	    strcmp(paid, "paid") != 0) {
		log_info("payment event %s ignored: %s, payment status %s",
			 event_id, type, paid ? paid : "none");
		rc = 0;
		goto out;
	}
	if (session_id == NULL) {
		log_warn("payment event %s ignored: no checkout session id", event_id);
		rc = 0;
		goto out;
	}
	rc = webhook_credit(db, event_id, session_id, credited, credited_len);
out:
	json_decref(root);
	if (rc == 0)
		*err_code = NULL;
	return rc;
}

/* ---- rpc handlers ------------------------------------------------------- */

int acct_rpc_create_checkout(rpc_ctx *ctx, const ProtobufCMessage *req,
			     ProtobufCMessage **resp)
{
	const Seo__Account__V1__CheckoutRequest *in = (const void *)req;
	acct_service *a = rpc_ctx_service(ctx);
	Seo__Account__V1__CheckoutResponse *out;
	const char *code = NULL;
	acct_caller who;
	acct_err err;
	char *url = NULL;
	int rc;

	rc = acct_rpc_caller(ctx, &who, &err);
	if (rc < 0) {
		rc = acct_rpc_fail(ctx, &err);
		goto out;
	}
	if ((who.role & (ACCT_ROLE_OWNER | ACCT_ROLE_ADMIN)) == 0) {
		rc = rpc_ctx_fail(ctx, "capability_missing",
				  "only an owner or admin may buy credits");
		goto out;
	}
	rc = acct_checkout_create(a->pool, who.workspace_id, who.user_id,
				  in->credits, &url, &code);
	if (rc < 0) {
		if (strcmp(code, "invalid_credits") == 0)
			rc = rpc_ctx_fail(ctx, code,
					  "credits must be a whole number of at least %d",
					  ACCT_CHECKOUT_MIN_CREDITS);
		else if (strcmp(code, "service_unavailable") == 0)
			rc = rpc_ctx_fail(ctx, code,
					  "the account database is unavailable, try again");
		else
			rc = rpc_ctx_fail(ctx, code, "checkout session not created");
		goto out;
	}
	out = seo_arena_alloc(rpc_ctx_arena(ctx), sizeof(*out));
	if (out == NULL) {
		rc = rpc_ctx_fail(ctx, "internal_error", "out of memory");
		goto out;
	}
	seo__account__v1__checkout_response__init(out);
	out->url = seo_arena_strdup(rpc_ctx_arena(ctx), url);
	if (out->url == NULL) {
		rc = rpc_ctx_fail(ctx, "internal_error", "out of memory");
		goto out;
	}
	*resp = &out->base;
	rc = 0;
out:
	free(url);
	return rc;
}

int acct_rpc_payment_webhook(rpc_ctx *ctx, const ProtobufCMessage *req,
			     ProtobufCMessage **resp)
{
	const Seo__Account__V1__PaymentWebhookRequest *in = (const void *)req;
	acct_service *a = rpc_ctx_service(ctx);
	Seo__Account__V1__PaymentWebhookResponse *out;
	const char *code = NULL;
	char credited[ACCT_ID_LEN] = "";
	PGconn *db = NULL;
	acct_err err;
	int rc;

	rc = acct_db_acquire(a, &db, &err);
	if (rc < 0) {
		db = NULL;
		rc = acct_rpc_fail(ctx, &err);
		goto out;
	}
	rc = acct_payment_webhook_apply(db, in->payload.data, in->payload.len,
					in->signature, &code, credited,
					sizeof(credited));
	if (rc < 0) {
		rc = rpc_ctx_fail(ctx, code, "%s",
				  rc == SEO_EDENIED ? "payment webhook signature missing or wrong"
						    : "payment event not applied");
		goto out;
	}
	out = seo_arena_alloc(rpc_ctx_arena(ctx), sizeof(*out));
	if (out == NULL) {
		rc = rpc_ctx_fail(ctx, "internal_error", "out of memory");
		goto out;
	}
	/* A purchase shows on the customer's very next read, at any
	 * gateway: answered once every gateway holding a lease of the
	 * workspace has heard of it (the commit's notice alone may come
	 * after that read). */
	if (credited[0] != '\0')
		acct__leases_balance_changed(&a->leases, credited, 1);
	seo__account__v1__payment_webhook_response__init(out);
	out->received = 1;
	*resp = &out->base;
out:
	if (db != NULL)
		acct_db_release(a, db);
	return rc;
}

/*
 * The service object, Authorize (the gateway's hot path), Refund, and
 * Charge (the debit of a call billed after its work).
 */
#include "acct_int.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "seo/config.h"
#include "seo/errors.h"
#include "seo/log.h"
#include "seo/pg.h"
#include "seo/util.h"

#define DEFAULT_POOL 8

/* Parts of an acct_service that acct_free() must take down. */
enum {
	PART_POOL = 1,
	PART_CACHE = 2,
	PART_LIMITER = 4,
	PART_LEDGER = 8,
	PART_LISTENER = 16,
	PART_WATCH = 32,
	PART_LEASES = 64,
};

/* The open leases as the table holds them: a restart loses none. */
static int load_leases(acct_service *a, acct_err *err)
{
	seo_pg_conn *c;
	int rc = acct__pool_get(a->pool, &c, err);

	if (rc != 0)
		return rc;
	rc = acct__leases_load(&a->leases, c->pg, NULL, err);
	seo_pg_pool_put(a->pool, c);
	return rc;
}

void acct_options_init(acct_options *opt)
{
	memset(opt, 0, sizeof(*opt));
	opt->rate_per_min = seo_config_num(SEO_CFG_RATE_LIMIT_PER_MIN);
}

int acct_new(const acct_options *opt, acct_service **out, acct_err *err)
{
	const char *url = opt->pg_url != NULL ? opt->pg_url : seo_pg_url();
	acct_service *a = calloc(1, sizeof(*a));
	seo_pg_pool_opt po = {
		.url = url,
		.size = opt->pool_size > 0 ? opt->pool_size : DEFAULT_POOL,
		.connect_timeout_s = ACCT_CONNECT_TIMEOUT_S,
		.stmts = &acct__stmts,
	};
	int rc;

	*out = NULL;
	if (a == NULL)
		return acct__fail(err, SEO_ENOMEM, "internal_error",
				  "out of memory");
	rc = seo_pg_pool_new(&po, &a->pool);
	if (rc != 0)
		goto oom;
	a->started |= PART_POOL;
	rc = acct__keycache_init(&a->cache);
	if (rc != 0)
		goto oom;
	a->started |= PART_CACHE;
	rc = acct__limiter_init(&a->limiter, opt->rate_per_min, opt->clock,
				opt->clock_ud);
	if (rc != 0)
		goto oom;
	a->started |= PART_LIMITER;
	rc = acct__ledger_start(&a->ledger, url, err);
	if (rc != 0)
		goto fail;
	a->started |= PART_LEDGER;
	rc = acct__watch_init(&a->watch, err);
	if (rc != 0)
		goto fail;
	a->started |= PART_WATCH;
	rc = acct__leases_init(&a->leases, &a->watch, err);
	if (rc != 0)
		goto fail;
	a->started |= PART_LEASES;
	a->ledger.leases = &a->leases;
	rc = acct__listener_start(&a->listener, url, &a->cache, &a->watch,
				  &a->leases, err);
	if (rc != 0)
		goto fail;
	a->started |= PART_LISTENER;
	/* After the listener: a lease closed meanwhile is heard of. */
	rc = load_leases(a, err);
	if (rc != 0)
		goto fail;
	*out = a;
	return 0;
oom:
	acct__fail(err, rc, "internal_error", "out of memory");
fail:
	acct_free(a);
	return rc;
}

void acct_free(acct_service *a)
{
	if (a == NULL)
		return;
	if (a->started & PART_LISTENER)
		acct__listener_stop(&a->listener);
	if (a->started & PART_LEDGER)
		acct__ledger_stop(&a->ledger);
	if (a->started & PART_LEASES)
		acct__leases_destroy(&a->leases);
	if (a->started & PART_WATCH)
		acct__watch_destroy(&a->watch);
	if (a->started & PART_POOL)
		seo_pg_pool_free(a->pool);
	if (a->started & PART_LIMITER)
		acct__limiter_destroy(&a->limiter);
	if (a->started & PART_CACHE)
		acct__keycache_destroy(&a->cache);
	free(a);
}

void acct_get_stats(acct_service *a, acct_stats *out)
{
	out->key_db_lookups = atomic_load(&a->key_db_lookups);
	out->ledger_queued = atomic_load(&a->ledger.queued);
	out->ledger_ops = atomic_load(&a->ledger.ops);
	out->ledger_batches = atomic_load(&a->ledger.batches);
	out->notifications = atomic_load(&a->listener.notifications);
}

int acct__is_key_hash(const char *s)
{
	size_t n = 0;

	if (s == NULL)
		return 0;
	for (; s[n] != '\0'; n++)
		if (!((s[n] >= '0' && s[n] <= '9') || (s[n] >= 'a' && s[n] <= 'f')))
			return 0;
	return n == ACCT_HASH_LEN - 1;
}

/* The identity of a valid key: from the cache, else from PostgreSQL. */
static int lookup_key(acct_service *a, const char *hash, acct__identity *id,
		      acct_err *err)
{
	PGresult *r = NULL;
	uint64_t epoch;
	int rc;

	if (acct__keycache_get(&a->cache, hash, id, &epoch))
		return 0;
	if (acct__keycache_unknown(&a->cache, hash, seo_mono_ms()))
		return acct__fail(err, SEO_ENOTFOUND, "invalid_api_key",
				  "invalid or revoked api key");
	atomic_fetch_add(&a->key_db_lookups, 1);
	rc = acct__pool_query(a->pool, ACCT_Q_KEY_LOOKUP, 1, &hash, &r, err);
	if (rc != 0)
		goto out;
	if (PQntuples(r) == 0) {
		acct__keycache_put_unknown(&a->cache, hash, epoch, seo_mono_ms());
		rc = acct__fail(err, SEO_ENOTFOUND, "invalid_api_key",
				"invalid or revoked api key");
		goto out;
	}
	snprintf(id->workspace_id, sizeof(id->workspace_id), "%s",
		 PQgetvalue(r, 0, 0));
	snprintf(id->user_id, sizeof(id->user_id), "%s", PQgetvalue(r, 0, 1));
	rc = acct_role_parse(PQgetvalue(r, 0, 2), &id->role);
	if (rc != 0) {
		rc = acct__fail(err, rc, "internal_error", "unknown role \"%s\"",
				PQgetvalue(r, 0, 2));
		goto out;
	}
	acct__keycache_put(&a->cache, hash, id, epoch);
out:
	PQclear(r);
	return rc;
}

/*
 * What the open leases hold is still the customer's: the balance and
 * their unused credits are read in one statement, not the balance beside
 * this process's lease registry, which learns of another replica's
 * top-ups only at their close.
 */
int acct__read_balance(acct_service *a, const char *workspace_id, int64_t *balance,
		       acct_err *err)
{
	PGresult *r = NULL;
	int rc = acct__pool_query(a->pool, ACCT_Q_BALANCE, 1, &workspace_id, &r,
				  err);

	if (rc == 0 && PQntuples(r) == 0)
		rc = acct__fail(err, SEO_ENOTFOUND, "invalid_api_key",
				"workspace of the api key no longer exists");
	if (rc == 0)
		*balance = strtoll(PQgetvalue(r, 0, 0), NULL, 10);
	PQclear(r);
	return rc;
}

/* The debit's key, outcome time and deadline. */
static void call_of(acct__debit *d, const acct_call *call)
{
	if (call == NULL)
		return;
	d->request_id = call->request_id != NULL && call->request_id[0] != '\0'
				? call->request_id : NULL;
	d->settle_within_ms = call->settle_within_ms > 0 ? call->settle_within_ms
							 : ACCT_SETTLE_DEFAULT_MS;
	d->deadline_ms = call->deadline_ms;
}

/* Recalls the workspace's leases here and, through a NOTIFY, on every
 * other replica (whose gateways watch it), then waits here. */
static void recall(acct_service *a, const char *workspace_id, int64_t wait_ms)
{
	char payload[ACCT_ID_LEN + sizeof(ACCT_AUTH_RECALL_PREFIX)];
	const char *p = payload;
	acct_err err;

	snprintf(payload, sizeof(payload), "%s%s", ACCT_AUTH_RECALL_PREFIX,
		 workspace_id);
	if (acct__pool_query(a->pool, ACCT_Q_NOTIFY, 1, &p, NULL, &err) != 0)
		log_warn("recall of %s not announced: %s", workspace_id,
			 err.message);
	acct__leases_recall(&a->leases, workspace_id, wait_ms);
}

/*
 * Debits `d`. Refused for its balance while credits wait in the
 * workspace's open leases, it recalls them (their holders close them and
 * give back what they hold) and tries once more, after they hold nothing
 * or ACCT_LEASE_RECALL_WAIT_MS: the second answer stands. So no call is
 * refused while credits wait in a lease, and floor(B / cost) calls
 * succeed across every holder. The first try keeps no refused row, which
 * the second would find under its key. Leases holding nothing (watch
 * leases, spent ones) change nothing: the debit is answered at once. The
 * settled reader sees a top-up being committed (lease_registry.c).
 */
static int debit(acct_service *a, acct__debit *d, char charge_id[ACCT_ID_LEN],
		 int64_t *remaining, acct_err *err)
{
	int leased = acct__leases_unused_settled(&a->leases, d->workspace_id) > 0;
	int keep = d->keep_refused, rc;
	int64_t wait = ACCT_LEASE_RECALL_WAIT_MS;

	if (leased)
		d->keep_refused = 0;
	rc = acct__ledger_debit(&a->ledger, d, charge_id, remaining, err);
	if (!leased || rc != SEO_EDENIED ||
	    strcmp(err->code, "insufficient_credits") != 0)
		return rc;
	/* The second try must still meet the caller's deadline. */
	if (d->deadline_ms > 0 && d->deadline_ms - seo_mono_ms() - 100 < wait)
		wait = d->deadline_ms - seo_mono_ms() - 100;
	recall(a, d->workspace_id, wait);
	d->keep_refused = keep;
	return acct__ledger_debit(&a->ledger, d, charge_id, remaining, err);
}

static int authorize_once(acct_service *a, const acct_authorize_req *req,
			  acct_authorization *out, acct_err *err)
{
	acct__identity id;
	acct__debit d;
	int rc, recall;

	memset(out, 0, sizeof(*out));
	if (!acct__is_key_hash(req->key_hash))
		return acct__fail(err, SEO_ENOTFOUND, "invalid_api_key",
				  "invalid or revoked api key");
	rc = lookup_key(a, req->key_hash, &id, err);
	if (rc != 0)
		return rc;
	memcpy(out->workspace_id, id.workspace_id, sizeof(out->workspace_id));
	memcpy(out->user_id, id.user_id, sizeof(out->user_id));
	memcpy(out->key_id, req->key_hash, sizeof(out->key_id));
	out->role = id.role;

	rc = acct__limiter_check(&a->limiter, req->key_hash, req->rate_limited,
				 &out->rate, &out->retry_after, &recall);
	if (recall)
		acct__watch_rate(&a->watch, req->key_hash);
	if (rc == SEO_EDENIED)
		return acct__fail(err, rc, "rate_limited",
				  "more than %lld requests per minute with this api key",
				  (long long)out->rate.limit);
	if (rc != 0)
		return acct__fail(err, rc, "internal_error", "out of memory");

	if (req->roles_allowed != 0 && (req->roles_allowed & id.role) == 0)
		return acct__fail(err, SEO_EDENIED, "capability_missing",
				  "role %s may not use this endpoint",
				  acct_role_name(id.role));
	if (req->cost < 0)
		return acct__fail(err, SEO_EINVAL, "invalid_parameter",
				  "cost must not be negative");
	/* A free call that shows no balance costs no database work. */
	if (req->cost == 0)
		return req->no_balance ? 0 : acct__read_balance(a, id.workspace_id,
								 &out->credits_remaining,
								 err);
	if (req->endpoint == NULL || req->endpoint[0] == '\0')
		return acct__fail(err, SEO_EINVAL, "invalid_parameter",
				  "a debit needs an endpoint");
	d = (acct__debit){
		.workspace_id = id.workspace_id,
		.user_id = id.user_id,
		.key_id = req->key_hash,
		.endpoint = req->endpoint,
		.domain = req->usage_domain != NULL && req->usage_domain[0] != '\0'
				  ? req->usage_domain : NULL,
		.amount = req->cost,
		.show_balance = (id.role & ACCT_ROLES_STAFF) != 0,
		.earned = req->earned,
		.n_earned = req->n_earned,
	};
	call_of(&d, &req->call);
	return debit(a, &d, out->charge_id, &out->credits_remaining, err);
}

int acct_authorize(acct_service *a, const acct_authorize_req *req,
		   acct_authorization *out, acct_err *err)
{
	int rc = authorize_once(a, req, out, err);

	/* Only an authorized call takes tokens ahead: a refusal's answer
	 * could not carry them. Without rate_limited the call only asks. */
	if (rc == 0 && req->rate_want > 0)
		out->rate.granted = acct__limiter_grant(
			&a->limiter, req->key_hash, req->rate_want, &out->rate);
	return rc;
}

int acct_refund(acct_service *a, const acct_caller *who, const char *charge_id,
		int64_t amount, int64_t *credits_remaining,
		int64_t *credits_used, acct_err *err)
{
	acct__refund r = {
		.workspace_id = who != NULL ? who->workspace_id : NULL,
		.charge_id = charge_id,
		.amount = amount,
	};

	if (amount < 0)
		return acct__fail(err, SEO_EINVAL, "invalid_parameter",
				  "refund amount must not be negative");
	if (charge_id == NULL || charge_id[0] == '\0')
		return acct__fail(err, SEO_EINVAL, "invalid_parameter",
				  "a refund needs a charge id");
	return acct__ledger_refund(&a->ledger, &r, credits_remaining,
				   credits_used, err);
}

int acct_settle(acct_service *a, const acct_caller *who, const char *charge_id,
		int64_t credits_used, int64_t deadline_ms,
		int64_t *credits_remaining, int64_t *credits_used_out,
		acct_err *err)
{
	acct__refund r = {
		.workspace_id = who != NULL ? who->workspace_id : NULL,
		.charge_id = charge_id,
		.settle = 1,
		.used = credits_used,
		.deadline_ms = deadline_ms,
	};

	if (credits_used < 0)
		return acct__fail(err, SEO_EINVAL, "invalid_parameter",
				  "credits_used must not be negative");
	if (charge_id == NULL || charge_id[0] == '\0')
		return acct__fail(err, SEO_EINVAL, "invalid_parameter",
				  "an outcome needs a charge id");
	return acct__ledger_refund(&a->ledger, &r, credits_remaining,
				   credits_used_out, err);
}

int acct_settle_earned(acct_service *a, const char *const *ids, size_t n,
		       int64_t deadline_ms, acct_err *err)
{
	if (n == 0)
		return 0;
	for (size_t i = 0; i < n; i++)
		if (ids[i] == NULL || ids[i][0] == '\0')
			return acct__fail(err, SEO_EINVAL, "invalid_parameter",
					  "an outcome needs a charge id");
	return acct__ledger_close(&a->ledger, ids, n, deadline_ms, err);
}

int acct_charge(acct_service *a, const acct_caller *who,
		const acct_call *call, const char *endpoint,
		int64_t amount, const char *usage_domain,
		char charge_id[ACCT_ID_LEN], int64_t *credits_remaining,
		acct_err *err)
{
	acct__debit d;

	if (amount < 0)
		return acct__fail(err, SEO_EINVAL, "invalid_parameter",
				  "amount must not be negative");
	if (endpoint == NULL || endpoint[0] == '\0')
		return acct__fail(err, SEO_EINVAL, "invalid_parameter",
				  "a charge needs an endpoint");
	d = (acct__debit){
		.workspace_id = who->workspace_id,
		.user_id = who->user_id,
		.key_id = who->key_id,
		.endpoint = endpoint,
		.domain = usage_domain != NULL && usage_domain[0] != '\0'
				  ? usage_domain : NULL,
		.amount = amount,
		.keep_refused = 1,
		.show_balance = (who->role & ACCT_ROLES_STAFF) != 0,
	};
	call_of(&d, call);
	return debit(a, &d, charge_id, credits_remaining, err);
}

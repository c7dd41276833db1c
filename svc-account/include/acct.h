/*
 * acct.h: the account service library (workspaces, users, API keys, the
 * credit ledger, usage, pricing, websites) behind svc-account and seoctl.
 *
 * Two halves:
 *  - the service (acct_service): a PostgreSQL pool, the key cache kept
 *    coherent through LISTEN seo_auth, the per-key rate limiter and the
 *    ledger writer that group-commits debits and refunds. Every function
 *    taking an acct_service is thread-safe. (Not named plain `acct`: that
 *    is a libc function of <unistd.h>.)
 *  - operator functions on a caller-owned PGconn (seoctl, tests): creating
 *    workspaces, users, credits, websites, and running migrations. They
 *    run their own transaction, so `db` must be idle.
 *
 * All functions return 0 or a negative SEO_E* code. Where an acct_err is
 * passed (it may not be NULL) it is filled on failure: `code` is a public
 * error code of seo/errors.h ("internal_error" for database failures) and
 * `message` a PostgreSQL-style text, which for internal errors carries the
 * database's detail and must not be shown to API clients.
 *
 * Results built as protobuf messages are allocated on the caller's arena
 * and freed with it; fixed-size buffers below are owned by the caller.
 */
#ifndef ACCT_H
#define ACCT_H

#include <stddef.h>
#include <stdint.h>

#include <libpq-fe.h>

#include "seo/account/v1/account.pb-c.h"
#include "seo/arena.h"
#include "seo/errors.h"
#include "seo/job.h"
#include "seo/mail.h"
#include "seo/pg.h"
#include "seo/rpc.h"

#define ACCT_KEY_PREFIX "seo_"
#define ACCT_KEY_RANDOM 32 /* random characters after the prefix */
#define ACCT_KEY_LEN (sizeof(ACCT_KEY_PREFIX) + ACCT_KEY_RANDOM) /* with NUL */
#define ACCT_HASH_LEN 65   /* hex SHA-256 with the NUL: an api_keys.id */
#define ACCT_ID_LEN 32     /* ws_, usr_, site_, chg_ + 20 chars, with NUL */
#define ACCT_HOST_LEN 254  /* a normalised host with the NUL */

/* The bits of seo.account.v1.Role. */
typedef enum acct_role {
	ACCT_ROLE_OWNER = 1,
	ACCT_ROLE_ADMIN = 2,
	ACCT_ROLE_MEMBER = 4,
	ACCT_ROLE_CLIENT = 8,
} acct_role;

/* Roles that may see credits, keys and usage. */
#define ACCT_ROLES_STAFF (ACCT_ROLE_OWNER | ACCT_ROLE_ADMIN | ACCT_ROLE_MEMBER)

typedef struct acct_err {
	const char *code; /* static */
	char message[256];
} acct_err;

/* "owner", "admin", "member", "client"; NULL for anything else. */
const char *acct_role_name(acct_role role);

/* Parses a role name. SEO_EINVAL when unknown. */
int acct_role_parse(const char *name, acct_role *out);

/* ---- the service ------------------------------------------------------ */

typedef struct acct_service acct_service;

/* Monotonic milliseconds, injectable so that tests drive the limiter. */
typedef int64_t (*acct_clock_fn)(void *ud);

typedef struct acct_options {
	const char *pg_url;      /* copied; NULL: seo_pg_url() */
	int pool_size;           /* handler connections; 0: 8 */
	long long rate_per_min;  /* requests per key per minute; 0: off */
	acct_clock_fn clock;     /* NULL: seo_mono_ms() */
	void *clock_ud;
} acct_options;

/* Defaults: the environment's SEO_PG_URL and SEO_RATE_LIMIT_PER_MIN. */
void acct_options_init(acct_options *opt);

/*
 * Connects (the ledger writer's and the listener's connections are opened
 * here, so that a wrong URL fails at once), starts the ledger writer and
 * the seo_auth listener. The caller frees *out with acct_free().
 */
int acct_new(const acct_options *opt, acct_service **out, acct_err *err);

/* Stops the threads (queued ledger operations are still written) and
 * closes every connection. No call may be in flight. NULL is allowed. */
void acct_free(acct_service *a);

/* Counters since acct_new(), for tests and metrics. */
typedef struct acct_stats {
	uint64_t key_db_lookups;  /* key cache misses answered by PostgreSQL */
	uint64_t ledger_queued;   /* debits and refunds handed to the ledger */
	uint64_t ledger_ops;      /* debits and refunds decided */
	uint64_t ledger_batches;  /* ledger transactions (one commit each) */
	uint64_t notifications;   /* seo_auth payloads received */
} acct_stats;

void acct_get_stats(acct_service *a, acct_stats *out);

/* Runs a trivial query on a pooled connection: 0 when the database
 * answers, else service_unavailable (down, unreachable, no connection free
 * in time) or internal_error. What the service's health check reports. */
int acct_db_check(acct_service *a, acct_err *err);

/*
 * Lends a pooled connection (waits while all are lent) to code outside
 * this library, e.g. payments. It is idle when lent and must be returned
 * idle, by acct_db_release() from the same thread.
 */
int acct_db_acquire(acct_service *a, PGconn **out, acct_err *err);
void acct_db_release(acct_service *a, PGconn *db);

/* The caller as the gateway established it. Strings are borrowed. */
typedef struct acct_caller {
	const char *workspace_id;
	const char *user_id;
	const char *key_id;
	acct_role role;
} acct_caller;

/* ---- Authorize: the gateway's hot path -------------------------------- */

/*
 * What makes a billed call's debit safe to retry and to give up on
 * (docs/decisions.md, "every debit ends earned or returned").
 * `request_id` is the call's idempotency key: a debit retried under it
 * applies once. A debit with a key stays open until the caller reports
 * the call's outcome with acct_settle(); the reconcile job refunds one
 * still open `settle_within_ms` after it plus ACCT_RECONCILE_GRACE_MS.
 * `deadline_ms` (seo_mono_ms()) is when the caller stops waiting: an
 * operation not decided by then is not written (service_unavailable).
 */
typedef struct acct_call {
	const char *request_id;   /* NULL or "": none (settled at once) */
	int64_t settle_within_ms; /* <= 0: ACCT_SETTLE_DEFAULT_MS */
	int64_t deadline_ms;      /* 0: none */
} acct_call;

/*
 * The reconcile job (a row of acct_jobs): refunds in full every debit
 * still open ACCT_RECONCILE_GRACE_MS after its settle time, as of `at_ms`;
 * *done counts them. `pg` idle, left idle. 0 or SEO_EDB (err filled).
 */
int acct_reconcile(PGconn *pg, int64_t at_ms, int64_t *done, char *err,
		   size_t err_len);

/* When the caller says nothing of its outcome's time. */
#define ACCT_SETTLE_DEFAULT_MS 120000
/* What the reconcile job waits past a debit's settle time. */
#define ACCT_RECONCILE_GRACE_MS (10 * 60 * 1000)

typedef struct acct_authorize_req {
	const char *key_hash;      /* hex SHA-256 of the raw key */
	const char *endpoint;      /* usage row name */
	int64_t cost;              /* credits to debit; 0: none */
	unsigned roles_allowed;    /* acct_role bits; 0: any */
	const char *usage_domain;  /* NULL or "": none */
	int rate_limited;          /* count the call against the key's rate */
	acct_call call;            /* of the debit */
	/* Charges of earlier calls that earned their whole charge, closed in
	 * the debit's transaction (see acct_settle_earned()); with no debit
	 * (a refusal before it, cost 0) they are not. Borrowed. */
	const char *const *earned;
	size_t n_earned;
	int no_balance;            /* cost 0: credits_remaining not wanted */
	/* Tokens to take ahead for the caller once the call is authorized
	 * (a rate grant); 0: none. Without rate_limited and with cost 0 the
	 * call only asks for them: nothing of the key is counted. */
	int64_t rate_want;
} acct_authorize_req;

typedef struct acct_rate {
	int64_t limit;      /* 0 when the limit is off */
	int64_t remaining;
	int64_t reset_s;    /* seconds until the bucket is full */
	int64_t granted;    /* tokens taken ahead for the caller */
} acct_rate;

typedef struct acct_authorization {
	char workspace_id[ACCT_ID_LEN];
	char user_id[ACCT_ID_LEN];
	char key_id[ACCT_HASH_LEN];
	acct_role role;
	char charge_id[ACCT_ID_LEN]; /* "" when nothing was debited */
	int64_t credits_remaining;
	acct_rate rate;
	int64_t retry_after;         /* seconds; set with rate_limited */
} acct_authorization;

/*
 * Checks, in this order: the key is known, not revoked and its user not
 * removed (invalid_api_key); the key's rate when req->rate_limited
 * (rate_limited, out->retry_after >= 1); the role (capability_missing);
 * then debits req->cost (insufficient_credits: nothing charged). Once all
 * passed, up to req->rate_want tokens are taken ahead (out->rate.granted),
 * with or without rate_limited.
 * A refusal by the rate recalls the key's grants (the watch). A debit
 * is committed when this returns (not waiting for the disk: a crash of
 * PostgreSQL may lose the last moments' debits whole, docs/decisions.md);
 * it writes a usage row whose id is
 * out->charge_id. On a refusal, *out holds what the checks established:
 * once the key resolved (out->key_id not empty), the identity and the
 * rate state too.
 */
int acct_authorize(acct_service *a, const acct_authorize_req *req,
		   acct_authorization *out, acct_err *err);

/*
 * Gives back `amount` credits of a charge (0: all that is left), never
 * more than was charged minus what was refunded; a fully refunded charge
 * is answered again without change. *credits_used is what the call
 * finally cost. With `who` (or its workspace_id) NULL, as from a gateway
 * that sent no identity, the charge may be of any workspace; else one of
 * another workspace is not_found like an unknown one.
 */
int acct_refund(acct_service *a, const acct_caller *who, const char *charge_id,
		int64_t amount, int64_t *credits_remaining,
		int64_t *credits_used, acct_err *err);

/*
 * Reports a call's outcome: it finally cost `credits_used` (>= 0). What
 * was charged above that is given back and the charge's outcome closed
 * (earned, or refunded when anything was given back), once: a charge
 * already closed, by an earlier report or the reconcile job, is answered
 * as it stands. `who` as for acct_refund(); `deadline_ms` as in acct_call.
 */
int acct_settle(acct_service *a, const acct_caller *who, const char *charge_id,
		int64_t credits_used, int64_t deadline_ms,
		int64_t *credits_remaining, int64_t *credits_used_out,
		acct_err *err);

/*
 * Reports many calls that earned their whole charge at once: each of
 * `ids` still open is closed earned, nothing moves; one closed already
 * (an earlier report, the reconcile job) or unknown is left as it is. One
 * ledger operation for all, committed when it returns (as a debit is).
 * `deadline_ms` as in
 * acct_call.
 */
int acct_settle_earned(acct_service *a, const char *const *ids, size_t n,
		       int64_t deadline_ms, acct_err *err);

/*
 * The debit of a call billed after its work (Charge): `amount` credits
 * (0 allowed) of who's workspace, and the call's one usage row
 * (`endpoint`, `usage_domain` NULL or "" for none), whatever the outcome:
 * its credits_used is `amount`, or 0 when the balance is short
 * (insufficient_credits, nothing charged). The key is not checked again:
 * the call was authorized, at no cost, before its work. Durable when it
 * returns, like a debit of acct_authorize(); `call` (NULL: none) as
 * there.
 */
int acct_charge(acct_service *a, const acct_caller *who,
		const acct_call *call, const char *endpoint,
		int64_t amount, const char *usage_domain,
		char charge_id[ACCT_ID_LEN], int64_t *credits_remaining,
		acct_err *err);

/* ---- the account endpoints -------------------------------------------- */

/* GET /v1/me: user_not_found when the user was removed. */
int acct_get_me(acct_service *a, const acct_caller *who, seo_arena *arena,
		Seo__Account__V1__User **out, acct_err *err);

/* GET /v1/credits. */
int acct_get_credits(acct_service *a, const acct_caller *who, int64_t *credits,
		     acct_err *err);

/* GET /v1/keys: active keys, newest first; members get their own. */
int acct_list_keys(acct_service *a, const acct_caller *who, seo_arena *arena,
		   Seo__Account__V1__ListKeysResponse **out, acct_err *err);

/* Active keys a workspace may hold (docs/decisions.md): the rate limit is
 * per key, so keys must not multiply without bound. */
#define ACCT_MAX_ACTIVE_KEYS 20

/* POST /v1/keys: `name` NULL or "" means "Default". Mails the key's user
 * in the same transaction. The raw key is in (*out)->key, only here. A
 * workspace with ACCT_MAX_ACTIVE_KEYS active keys gets 429
 * key_limit_reached. */
int acct_create_key(acct_service *a, const acct_caller *who, const char *name,
		    seo_arena *arena, Seo__Account__V1__CreatedKey **out,
		    acct_err *err);

/* DELETE /v1/keys/:id: immediate in this process, and through NOTIFY in
 * the others; answered once every gateway watching this process forgot
 * the key (at most 2 s later); key_not_found when unknown,
 * revoked, of another workspace or (members) of another person. */
int acct_revoke_key(acct_service *a, const acct_caller *who, const char *key_id,
		    acct_err *err);

/* GET /v1/usage: limit default 50, larger than 200 clamped. */
int acct_list_usage(acct_service *a, const acct_caller *who,
		    const Seo__Account__V1__ListUsageRequest *req,
		    seo_arena *arena, Seo__Account__V1__ListUsageResponse **out,
		    acct_err *err);

/* GET /v1/pricing: tiers ordered by min. */
int acct_get_pricing(acct_service *a, seo_arena *arena,
		     Seo__Account__V1__PricingResponse **out, acct_err *err);

/* GET /v1/websites: unarchived, ordered by name, at most 200. */
int acct_list_websites(acct_service *a, const acct_caller *who, seo_arena *arena,
		       Seo__Account__V1__ListWebsitesResponse **out,
		       acct_err *err);

/* Account/ListSites (internal): the caller's unarchived websites with
 * their IndexNow policy, for the services acting on them. */
int acct_list_sites(acct_service *a, const acct_caller *who, seo_arena *arena,
		    Seo__Account__V1__ListSitesResponse **out, acct_err *err);

/* ---- gRPC ------------------------------------------------------------- */

/* The seo.account.v1.Account methods; handlers expect the acct_service as
 * the server's service pointer. */
extern const rpc_method acct_rpc_methods[];
extern const size_t acct_rpc_n_methods;

/*
 * Reads the caller identity metadata of a call. SEO_EINVAL (with
 * invalid_api_key) when the gateway sent none. The strings belong to the
 * call.
 */
int acct_rpc_caller(rpc_ctx *ctx, acct_caller *out, acct_err *err);

/* Fails the call with err's code; internal errors are logged and answered
 * without their detail. Returns what rpc_ctx_fail() returns. */
int acct_rpc_fail(rpc_ctx *ctx, const acct_err *err);

/* ---- operator functions (seoctl) ------------------------------------------
 *
 * Besides the API codes they fail with two codes of their own, which no API
 * client sees: "workspace_not_found" and "already_exists" (a website's host
 * in its workspace); a bad host is "invalid_domain".
 */

typedef struct acct_new_user {
	char workspace_id[ACCT_ID_LEN];
	char user_id[ACCT_ID_LEN];
	char api_key[ACCT_KEY_LEN]; /* raw; shown once */
} acct_new_user;

/* A workspace, its owner with a key, and `credits` (>= 0) granted. */
int acct_workspace_create(PGconn *db, const char *name, const char *email,
			  int64_t credits, acct_new_user *out, acct_err *err);

/* A user of `role` with a key. */
int acct_user_add(PGconn *db, const char *workspace_id, const char *email,
		  acct_role role, acct_new_user *out, acct_err *err);

/* Removes a user (idempotent): its keys get invalid_api_key at once in
 * every svc-account. */
int acct_user_remove(PGconn *db, const char *user_id, acct_err *err);

/* Grants `credits` (> 0) through a ledger row; *balance is the new one. */
int acct_credits_grant(PGconn *db, const char *workspace_id, int64_t credits,
		       int64_t *balance, acct_err *err);

/* Adds a website; `name` NULL or "" means the normalised host. */
int acct_website_add(PGconn *db, const char *workspace_id, const char *host,
		     const char *name, char site_id[ACCT_ID_LEN],
		     char host_out[ACCT_HOST_LEN], acct_err *err);

/* Sets the IndexNow policy: "automatic" or "approval". */
int acct_website_policy(PGconn *db, const char *site_id, const char *policy,
			acct_err *err);

/* The host of `site_id`, an active website of `workspace_id`, into
 * host_out (site_id NULL: only the workspace is looked for);
 * workspace_not_found, site_not_found. */
int acct_website_host(PGconn *db, const char *workspace_id, const char *site_id,
		      char host_out[ACCT_HOST_LEN], acct_err *err);

/*
 * Canonical host: lowercase, without scheme, port, path, query, fragment
 * or trailing dots; letters, digits, '-' and '.' only, at least one dot.
 * SEO_EINVAL when that leaves no valid host.
 */
int acct_host_normalize(const char *in, char out[ACCT_HOST_LEN]);

/* svc-account's outbox (the `outbox` table), for seo_mail_enqueue() and
 * the mailer its process runs (seo/mail.h). */
extern const seo_outbox acct_outbox;

/* svc-account's periodic jobs (seo/job.h): "retention" deletes delivered
 * mail older than 30 days. Run by its scheduler and by seoctl. */
extern const seo_job acct_jobs[];
extern const size_t acct_n_jobs;

/* svc-account's migration set: NNN_name.sql files in svc-account/
 * migrations, or SEO_MIGRATIONS_DIR (seo/pg.h). */
extern const seo_pg_set acct_migrations;

/*
 * Applies the files of `dir` not yet applied, by the shared runner
 * (seo_pg_migrate() of acct_migrations). *applied counts the files this
 * call applied.
 */
int acct_migrate(PGconn *db, const char *dir, int *applied, acct_err *err);

/* Finds svc-account's migrations directory: seo_pg_migrations_dir() of
 * acct_migrations. */
int acct_migrations_dir(char *out, size_t n);

#endif

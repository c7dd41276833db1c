/*
 * acct_int.h: what the library's files share and nothing outside uses.
 *
 * Conventions as in acct.h: 0 or a negative SEO_E* code, acct_err filled on
 * failure. Everything here is thread-safe unless said otherwise.
 */
#ifndef ACCT_INT_H
#define ACCT_INT_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <time.h>

#include "acct.h"
#include "seo/arena.h"
#include "seo/hmap.h"
#include "seo/json_write.h"
#include "seo/pg_pool.h"
#include "seo/pg_stmt.h"

/* Runs a statement without parameters or rows (BEGIN, COMMIT, ...) on
 * `db`; 0, or SEO_EDB after logging the server's message. */
int acct__exec_sql(PGconn *db, const char *sql);

/* Fills err and returns rc; printf-style message. */
int acct__fail(acct_err *err, int rc, const char *code, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));

/* The CLOCK_MONOTONIC time `ms` from now, for pthread_cond_timedwait()
 * on a condition made with that clock. */
void acct__deadline_in(struct timespec *ts, int64_t ms);

/* `prefix` + 20 url-safe characters, e.g. "ws_...". */
int acct__new_id(const char *prefix, char out[ACCT_ID_LEN], acct_err *err);

/* The same length, its first 11 characters the time in ms in hex, the rest
 * random: ids made later sort after (in bytes), so an index on them grows
 * at its right edge instead of at random pages (usage rows' chg_ ids). */
int acct__new_time_id(const char *prefix, char out[ACCT_ID_LEN],
		      acct_err *err);

/* n such ids of one moment into out[0 .. n) (the caller's), told apart by
 * their random part alone; randomness drawn for many at once. 0, or an
 * error (err filled). */
int acct__new_time_ids(const char *prefix, char (*out)[ACCT_ID_LEN], size_t n,
		       acct_err *err);

/* ---- statements (db.c) ------------------------------------------------ */

/* Every SQL statement of the library, by name; see db.c for the text. */
typedef enum acct__q {
	ACCT_Q_KEY_LOOKUP,
	ACCT_Q_KEY_INSERT,
	ACCT_Q_KEY_REVOKE,
	ACCT_Q_KEY_LIST,
	ACCT_Q_KEY_LOCK,
	ACCT_Q_KEY_ACTIVE,
	ACCT_Q_USER_OF_CALLER,
	ACCT_Q_USER_EMAIL,
	ACCT_Q_USER_INSERT,
	ACCT_Q_USER_REMOVE,
	ACCT_Q_NOTIFY,
	ACCT_Q_BALANCE,
	ACCT_Q_WORKSPACE_INSERT,
	ACCT_Q_GRANT,
	ACCT_Q_LEDGER_LOCK_CHARGES,
	ACCT_Q_LEDGER_LOCK_WORKSPACES,
	ACCT_Q_LEDGER_BY_REQUEST,
	ACCT_Q_LEDGER_TIMEOUT,
	ACCT_Q_LEDGER_DURABLE,
	ACCT_Q_LEDGER_INSERT,
	ACCT_Q_USAGE_INSERT,
	ACCT_Q_USAGE_REFUND,
	ACCT_Q_BALANCE_SET,
	ACCT_Q_USAGE_PAGE,
	ACCT_Q_USAGE_COUNT,
	ACCT_Q_PRICING,
	ACCT_Q_WEBSITE_LIST,
	ACCT_Q_SITE_LIST,
	ACCT_Q_WEBSITE_INSERT,
	ACCT_Q_WEBSITE_POLICY,
	ACCT_Q_RECONCILE_LOCK,
	ACCT_Q_RECONCILE_LOCK_WORKSPACES,
	ACCT_Q_RECONCILE_REFUND,
	ACCT_Q_LEASE_SETTINGS,
	ACCT_Q_LEASE_MINE,
	ACCT_Q_LEASE_STREAM,
	ACCT_Q_LEASE_USAGE_BATCHES,
	ACCT_Q_LEASE_OTHERS,
	ACCT_Q_LEASE_STREAM_SET,
	ACCT_Q_LEASE_STREAMS_FORGET,
	ACCT_Q_LEASE_INSERT,
	ACCT_Q_LEASE_UPDATE,
	ACCT_Q_LEASE_NOTIFY,
	ACCT_Q_LEASE_WS_SET,
	ACCT_Q_LEASE_STATE,
	ACCT_Q_LEASE_EXPIRE_LOCK,
	ACCT_Q_LEASE_EXPIRE,
	ACCT_Q_PING,
	ACCT_Q_BEGIN,
	ACCT_Q_COMMIT,
	ACCT__Q_COUNT
} acct__q;

/* svc-account's statement table (db.c): the rows of acct__q, prepared
 * per connection by seo/pg_stmt.h. */
extern const seo_pg_stmts acct__stmts;

/*
 * The shared statement runner, pool and pipeline (seo/pg_stmt.h,
 * seo/pg_pool.h) with their failures as an acct_err: "internal_error",
 * or "service_unavailable" when no connection was free in time.
 */
int acct__exec(seo_pg_conn *c, acct__q q, int nparams,
	       const char *const *params, PGresult **res, acct_err *err);
/* With binary parameters where formats[i] is 1 (seo_pg_exec_bin()). */
int acct__exec_bin(seo_pg_conn *c, acct__q q, int nparams,
		   const char *const *params, const int *lengths,
		   const int *formats, PGresult **res, acct_err *err);
int acct__pipe_run(seo_pg_conn *c, seo_pg_pipe *p, acct_err *err);
int acct__begin(seo_pg_conn *c, acct_err *err);
int acct__commit(seo_pg_conn *c, acct_err *err);
int acct__pool_get(seo_pg_pool *p, seo_pg_conn **out, acct_err *err);
int acct__pool_query(seo_pg_pool *p, acct__q q, int nparams,
		     const char *const *params, PGresult **res, acct_err *err);
int acct__pool_begin(seo_pg_pool *p, seo_pg_conn **out, acct_err *err);

/* Fails with internal_error "<what> failed: <msg>", msg being a libpq
 * message (its final newline dropped). Returns SEO_EDB. */
int acct__db_fail(acct_err *err, const char *what, const char *msg);

/* Seconds a connection attempt may take before the database counts as
 * unreachable. */
#define ACCT_CONNECT_TIMEOUT_S 2

/* Connects with the session settings every connection of ours uses. */
int acct__connect(const char *url, PGconn **out, acct_err *err);

/*
 * Runs query `q` and returns a new response of `d` whose repeated message
 * field `field` holds one message per row, on `arena`: each column sets
 * the field of its name (a NULL column leaves it unset). Returns 0, or an SEO_E* code with err filled.
 */
int acct__query_list(acct_service *a, acct__q q, int nparams,
		     const char *const *params, seo_arena *arena,
		     const ProtobufCMessageDescriptor *d, const char *field,
		     ProtobufCMessage **out, acct_err *err);

/* ---- PostgreSQL array literals (pgarr.c) ------------------------------ */

/* A growing "{...}" text literal for unnest() parameters. */
typedef struct acct__pgarr {
	char *s;
	size_t len, cap;
	int oom;
	int binary;  /* a text[] in binary format (acct__pgarr_init_bin()) */
	int nulls;   /* binary: an element is NULL */
	int32_t n;   /* binary: the elements */
} acct__pgarr;

void acct__pgarr_init(acct__pgarr *a);
/* A text[] in PostgreSQL's binary array format instead, to be sent with
 * format 1 (seo_pg_exec_bin()) and acct__pgarr_len() bytes: the elements
 * travel as they are, neither escaped here nor parsed by the server, which
 * pays for large ones (a report's calls: lease.c). */
void acct__pgarr_init_bin(acct__pgarr *a);
/* Appends a quoted element; NULL appends SQL NULL. */
void acct__pgarr_add(acct__pgarr *a, const char *v);
/* Appends an integer (in a binary text[], as its decimal text). */
void acct__pgarr_addi(acct__pgarr *a, int64_t v);
/* The finished literal or binary array (owned by `a`), or NULL when out
 * of memory. */
const char *acct__pgarr_done(acct__pgarr *a);
/* The bytes of a binary array once done. */
int acct__pgarr_len(const acct__pgarr *a);
void acct__pgarr_free(acct__pgarr *a);

/* ---- the key cache (keycache.c) --------------------------------------- */

typedef struct acct__identity {
	char workspace_id[ACCT_ID_LEN];
	char user_id[ACCT_ID_LEN];
	acct_role role;
} acct__identity;

/* How long a hash PostgreSQL did not know is answered invalid without
 * asking again (docs/decisions.md). */
#define KEYCACHE_UNKNOWN_MS 10000

/*
 * Key hash -> identity of valid keys, and the hashes found unknown in the
 * last KEYCACHE_UNKNOWN_MS. An eviction bumps `epoch`; a filler that read
 * PostgreSQL before an eviction must not insert what it read, so it passes
 * the epoch it saw before the read.
 */
typedef struct acct__keycache {
	pthread_mutex_t mu;
	seo_hmap map;
	seo_hmap unknown;
	uint64_t epoch;
} acct__keycache;

int acct__keycache_init(acct__keycache *c);
void acct__keycache_destroy(acct__keycache *c);
/* 1 and *out on a hit, else 0 and *epoch to pass to _put(). */
int acct__keycache_get(acct__keycache *c, const char *hash,
		       acct__identity *out, uint64_t *epoch);
void acct__keycache_put(acct__keycache *c, const char *hash,
			const acct__identity *id, uint64_t epoch);
/* 1 while `hash` was found unknown less than KEYCACHE_UNKNOWN_MS before
 * `now_ms` (seo_mono_ms()), else 0. */
int acct__keycache_unknown(acct__keycache *c, const char *hash,
			   int64_t now_ms);
/* Records `hash` as unknown at `now_ms`, unless an eviction happened since
 * `epoch` (from the _get() before the read). */
void acct__keycache_put_unknown(acct__keycache *c, const char *hash,
				uint64_t epoch, int64_t now_ms);
/* Forgets `hash` in both maps (revoked, or just created). */
void acct__keycache_evict_key(acct__keycache *c, const char *hash);
void acct__keycache_evict_user(acct__keycache *c, const char *user_id);
void acct__keycache_clear(acct__keycache *c);

/* ---- the rate limiter (ratelimit.c) ----------------------------------- */

typedef struct acct__limiter {
	pthread_mutex_t mu;
	seo_hmap map;
	int64_t per_min; /* 0: off */
	acct_clock_fn clock;
	void *clock_ud;
} acct__limiter;

int acct__limiter_init(acct__limiter *l, int64_t per_min, acct_clock_fn clock,
		       void *clock_ud);
void acct__limiter_destroy(acct__limiter *l);

/*
 * Takes a token of `key` when `take` is set, else only reads the state.
 * SEO_EDENIED with *retry_after (seconds, >= 1) when no token is left;
 * *recall is then 1 when grants of the key may still be held (taken in
 * the last ACCT_RATE_RECALL_MS and not recalled since: say so once), else
 * 0.
 */
int acct__limiter_check(acct__limiter *l, const char *key, int take,
			acct_rate *out, int64_t *retry_after, int *recall);
void acct__limiter_forget(acct__limiter *l, const char *key);

/*
 * Rate grants (docs/decisions.md, "the rate limit counted in the
 * gateways"): tokens of a key's bucket taken ahead by a gateway, which
 * admits that many calls of the key itself. A grant is at most an eighth
 * of what the bucket holds, and none below ACCT_RATE_GRANT_MIN tokens, so
 * that near the limit every call is counted here, one by one.
 */
#define ACCT_RATE_GRANT_MIN 16
/* A gateway gives back what it did not spend within 1 s of its grant
 * (GW_RATE_HOLD_MS) at its next watch (1 s more at most); a refusal
 * within this of a grant recalls it. */
#define ACCT_RATE_RECALL_MS 3000

/* Takes up to `want` tokens of `key` ahead; the number taken (0: none),
 * with *out the state after them. */
int64_t acct__limiter_grant(acct__limiter *l, const char *key, int64_t want,
			    acct_rate *out);

/* Gives back `tokens` (> 0) of `key` taken ahead and not spent; a bucket
 * never holds more than it is full. */
void acct__limiter_give(acct__limiter *l, const char *key, int64_t tokens);

/* ---- the ledger writer (ledger.c) ------------------------------------- */

typedef struct acct__op acct__op;
typedef struct acct__leases acct__leases;

/*
 * The queue of debits and refunds and the one connection they are written
 * on, by a caller or the writer thread, whichever finds no batch being
 * written (see ledger.c).
 */
typedef struct acct__ledger {
	pthread_t thread;
	pthread_mutex_t mu;
	pthread_cond_t work;  /* the writer may take the queue, or stop */
	pthread_cond_t done;  /* a batch finished */
	acct__op *head, *tail;
	int writing;          /* a batch is being written on conn */
	int stop;
	seo_pg_conn conn;
	char *url;
	/* The open leases (NULL: none kept): every balance answered adds
	 * their unused credits, and a committed change of a leased
	 * workspace's balance is announced to their holders. */
	acct__leases *leases;
	atomic_uint_fast64_t queued, ops, batches;
} acct__ledger;

int acct__ledger_start(acct__ledger *l, const char *url, acct_err *err);
/* Writes what is queued, then stops. */
void acct__ledger_stop(acct__ledger *l);

typedef struct acct__debit {
	const char *workspace_id;
	const char *user_id;
	const char *key_id;
	const char *endpoint;
	const char *domain; /* NULL: none */
	int64_t amount;     /* > 0; 0 only with keep_refused */
	int keep_refused;   /* a refusal still writes the usage row, at 0 */
	int show_balance;   /* the caller's role may read the balance
			     * (ACCT_ROLES_STAFF): a refusal's message names it */
	/* The idempotency key (NULL: none, the row is settled at once) and
	 * the milliseconds after the debit by which its outcome is due. */
	const char *request_id;
	int64_t settle_within_ms;
	int64_t deadline_ms; /* seo_mono_ms() past which it is not written; 0: none */
	/* Charges of earlier calls closed earned in the same transaction
	 * (acct_settle_earned()), whatever becomes of this debit. */
	const char *const *earned;
	size_t n_earned;
} acct__debit;

/* Queues a debit and waits for its batch's commit. A debit under a key
 * already used answers that debit's charge, writing nothing. */
int acct__ledger_debit(acct__ledger *l, const acct__debit *d,
		       char charge_id[ACCT_ID_LEN], int64_t *remaining,
		       acct_err *err);

typedef struct acct__refund {
	const char *workspace_id; /* the charge's, or NULL: of any workspace */
	const char *charge_id;
	int64_t amount;           /* credits to give back; 0: all */
	/* Instead of `amount`: the call's outcome, its final cost `used`
	 * (see acct_settle()). */
	int settle;
	int64_t used;
	int64_t deadline_ms;      /* as in acct__debit */
} acct__refund;

/* Queues a refund (or an outcome) and waits for its batch's commit. */
int acct__ledger_refund(acct__ledger *l, const acct__refund *r,
			int64_t *remaining, int64_t *used, acct_err *err);

/* Queues the closing of `n` charges as earned (acct_settle_earned()) and
 * waits for its batch's commit. The strings are borrowed until then. */
int acct__ledger_close(acct__ledger *l, const char *const *ids, size_t n,
		       int64_t deadline_ms, acct_err *err);

/* ---- the watch (watch.c) ---------------------------------------------- */

/*
 * Gateways keep the keys they have seen and forget one when this says so
 * (Account/Watch). Every event that stops a key is numbered; a gateway
 * asks for what follows the last number it read. A revocation made here
 * waits until every live watcher has read past it.
 */
#define ACCT_WATCHERS_MAX 64
/* A watcher that asked within this is live: a revocation waits for it. */
#define ACCT_WATCH_LIVE_MS 3000
/* The longest a revocation waits for the live watchers. */
#define ACCT_WATCH_ACK_MS 2000
/* The longest a watch is held without news; the gateway trusts its keys
 * for GW_KEYS_TRUST_MS (below ACCT_WATCH_ACK_MS) after each answer. */
#define ACCT_WATCH_WAIT_MS 1000
/* Events one answer carries; more make it a reset. */
#define ACCT_WATCH_BATCH 256

typedef struct acct__watch_ev acct__watch_ev;

typedef struct acct__watch {
	pthread_mutex_t mu;
	pthread_cond_t changed; /* an event, or a watcher read */
	char instance[17];      /* this process, random */
	uint64_t seq;           /* the last event's number */
	acct__watch_ev *log;    /* WATCH_LOG slots, by seq */
	struct {
		char id[40];
		uint64_t read;
		int64_t seen_ms; /* seo_mono_ms() of its last ask */
	} watchers[ACCT_WATCHERS_MAX];
	size_t n_watchers;
} acct__watch;

int acct__watch_init(acct__watch *w, acct_err *err);
void acct__watch_destroy(acct__watch *w);
/* A key revoked; with `wait`, returns once every live watcher read it,
 * or after ACCT_WATCH_ACK_MS. */
void acct__watch_key(acct__watch *w, const char *hash, int wait);
/* A user removed: every key of theirs. */
void acct__watch_user(acct__watch *w, const char *user_id);
/* A workspace's leases recalled (ACCT_WATCH_RECALL) or its balance
 * changed outside them (ACCT_WATCH_BALANCE); with `wait`, returns once
 * every live watcher read it, or after ACCT_WATCH_ACK_MS. */
void acct__watch_lease(acct__watch *w, int kind, const char *workspace_id,
		       int wait);
/* Events may have been lost: watchers forget everything. */
void acct__watch_reset(acct__watch *w);
/* The rate grants of the key `hash` are recalled; never waits. */
void acct__watch_rate(acct__watch *w, const char *hash);
/* `watcher` stops: no revocation waits for it any more. */
void acct__watch_gone(acct__watch *w, const char *watcher);

/* One answer: the events after `since`, or reset. */
typedef struct acct__watch_batch {
	char instance[17];
	uint64_t seq;
	int reset;
	size_t n;
	struct acct__watch_ev {
		uint64_t seq;
		int kind;
		char id[ACCT_HASH_LEN];
	} ev[ACCT_WATCH_BATCH];
} acct__watch_batch;

/* The kinds of acct__watch_ev. */
enum { ACCT_WATCH_KEY, ACCT_WATCH_USER, ACCT_WATCH_RESET, ACCT_WATCH_RECALL,
       ACCT_WATCH_BALANCE, ACCT_WATCH_RATE };

/*
 * Records that `watcher` read up to `since` of `instance` (NULL or another
 * instance's: nothing), then answers what follows, waiting up to
 * `wait_ms` for it. Always 0.
 */
int acct__watch_wait(acct__watch *w, const char *watcher,
		     const char *instance, uint64_t since, int64_t wait_ms,
		     acct__watch_batch *out);

/* ---- sweeps of the reconcile job (reconcile.c) ------------------------ */

/*
 * A sweep: transactions that each lock up to `limit` rows with `lock`
 * ($1 the cutoff, $2 the limit; the rows' ids in column 0), then run
 * `steps`, each with its first `nparams` of ($1 the ids as text[], $2 now,
 * $3 the cutoff); the last step's first column counts what was done.
 */
typedef struct acct__sweep {
	acct__q lock;
	int limit;
	struct {
		acct__q q;
		int nparams;
	} steps[2];
	size_t n_steps;
} acct__sweep;

/* Transactions until one locks fewer than `limit`; *done the sum. */
int acct__sweep_run(seo_pg_conn *c, const acct__sweep *s, int64_t cutoff_ms,
		    int64_t now_ms, int64_t *done, char *err, size_t err_len);

/* ---- the seo_auth listener (listener.c) ------------------------------- */

typedef struct acct__listener {
	pthread_t thread;
	PGconn *pg;
	char *url;
	int wake[2]; /* self-pipe: a byte asks the thread to stop */
	acct__keycache *cache;
	acct__watch *watch;
	acct__leases *leases;
	atomic_uint_fast64_t notifications;
} acct__listener;

/* Connects and LISTENs before returning, then watches in a thread: what
 * it hears leaves `cache` and goes to the watchers of `watch`. */
int acct__listener_start(acct__listener *l, const char *url,
			 acct__keycache *cache, acct__watch *watch,
			 acct__leases *leases, acct_err *err);
void acct__listener_stop(acct__listener *l);

/* The channel, and the payload prefixes of a user removal, of leases
 * closed (by a holder, or by the reconcile job), of a balance changed
 * outside the leases (a grant, a purchase, a reconcile refund) and of a
 * recall: every svc-account replica hears them. */
#define ACCT_AUTH_CHANNEL "seo_auth"
#define ACCT_AUTH_USER_PREFIX "user:"
#define ACCT_AUTH_LEASE_PREFIX "lease:"
#define ACCT_AUTH_BALANCE_PREFIX "balance:"
#define ACCT_AUTH_RECALL_PREFIX "recall:"

/* ---- credit leases (lease_registry.c, lease.c) ------------------------- */

/* A top-up is granted only from a balance of at least this, and is at
 * most an eighth of it: near zero every call is debited alone. */
#define ACCT_LEASE_MIN_BALANCE 10000
#define ACCT_LEASE_SHARE 8
/* A lease not reported on for this long is closed by the reconcile job. */
#define ACCT_LEASE_TTL_MS 60000
/* A report moves a lease's indexed renewed_at only once it is this old
 * (a sixth of the TTL), and a stream's updated_at once a minute: the
 * other reports change no indexed column, so that PostgreSQL updates
 * their rows heap-only (migration 009). Plain numbers: db.c writes them
 * into its statements. */
#define ACCT_LEASE_RENEW_MS 10000
#define ACCT_LEASE_STREAM_RENEW_MS 60000
/* A recalled workspace gets no top-up for this long. */
#define ACCT_LEASE_RECALL_MS 5000
/* The longest a debit refused for its balance waits for the recalled
 * leases to close before it tries again. */
#define ACCT_LEASE_RECALL_WAIT_MS 2000
/* Calls one report may carry, and one batch of reports in all. */
#define ACCT_LEASE_CALLS_MAX 4096
/* Reports one batch (LeaseBatch) may carry. */
#define ACCT_LEASE_BATCH_MAX 1024
/* A lease stream not reported on for this long is forgotten by the
 * reconcile job (at most ACCT_LEASE_STREAM_RENEW_MS later): no report of
 * it can still be on its way. */
#define ACCT_LEASE_STREAM_KEEP_MS (24 * 3600 * 1000LL)

/*
 * The open leases of each workspace, as last committed: how many, and the
 * credits they still hold (sum of granted - used). Every state carries the
 * workspace's lease_seq (bumped by each change, under the workspace's row
 * lock), so that states set out of order keep the newest. Loaded at start,
 * set by Lease after each commit and by the listener when another process
 * (the reconcile job's expiry) closed some. Entries are never dropped.
 */
struct acct__leases {
	/* Held for writing from a Lease's COMMIT until its state is set, for
	 * reading by a ledger batch showing balances under its row locks: a
	 * batch that sees the top-up's balance sees the lease that holds it. */
	pthread_rwlock_t commit;
	pthread_mutex_t mu;
	pthread_cond_t changed; /* a state set (CLOCK_MONOTONIC) */
	seo_hmap map;
	acct__watch *watch;
};

int acct__leases_init(acct__leases *r, acct__watch *watch, acct_err *err);
void acct__leases_destroy(acct__leases *r);
/* Sets the state of `workspace_id` unless a newer one (higher seq) is
 * known; wakes the recall waiters. */
void acct__leases_set(acct__leases *r, const char *workspace_id, int64_t seq,
		      int64_t count, int64_t unused);
/* Reads the open leases of `workspace_id` (NULL: of every workspace) on
 * `pg` and sets them. Returns 0, or SEO_EDB with err filled. */
int acct__leases_load(acct__leases *r, PGconn *pg, const char *workspace_id,
		      acct_err *err);
/* acct__leases_load() of every workspace with open leases, and of every
 * one known with some. */
int acct__leases_reload(acct__leases *r, PGconn *pg, acct_err *err);
/* The credits the workspace's open leases hold unused (0: none). */
int64_t acct__leases_unused(acct__leases *r, const char *workspace_id);
/* As acct__leases_unused(), for a ledger batch's balances and a debit's
 * choice to recall (service.c): waits for a Lease being committed to set
 * its state. */
int64_t acct__leases_unused_settled(acct__leases *r, const char *workspace_id);
/* How many leases the workspace has open. */
int64_t acct__leases_count(acct__leases *r, const char *workspace_id);
/* 1 while the workspace is recalled (no top-ups), as of seo_mono_ms(). */
int acct__leases_recalled(acct__leases *r, const char *workspace_id);
/* A balance changed outside the leases: tells their holders, if any;
 * with `wait`, returns once they have heard it (acct__watch_lease()). */
void acct__leases_balance_changed(acct__leases *r, const char *workspace_id,
				  int wait);
/* Marks the workspace recalled (no top-up for ACCT_LEASE_RECALL_MS) and
 * tells the holders through the watch. */
void acct__leases_mark_recalled(acct__leases *r, const char *workspace_id);
/*
 * Recalls the workspace's leases (acct__leases_mark_recalled()), then
 * waits up to `wait_ms` for them to hold nothing (closed, or open with
 * nothing unused: a watch lease reopened at once never holds a debit).
 * Returns 1 when they hold nothing at the end, else 0.
 */
int acct__leases_recall(acct__leases *r, const char *workspace_id,
			int64_t wait_ms);

/* What Lease answers (LeaseResponse). */
typedef struct acct__lease_out {
	char lease_id[ACCT_ID_LEN]; /* "": none open now */
	int64_t granted, used, outside, ttl_ms;
} acct__lease_out;

/*
 * Account/Lease (lease.c): reports `in`'s calls on the holder's open lease
 * of the workspace, then closes it or tops it up, in one transaction on a
 * pooled connection; see LeaseRequest in account.proto. The batch of one
 * (acct__lease_batch()): the batch's or the report's refusal is its own.
 * *out (the caller's) is filled on success. Errors: invalid_parameter
 * (bad input), not_found (unknown workspace), service_unavailable,
 * internal_error.
 */
int acct__lease(acct_service *a, const Seo__Account__V1__LeaseRequest *in,
		acct__lease_out *out, acct_err *err);

/* One report's answer in a batch. */
typedef struct acct__lease_result {
	int rc;              /* 0, or what acct__lease() would return for it */
	acct_err err;        /* when rc != 0 */
	acct__lease_out out; /* when rc == 0 */
} acct__lease_result;

/*
 * Account/LeaseBatch (lease.c): the `n` reports in[0 .. n) of one holder,
 * each of another workspace, as acct__lease() would apply each, in one
 * transaction on a pooled connection whatever n: the workspaces locked in
 * one statement in id order (as the ledger and the expiry lock them), the
 * writes of all the reports in one statement each. res[0 .. n) (the
 * caller's) receives each report's answer, in order: rc 0 and `out`, or
 * its own refusal (invalid_parameter, not_found), which leaves the others
 * as they are. Nothing of `in` is kept after the return.
 *
 * Returns 0 once committed (or with nothing to write: n == 0, or every
 * report refused); else nothing is written and res[] means nothing:
 * invalid_parameter for the batch itself (more than ACCT_LEASE_BATCH_MAX
 * reports or ACCT_LEASE_CALLS_MAX calls in all, a workspace named twice,
 * a holder missing, too long or not the same in every report),
 * service_unavailable, internal_error.
 */
int acct__lease_batch(acct_service *a,
		      const Seo__Account__V1__LeaseRequest *const *in, size_t n,
		      acct__lease_result *res, acct_err *err);

/*
 * Account/LeaseBatchColumns (lease_columns.c): report `in` with its calls
 * as acct__lease_batch() reads them. A report with columns gets in *out a
 * copy of it allocated from `arena` (as its calls, their request ids
 * formatted), whose other strings point into `in`: both must outlive
 * *out. A report without columns is *out itself.
 *
 * Returns 0; invalid_parameter for columns of unequal lengths, an index
 * past names, a request_prefix longer than 64 bytes, more than
 * ACCT_LEASE_CALLS_MAX calls, or calls given both ways; internal_error
 * when out of memory.
 */
int acct__lease_columns(seo_arena *arena,
			const Seo__Account__V1__LeaseRequest *in,
			Seo__Account__V1__LeaseRequest **out, acct_err *err);

/*
 * A leased call of a report, as a usage batch holds it (usage_text.c,
 * lease.c): the call (not owned), what it finally cost, and its place in
 * the report.
 */
typedef struct acct__batch_call {
	const Seo__Account__V1__LeaseCall *call;
	int64_t cost;
	size_t i;
} acct__batch_call;

/*
 * Writes into `w` (appending) the text of usage_batches.calls_compact
 * for calls c[0 .. n) of one batch (migration 010): names said once,
 * request ids after their common prefix, times from `first` (the batch's
 * first_at: none may be earlier), `now` standing for a call without its
 * time.
 * Returns 0, or SEO_ENOMEM when `w` failed.
 */
int acct__usage_text(seo_jw *w, const acct__batch_call *c, size_t n,
		     int64_t now, int64_t first);

/*
 * The expiry (reconcile job): on `c`, in its own transactions, closes
 * every open lease not renewed since `cutoff_ms` as its holder would, at
 * `now_ms`, with synchronous commits, and forgets the lease streams not
 * reported on for ACCT_LEASE_STREAM_KEEP_MS. *n how many leases. Returns 0 or an SEO_E*
 * code with `err` filled.
 */
int acct__lease_expire(seo_pg_conn *c, int64_t cutoff_ms, int64_t now_ms,
		       int64_t *n, char *err, size_t err_len);

/* ---- keys (keys.c) ---------------------------------------------------- */

/*
 * Inside the caller's transaction: creates a key of `user_id` and mails
 * `email` (NULL: no mail). out_key receives the raw key, out_hash its id,
 * *created_at the time.
 */
int acct__key_insert(seo_pg_conn *c, const char *workspace_id,
		     const char *user_id, const char *email, const char *name,
		     char out_key[ACCT_KEY_LEN], char out_hash[ACCT_HASH_LEN],
		     int64_t *created_at, acct_err *err);

/* ---- the service (service.c) ------------------------------------------ */

/* 1 when `s` is 64 lowercase hex digits. */
int acct__is_key_hash(const char *s);

/* The balance of a workspace as its customer is shown it: with what its
 * open leases hold unused, in one snapshot. Returns 0; invalid_api_key
 * when the workspace no longer exists; service_unavailable,
 * internal_error. */
int acct__read_balance(acct_service *a, const char *workspace_id, int64_t *balance,
		       acct_err *err);

struct acct_service {
	seo_pg_pool *pool;
	acct__keycache cache;
	acct__limiter limiter;
	acct__ledger ledger;
	acct__listener listener;
	acct__watch watch;
	acct__leases leases;
	atomic_uint_fast64_t key_db_lookups;
	unsigned started; /* bits of the parts to tear down */
};

#endif

/*
 * lease.h: credit leases the gateway holds (docs/decisions.md, "credit
 * leases"; the wire: Account/Lease in account.proto).
 *
 * A workspace that spends through this gateway gets a lease: svc-account
 * moves a share of its balance (at most an eighth, only from a balance of
 * 10,000 credits or more) into it, and billed calls are debited from it
 * here, in memory, without a call to svc-account. Each call's outcome
 * (its usage row) is queued and reported with the next Lease call (at
 * most GW_LEASE_REPORT_MAX_MS later, see below), which also tops the lease up to about ten seconds of
 * the workspace's spending; the reports due together go in one
 * LeaseBatchColumns call, their calls as columns (LeaseBatch to an
 * svc-account without it, one Lease each to one without either). What a workspace
 * may spend here is
 *
 *     granted - used - (calls not yet reported) - (calls running)
 *
 * with granted and used as svc-account last answered, so an answer lost
 * on the way is corrected by the next. A lease is given back (closed) when
 * svc-account recalls it (a debit elsewhere found the balance short), when
 * it has been neither spent from nor read (/v1/credits) for
 * GW_LEASE_IDLE_MS, and when the gateway stops; each close waits for its
 * running calls. A workspace read here (twice within GW_LEASE_IDLE_MS)
 * holds a lease even when it cannot spend (a watch lease, granted 0):
 * svc-account then tells this gateway of every change of its balance, and
 * /v1/credits is answered from memory. A lease is not spent from
 * once svc-account has not answered for GW_LEASE_STALE_MS, far inside the
 * lease's lifetime at svc-account (ACCT_LEASE_TTL_MS), after which
 * svc-account gives it back itself. A workspace without a usable lease is
 * debited call by call, as before. Loop thread only. Internal to the
 * gateway.
 */
#ifndef GW_LEASE_H
#define GW_LEASE_H

#include <stdint.h>

#include <event2/event.h>

#include "seo/account/v1/account.pb-c.h"
#include "seo/rpc.h"

#define GW_LEASE_REPORT_MS 50
/* A workspace's queue is reported at the first tick after it holds
 * GW_LEASE_REPORT_CALLS calls or its oldest call waited
 * GW_LEASE_REPORT_MAX_MS (at once when a read waits for it, a top-up is
 * wanted or the lease is given back): a workspace spending little pays a
 * report's rows for many calls, not for one or two (docs/decisions.md
 * "A report pays for many calls"). */
#define GW_LEASE_REPORT_CALLS 2048
#define GW_LEASE_REPORT_MAX_MS 2000
#define GW_LEASE_IDLE_MS 5000
#define GW_LEASE_STALE_MS 20000
/* After a Lease call failed or granted nothing, the next waits this. */
#define GW_LEASE_RETRY_MS 1000
/* Calls one report carries at most: svc-account's limit for a call
 * (ACCT_LEASE_CALLS_MAX). A workspace spending faster than
 * GW_LEASE_REPORT_CALLS a tick pays one report a tick, not several: a
 * report's transaction costs svc-account and PostgreSQL about as much as
 * a thousand of its calls (docs/decisions.md "A report pays
 * for many calls"). */
#define GW_LEASE_BATCH 4096

typedef struct gw_leases gw_leases;
/* A workspace's lease state, held by each call that took from it until
 * the call ends or is cancelled: the state lives while calls hold it. */
typedef struct gw_lease_ws gw_lease_ws;

/* A billed call's outcome, for its usage row. Strings are copied. */
typedef struct gw_lease_call {
	/* The call's idempotency key is the holder's request prefix
	 * followed by this in 16 lowercase hex digits. */
	uint64_t request_no;
	const char *user_id, *key_id, *endpoint;
	const char *domain; /* NULL: none */
	long long charged, credits_used;
	int64_t created_at; /* unix ms */
} gw_lease_call;

/* Called once the calls a flush waited for are reported, or their report
 * failed. */
typedef void (*gw_lease_flushed_fn)(void *ud);

/* Holds leases through *account (the slot is read at each call; NULL: the
 * gateway is stopping) as `holder`, its calls' idempotency keys starting
 * with `request_prefix` (both copied). 0 or SEO_ENOMEM; free with
 * gw__leases_free(). */
int gw__leases_new(struct event_base *base, rpc_client *const *account,
		   const char *holder, const char *request_prefix,
		   int timeout_ms, gw_leases **out);

/* The gateway stops: nothing more is taken, and every lease is given back
 * once its running calls have ended. */
void gw__leases_stop(gw_leases *l);

/* 1 while something is still to report or give back. */
int gw__leases_busy(gw_leases *l);

/* Frees everything; what was not reported is logged (svc-account gives
 * the leases back when they expire; those calls cost nothing). NULL is
 * allowed. */
void gw__leases_free(gw_leases *l);

/*
 * Debits `cost` (> 0) from the workspace's lease. 1 when it could, with
 * *remaining the workspace's credits after it and *w its state, held by
 * the call: the call must then end with gw__lease_end() or
 * gw__lease_cancel() on *w, which does not look the workspace up again.
 * 0 when it could not (no usable lease, too little in it): the call is
 * debited alone; the demand is noted so that a lease is asked for.
 */
int gw__lease_take(gw_leases *l, const char *workspace_id, long long cost,
		   long long *remaining, gw_lease_ws **w);

/* The workspace of `w` (owned by `w`). */
const char *gw__lease_workspace(const gw_lease_ws *w);

/* A call that took `call->charged` from `w` ended costing
 * `call->credits_used`: the rest goes back to the lease and the call is
 * reported. The call no longer holds `w`. */
void gw__lease_end(gw_lease_ws *w, const gw_lease_call *call);

/* A call that took `charged` from `w` was refused before its work (its
 * key, rate or role): it goes back, unreported, as if never taken. The
 * call no longer holds `w`. */
void gw__lease_cancel(gw_lease_ws *w, long long charged);

/* A call of the workspace was debited or refunded without the lease
 * (answered by svc-account), changing its balance by `delta` (0: not
 * known yet): the balance shown with the lease follows it, and is asked
 * for again; until svc-account has answered after it, /v1/credits is not
 * answered from the lease. */
void gw__lease_touched(gw_leases *l, const char *workspace_id,
		       long long delta);

/* 1 with *credits when the workspace's credits are known here (it holds a
 * usable lease, and no balance event or call debited alone came since
 * svc-account last answered): svc-account's balance outside it plus what
 * it still holds. Else 0. Either way the read is noted: a workspace read
 * twice within GW_LEASE_IDLE_MS is held a watch lease (Lease with hold,
 * granted 0 when nothing can be), so that its next reads are answered
 * here. */
int gw__lease_credits(gw_leases *l, const char *workspace_id,
		      long long *credits);

/*
 * Until the calls of the workspace that ended before now are reported,
 * `cb` waits: 0 when it will be called (once), 1 when nothing waits and
 * it will not be. A read of usage rows then sees every call answered
 * before it.
 */
int gw__lease_flush(gw_leases *l, const char *workspace_id,
		    gw_lease_flushed_fn cb, void *ud);

/* Applies a watch answer: recalled leases are given back, workspaces whose
 * balance changed are asked for again; a lease holding nothing to spend is
 * not answered from memory (gw__lease_credits()) until then. */
void gw__leases_heard(gw_leases *l,
		      const Seo__Account__V1__WatchResponse *w);

#endif

/*
 * settle.h: reporting billed calls' outcomes to svc-account until each is
 * applied. A report is Refund with credits_used (what the call finally
 * cost), which svc-account applies once per charge, so it may be sent
 * again and again: a failed one is retried with back-off (doubling from
 * 200 ms to 5 s) for up to GW_SETTLE_RETRY_MS, below the reconcile job's
 * grace, so that an outcome the gateway knows is not left to the job.
 * What is still pending when the gateway stops is dropped, logged, and
 * left to the reconcile job (docs/decisions.md). Loop thread only.
 * Internal to the gateway.
 */
#ifndef GW_SETTLE_H
#define GW_SETTLE_H

#include <stddef.h>

#include <event2/event.h>

#include "seo/rpc.h"

#define GW_SETTLE_RETRY_MS (5 * 60 * 1000)

typedef struct gw_settler gw_settler;

/* Reports through *account (the slot is read at each try; NULL: the
 * gateway is stopping). Returns 0 or SEO_ENOMEM; free with
 * gw__settler_free(). */
int gw__settler_new(struct event_base *base, rpc_client *const *account,
		    int timeout_ms, gw_settler **out);

/* Stops retrying: reports answered from now on are not tried again. Call
 * before freeing the account client (whose calls then fail). */
void gw__settler_close(gw_settler *s);

/* Frees what is pending (counted in a warning). NULL is allowed. */
void gw__settler_free(gw_settler *s);

/* Reports that the call of `charge_id` (`request_id` for the log) cost
 * `credits_used`, until applied. Strings are copied. 0, or SEO_ENOMEM
 * (logged: the reconcile job refunds the charge). */
int gw__settle(gw_settler *s, const char *charge_id, const char *request_id,
	       long long credits_used);

/* Reports not yet applied. */
size_t gw__settler_pending(const gw_settler *s);

#endif

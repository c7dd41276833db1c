/*
 * settle.h: reporting billed calls' outcomes to svc-account until each is
 * applied. A call that cost less than its charge is reported alone:
 * Refund with credits_used (what the call finally cost). A call that
 * earned its whole charge, the common case, costs no call of its own: its
 * charge waits here until the next debit carries it
 * (AuthorizeRequest.earned, gw__settle_take()) or, when none comes within
 * GW_SETTLE_FLUSH_MS, a Settle call carries all that wait. svc-account
 * applies each outcome once per charge, so a report may be sent again and
 * again: a failed one is retried with back-off (doubling from 200 ms to
 * 5 s) for up to GW_SETTLE_RETRY_MS, below the reconcile job's grace, so
 * that an outcome the gateway knows is not left to the job. What is still
 * pending when the gateway stops is dropped, logged, and left to the
 * reconcile job (docs/decisions.md). Loop thread only. Internal to the
 * gateway.
 */
#ifndef GW_SETTLE_H
#define GW_SETTLE_H

#include <stddef.h>

#include <event2/event.h>

#include "seo/arena.h"
#include "seo/rpc.h"

#define GW_SETTLE_RETRY_MS (5 * 60 * 1000)
/* How long an earned charge waits for a debit to carry it. */
#define GW_SETTLE_FLUSH_MS 50
/* Earned charges one debit carries at most. */
#define GW_SETTLE_CARRY 64
/* A charge id as the gateway holds it, with its NUL. */
#define GW_CHARGE_ID_LEN 32

/* An earned charge waiting to be reported, and since when. */
typedef struct gw_earned {
	char id[GW_CHARGE_ID_LEN];
	int64_t since; /* seo_mono_ms() */
} gw_earned;

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

/* Reports that the call of `charge_id` earned its whole charge,
 * `charged`: carried by a later debit or a Settle call. Strings are
 * copied; an id longer than GW_CHARGE_ID_LEN - 1 is reported alone, as
 * gw__settle() does. 0, or SEO_ENOMEM (logged: the reconcile job refunds
 * the charge). */
int gw__settle_earned(gw_settler *s, const char *charge_id,
		      const char *request_id, long long charged);

/*
 * Takes up to GW_SETTLE_CARRY waiting earned charges for a debit to carry:
 * *out (on `arena`, freed with it) and *n. The caller hands them back with
 * gw__settle_return() unless the debit's answer was OK. 0, or SEO_ENOMEM
 * (nothing taken).
 */
int gw__settle_take(gw_settler *s, seo_arena *arena, gw_earned **out,
		    size_t *n);

/* Puts back what gw__settle_take() gave, to be reported again. */
void gw__settle_return(gw_settler *s, const gw_earned *e, size_t n);

/* Reports not yet applied. */
size_t gw__settler_pending(const gw_settler *s);

#endif

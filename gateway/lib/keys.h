/*
 * keys.h: API keys the gateway has seen, checked in its own memory.
 *
 * A key that svc-account authorized is kept here by its hash (the raw key
 * never is) with its identity, role and rate state. A call of a free route
 * whose key is kept, allowed by its role and not counted by a rate limit,
 * goes to its service without asking svc-account. What stops a key comes
 * from svc-account's watch (Account/Watch, a long poll this module keeps
 * open): a revoked key or a removed user's keys are forgotten when it says
 * so, and svc-account answers a revocation only once every gateway
 * watching has read it. Kept keys are trusted only for GW_KEYS_TRUST_MS
 * after the watch's last answer: a gateway cut off from svc-account stops
 * using them before a revocation it missed is answered (ACCT_WATCH_ACK_MS,
 * 2 s). A kept key also holds the rate tokens svc-account granted this
 * gateway (rate_grant.h), the next grant asked ahead of running out by an
 * Authorize of its own; what is not spent goes back with the next watch
 * call (RateTokens: each token once; a call that failed is not sent
 * again, so tokens may be lost, never given twice), and a watch's
 * `rate_recall` sends a key's back at once. Loop thread only. Internal to
 * the gateway.
 */
#ifndef GW_KEYS_H
#define GW_KEYS_H

#include <stdint.h>

#include <event2/event.h>

#include "seo/account/v1/account.pb-c.h"
#include "seo/rpc.h"
#include "rate_grant.h"

#define GW_KEYS_TRUST_MS 1500
/* Keys kept, in sets of eight slots by their hash: a key coming to a
 * full set takes the slot of its least recently used, asked for again. */
#define GW_KEYS_SLOTS 4096
/* Keys holding rate tokens at once; beyond, a grant goes back at once. */
#define GW_KEYS_HELD 256
/* Keys whose tokens wait to go back with the next watch; beyond, tokens
 * are dropped (the bucket refills them). */
#define GW_KEYS_BACK 256

typedef struct gw_keys gw_keys;

/* A kept key's identity and the rate state svc-account last gave. */
typedef struct gw_kept_key {
	char workspace_id[32];
	char user_id[32];
	char role[16];
	long long rate_limit, rate_remaining, rate_reset;
} gw_kept_key;

/* Everything else a watch answer says (the leases' recalls and balance
 * events, lease.h), handed on after the keys took theirs. */
typedef void (*gw_keys_heard_fn)(const Seo__Account__V1__WatchResponse *w,
				 void *ud);

/* Watches through *account (read at each ask; NULL: stopping) as
 * `watcher` (copied), handing each answer to `heard` (NULL: none). 0 or
 * SEO_ENOMEM; free with gw__keys_free(). */
int gw__keys_new(struct event_base *base, rpc_client *const *account,
		 const char *watcher, gw_keys_heard_fn heard, void *heard_ud,
		 gw_keys **out);

/* Stops watching and forgets every key. Call before freeing the account
 * client. */
void gw__keys_close(gw_keys *k);

/* NULL is allowed. */
void gw__keys_free(gw_keys *k);

/* The number that changes whenever a key may have been forgotten: read it
 * before asking svc-account, hand it to gw__keys_put(). */
uint64_t gw__keys_epoch(const gw_keys *k);

/* 1 with *out when `hash` is kept and the watch is trusted at `now_ms`
 * (seo_mono_ms()), else 0. */
int gw__keys_get(gw_keys *k, const char *hash, int64_t now_ms,
		 gw_kept_key *out);

/* Applies a watch's answer heard at `now_ms`: forgets what it names (all
 * on a reset or another instance) and trusts the rest GW_KEYS_TRUST_MS. */
void gw__keys_heard(gw_keys *k, const Seo__Account__V1__WatchResponse *w,
		    int64_t now_ms);

/* Keeps `hash` as svc-account authorized it, unless the epoch moved since
 * `epoch` (a revocation may have passed the answer). Copies. A key kept
 * already keeps its rate tokens; another key in its slot gives its back. */
void gw__keys_put(gw_keys *k, const char *hash, const gw_kept_key *key,
		  uint64_t epoch);

/*
 * A call of the kept key `hash` that its rate limit counts, at `now`
 * (gw__grant_take()): 1 when a token held here was spent on it, with
 * *rate the key's limit as seen here and *asked 1 when the tokens left
 * fell to their low-water mark and the next grant was asked ahead (an
 * Authorize that only asks, sent and answered here; an ask that fails
 * asks with a call again); else 0 with *want the grant to ask for with
 * the Authorize that counts the call (0: none), which must then end with
 * gw__keys_rate_granted() or gw__keys_rate_unasked().
 */
int gw__keys_rate_take(gw_keys *k, const char *hash, int64_t now,
		       gw_rate *rate, long long *want, int *asked);

/* svc-account granted `granted` tokens of `hash` (0: none) at `now`, its
 * bucket then being `rate`: held here, or given back when the key is no
 * longer kept. */
void gw__keys_rate_granted(gw_keys *k, const char *hash, long long granted,
			   const gw_rate *rate, int64_t now);

/* The ask of a grant for `hash` failed. */
void gw__keys_rate_unasked(gw_keys *k, const char *hash);

/*
 * The gateway stops (its calls have ended): once the grants asked ahead
 * are answered, the tokens held go back and svc-account is told this
 * watcher leaves (WatchRequest.stop), once. 1 while those calls are on
 * their way, then 0.
 */
int gw__keys_stop(gw_keys *k);

#endif

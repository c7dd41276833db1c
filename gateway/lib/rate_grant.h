/*
 * rate_grant.h: a key's rate counted in the gateway (docs/decisions.md,
 * "the rate limit counted in the gateways").
 *
 * svc-account keeps one token bucket per key, shared by every gateway. A
 * gateway asks it for a few tokens ahead (a grant: at most an eighth of
 * what the bucket holds, none near empty), first with a call of the key
 * it sends anyway, then, while grants come, ahead of running out (an ask
 * alone, once the tokens held fall to a quarter of the last grant or
 * three quarters of their hold are gone), and admits that many calls of
 * the key itself; each admitted call spent one token of the shared
 * bucket, so replicas together never admit more than it allows. Tokens
 * not spent within GW_RATE_HOLD_MS of their grant, or recalled (a call
 * refused elsewhere), go back. Plain arithmetic on one key's state, no
 * I/O; the caller (keys.c) owns it. Internal to the gateway.
 */
#ifndef GW_RATE_GRANT_H
#define GW_RATE_GRANT_H

#include <stdint.h>

/* Unspent tokens go back this long after their grant. */
#define GW_RATE_HOLD_MS 1000
/* The first grant asked for; each grant spent before it went back
 * doubles the next, up to GW_RATE_WANT_MAX. */
#define GW_RATE_WANT_MIN 8
#define GW_RATE_WANT_MAX 4096
/* An ask unanswered this long no longer stops the next. */
#define GW_RATE_ASK_MS 5000
/* The next grant is asked ahead once the tokens held fall to this share
 * of the last (1/4). */
#define GW_RATE_LOW_SHARE 4

/* A key's limit as a call's RateLimit-* headers show it. */
typedef struct gw_rate {
	long long limit, remaining, reset;
} gw_rate;

/* One key's grants; all zero: none, nothing asked. Two at most: a grant
 * asked ahead comes while the last one's tokens are still held, and each
 * keeps its own end, the older spent first. */
typedef struct gw_rate_grant {
	long long tokens;   /* unspent, of the older grant */
	int64_t expires_ms; /* seo_mono_ms() when they go back */
	long long next;     /* unspent, of the grant asked ahead */
	int64_t next_expires_ms;
	long long want;     /* the next ask; 0: GW_RATE_WANT_MIN */
	int64_t asked_until; /* an ask is unanswered before this */
	/* The last grant, whose low-water mark asks the next ahead; 0: ask
	 * only with a call (none yet, an ask answered with none or failed,
	 * a recall). */
	long long last;
	/* svc-account's bucket after the last grant, and when. */
	long long limit, left;
	int64_t at_ms;
} gw_rate_grant;

/*
 * A call of the key at `now`. 1 when a token held here was spent on it,
 * with *rate as this gateway sees the key's bucket (what svc-account last
 * said, refilled since, plus the tokens still held here) and *want the
 * grant to ask for now, alone, ahead of running out (0: none; the tokens
 * held and that grant are then never more than the largest ask). 0
 * otherwise, with *want the grant to ask for with the call that
 * svc-account then counts (0: one is being asked already). Either ask
 * must end with gw__grant_add() or gw__grant_unasked().
 */
int gw__grant_take(gw_rate_grant *g, int64_t now, gw_rate *rate,
		   long long *want);

/* The ask of `want` (> 0) that gw__grant_take() told was answered at
 * `now`: `granted` tokens (0: none, and no ask ahead until a call's ask
 * is granted again), the bucket then being `rate`. */
void gw__grant_add(gw_rate_grant *g, long long granted, const gw_rate *rate,
		   int64_t now);

/* The ask failed: nothing granted, another may be sent with a call (none
 * ahead until a call's ask is granted again). */
void gw__grant_unasked(gw_rate_grant *g);

/* The tokens to give back at `now` (held past GW_RATE_HOLD_MS), no
 * longer held here; 0: none. */
long long gw__grant_expire(gw_rate_grant *g, int64_t now);

/* Every token held, no longer held here (a recall, the key forgotten, the
 * gateway stopping); the next grant asked for is small again. */
long long gw__grant_recall(gw_rate_grant *g);

#endif

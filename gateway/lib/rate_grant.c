/*
 * A key's rate tokens held by the gateway (rate_grant.h).
 */
#include "rate_grant.h"

/* What this gateway sees of the key's bucket at `now`, a call having just
 * spent a token: never full, as svc-account answers a call it counts. */
static void view(const gw_rate_grant *g, int64_t now, gw_rate *rate)
{
	long long left = g->left;

	/* The refill since the grant (limit / 60000 a ms), never past full. */
	if (g->limit > 0 && now > g->at_ms) {
		int64_t ms = now - g->at_ms;

		left += ms >= 60000 ? g->limit : ms * g->limit / 60000;
	}
	left += g->tokens + g->next;
	if (left > g->limit - 1)
		left = g->limit - 1;
	rate->limit = g->limit;
	rate->remaining = left;
	/* Whole seconds until full again, as svc-account counts them. */
	rate->reset = g->limit > 0
		? ((g->limit - left) * 60000 / g->limit + 999) / 1000 : 0;
}

/* The older grant spent or gone: the one asked ahead takes its place. */
static void promote(gw_rate_grant *g)
{
	if (g->tokens > 0 || g->next == 0)
		return;
	g->tokens = g->next;
	g->expires_ms = g->next_expires_ms;
	g->next = 0;
}

static long long doubled(long long want)
{
	if (want == 0)
		return GW_RATE_WANT_MIN;
	return want * 2 > GW_RATE_WANT_MAX ? GW_RATE_WANT_MAX : want * 2;
}

/*
 * After a call spent a token at `now`: the next grant to ask ahead (0:
 * none), while grants come and none waits. Once the tokens fall to the
 * low-water mark: the next ask less what is held, the ask twice as large
 * when this grant came there (3/4 of it spent) within a third of its
 * hold: at this pace twice as many last 8/9 of a hold, and more would
 * outlive it. Else once three quarters of the hold are gone, at a pace
 * too slow to spend the rest (it will go back): as many as were spent of
 * this grant so far. Either way never more than one ask's worth is held.
 */
static long long ahead(gw_rate_grant *g, int64_t now)
{
	int64_t age = now - (g->expires_ms - GW_RATE_HOLD_MS);
	long long n;

	if (g->last == 0 || g->next > 0 || now < g->asked_until)
		return 0;
	if (g->tokens * GW_RATE_LOW_SHARE <= g->last) {
		if (age < GW_RATE_HOLD_MS / 3)
			g->want = doubled(g->want);
		n = g->want - g->tokens;
	} else if (age >= GW_RATE_HOLD_MS * 3 / 4) {
		n = g->last - g->tokens;
	} else {
		return 0;
	}
	if (n <= 0)
		return 0;
	g->asked_until = now + GW_RATE_ASK_MS;
	return n;
}

int gw__grant_take(gw_rate_grant *g, int64_t now, gw_rate *rate,
		   long long *want)
{
	*want = 0;
	promote(g);
	if (g->tokens > 0 && now < g->expires_ms) {
		g->tokens--;
		view(g, now, rate);
		*want = ahead(g, now);
		return 1;
	}
	if (now >= g->asked_until) {
		if (g->want == 0)
			g->want = GW_RATE_WANT_MIN;
		/* The last grant was spent within its hold: ask more. */
		else if (g->tokens == 0 && now < g->expires_ms) {
			g->want = doubled(g->want);
			g->expires_ms = 0; /* counted once */
		}
		*want = g->want;
		g->asked_until = now + GW_RATE_ASK_MS;
	}
	return 0;
}

void gw__grant_add(gw_rate_grant *g, long long granted, const gw_rate *rate,
		   int64_t now)
{
	g->asked_until = 0;
	g->limit = rate->limit;
	g->left = rate->remaining;
	g->at_ms = now;
	g->last = granted > 0 ? granted : 0;
	if (granted <= 0)
		return;
	promote(g);
	if (g->tokens == 0) {
		g->tokens = granted;
		g->expires_ms = now + GW_RATE_HOLD_MS;
	} else if (g->next == 0) {
		g->next = granted;
		g->next_expires_ms = now + GW_RATE_HOLD_MS;
	} else {
		/* A third (an ask timed out, then both answered): with the
		 * second, whose earlier end it keeps, so none outlives its
		 * hold. */
		g->next += granted;
	}
}

void gw__grant_unasked(gw_rate_grant *g)
{
	g->asked_until = 0;
	g->last = 0;
}

long long gw__grant_expire(gw_rate_grant *g, int64_t now)
{
	long long n = 0;

	/* The older grant first, then the one that took its place. */
	for (int i = 0; i < 2; i++) {
		if (g->tokens > 0 && now >= g->expires_ms) {
			n += g->tokens;
			g->tokens = 0;
		}
		promote(g);
	}
	if (n == 0)
		return 0;
	/* More was asked than was spent: ask half. */
	g->want = g->want / 2 < GW_RATE_WANT_MIN ? GW_RATE_WANT_MIN : g->want / 2;
	return n;
}

long long gw__grant_recall(gw_rate_grant *g)
{
	long long n = g->tokens + g->next;

	g->tokens = 0;
	g->next = 0;
	g->want = GW_RATE_WANT_MIN;
	g->expires_ms = 0; /* not spent: the next ask is no larger */
	g->last = 0;
	return n;
}

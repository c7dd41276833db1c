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
	left += g->tokens;
	if (left > g->limit - 1)
		left = g->limit - 1;
	rate->limit = g->limit;
	rate->remaining = left;
	/* Whole seconds until full again, as svc-account counts them. */
	rate->reset = g->limit > 0
		? ((g->limit - left) * 60000 / g->limit + 999) / 1000 : 0;
}

int gw__grant_take(gw_rate_grant *g, int64_t now, gw_rate *rate,
		   long long *want)
{
	*want = 0;
	if (g->tokens > 0 && now < g->expires_ms) {
		g->tokens--;
		view(g, now, rate);
		return 1;
	}
	if (now >= g->asked_until) {
		if (g->want == 0)
			g->want = GW_RATE_WANT_MIN;
		/* The last grant was spent within its hold: ask more. */
		else if (g->tokens == 0 && now < g->expires_ms) {
			g->want = g->want * 2 > GW_RATE_WANT_MAX
				? GW_RATE_WANT_MAX : g->want * 2;
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
	if (granted <= 0)
		return;
	/* Tokens still held keep their own, earlier end: none outlives its
	 * hold. */
	if (g->tokens == 0)
		g->expires_ms = now + GW_RATE_HOLD_MS;
	g->tokens += granted;
}

void gw__grant_unasked(gw_rate_grant *g)
{
	g->asked_until = 0;
}

long long gw__grant_expire(gw_rate_grant *g, int64_t now)
{
	long long n = g->tokens;

	if (n == 0 || now < g->expires_ms)
		return 0;
	g->tokens = 0;
	/* More was asked than was spent: ask half. */
	g->want = g->want / 2 < GW_RATE_WANT_MIN ? GW_RATE_WANT_MIN : g->want / 2;
	return n;
}

long long gw__grant_recall(gw_rate_grant *g)
{
	long long n = g->tokens;

	g->tokens = 0;
	g->want = GW_RATE_WANT_MIN;
	g->expires_ms = 0; /* not spent: the next ask is no larger */
	return n;
}

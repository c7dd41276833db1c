/*
 * Per-key token buckets: `per_min` tokens of capacity, refilled at
 * per_min / 60 tokens a second. Amounts are kept in units of 1/60000 of a
 * token, so that a millisecond of refill is exactly `per_min` units and
 * no rounding drifts. Tokens may be taken ahead (grants) by a gateway that
 * counts the key's calls itself, and given back.
 */
#include "acct_int.h"

#include <stdio.h>
#include <stdlib.h>

#include "seo/errors.h"
#include "seo/util.h"

#define UNITS_PER_TOKEN 60000 /* milliseconds per minute */
#define LIMITER_BUCKETS 16384
/* Beyond this many buckets, full ones (indistinguishable from absent ones)
 * are dropped. */
#define LIMITER_MAX 100000
/* Keeps per_min * 60000 * elapsed far from overflow. */
#define PER_MIN_MAX 1000000000

typedef struct bucket {
	seo_hnode node;
	int64_t units;
	int64_t at_ms;
	int64_t recall_until; /* a refusal before this recalls grants; 0: none */
} bucket;

static int64_t mono_clock(void *ud)
{
	(void)ud;
	return seo_mono_ms();
}

int acct__limiter_init(acct__limiter *l, int64_t per_min, acct_clock_fn clock,
		       void *clock_ud)
{
	int rc = seo_hmap_init(&l->map, LIMITER_BUCKETS);

	if (rc != 0)
		return rc;
	pthread_mutex_init(&l->mu, NULL);
	l->per_min = per_min < 0 ? 0 : per_min > PER_MIN_MAX ? PER_MIN_MAX : per_min;
	l->clock = clock != NULL ? clock : mono_clock;
	l->clock_ud = clock != NULL ? clock_ud : NULL;
	return 0;
}

void acct__limiter_destroy(acct__limiter *l)
{
	seo_hmap_destroy(&l->map);
	pthread_mutex_destroy(&l->mu);
}

static int64_t full_units(const acct__limiter *l)
{
	return l->per_min * UNITS_PER_TOKEN;
}

static void refill(const acct__limiter *l, bucket *b, int64_t now)
{
	int64_t elapsed = now - b->at_ms;

	/* A minute refills any bucket; the clamp also bounds the product. */
	if (elapsed > UNITS_PER_TOKEN)
		elapsed = UNITS_PER_TOKEN;
	if (elapsed > 0)
		b->units += elapsed * l->per_min;
	if (b->units > full_units(l))
		b->units = full_units(l);
	b->at_ms = now;
}

/* Whole seconds, rounded up, until `units` more have been refilled. */
static int64_t seconds_for(const acct__limiter *l, int64_t units)
{
	int64_t ms = (units + l->per_min - 1) / l->per_min;

	return (ms + 999) / 1000;
}

typedef struct sweep {
	const acct__limiter *l;
	int64_t now;
} sweep;

static int is_full(seo_hnode *n, void *ud)
{
	const sweep *s = ud;
	bucket b = *(const bucket *)n;

	refill(s->l, &b, s->now);
	return b.units == full_units(s->l);
}

/* A full bucket for `key`, which has none. */
static bucket *bucket_new(acct__limiter *l, const char *key, int64_t now)
{
	bucket *b;

	if (l->map.count >= LIMITER_MAX) {
		sweep s = {l, now};

		seo_hmap_drop(&l->map, is_full, &s);
	}
	b = malloc(sizeof(*b));
	if (b == NULL)
		return NULL;
	snprintf(b->node.key, sizeof(b->node.key), "%s", key);
	b->units = full_units(l);
	b->at_ms = now;
	b->recall_until = 0;
	seo_hmap_put(&l->map, &b->node);
	return b;
}

/* The state a caller sees of `b`. */
static void state_of(const acct__limiter *l, const bucket *b, acct_rate *out)
{
	out->limit = l->per_min;
	out->remaining = b->units / UNITS_PER_TOKEN;
	out->reset_s = seconds_for(l, full_units(l) - b->units);
}

int acct__limiter_check(acct__limiter *l, const char *key, int take,
			acct_rate *out, int64_t *retry_after, int *recall)
{
	bucket *b;
	bucket peek;
	int64_t now;
	int rc = 0;

	*retry_after = 0;
	*recall = 0;
	if (l->per_min == 0) {
		*out = (acct_rate){0, 0, 0, 0};
		return 0;
	}
	pthread_mutex_lock(&l->mu);
	now = l->clock(l->clock_ud);
	b = (bucket *)seo_hmap_get(&l->map, key);
	if (b == NULL && take) {
		b = bucket_new(l, key, now);
		if (b == NULL) {
			rc = SEO_ENOMEM;
			goto out;
		}
	} else if (b == NULL) {
		/* Reading must not create state: a missing bucket is full. */
		peek.units = full_units(l);
		peek.at_ms = now;
		peek.recall_until = 0;
		b = &peek;
	}
	refill(l, b, now);
	if (take && b->units < UNITS_PER_TOKEN) {
		*retry_after = seconds_for(l, UNITS_PER_TOKEN - b->units);
		if (*retry_after < 1)
			*retry_after = 1;
		rc = SEO_EDENIED;
		*recall = now < b->recall_until;
		b->recall_until = 0;
	} else if (take) {
		b->units -= UNITS_PER_TOKEN;
	}
	state_of(l, b, out);
out:
	pthread_mutex_unlock(&l->mu);
	return rc;
}

void acct__limiter_forget(acct__limiter *l, const char *key)
{
	pthread_mutex_lock(&l->mu);
	seo_hmap_del(&l->map, key);
	pthread_mutex_unlock(&l->mu);
}

int64_t acct__limiter_grant(acct__limiter *l, const char *key, int64_t want,
			    acct_rate *out)
{
	bucket *b;
	int64_t now, have, n = 0;

	if (l->per_min == 0 || want <= 0)
		return 0;
	pthread_mutex_lock(&l->mu);
	now = l->clock(l->clock_ud);
	b = (bucket *)seo_hmap_get(&l->map, key);
	if (b == NULL)
		b = bucket_new(l, key, now);
	if (b != NULL) {
		refill(l, b, now);
		have = b->units / UNITS_PER_TOKEN;
		if (have >= ACCT_RATE_GRANT_MIN)
			n = want < have / 8 ? want : have / 8;
		if (n > 0) {
			b->units -= n * UNITS_PER_TOKEN;
			b->recall_until = now + ACCT_RATE_RECALL_MS;
		}
		state_of(l, b, out);
	}
	pthread_mutex_unlock(&l->mu);
	return n;
}

void acct__limiter_give(acct__limiter *l, const char *key, int64_t tokens)
{
	bucket *b;

	if (l->per_min == 0 || tokens <= 0)
		return;
	pthread_mutex_lock(&l->mu);
	/* A bucket dropped is full already. */
	b = (bucket *)seo_hmap_get(&l->map, key);
	if (b != NULL) {
		refill(l, b, l->clock(l->clock_ud));
		/* Bounded first: the product cannot overflow. */
		if (tokens > l->per_min)
			tokens = l->per_min;
		b->units += tokens * UNITS_PER_TOKEN;
		if (b->units > full_units(l))
			b->units = full_units(l);
	}
	pthread_mutex_unlock(&l->mu);
}

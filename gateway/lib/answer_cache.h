/*
 * answer_cache.h: answers the gateway keeps in memory. A route whose
 * output stage has `cache_ms` (a key-independent answer without input:
 * GET /v1/pricing) is answered from here for that long after its service
 * last answered it; the first request after that asks the service again
 * (docs/decisions.md, "Answers from the gateway's memory"). One slot per
 * route of the table. Loop thread only. Internal to the gateway.
 */
#ifndef GW_ANSWER_CACHE_H
#define GW_ANSWER_CACHE_H

#include <stddef.h>
#include <stdint.h>

#include "gw_routes.h"

typedef struct gw_answer_cache gw_answer_cache;

/* A kept answer: its success status and JSON body, owned by the cache
 * and valid until the next gw__answer_cache_put() of its route or
 * gw__answer_cache_free(). */
typedef struct gw_cached_answer {
	int status;
	const char *body;
	size_t len;
} gw_cached_answer;

/*
 * Checks that a route may be kept (`cache_ms` 0, or a route without key,
 * input, billing or per-key limit: an answer the same for everyone).
 * Returns 0, or SEO_EINVAL with the reason in `why` (`whylen` bytes).
 */
int gw__answer_cache_check(const gw_route *r, char *why, size_t whylen);

/* An empty cache for the `n` routes from `routes` (the table of
 * gw_routes(), which outlives it). Returns 0 or SEO_ENOMEM; free with
 * gw__answer_cache_free(). */
int gw__answer_cache_new(const gw_route *routes, size_t n,
			 gw_answer_cache **out);

void gw__answer_cache_free(gw_answer_cache *ac);

/* The answer of route `r` (a row of the table) still fresh at `now_ms`
 * (seo_mono_ms()), or NULL: none kept, expired, or `r` is not kept. */
const gw_cached_answer *gw__answer_cache_get(gw_answer_cache *ac,
					     const gw_route *r, int64_t now_ms);

/* Keeps a copy of `body` (`len` bytes) as route r's answer with `status`
 * from `now_ms` for the route's cache_ms; nothing for a route not kept.
 * Without memory the old answer is dropped and nothing is kept. */
void gw__answer_cache_put(gw_answer_cache *ac, const gw_route *r, int status,
			  const char *body, size_t len, int64_t now_ms);

#endif

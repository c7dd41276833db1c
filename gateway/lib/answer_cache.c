/*
 * Answers kept in the gateway's memory (answer_cache.h): one slot per row
 * of the route table, found by the row's place in it.
 */
#include "answer_cache.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "seo/errors.h"

typedef struct slot {
	gw_cached_answer answer;
	int64_t expires_ms;
	int kept; /* answer holds a body */
} slot;

struct gw_answer_cache {
	const gw_route *routes;
	size_t n;
	slot slots[];
};

int gw__answer_cache_check(const gw_route *r, char *why, size_t whylen)
{
	const char *bad = NULL;

	if (r->out.cache_ms < 0)
		bad = "cache_ms is negative";
	else if (r->out.cache_ms == 0)
		return 0;
	else if (r->auth.key != GW_KEY_NONE)
		bad = "a kept answer must not depend on a key";
	else if (r->in.kind != GW_IN_NONE || r->in.n_params > 0)
		bad = "a kept answer must take no input";
	else if (r->bill.kind != GW_BILL_FREE || r->quota != GW_QUOTA_NONE)
		bad = "a kept answer must be free and unlimited";
	else if (r->out.kind != GW_OUT_JSON || r->out.statuses != NULL ||
		 r->out.headers != NULL)
		bad = "a kept answer must be JSON with one status and no headers";
	else if (strcmp(r->method, "GET") != 0)
		bad = "only a GET answer may be kept";
	if (bad == NULL)
		return 0;
	snprintf(why, whylen, "%s", bad);
	return SEO_EINVAL;
}

int gw__answer_cache_new(const gw_route *routes, size_t n,
			 gw_answer_cache **out)
{
	gw_answer_cache *ac = calloc(1, sizeof(*ac) + n * sizeof(slot));

	if (ac == NULL)
		return SEO_ENOMEM;
	ac->routes = routes;
	ac->n = n;
	*out = ac;
	return 0;
}

void gw__answer_cache_free(gw_answer_cache *ac)
{
	if (ac == NULL)
		return;
	for (size_t i = 0; i < ac->n; i++)
		free((char *)ac->slots[i].answer.body);
	free(ac);
}

/* Route r's slot, or NULL when r is not kept (or not of the table). */
static slot *slot_of(gw_answer_cache *ac, const gw_route *r)
{
	if (r->out.cache_ms <= 0 || r < ac->routes || r >= ac->routes + ac->n)
		return NULL;
	return &ac->slots[r - ac->routes];
}

const gw_cached_answer *gw__answer_cache_get(gw_answer_cache *ac,
					     const gw_route *r, int64_t now_ms)
{
	slot *s = slot_of(ac, r);

	if (s == NULL || !s->kept || now_ms >= s->expires_ms)
		return NULL;
	return &s->answer;
}

void gw__answer_cache_put(gw_answer_cache *ac, const gw_route *r, int status,
			  const char *body, size_t len, int64_t now_ms)
{
	slot *s = slot_of(ac, r);
	char *copy;

	if (s == NULL)
		return;
	free((char *)s->answer.body);
	s->answer.body = NULL;
	s->kept = 0;
	copy = malloc(len + 1);
	if (copy == NULL)
		return;
	memcpy(copy, body, len);
	copy[len] = '\0';
	s->answer = (gw_cached_answer){status, copy, len};
	s->expires_ms = now_ms + r->out.cache_ms;
	s->kept = 1;
}

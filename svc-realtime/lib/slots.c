/*
 * slots.c: how many live analyses each workspace runs at once. A handler
 * takes a slot of its caller's workspace before it fetches and gives it
 * back when it is done, so that one workspace cannot hold every worker
 * thread (docs/decisions.md, "Bounded live analyses").
 */
#include "rt_service.h"

#include "seo/errors.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

typedef struct holder {
	char *who;
	unsigned n;
} holder;

struct rt_slots {
	pthread_mutex_t mu;
	unsigned max;
	holder *h; /* only workspaces with a slot taken */
	size_t n, cap;
};

int rt_slots_new(unsigned max, rt_slots **out)
{
	rt_slots *s = calloc(1, sizeof(*s));

	if (s == NULL)
		return SEO_ENOMEM;
	pthread_mutex_init(&s->mu, NULL);
	s->max = max;
	*out = s;
	return 0;
}

void rt_slots_free(rt_slots *s)
{
	if (s == NULL)
		return;
	for (size_t i = 0; i < s->n; i++)
		free(s->h[i].who);
	free(s->h);
	pthread_mutex_destroy(&s->mu);
	free(s);
}

static holder *find(rt_slots *s, const char *who)
{
	for (size_t i = 0; i < s->n; i++)
		if (strcmp(s->h[i].who, who) == 0)
			return &s->h[i];
	return NULL;
}

/* A new holder of no slot; NULL when out of memory. Under the lock. */
static holder *add(rt_slots *s, const char *who)
{
	char *copy = strdup(who);

	if (copy == NULL)
		return NULL;
	if (s->n == s->cap) {
		size_t cap = s->cap ? 2 * s->cap : 16;
		holder *h = realloc(s->h, cap * sizeof(*h));

		if (h == NULL) {
			free(copy);
			return NULL;
		}
		s->h = h;
		s->cap = cap;
	}
	s->h[s->n] = (holder){copy, 0};
	return &s->h[s->n++];
}

int rt_slots_take(rt_slots *s, const char *who)
{
	holder *h;
	int rc = 0;

	pthread_mutex_lock(&s->mu);
	h = find(s, who);
	if (h == NULL)
		h = add(s, who);
	if (h == NULL)
		rc = SEO_ENOMEM;
	else if (h->n >= s->max)
		rc = SEO_EDENIED;
	else
		h->n++;
	pthread_mutex_unlock(&s->mu);
	return rc;
}

void rt_slots_give(rt_slots *s, const char *who)
{
	holder *h;

	pthread_mutex_lock(&s->mu);
	h = find(s, who);
	if (h != NULL && h->n > 0 && --h->n == 0) {
		free(h->who);
		*h = s->h[--s->n];
	}
	pthread_mutex_unlock(&s->mu);
}

unsigned rt_slots_held(rt_slots *s, const char *who)
{
	holder *h;
	unsigned n;

	pthread_mutex_lock(&s->mu);
	h = find(s, who);
	n = h != NULL ? h->n : 0;
	pthread_mutex_unlock(&s->mu);
	return n;
}

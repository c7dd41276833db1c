/*
 * cache.c: the result cache of cache.h, a chained hash table over a
 * doubly linked recency list, under one mutex.
 */
#include "cache.h"

#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <seo/errors.h>

typedef struct entry {
	struct entry *hnext;       /* same bucket */
	struct entry *prev, *next; /* recency, most recent first */
	uint64_t hash;
	size_t klen, vlen;
	unsigned char data[];      /* the key, then the value */
} entry;

struct graph__cache {
	pthread_mutex_t mu;
	entry **bucket;
	size_t mask;               /* buckets - 1, a power of two less one */
	entry *head, *tail;
	size_t entries, bytes, max_bytes;
};

/* Bytes of bookkeeping counted per entry besides its key and value. */
#define ENTRY_COST(klen, vlen) (sizeof(entry) + 16 + (klen) + (vlen))
/* The average entry the bucket count is sized for. */
#define ENTRY_TYPICAL 2048

static uint64_t hash_key(const void *key, size_t klen)
{
	const unsigned char *p = key;
	uint64_t h = 0xcbf29ce484222325ULL; /* FNV-1a */

	for (size_t i = 0; i < klen; i++) {
		h ^= p[i];
		h *= 0x100000001b3ULL;
	}
	return h;
}

int graph__cache_new(size_t max_bytes, graph__cache **out)
{
	graph__cache *c = calloc(1, sizeof(*c));
	size_t n = 16;

	*out = NULL;
	if (!c)
		return SEO_ENOMEM;
	while (n < max_bytes / ENTRY_TYPICAL)
		n *= 2;
	c->bucket = calloc(n, sizeof(*c->bucket));
	if (!c->bucket) {
		free(c);
		return SEO_ENOMEM;
	}
	c->mask = n - 1;
	c->max_bytes = max_bytes;
	pthread_mutex_init(&c->mu, NULL);
	*out = c;
	return 0;
}

void graph__cache_free(graph__cache *c)
{
	if (!c)
		return;
	for (entry *e = c->head, *next; e; e = next) {
		next = e->next;
		free(e);
	}
	free(c->bucket);
	pthread_mutex_destroy(&c->mu);
	free(c);
}

/* The entry of the key and the link pointing at it in its bucket. */
static entry *find(graph__cache *c, uint64_t h, const void *key, size_t klen,
		   entry ***link)
{
	entry **at = &c->bucket[h & c->mask];

	for (; *at; at = &(*at)->hnext) {
		entry *e = *at;

		if (e->hash == h && e->klen == klen &&
		    memcmp(e->data, key, klen) == 0)
			break;
	}
	*link = at;
	return *at;
}

static void unlist(graph__cache *c, entry *e)
{
	if (e->prev)
		e->prev->next = e->next;
	else
		c->head = e->next;
	if (e->next)
		e->next->prev = e->prev;
	else
		c->tail = e->prev;
}

static void list_front(graph__cache *c, entry *e)
{
	e->prev = NULL;
	e->next = c->head;
	if (c->head)
		c->head->prev = e;
	c->head = e;
	if (!c->tail)
		c->tail = e;
}

/* Takes e out of the table and the list; the caller frees it. */
static void drop(graph__cache *c, entry *e, entry **link)
{
	*link = e->hnext;
	unlist(c, e);
	c->entries--;
	c->bytes -= ENTRY_COST(e->klen, e->vlen);
}

int graph__cache_get(graph__cache *c, const void *key, size_t klen,
		     seo_arena *a, void **val, size_t *len)
{
	uint64_t h = hash_key(key, klen);
	entry **link, *e;
	int rc = SEO_ENOTFOUND;

	pthread_mutex_lock(&c->mu);
	e = find(c, h, key, klen, &link);
	if (e) {
		unlist(c, e);
		list_front(c, e);
		*val = seo_arena_alloc(a, e->vlen ? e->vlen : 1);
		rc = *val ? 0 : SEO_ENOMEM;
		if (*val) {
			memcpy(*val, e->data + e->klen, e->vlen);
			*len = e->vlen;
		}
	}
	pthread_mutex_unlock(&c->mu);
	return rc;
}

int graph__cache_put(graph__cache *c, const void *key, size_t klen,
		     const void *val, size_t len)
{
	uint64_t h = hash_key(key, klen);
	size_t cost = ENTRY_COST(klen, len);
	entry *e, *old, **link, *gone = NULL;

	if (cost > c->max_bytes / 8)
		return 0;
	/* copied before the lock: other calls wait only for the links */
	e = malloc(sizeof(*e) + klen + len);
	if (!e)
		return SEO_ENOMEM;
	e->hash = h;
	e->klen = klen;
	e->vlen = len;
	memcpy(e->data, key, klen);
	memcpy(e->data + klen, val, len);
	pthread_mutex_lock(&c->mu);
	old = find(c, h, key, klen, &link);
	if (old) {
		drop(c, old, link);
		old->hnext = gone;
		gone = old;
	}
	e->hnext = c->bucket[h & c->mask];
	c->bucket[h & c->mask] = e;
	list_front(c, e);
	c->entries++;
	c->bytes += cost;
	while (c->bytes > c->max_bytes) {
		entry *last = c->tail;

		find(c, last->hash, last->data, last->klen, &link);
		drop(c, last, link);
		last->hnext = gone;
		gone = last;
	}
	pthread_mutex_unlock(&c->mu);
	while (gone) {
		entry *next = gone->hnext;

		free(gone);
		gone = next;
	}
	return 0;
}

void graph__cache_usage(graph__cache *c, size_t *entries, size_t *bytes)
{
	pthread_mutex_lock(&c->mu);
	*entries = c->entries;
	*bytes = c->bytes;
	pthread_mutex_unlock(&c->mu);
}

/*
 * The chained hash map of seo/hmap.h: FNV-1a over the key, a power of
 * two of buckets.
 */
#include "seo/hmap.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "seo/errors.h"

/* FNV-1a: keys may come from clients, so do not trust them to be random. */
static size_t slot(const seo_hmap *m, const char *key)
{
	uint64_t h = UINT64_C(14695981039346656037);

	for (const unsigned char *p = (const unsigned char *)key; *p; p++) {
		h ^= *p;
		h *= UINT64_C(1099511628211);
	}
	return (size_t)(h & (m->nbuckets - 1));
}

int seo_hmap_init(seo_hmap *m, size_t nbuckets)
{
	m->buckets = calloc(nbuckets, sizeof(*m->buckets));
	m->nbuckets = nbuckets;
	m->count = 0;
	return m->buckets != NULL ? 0 : SEO_ENOMEM;
}

static int drop_all(seo_hnode *n, void *ud)
{
	(void)n;
	(void)ud;
	return 1;
}

void seo_hmap_clear(seo_hmap *m)
{
	seo_hmap_drop(m, drop_all, NULL);
}

void seo_hmap_destroy(seo_hmap *m)
{
	if (m->buckets == NULL)
		return;
	seo_hmap_clear(m);
	free(m->buckets);
	m->buckets = NULL;
}

seo_hnode *seo_hmap_get(seo_hmap *m, const char *key)
{
	for (seo_hnode *n = m->buckets[slot(m, key)]; n != NULL; n = n->next)
		if (strcmp(n->key, key) == 0)
			return n;
	return NULL;
}

void seo_hmap_put(seo_hmap *m, seo_hnode *n)
{
	size_t i = slot(m, n->key);

	n->next = m->buckets[i];
	m->buckets[i] = n;
	m->count++;
}

size_t seo_hmap_drop(seo_hmap *m, int (*drop)(seo_hnode *, void *),
		       void *ud)
{
	size_t dropped = 0;

	for (size_t i = 0; i < m->nbuckets; i++) {
		seo_hnode **pp = &m->buckets[i];

		while (*pp != NULL) {
			seo_hnode *n = *pp;

			if (drop(n, ud)) {
				*pp = n->next;
				free(n);
				dropped++;
			} else {
				pp = &n->next;
			}
		}
	}
	m->count -= dropped;
	return dropped;
}

int seo_hmap_del(seo_hmap *m, const char *key)
{
	for (seo_hnode **pp = &m->buckets[slot(m, key)]; *pp != NULL;
	     pp = &(*pp)->next) {
		seo_hnode *n = *pp;

		if (strcmp(n->key, key) == 0) {
			*pp = n->next;
			free(n);
			m->count--;
			return 1;
		}
	}
	return 0;
}

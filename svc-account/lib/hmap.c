/*
 * A chained hash map keyed by short strings (key hashes, user ids), for
 * the key cache and the rate limiter. Not thread-safe: each owner locks.
 */
#include "acct_int.h"

#include <stdlib.h>
#include <string.h>

#include "seo/errors.h"

/* FNV-1a: keys may come from clients, so do not trust them to be random. */
static size_t slot(const acct__hmap *m, const char *key)
{
	uint64_t h = UINT64_C(14695981039346656037);

	for (const unsigned char *p = (const unsigned char *)key; *p; p++) {
		h ^= *p;
		h *= UINT64_C(1099511628211);
	}
	return (size_t)(h & (m->nbuckets - 1));
}

int acct__hmap_init(acct__hmap *m, size_t nbuckets)
{
	m->buckets = calloc(nbuckets, sizeof(*m->buckets));
	m->nbuckets = nbuckets;
	m->count = 0;
	return m->buckets != NULL ? 0 : SEO_ENOMEM;
}

static int drop_all(const acct__hnode *n, void *ud)
{
	(void)n;
	(void)ud;
	return 1;
}

void acct__hmap_clear(acct__hmap *m)
{
	acct__hmap_drop(m, drop_all, NULL);
}

void acct__hmap_destroy(acct__hmap *m)
{
	if (m->buckets == NULL)
		return;
	acct__hmap_clear(m);
	free(m->buckets);
	m->buckets = NULL;
}

acct__hnode *acct__hmap_get(acct__hmap *m, const char *key)
{
	for (acct__hnode *n = m->buckets[slot(m, key)]; n != NULL; n = n->next)
		if (strcmp(n->key, key) == 0)
			return n;
	return NULL;
}

void acct__hmap_put(acct__hmap *m, acct__hnode *n)
{
	size_t i = slot(m, n->key);

	n->next = m->buckets[i];
	m->buckets[i] = n;
	m->count++;
}

size_t acct__hmap_drop(acct__hmap *m, int (*drop)(const acct__hnode *, void *),
		       void *ud)
{
	size_t dropped = 0;

	for (size_t i = 0; i < m->nbuckets; i++) {
		acct__hnode **pp = &m->buckets[i];

		while (*pp != NULL) {
			acct__hnode *n = *pp;

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

int acct__hmap_del(acct__hmap *m, const char *key)
{
	for (acct__hnode **pp = &m->buckets[slot(m, key)]; *pp != NULL;
	     pp = &(*pp)->next) {
		acct__hnode *n = *pp;

		if (strcmp(n->key, key) == 0) {
			*pp = n->next;
			free(n);
			m->count--;
			return 1;
		}
	}
	return 0;
}

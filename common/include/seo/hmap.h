/*
 * seo/hmap.h: a chained hash map keyed by short strings (key hashes,
 * user and workspace ids), its entries embedding a seo_hnode as their
 * first member. Not thread-safe: each owner locks, or keeps it on one
 * thread.
 *
 * The map owns the entries put in it: seo_hmap_del(), seo_hmap_drop(),
 * seo_hmap_clear() and seo_hmap_destroy() free() them (an entry holding
 * more memory frees it first, in its drop callback).
 */
#ifndef SEO_HMAP_H
#define SEO_HMAP_H

#include <stddef.h>

/* A key's bytes with the NUL: a hex SHA-256 fits. */
#define SEO_HMAP_KEY_LEN 65

typedef struct seo_hnode {
	struct seo_hnode *next;
	char key[SEO_HMAP_KEY_LEN];
} seo_hnode;

typedef struct seo_hmap {
	seo_hnode **buckets;
	size_t nbuckets; /* a power of two */
	size_t count;
} seo_hmap;

/* 0, or SEO_ENOMEM. `nbuckets` is a power of two. */
int seo_hmap_init(seo_hmap *m, size_t nbuckets);
/* Frees every entry and the buckets. */
void seo_hmap_destroy(seo_hmap *m);
/* The entry of `key`, or NULL; the map keeps it. */
seo_hnode *seo_hmap_get(seo_hmap *m, const char *key);
/* Inserts `n` (its key absent: the caller checks). The map owns it. */
void seo_hmap_put(seo_hmap *m, seo_hnode *n);
/* Frees every entry. */
void seo_hmap_clear(seo_hmap *m);
/* Frees the entry of `key`; 1 when there was one, else 0. */
int seo_hmap_del(seo_hmap *m, const char *key);
/* Visits every entry, which drop() may change, and frees those for which
 * it returns 1 (a walk: always 0); returns how many were freed. */
size_t seo_hmap_drop(seo_hmap *m, int (*drop)(seo_hnode *, void *), void *ud);

#endif

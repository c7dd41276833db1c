/*
 * cache.h: svc-graph's result cache. Answers of expensive queries stored
 * as bytes under a key of bytes, within a bound on bytes, the least
 * recently used evicted first.
 *
 * service.c keeps one cache per loaded release, so that a release switch
 * starts empty and the old cache goes with the old index. Thread-safe: one
 * mutex, held to look up, insert and copy a value out. Values are copied in
 * and out: nothing returned points into the cache.
 */
#ifndef GRAPH_CACHE_H
#define GRAPH_CACHE_H

#include <stddef.h>

#include <seo/arena.h>

typedef struct graph__cache graph__cache;

/* A cache holding at most `max_bytes` of entries (key, value and about 64
 * bytes of bookkeeping each), plus a bucket array of a 256th of that.
 * Returns 0 and sets *out (freed with graph__cache_free), SEO_ENOMEM. */
int graph__cache_new(size_t max_bytes, graph__cache **out);

/* Frees the cache and every entry; NULL is allowed. */
void graph__cache_free(graph__cache *c);

/* Copies the value stored under the key onto `a` and makes the entry the
 * most recently used. Returns 0 with *val and *len, SEO_ENOTFOUND, or
 * SEO_ENOMEM. */
int graph__cache_get(graph__cache *c, const void *key, size_t klen,
		     seo_arena *a, void **val, size_t *len);

/* Stores a copy of the value under the key, replacing what was there,
 * then evicts the least recently used entries beyond the bound. An entry
 * larger than an eighth of the bound is not kept. Returns 0 or
 * SEO_ENOMEM. */
int graph__cache_put(graph__cache *c, const void *key, size_t klen,
		     const void *val, size_t len);

/* How many entries and bytes the cache holds. */
void graph__cache_usage(graph__cache *c, size_t *entries, size_t *bytes);

#endif

/*
 * The key cache: key hash -> identity, so that Authorize needs PostgreSQL
 * only on a miss; revocations and user removals evict. Unknown hashes are
 * kept too, for KEYCACHE_UNKNOWN_MS, so that a client trying keys costs no
 * query per try; their map is bounded apart (KEYCACHE_UNKNOWN_MAX, then it
 * starts over), so that trying keys cannot fill memory. A key created
 * evicts its hash from both maps, here (acct_create_key) and in every
 * replica (the NOTIFY of acct__key_insert).
 */
#include "acct_int.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "seo/errors.h"

#define KEYCACHE_BUCKETS 16384
/* Beyond this many keys the cache starts over rather than grow. */
#define KEYCACHE_MAX 200000
#define KEYCACHE_UNKNOWN_BUCKETS 4096
#define KEYCACHE_UNKNOWN_MAX 100000

typedef struct entry {
	seo_hnode node;
	acct__identity id;
} entry;

typedef struct unknown_entry {
	seo_hnode node;
	int64_t until_ms; /* seo_mono_ms() terms */
} unknown_entry;

int acct__keycache_init(acct__keycache *c)
{
	int rc = seo_hmap_init(&c->map, KEYCACHE_BUCKETS);

	if (rc != 0)
		return rc;
	rc = seo_hmap_init(&c->unknown, KEYCACHE_UNKNOWN_BUCKETS);
	if (rc != 0) {
		seo_hmap_destroy(&c->map);
		return rc;
	}
	pthread_mutex_init(&c->mu, NULL);
	c->epoch = 0;
	return 0;
}

void acct__keycache_destroy(acct__keycache *c)
{
	seo_hmap_destroy(&c->map);
	seo_hmap_destroy(&c->unknown);
	pthread_mutex_destroy(&c->mu);
}

int acct__keycache_get(acct__keycache *c, const char *hash,
		       acct__identity *out, uint64_t *epoch)
{
	entry *e;
	int hit = 0;

	pthread_mutex_lock(&c->mu);
	e = (entry *)seo_hmap_get(&c->map, hash);
	if (e != NULL) {
		*out = e->id;
		hit = 1;
	}
	*epoch = c->epoch;
	pthread_mutex_unlock(&c->mu);
	return hit;
}

void acct__keycache_put(acct__keycache *c, const char *hash,
			const acct__identity *id, uint64_t epoch)
{
	entry *e = malloc(sizeof(*e));

	/* Without memory the key is simply looked up again next time. */
	if (e == NULL)
		return;
	snprintf(e->node.key, sizeof(e->node.key), "%s", hash);
	e->id = *id;
	pthread_mutex_lock(&c->mu);
	/* An eviction since the caller's read may concern what it read. */
	if (epoch != c->epoch || seo_hmap_get(&c->map, hash) != NULL) {
		pthread_mutex_unlock(&c->mu);
		free(e);
		return;
	}
	if (c->map.count >= KEYCACHE_MAX)
		seo_hmap_clear(&c->map);
	seo_hmap_put(&c->map, &e->node);
	pthread_mutex_unlock(&c->mu);
}

int acct__keycache_unknown(acct__keycache *c, const char *hash,
			   int64_t now_ms)
{
	unknown_entry *e;
	int known_unknown = 0;

	pthread_mutex_lock(&c->mu);
	e = (unknown_entry *)seo_hmap_get(&c->unknown, hash);
	if (e != NULL && now_ms < e->until_ms)
		known_unknown = 1;
	else if (e != NULL)
		seo_hmap_del(&c->unknown, hash);
	pthread_mutex_unlock(&c->mu);
	return known_unknown;
}

void acct__keycache_put_unknown(acct__keycache *c, const char *hash,
				uint64_t epoch, int64_t now_ms)
{
	unknown_entry *e = malloc(sizeof(*e));

	if (e == NULL)
		return;
	snprintf(e->node.key, sizeof(e->node.key), "%s", hash);
	e->until_ms = now_ms + KEYCACHE_UNKNOWN_MS;
	pthread_mutex_lock(&c->mu);
	/* A key created since the caller's read is evicted with a new
	 * epoch: what the caller read must not hide it. */
	if (epoch != c->epoch || seo_hmap_get(&c->unknown, hash) != NULL) {
		pthread_mutex_unlock(&c->mu);
		free(e);
		return;
	}
	if (c->unknown.count >= KEYCACHE_UNKNOWN_MAX)
		seo_hmap_clear(&c->unknown);
	seo_hmap_put(&c->unknown, &e->node);
	pthread_mutex_unlock(&c->mu);
}

void acct__keycache_evict_key(acct__keycache *c, const char *hash)
{
	pthread_mutex_lock(&c->mu);
	seo_hmap_del(&c->map, hash);
	seo_hmap_del(&c->unknown, hash);
	c->epoch++;
	pthread_mutex_unlock(&c->mu);
}

static int of_user(seo_hnode *n, void *user_id)
{
	return strcmp(((const entry *)n)->id.user_id, user_id) == 0;
}

void acct__keycache_evict_user(acct__keycache *c, const char *user_id)
{
	pthread_mutex_lock(&c->mu);
	seo_hmap_drop(&c->map, of_user, (void *)user_id);
	c->epoch++;
	pthread_mutex_unlock(&c->mu);
}

void acct__keycache_clear(acct__keycache *c)
{
	pthread_mutex_lock(&c->mu);
	seo_hmap_clear(&c->map);
	seo_hmap_clear(&c->unknown);
	c->epoch++;
	pthread_mutex_unlock(&c->mu);
}

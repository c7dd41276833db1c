/*
 * db.h: svc-realtime's state in PostgreSQL (its own tables, from
 * svc-realtime/migrations), which only page-performance needs: the shared
 * pool (seo/pg_pool.h) set up for it, its statements, its daily counters
 * (seo/pg_counter.h) and the cache.
 *
 * Functions return 0 or a negative SEO_E* code; database failures are
 * logged here with the server's message and returned as SEO_EDB.
 */
#ifndef RT_DB_H
#define RT_DB_H

#include <stdint.h>

#include "seo/pg.h"
#include "seo/pg_counter.h"
#include "seo/pg_pool.h"
#include "rt_store.h"

/* Calls per person (key: the gateway's seo-user-id) and uncached upstream
 * attempts of the whole service, per UTC day. */
extern const seo_pg_counter rt_db_user_calls;
extern const seo_pg_counter rt_db_attempts;

/*
 * The pool of page-performance: at most `size` connections to `url`,
 * opened lazily (the other analyses serve while the database is away)
 * with a short connect timeout, asynchronous commits (no answer reports a
 * count or a cache entry as durable: a crash may lose the last few, not
 * worth an fsync per call), and `migrations_dir` (NULL when it was not
 * found) applied on the first connection. Free with seo_pg_pool_free().
 */
int rt_db_pool_new(const char *url, const char *migrations_dir, int size,
		   seo_pg_pool **out);

/*
 * Lends a connection of `pool`, logging why when it cannot: SEO_EDB
 * (database away, migrations failed, no connection free in time) or
 * SEO_ENOTFOUND (no migrations directory).
 */
int rt_db_get(seo_pg_pool *pool, seo_pg_conn **out);

/*
 * Counts one on `counter` for `day` ("YYYY-MM-DD") and `key` unless `cap`
 * were counted: SEO_EDENIED then. rt_db_uncount() takes one back.
 */
int rt_db_count(seo_pg_conn *c, const seo_pg_counter *counter,
		const char *day, const char *key, int cap);
int rt_db_uncount(seo_pg_conn *c, const seo_pg_counter *counter,
		  const char *day, const char *key);

/*
 * The cached result of `url` + `strategy` produced after `fresh_after_ms`
 * (Unix ms): *result (malloc'd JSON text, the caller frees it) and
 * *cached_at. SEO_ENOTFOUND when there is none.
 */
int rt_db_psi_cache_get(seo_pg_conn *c, const char *url, const char *strategy,
			int64_t fresh_after_ms, char **result, int64_t *cached_at);

/*
 * Stores `result` (JSON text) for `url` + `strategy` as produced at
 * `now_ms`, unless another replica stored one after `fresh_after_ms`
 * meanwhile: that one is kept. *stored and *cached_at are what the cache
 * then holds (*stored malloc'd).
 */
int rt_db_psi_cache_put(seo_pg_conn *c, const char *url, const char *strategy,
			const char *result, int64_t now_ms,
			int64_t fresh_after_ms, char **stored,
			int64_t *cached_at);

#endif

/*
 * db.h: svc-realtime's state in PostgreSQL (its own tables, from
 * svc-realtime/migrations), which only page-performance needs: a small
 * pool of connections opened lazily, so that the service starts and
 * serves its other analyses while the database is away, and the
 * statements of the page-performance cache and daily counters.
 *
 * Functions return 0 or a negative SEO_E* code; database failures are
 * logged here with the server's message and returned as SEO_EDB.
 */
#ifndef RT_DB_H
#define RT_DB_H

#include <stdint.h>

#include <libpq-fe.h>

typedef struct rt_db rt_db;

/*
 * A pool of at most `size` connections to `url` (copied), which never
 * connects here. `migrations_dir` (copied; NULL when it was not found) is
 * applied on the first connection made. Free with rt_db_free().
 */
int rt_db_new(const char *url, const char *migrations_dir, int size,
	      rt_db **out);

/* Closes every connection; none may be lent. NULL is allowed. */
void rt_db_free(rt_db *db);

/*
 * Lends an idle connection, waiting while all are lent; connects when the
 * slot has none or a broken one, and applies the migrations once per
 * process before the first use. SEO_EDB when the database cannot be
 * reached or the migrations fail, SEO_ENOTFOUND when there is no
 * migrations directory. Give it back with rt_db_release() from the same
 * thread.
 */
int rt_db_acquire(rt_db *db, PGconn **out);

/* Takes a connection back; one that is broken or left in a transaction is
 * closed. */
void rt_db_release(rt_db *db, PGconn *pg);

/* ---- page-performance ------------------------------------------------------- */

/*
 * Counts a call of `user_id` on `day` ("YYYY-MM-DD") unless it already
 * made `cap`: one conditional upsert, so that replicas cannot overshoot.
 * SEO_EDENIED when the cap is reached (nothing counted).
 */
int rt_db_psi_count_call(PGconn *pg, const char *day, const char *user_id,
			 int cap);

/* Takes a counted call back (a call refused for the service-wide quota). */
int rt_db_psi_uncount_call(PGconn *pg, const char *day, const char *user_id);

/* Counts an uncached upstream attempt of `day` unless `cap` were made;
 * SEO_EDENIED then. */
int rt_db_psi_count_attempt(PGconn *pg, const char *day, int cap);

/*
 * The cached result of `url` + `strategy` produced after `fresh_after_ms`
 * (Unix ms): *result (malloc'd JSON text, the caller frees it) and
 * *cached_at. SEO_ENOTFOUND when there is none.
 */
int rt_db_psi_cache_get(PGconn *pg, const char *url, const char *strategy,
			int64_t fresh_after_ms, char **result, int64_t *cached_at);

/*
 * Stores `result` (JSON text) for `url` + `strategy` as produced at
 * `now_ms`, unless another replica stored one after `fresh_after_ms`
 * meanwhile: that one is kept. *stored and *cached_at are what the cache
 * then holds (*stored malloc'd).
 */
int rt_db_psi_cache_put(PGconn *pg, const char *url, const char *strategy,
			const char *result, int64_t now_ms,
			int64_t fresh_after_ms, char **stored,
			int64_t *cached_at);

#endif

/*
 * seo/pg_pool.h: the one PostgreSQL connection pool (library seo_pg).
 *
 * At most `size` connections, opened lazily (a process starts and serves
 * what needs no database while the database is away), each running the
 * component's statement table (seo/pg_stmt.h), prepared per connection on
 * first use. A caller waits for a free connection at most `wait_ms`: a
 * stuck database or a leak shows as SEO_ETIMEDOUT, not as hung threads.
 * A connection given back broken or inside a transaction is closed and
 * its slot reconnects on next use.
 *
 * Thread-safe. Functions return 0 or a negative SEO_E* code; `err` (not
 * NULL) receives a lowercase message on failure, for logs only.
 */
#ifndef SEO_PG_POOL_H
#define SEO_PG_POOL_H

#include <stddef.h>

#include <libpq-fe.h>

#include "seo/pg.h"
#include "seo/pg_stmt.h"

/* How long a caller waits for a free connection unless told. */
#define SEO_PG_POOL_WAIT_MS 5000

typedef struct seo_pg_pool_opt {
	const char *url;              /* copied */
	int size;                     /* connections at most; < 1: 1 */
	int connect_timeout_s;        /* 0: libpq's (none) */
	int wait_ms;                  /* 0: SEO_PG_POOL_WAIT_MS */
	/* synchronous_commit off on each connection: for state whose loss in
	 * a crash is harmless (caches, counters), never for money. */
	int async_commit;
	const seo_pg_stmts *stmts;    /* the component's (static, not copied) */
	/* Applied once per process on the first connection made, when not
	 * NULL (static, not copied); `migrations_dir` is copied, and NULL
	 * makes every seo_pg_pool_get() fail with SEO_ENOTFOUND. */
	const seo_pg_set *migrations;
	const char *migrations_dir;
} seo_pg_pool_opt;

typedef struct seo_pg_pool seo_pg_pool;

/* A pool that does not connect yet. SEO_ENOMEM. Free with
 * seo_pg_pool_free(). */
int seo_pg_pool_new(const seo_pg_pool_opt *opt, seo_pg_pool **out);

/* Closes every connection; none may be lent. NULL is allowed. */
void seo_pg_pool_free(seo_pg_pool *p);

/*
 * Lends an idle connection, connecting (and migrating, see above) when its
 * slot has none or a broken one. SEO_ETIMEDOUT when none was free within
 * the wait, SEO_EDB when the database cannot be reached or the migrations
 * fail, SEO_ENOTFOUND when the migrations directory is missing. Give it
 * back with seo_pg_pool_put().
 */
int seo_pg_pool_get(seo_pg_pool *p, seo_pg_conn **out, char *err,
		    size_t err_len);

/* Takes `c` back; one left in a transaction or broken is closed. */
void seo_pg_pool_put(seo_pg_pool *p, seo_pg_conn *c);

/* Takes back the lent connection whose libpq handle is `pg` (a caller
 * that was handed only the handle); unknown handles are ignored. */
void seo_pg_pool_put_pg(seo_pg_pool *p, PGconn *pg);

/* 0 while the latest attempt to open a connection failed (the database
 * is down or unreachable), 1 otherwise: what tells a failure of the
 * database's availability from a failure of a statement. */
int seo_pg_pool_reachable(seo_pg_pool *p);

/*
 * Runs row `q` of the pool's table that is safe to repeat (a read) on a
 * pooled connection, once more on a fresh connection when the server had
 * dropped the first. *res as for seo_pg_exec().
 */
int seo_pg_pool_query(seo_pg_pool *p, int q, int nparams,
		      const char *const *params, PGresult **res, char *err,
		      size_t err_len);

/* Lends a connection with a transaction begun, reconnecting once when the
 * server had dropped it. The caller ends the transaction and puts it
 * back. */
int seo_pg_pool_begin(seo_pg_pool *p, seo_pg_conn **out, char *err,
		      size_t err_len);

#endif

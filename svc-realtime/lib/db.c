/*
 * svc-realtime's tables through the shared pool, statement table and
 * counter (db.h).
 */
#include "db.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "seo/errors.h"
#include "seo/log.h"

/* A database that does not answer must not hold a call for long. */
#define CONNECT_TIMEOUT_S 3
#define WAIT_MS 3000

static const char *const beside_exe[] = {
	"../../svc-realtime/migrations", "../share/seo/realtime-migrations", NULL};

const seo_pg_set rt_migrations = {"svc-realtime", "rt_",
				  SEO_CFG_REALTIME_MIGRATIONS_DIR, beside_exe};

const seo_pg_counter rt_db_user_calls = {"rt_psi_user_calls", "user_id", "calls"};
const seo_pg_counter rt_db_attempts = {"rt_psi_attempts", NULL, "attempts"};

enum { Q_CACHE_GET, Q_CACHE_PUT, Q__COUNT };

static const seo_pg_stmt rows[Q__COUNT] = {
	[Q_CACHE_GET] = {"cache_get",
		"SELECT result::text, cached_at FROM rt_psi_cache "
		"WHERE url = $1 AND strategy = $2 AND cached_at > $3::bigint"},
	/* A fresh row another replica stored meanwhile is kept: no row. */
	[Q_CACHE_PUT] = {"cache_put",
		"INSERT INTO rt_psi_cache AS k (url, strategy, result, cached_at) "
		"VALUES ($1, $2, $3::jsonb, $4::bigint) ON CONFLICT (url, strategy) "
		"DO UPDATE SET result = EXCLUDED.result, cached_at = EXCLUDED.cached_at "
		"WHERE k.cached_at <= $5::bigint "
		"RETURNING result::text, cached_at"},
};

static const seo_pg_stmts stmts = {"rt_", rows, Q__COUNT};

int rt_db_pool_new(const char *url, const char *migrations_dir, int size,
		   seo_pg_pool **out)
{
	seo_pg_pool_opt opt = {
		.url = url,
		.size = size,
		.connect_timeout_s = CONNECT_TIMEOUT_S,
		.wait_ms = WAIT_MS,
		.async_commit = 1,
		.stmts = &stmts,
		.migrations = &rt_migrations,
		.migrations_dir = migrations_dir,
	};

	return seo_pg_pool_new(&opt, out);
}

int rt_db_get(seo_pg_pool *pool, seo_pg_conn **out)
{
	char err[256];
	int rc = seo_pg_pool_get(pool, out, err, sizeof(err));

	if (rc == 0)
		return 0;
	log_warn("svc-realtime database: %s", err);
	return rc == SEO_ENOTFOUND ? rc : SEO_EDB;
}

int rt_db_count(seo_pg_conn *c, const seo_pg_counter *counter,
		const char *day, const char *key, int cap)
{
	char err[256];
	int rc = seo_pg_counter_add(c->pg, counter, day, key, cap, err, sizeof(err));

	if (rc == SEO_EDB)
		log_error("%s", err);
	return rc;
}

int rt_db_uncount(seo_pg_conn *c, const seo_pg_counter *counter,
		  const char *day, const char *key)
{
	char err[256];
	int rc = seo_pg_counter_undo(c->pg, counter, day, key, err, sizeof(err));

	if (rc != 0)
		log_error("%s", err);
	return rc;
}

/* Runs row `q`, logging a failure; *res as for seo_pg_exec(). */
static int exec(seo_pg_conn *c, int q, int n, const char *const *params,
		PGresult **res)
{
	char err[256];
	int rc = seo_pg_exec(c, q, n, params, res, err, sizeof(err));

	if (rc != 0) {
		log_error("%s", err);
		return SEO_EDB;
	}
	return 0;
}

/* The (result, cached_at) row of `r`, if any. */
static int take_row(PGresult *r, char **result, int64_t *cached_at)
{
	if (PQntuples(r) == 0)
		return SEO_ENOTFOUND;
	*result = strdup(PQgetvalue(r, 0, 0));
	if (*result == NULL)
		return SEO_ENOMEM;
	*cached_at = strtoll(PQgetvalue(r, 0, 1), NULL, 10);
	return 0;
}

int rt_db_psi_cache_get(seo_pg_conn *c, const char *url, const char *strategy,
			int64_t fresh_after_ms, char **result, int64_t *cached_at)
{
	char after[24];
	const char *params[] = {url, strategy, after};
	PGresult *r = NULL;
	int rc;

	*result = NULL;
	snprintf(after, sizeof(after), "%" PRId64, fresh_after_ms);
	rc = exec(c, Q_CACHE_GET, 3, params, &r);
	if (rc == 0)
		rc = take_row(r, result, cached_at);
	PQclear(r);
	return rc;
}

int rt_db_psi_cache_put(seo_pg_conn *c, const char *url, const char *strategy,
			const char *result, int64_t now_ms,
			int64_t fresh_after_ms, char **stored,
			int64_t *cached_at)
{
	char now[24], after[24];
	const char *params[] = {url, strategy, result, now, after};
	PGresult *r = NULL;
	int rc;

	*stored = NULL;
	snprintf(now, sizeof(now), "%" PRId64, now_ms);
	snprintf(after, sizeof(after), "%" PRId64, fresh_after_ms);
	rc = exec(c, Q_CACHE_PUT, 5, params, &r);
	if (rc == 0)
		rc = take_row(r, stored, cached_at);
	PQclear(r);
	if (rc == SEO_ENOTFOUND)
		rc = rt_db_psi_cache_get(c, url, strategy, fresh_after_ms,
					 stored, cached_at);
	/* Gone again between the two statements: it was ours to store. */
	if (rc == SEO_ENOTFOUND)
		rc = SEO_EDB;
	return rc;
}

/*
 * svc-realtime's connections and statements (db.h). Statements are sent
 * unprepared (PQexecParams): page-performance runs a handful per call,
 * beside an upstream run of seconds.
 */
#include "db.h"

#include <inttypes.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "seo/errors.h"
#include "seo/log.h"
#include "seo/pg.h"

/* A database that does not answer must not hold a call for long. */
#define CONNECT_TIMEOUT_S 3

struct rt_db {
	pthread_mutex_t mu;
	pthread_cond_t freed;
	PGconn **conns; /* one per slot; NULL until connected */
	int *lent;
	int size;
	char *url;
	char *migrations_dir;
	atomic_int migrated;
};

int rt_db_new(const char *url, const char *migrations_dir, int size,
	      rt_db **out)
{
	rt_db *db = calloc(1, sizeof(*db));

	*out = NULL;
	if (db == NULL)
		return SEO_ENOMEM;
	db->size = size > 0 ? size : 1;
	db->conns = calloc((size_t)db->size, sizeof(*db->conns));
	db->lent = calloc((size_t)db->size, sizeof(*db->lent));
	db->url = strdup(url);
	db->migrations_dir = migrations_dir != NULL ? strdup(migrations_dir) : NULL;
	if (db->conns == NULL || db->lent == NULL || db->url == NULL ||
	    (migrations_dir != NULL && db->migrations_dir == NULL)) {
		free(db->conns);
		free(db->lent);
		free(db->url);
		free(db->migrations_dir);
		free(db);
		return SEO_ENOMEM;
	}
	pthread_mutex_init(&db->mu, NULL);
	pthread_cond_init(&db->freed, NULL);
	*out = db;
	return 0;
}

void rt_db_free(rt_db *db)
{
	if (db == NULL)
		return;
	for (int i = 0; i < db->size; i++)
		PQfinish(db->conns[i]);
	pthread_mutex_destroy(&db->mu);
	pthread_cond_destroy(&db->freed);
	free(db->conns);
	free(db->lent);
	free(db->url);
	free(db->migrations_dir);
	free(db);
}

/* Applies the migrations on `pg` unless this process already did. */
static int migrate(rt_db *db, PGconn *pg)
{
	char err[256];
	int applied, rc;

	if (atomic_load(&db->migrated))
		return 0;
	if (db->migrations_dir == NULL) {
		log_error("svc-realtime migrations not found; set %s",
			  seo_pg_migrations_var(SEO_PG_REALTIME));
		return SEO_ENOTFOUND;
	}
	rc = seo_pg_migrate(pg, SEO_PG_REALTIME, db->migrations_dir, &applied,
			    err, sizeof(err));
	if (rc != 0) {
		log_error("svc-realtime migrations failed: %s", err);
		return SEO_EDB;
	}
	if (applied > 0)
		log_info("applied %d migrations from %s", applied,
			 db->migrations_dir);
	atomic_store(&db->migrated, 1);
	return 0;
}

static int no_sync(PGconn *pg)
{
	PGresult *r = PQexec(pg, "SET synchronous_commit TO off");
	int rc = PQresultStatus(r) == PGRES_COMMAND_OK ? 0 : SEO_EDB;

	if (rc != 0)
		log_error("svc-realtime database: %.*s",
			  (int)strcspn(PQerrorMessage(pg), "\n"), PQerrorMessage(pg));
	PQclear(r);
	return rc;
}

int rt_db_acquire(rt_db *db, PGconn **out)
{
	char err[256];
	PGconn *pg;
	int slot, rc;

	*out = NULL;
	pthread_mutex_lock(&db->mu);
	for (;;) {
		for (slot = 0; slot < db->size && db->lent[slot]; slot++)
			;
		if (slot < db->size)
			break;
		pthread_cond_wait(&db->freed, &db->mu);
	}
	db->lent[slot] = 1;
	pg = db->conns[slot];
	db->conns[slot] = NULL;
	pthread_mutex_unlock(&db->mu);

	/* Outside the lock: connecting may take up to its timeout. */
	if (pg == NULL || PQstatus(pg) != CONNECTION_OK) {
		PQfinish(pg);
		rc = seo_pg_connect(db->url, CONNECT_TIMEOUT_S, &pg, err,
				    sizeof(err));
		if (rc != 0)
			log_warn("svc-realtime database: %s", err);
		else
			rc = migrate(db, pg);
		/* No answer reports a count or a cache entry as durable: a
		 * crash may lose the last few, not worth an fsync per call. */
		if (rc == 0)
			rc = no_sync(pg);
		if (rc != 0) {
			PQfinish(pg);
			pthread_mutex_lock(&db->mu);
			db->lent[slot] = 0;
			pthread_cond_signal(&db->freed);
			pthread_mutex_unlock(&db->mu);
			return rc == SEO_ENOTFOUND ? rc : SEO_EDB;
		}
	}
	*out = pg;
	return 0;
}

void rt_db_release(rt_db *db, PGconn *pg)
{
	int slot;

	if (pg == NULL)
		return;
	if (PQstatus(pg) != CONNECTION_OK ||
	    PQtransactionStatus(pg) != PQTRANS_IDLE) {
		PQfinish(pg);
		pg = NULL;
	}
	pthread_mutex_lock(&db->mu);
	/* Any lent slot will do: slots only bound how many connections exist. */
	for (slot = 0; slot < db->size && !(db->lent[slot] && db->conns[slot] == NULL);
	     slot++)
		;
	if (slot < db->size) {
		db->conns[slot] = pg;
		db->lent[slot] = 0;
		pg = NULL;
	}
	pthread_cond_signal(&db->freed);
	pthread_mutex_unlock(&db->mu);
	PQfinish(pg);
}

/* ---- statements ------------------------------------------------------------- */

enum {
	Q_COUNT_CALL,
	Q_UNCOUNT_CALL,
	Q_COUNT_ATTEMPT,
	Q_CACHE_GET,
	Q_CACHE_PUT,
};

static const struct {
	const char *name;
	const char *sql;
} stmts[] = {
	/* The counters grow only below their cap, in one statement: no
	 * read-then-write race between replicas. No row: the cap. */
	[Q_COUNT_CALL] = {"count_call",
		"INSERT INTO rt_psi_user_calls AS c (day, user_id, calls) "
		"VALUES ($1::date, $2, 1) ON CONFLICT (day, user_id) "
		"DO UPDATE SET calls = c.calls + 1 WHERE c.calls < $3::integer "
		"RETURNING calls"},
	[Q_UNCOUNT_CALL] = {"uncount_call",
		"UPDATE rt_psi_user_calls SET calls = calls - 1 "
		"WHERE day = $1::date AND user_id = $2 AND calls > 0"},
	[Q_COUNT_ATTEMPT] = {"count_attempt",
		"INSERT INTO rt_psi_attempts AS a (day, attempts) "
		"VALUES ($1::date, 1) ON CONFLICT (day) "
		"DO UPDATE SET attempts = a.attempts + 1 WHERE a.attempts < $2::integer "
		"RETURNING attempts"},
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

/* Runs statement `q`; *res (NULL when the rows are not wanted) gets the
 * result, which the caller PQclear()s. */
static int exec(PGconn *pg, int q, int n, const char *const *params,
		PGresult **res)
{
	PGresult *r = PQexecParams(pg, stmts[q].sql, n, NULL, params, NULL,
				   NULL, 0);
	ExecStatusType st = PQresultStatus(r);

	if (st != PGRES_COMMAND_OK && st != PGRES_TUPLES_OK) {
		const char *msg = r != NULL ? PQresultErrorMessage(r)
					    : PQerrorMessage(pg);

		log_error("%s failed: %.*s", stmts[q].name,
			  (int)strcspn(msg, "\n"), msg);
		PQclear(r);
		return SEO_EDB;
	}
	if (res != NULL)
		*res = r;
	else
		PQclear(r);
	return 0;
}

/* Runs a conditional counter `q`: SEO_EDENIED when it returned no row. */
static int count(PGconn *pg, int q, int n, const char *const *params)
{
	PGresult *r = NULL;
	int rc = exec(pg, q, n, params, &r);

	if (rc == 0 && PQntuples(r) == 0)
		rc = SEO_EDENIED;
	PQclear(r);
	return rc;
}

int rt_db_psi_count_call(PGconn *pg, const char *day, const char *user_id,
			 int cap)
{
	char scap[16];
	const char *params[] = {day, user_id, scap};

	snprintf(scap, sizeof(scap), "%d", cap);
	return count(pg, Q_COUNT_CALL, 3, params);
}

int rt_db_psi_uncount_call(PGconn *pg, const char *day, const char *user_id)
{
	const char *params[] = {day, user_id};

	return exec(pg, Q_UNCOUNT_CALL, 2, params, NULL);
}

int rt_db_psi_count_attempt(PGconn *pg, const char *day, int cap)
{
	char scap[16];
	const char *params[] = {day, scap};

	snprintf(scap, sizeof(scap), "%d", cap);
	return count(pg, Q_COUNT_ATTEMPT, 2, params);
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

int rt_db_psi_cache_get(PGconn *pg, const char *url, const char *strategy,
			int64_t fresh_after_ms, char **result, int64_t *cached_at)
{
	char after[24];
	const char *params[] = {url, strategy, after};
	PGresult *r = NULL;
	int rc;

	*result = NULL;
	snprintf(after, sizeof(after), "%" PRId64, fresh_after_ms);
	rc = exec(pg, Q_CACHE_GET, 3, params, &r);
	if (rc == 0)
		rc = take_row(r, result, cached_at);
	PQclear(r);
	return rc;
}

int rt_db_psi_cache_put(PGconn *pg, const char *url, const char *strategy,
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
	rc = exec(pg, Q_CACHE_PUT, 5, params, &r);
	if (rc == 0)
		rc = take_row(r, stored, cached_at);
	PQclear(r);
	if (rc == SEO_ENOTFOUND)
		rc = rt_db_psi_cache_get(pg, url, strategy, fresh_after_ms,
					 stored, cached_at);
	/* Gone again between the two statements: it was ours to store. */
	if (rc == SEO_ENOTFOUND)
		rc = SEO_EDB;
	return rc;
}

/*
 * The capped daily counter (seo/pg_counter.h). The SQL is built from the
 * counter's table and columns; the statements run unprepared, a few per
 * call beside work that takes far longer.
 */
#include "seo/pg_counter.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "seo/errors.h"

#define SQL_MAX 512

/* Runs `sql`; *res (NULL when the rows are not wanted) gets the result. */
static int run(PGconn *pg, const seo_pg_counter *c, const char *sql, int n,
	       const char *const *params, PGresult **res, char *err,
	       size_t err_len)
{
	PGresult *r = PQexecParams(pg, sql, n, NULL, params, NULL, NULL, 0);
	ExecStatusType st = PQresultStatus(r);

	if (st != PGRES_COMMAND_OK && st != PGRES_TUPLES_OK) {
		const char *msg = r != NULL ? PQresultErrorMessage(r)
					    : PQerrorMessage(pg);

		snprintf(err, err_len, "%s failed: %.*s", c->table,
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

int seo_pg_counter_add(PGconn *pg, const seo_pg_counter *c, const char *day,
		       const char *key, int cap, char *err, size_t err_len)
{
	char sql[SQL_MAX], scap[16];
	const char *keyed[] = {day, scap, key}, *unkeyed[] = {day, scap};
	PGresult *r = NULL;
	int rc;

	snprintf(scap, sizeof(scap), "%d", cap);
	/* The count grows only below the cap; no row back: the cap. */
	if (c->key != NULL)
		snprintf(sql, sizeof(sql),
			 "INSERT INTO %s AS c (day, %s, %s) VALUES ($1::date, $3, 1) "
			 "ON CONFLICT (day, %s) DO UPDATE SET %s = c.%s + 1 "
			 "WHERE c.%s < $2::integer RETURNING %s",
			 c->table, c->key, c->count, c->key, c->count, c->count,
			 c->count, c->count);
	else
		snprintf(sql, sizeof(sql),
			 "INSERT INTO %s AS c (day, %s) VALUES ($1::date, 1) "
			 "ON CONFLICT (day) DO UPDATE SET %s = c.%s + 1 "
			 "WHERE c.%s < $2::integer RETURNING %s",
			 c->table, c->count, c->count, c->count, c->count,
			 c->count);
	rc = run(pg, c, sql, c->key != NULL ? 3 : 2,
		 c->key != NULL ? keyed : unkeyed, &r, err, err_len);
	if (rc == 0 && PQntuples(r) == 0)
		rc = SEO_EDENIED;
	PQclear(r);
	return rc;
}

int seo_pg_counter_undo(PGconn *pg, const seo_pg_counter *c, const char *day,
			const char *key, char *err, size_t err_len)
{
	char sql[SQL_MAX];
	const char *params[] = {day, key};

	if (c->key != NULL)
		snprintf(sql, sizeof(sql),
			 "UPDATE %s SET %s = %s - 1 WHERE day = $1::date "
			 "AND %s = $2 AND %s > 0",
			 c->table, c->count, c->count, c->key, c->count);
	else
		snprintf(sql, sizeof(sql),
			 "UPDATE %s SET %s = %s - 1 WHERE day = $1::date AND %s > 0",
			 c->table, c->count, c->count, c->count);
	return run(pg, c, sql, c->key != NULL ? 2 : 1, params, NULL, err,
		   err_len);
}

int seo_pg_counter_purge(PGconn *pg, const seo_pg_counter *c, int64_t at_ms,
			 int64_t *deleted, char *err, size_t err_len)
{
	char sql[SQL_MAX], at[24];
	const char *params[] = {at};
	PGresult *r = NULL;
	int rc;

	*deleted = 0;
	snprintf(at, sizeof(at), "%lld", (long long)at_ms);
	snprintf(sql, sizeof(sql),
		 "DELETE FROM %s WHERE day < (to_timestamp($1::bigint / 1000.0) "
		 "AT TIME ZONE 'UTC')::date", c->table);
	rc = run(pg, c, sql, 1, params, &r, err, err_len);
	if (rc == 0)
		*deleted = strtoll(PQcmdTuples(r), NULL, 10);
	PQclear(r);
	return rc;
}

/*
 * svc-agent's database: the pool, unprepared statements of each part's
 * table, transactions and ids (agent_int.h).
 */
#include "agent_int.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "seo/errors.h"
#include "seo/log.h"
#include "seo/util.h"

/* Random characters of an id: 24 url-safe ones are 144 bits. */
#define ID_RANDOM 24

static const char *const beside_exe[] = {
	"../../svc-agent/migrations", "../share/seo/agent-migrations", NULL};

const seo_pg_set agent_migrations = {"svc-agent", "agent_",
				     SEO_CFG_AGENT_MIGRATIONS_DIR, beside_exe};

int agent__db_get(agent_svc *s, seo_pg_conn **out)
{
	char err[256];
	int rc = seo_pg_pool_get(s->pool, out, err, sizeof(err));

	if (rc == 0)
		return 0;
	log_warn("svc-agent database: %s", err);
	return SEO_EDB;
}

void agent__db_put(agent_svc *s, seo_pg_conn *c)
{
	seo_pg_pool_put(s->pool, c);
}

int agent__db_exec(PGconn *pg, const seo_pg_stmts *t, int q, int n,
		   const char *const *params, PGresult **res)
{
	seo_pg_conn c = seo_pg_conn_of(pg, t, 1);
	char err[256];
	int rc = seo_pg_exec(&c, q, n, params, res, err, sizeof(err));

	if (rc == 0 || rc == SEO_EEXIST)
		return rc;
	log_error("svc-agent: %s", err);
	return SEO_EDB;
}

int agent__db_count_at(PGconn *pg, const seo_pg_stmts *t, int q, int64_t ms,
		       int64_t *done, char *err, size_t err_len)
{
	char at[24];
	const char *params[] = {at};
	PGresult *r = NULL;
	int rc;

	snprintf(at, sizeof(at), "%" PRId64, ms);
	rc = agent__db_exec(pg, t, q, 1, params, &r);
	if (rc == 0)
		*done = strtoll(PQcmdTuples(r), NULL, 10);
	else
		snprintf(err, err_len, "%s failed", t->rows[q].name);
	PQclear(r);
	return rc;
}

static int run(PGconn *pg, const char *sql)
{
	PGresult *r = PQexec(pg, sql);
	int ok = PQresultStatus(r) == PGRES_COMMAND_OK;

	if (!ok)
		log_error("svc-agent: %s failed: %s", sql, PQerrorMessage(pg));
	PQclear(r);
	return ok ? 0 : SEO_EDB;
}

int agent__db_begin(PGconn *pg)
{
	return run(pg, "BEGIN");
}

int agent__db_commit(PGconn *pg)
{
	return run(pg, "COMMIT");
}

void agent__db_rollback(PGconn *pg)
{
	PQclear(PQexec(pg, "ROLLBACK"));
}

char *agent__new_id(seo_arena *arena, const char *prefix)
{
	size_t plen = strlen(prefix);
	char *id = seo_arena_alloc(arena, plen + ID_RANDOM + 1);

	if (id == NULL)
		return NULL;
	memcpy(id, prefix, plen);
	if (seo_random_string(id + plen, ID_RANDOM, SEO_URLSAFE) != 0)
		return NULL;
	return id;
}

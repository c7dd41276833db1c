/*
 * IndexNow keys: one per workspace and host, made once and never rotated,
 * with the time their hosted file was last confirmed (indexnow.h,
 * indexnow_int.h).
 */
#include "indexnow_int.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "seo/errors.h"
#include "seo/util.h"

#define KEY_CHARS 32

enum { Q_GET, Q_INSERT, Q_VERIFIED, Q_FORGET, Q__COUNT };

static const seo_pg_stmt rows[Q__COUNT] = {
	[Q_GET] = {"get",
		"SELECT key, verified_at FROM agent_indexnow_keys "
		"WHERE workspace_id = $1 AND host = $2"},
	/* A concurrent first call loses the race quietly and reads the
	 * winner's key. */
	[Q_INSERT] = {"insert",
		"INSERT INTO agent_indexnow_keys (workspace_id, host, key, "
		"created_at) VALUES ($1, $2, $3, $4::bigint) "
		"ON CONFLICT (workspace_id, host) DO NOTHING RETURNING key"},
	[Q_VERIFIED] = {"verified",
		"UPDATE agent_indexnow_keys SET verified_at = $4::bigint "
		"WHERE workspace_id = $1 AND host = $2 AND key = $3"},
	[Q_FORGET] = {"forget",
		"UPDATE agent_indexnow_keys SET verified_at = NULL "
		"WHERE workspace_id = $1 AND host = $2"},
};

static const seo_pg_stmts stmts = {"agent_inow_key_", rows, Q__COUNT};

/* Fills *out from `key` and the last confirmation (NULL: none). */
static int fill(const char *host, const char *key, const char *verified_at,
		int64_t now_ms, seo_arena *a, agent_inow_key *out)
{
	out->host = seo_arena_strdup(a, host);
	out->key = seo_arena_strdup(a, key);
	out->key_location = seo_arena_printf(a, "https://%s/%s.txt", host, key);
	out->verified = verified_at != NULL &&
			now_ms - strtoll(verified_at, NULL, 10) < AGENT_INOW_VERIFIED_MS;
	return out->host == NULL || out->key == NULL || out->key_location == NULL
		       ? SEO_ENOMEM : 0;
}

int agent_indexnow_key_get(PGconn *pg, const char *workspace_id,
			   const char *host, int64_t now_ms, seo_arena *a,
			   agent_inow_key *out)
{
	const char *params[] = {workspace_id, host};
	PGresult *r = NULL;
	int rc;

	rc = agent__db_exec(pg, &stmts, Q_GET, 2, params, &r);
	if (rc == 0 && PQntuples(r) == 0)
		rc = SEO_ENOTFOUND;
	if (rc == 0 && out != NULL)
		rc = fill(host, PQgetvalue(r, 0, 0),
			  PQgetisnull(r, 0, 1) ? NULL : PQgetvalue(r, 0, 1),
			  now_ms, a, out);
	PQclear(r);
	return rc;
}

int agent__inow_key_ensure(PGconn *pg, const char *workspace_id,
			   const char *host, int64_t now_ms, seo_arena *a,
			   agent_inow_key *out, int *created)
{
	char key[KEY_CHARS + 1], at[24];
	const char *params[] = {workspace_id, host, key, at};
	PGresult *r = NULL;
	int rc;

	*created = 0;
	rc = agent_indexnow_key_get(pg, workspace_id, host, now_ms, a, out);
	if (rc != SEO_ENOTFOUND)
		return rc;
	if (seo_random_string(key, KEY_CHARS, "0123456789abcdef") != 0)
		return SEO_EIO;
	snprintf(at, sizeof(at), "%" PRId64, now_ms);
	rc = agent__db_exec(pg, &stmts, Q_INSERT, 4, params, &r);
	if (rc == 0)
		*created = PQntuples(r) == 1;
	PQclear(r);
	if (rc != 0)
		return rc;
	if (*created)
		return fill(host, key, NULL, now_ms, a, out);
	return agent_indexnow_key_get(pg, workspace_id, host, now_ms, a, out);
}

int agent__inow_key_verified(PGconn *pg, const char *workspace_id,
			     const char *host, const char *key, int64_t at_ms)
{
	char at[24];
	const char *params[] = {workspace_id, host, key, at};

	snprintf(at, sizeof(at), "%" PRId64, at_ms);
	return agent__db_exec(pg, &stmts, Q_VERIFIED, 4, params, NULL);
}

int agent__inow_key_forget(PGconn *pg, const char *workspace_id,
			   const char *host)
{
	const char *params[] = {workspace_id, host};

	return agent__db_exec(pg, &stmts, Q_FORGET, 2, params, NULL);
}

/*
 * test_pgdb.c: a scratch database per test program (see test_pgdb.h).
 */
#include "test_pgdb.h"

#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include <libpq-fe.h>

static void quiet(void *arg, const char *message)
{
	(void)arg;
	(void)message;
}

/* Runs `fmt` with the database's name in it on the admin connection. */
static int admin_sql(const test_pgdb *t, const char *fmt)
{
	PGconn *admin = PQconnectdb(t->admin_url);
	char sql[256];
	PGresult *r;
	int ok;

	/* "does not exist, skipping" is expected */
	PQsetNoticeProcessor(admin, quiet, NULL);
	snprintf(sql, sizeof(sql), fmt, t->name);
	r = PQexec(admin, sql);
	ok = PQresultStatus(r) == PGRES_COMMAND_OK;
	if (!ok)
		fprintf(stderr, "%s: %s", sql, PQerrorMessage(admin));
	PQclear(r);
	PQfinish(admin);
	return ok ? 0 : -1;
}

/* The admin connection's settings, quoted, then our database's name. */
static int build_url(test_pgdb *t)
{
	static const char *const keep[] = {"host", "hostaddr", "port", "user",
					   "password", "sslmode"};
	PGconn *admin = PQconnectdb(t->admin_url);
	PQconninfoOption *opts = NULL;
	size_t len = 0, cap = sizeof(t->url);
	int rc = -1;

	if (PQstatus(admin) != CONNECTION_OK) {
		fprintf(stderr, "%s", PQerrorMessage(admin));
		goto out;
	}
	opts = PQconninfo(admin);
	if (opts == NULL)
		goto out;
	for (PQconninfoOption *o = opts; o->keyword != NULL; o++)
		for (size_t i = 0; i < sizeof(keep) / sizeof(keep[0]); i++) {
			if (strcmp(o->keyword, keep[i]) != 0 || o->val == NULL ||
			    o->val[0] == '\0')
				continue;
			len += (size_t)snprintf(t->url + len, cap - len, "%s='",
						o->keyword);
			for (const char *p = o->val; *p && len < cap - 4; p++) {
				if (*p == '\'' || *p == '\\')
					t->url[len++] = '\\';
				t->url[len++] = *p;
			}
			len += (size_t)snprintf(t->url + len, cap - len, "' ");
		}
	snprintf(t->url + len, cap - len, "dbname='%s'", t->name);
	rc = 0;
out:
	PQconninfoFree(opts);
	PQfinish(admin);
	return rc;
}

int test_pgdb_create(test_pgdb *t, const char *admin_url, const char *prefix)
{
	snprintf(t->admin_url, sizeof(t->admin_url), "%s", admin_url);
	snprintf(t->name, sizeof(t->name), "%s_%d", prefix, (int)getpid());
	if (admin_sql(t, "DROP DATABASE IF EXISTS %s WITH (FORCE)") != 0 ||
	    admin_sql(t, "CREATE DATABASE %s") != 0)
		return -1;
	return build_url(t);
}

int test_pgdb_drop(test_pgdb *t)
{
	return admin_sql(t, "DROP DATABASE IF EXISTS %s WITH (FORCE)");
}

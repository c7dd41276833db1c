/*
 * The PostgreSQL helpers every component shares: the connection string,
 * connecting, and the migrations runner (files applied once each, in name
 * order, recorded in schema_migrations by their name without ".sql").
 */
#include "seo/pg.h"

#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "seo/config.h"
#include "seo/errors.h"
#include "seo/log.h"
#include "seo/util.h"

/* The cluster ./seo starts under var/pg when SEO_PG_URL is unset. */
#define LOCAL_PG_URL "postgresql://seo@127.0.0.1:55432/seo"

#define MIGRATION_MAX_BYTES (8 * 1024 * 1024)

/* One lock for every migrator of the database ("seomig" in ASCII). */
#define MIGRATE_LOCK "SELECT pg_advisory_xact_lock(126879498332519)"

static int fail(char *err, size_t err_len, int rc, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));

static int fail(char *err, size_t err_len, int rc, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(err, err_len, fmt, ap);
	va_end(ap);
	return rc;
}

/* The first line of a libpq message: the error itself, on one log line. */
static int pq_fail(char *err, size_t err_len, const char *what, const char *msg)
{
	return fail(err, err_len, SEO_EDB, "%s failed: %.*s", what,
		    (int)strcspn(msg, "\n"), msg);
}

const char *seo_pg_url(void)
{
	const char *url = seo_config(SEO_CFG_PG_URL);

	return *url != '\0' ? url : LOCAL_PG_URL;
}

/* Server notices go to our log as one JSON line, not raw to stderr. */
static void notice_to_log(void *arg, const char *message)
{
	(void)arg;
	log_info("postgresql: %.*s", (int)strcspn(message, "\n"), message);
}

/* Runs a statement without parameters or rows. */
static int exec_plain(PGconn *pg, const char *sql, char *err, size_t err_len)
{
	PGresult *r = PQexec(pg, sql);
	int rc = 0;

	if (PQresultStatus(r) != PGRES_COMMAND_OK &&
	    PQresultStatus(r) != PGRES_TUPLES_OK)
		rc = pq_fail(err, err_len, sql,
			     r != NULL ? PQresultErrorMessage(r) : PQerrorMessage(pg));
	PQclear(r);
	return rc;
}

int seo_pg_connect(const char *url, int timeout_s, PGconn **out, char *err,
		   size_t err_len)
{
	/* The URL is expanded as the dbname; the timeout is added to it. */
	const char *keys[] = {"dbname", "connect_timeout", NULL};
	char timeout[16];
	const char *values[] = {url, timeout, NULL};
	PGconn *pg;
	int rc;

	*out = NULL;
	snprintf(timeout, sizeof(timeout), "%d", timeout_s > 0 ? timeout_s : 0);
	if (timeout_s <= 0)
		keys[1] = NULL;
	pg = PQconnectdbParams(keys, values, 1);
	if (pg == NULL)
		return fail(err, err_len, SEO_ENOMEM, "out of memory");
	if (PQstatus(pg) != CONNECTION_OK) {
		rc = pq_fail(err, err_len, "connection", PQerrorMessage(pg));
		PQfinish(pg);
		return rc;
	}
	PQsetNoticeProcessor(pg, notice_to_log, NULL);
	rc = exec_plain(pg, "SET synchronous_commit TO on", err, err_len);
	if (rc != 0) {
		PQfinish(pg);
		return rc;
	}
	*out = pg;
	return 0;
}

/* ---- migrations ---------------------------------------------------------- */

/* PREFIX, three digits, '_', a name, ".sql". */
static int is_migration(const char *name, const char *prefix)
{
	size_t n = strlen(name), p = strlen(prefix);

	return n > p + 8 && strncmp(name, prefix, p) == 0 &&
	       strspn(name + p, "0123456789") == 3 && name[p + 3] == '_' &&
	       strcmp(name + n - 4, ".sql") == 0;
}

static int is_sql(const struct dirent *d)
{
	size_t n = strlen(d->d_name);

	return n > 4 && strcmp(d->d_name + n - 4, ".sql") == 0;
}

static int read_file(const char *path, char **out, char *err, size_t err_len)
{
	FILE *f = fopen(path, "rb");
	char *buf = NULL;
	size_t n;
	int rc = 0;

	*out = NULL;
	if (f == NULL)
		return fail(err, err_len, SEO_EIO, "could not open \"%s\": %s",
			    path, strerror(errno));
	buf = malloc(MIGRATION_MAX_BYTES + 1);
	if (buf == NULL) {
		rc = fail(err, err_len, SEO_ENOMEM, "out of memory");
		goto out;
	}
	n = fread(buf, 1, MIGRATION_MAX_BYTES + 1, f);
	if (ferror(f)) {
		rc = fail(err, err_len, SEO_EIO, "could not read \"%s\": %s",
			  path, strerror(errno));
		goto out;
	}
	if (n > MIGRATION_MAX_BYTES) {
		rc = fail(err, err_len, SEO_ETOOBIG,
			  "\"%s\" is larger than %d bytes", path,
			  MIGRATION_MAX_BYTES);
		goto out;
	}
	buf[n] = '\0';
	*out = buf;
	buf = NULL;
out:
	free(buf);
	fclose(f);
	return rc;
}

/* Runs `sql` with text parameters; *res (may be NULL) gets the rows. */
static int exec_params(PGconn *pg, const char *sql, int n,
		       const char *const *params, PGresult **res, char *err,
		       size_t err_len)
{
	PGresult *r = PQexecParams(pg, sql, n, NULL, params, NULL, NULL, 0);
	int rc = 0;

	if (PQresultStatus(r) != PGRES_COMMAND_OK &&
	    PQresultStatus(r) != PGRES_TUPLES_OK)
		rc = pq_fail(err, err_len, sql,
			     r != NULL ? PQresultErrorMessage(r) : PQerrorMessage(pg));
	if (rc == 0 && res != NULL) {
		*res = r;
		return 0;
	}
	PQclear(r);
	return rc;
}

/* Applies one file unless recorded; *did is 1 when this call applied it. */
static int apply_one(PGconn *pg, const char *version, const char *sql,
		     int *did, char *err, size_t err_len)
{
	PGresult *r = NULL;
	char now[24];
	const char *params[2] = {version, now};
	ExecStatusType st;
	int rc;

	*did = 0;
	rc = exec_plain(pg, "BEGIN", err, err_len);
	if (rc != 0)
		return rc;
	/* "IF NOT EXISTS" notices would reach a CLI's stderr. */
	rc = exec_plain(pg, "SET LOCAL client_min_messages TO warning", err,
			err_len);
	if (rc == 0)
		rc = exec_plain(pg, MIGRATE_LOCK, err, err_len);
	/* Under the lock, so that two first starters cannot both create it. */
	if (rc == 0)
		rc = exec_plain(pg, "CREATE TABLE IF NOT EXISTS schema_migrations ("
				"version text PRIMARY KEY, applied_at bigint NOT NULL)",
				err, err_len);
	if (rc == 0)
		rc = exec_params(pg, "SELECT 1 FROM schema_migrations WHERE version = $1",
				 1, params, &r, err, err_len);
	if (rc != 0 || PQntuples(r) > 0)
		goto out;
	PQclear(r);
	/* The file may hold many statements: the simple protocol runs them
	 * all inside our transaction. */
	r = PQexec(pg, sql);
	st = PQresultStatus(r);
	if (st != PGRES_COMMAND_OK && st != PGRES_TUPLES_OK &&
	    st != PGRES_EMPTY_QUERY) {
		rc = pq_fail(err, err_len, version,
			     r != NULL ? PQresultErrorMessage(r) : PQerrorMessage(pg));
		goto out;
	}
	snprintf(now, sizeof(now), "%lld", (long long)seo_now_ms());
	rc = exec_params(pg, "INSERT INTO schema_migrations (version, applied_at) "
			 "VALUES ($1, $2)", 2, params, NULL, err, err_len);
	if (rc == 0)
		*did = 1;
out:
	PQclear(r);
	if (rc == 0)
		return exec_plain(pg, "COMMIT", err, err_len);
	PQclear(PQexec(pg, "ROLLBACK"));
	return rc;
}

int seo_pg_migrate(PGconn *db, const seo_pg_set *set, const char *dir,
		   int *applied, char *err, size_t err_len)
{
	struct dirent **names = NULL;
	int n, rc = 0;

	*applied = 0;
	n = scandir(dir, &names, is_sql, alphasort);
	if (n < 0)
		return fail(err, err_len, SEO_ENOTFOUND,
			    "could not read migrations directory \"%s\": %s", dir,
			    strerror(errno));
	for (int i = 0; i < n && rc == 0; i++) {
		const char *name = names[i]->d_name;
		char path[PATH_MAX], version[256];
		char *sql = NULL;
		int did;

		if (!is_migration(name, set->prefix))
			continue;
		if ((size_t)snprintf(path, sizeof(path), "%s/%s", dir, name) >=
			    sizeof(path) ||
		    (size_t)snprintf(version, sizeof(version), "%.*s",
				     (int)(strlen(name) - 4), name) >= sizeof(version)) {
			rc = fail(err, err_len, SEO_ETOOBIG,
				  "migration path too long: %s", name);
			break;
		}
		rc = read_file(path, &sql, err, err_len);
		if (rc == 0)
			rc = apply_one(db, version, sql, &did, err, err_len);
		if (rc == 0)
			*applied += did;
		free(sql);
	}
	for (int i = 0; i < n; i++)
		free(names[i]);
	free(names);
	return rc;
}

int seo_pg_migrations_dir(const seo_pg_set *set, char *out, size_t n)
{
	return seo_data_path(seo_config(set->var), set->beside_exe, out, n);
}

const char *seo_pg_migrations_var(const seo_pg_set *set)
{
	return seo_config_def(set->var)->name;
}

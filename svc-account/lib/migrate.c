/*
 * The migrations runner: NNN_name.sql files applied once each, in name
 * order, recorded in schema_migrations by their name without ".sql".
 */
#include "acct_int.h"

#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "seo/config.h"
#include "seo/errors.h"
#include "seo/util.h"

#define MIGRATION_MAX_BYTES (8 * 1024 * 1024)

/* Where the migrations are, relative to the executable's directory. */
static const char *const exe_relative[] = {
	"../../svc-account/migrations", /* build/bin, build-asan/bin, build/tests */
	"../share/seo/migrations",      /* an installed tree */
};

static int is_migration(const struct dirent *d)
{
	size_t n = strlen(d->d_name);

	return n > 8 && strspn(d->d_name, "0123456789") == 3 &&
	       d->d_name[3] == '_' && strcmp(d->d_name + n - 4, ".sql") == 0;
}

static int read_file(const char *path, char **out, acct_err *err)
{
	FILE *f = fopen(path, "rb");
	char *buf = NULL;
	size_t n;
	int rc = 0;

	*out = NULL;
	if (f == NULL)
		return acct__fail(err, SEO_EIO, "internal_error",
				  "could not open \"%s\": %s", path, strerror(errno));
	buf = malloc(MIGRATION_MAX_BYTES + 1);
	if (buf == NULL) {
		rc = acct__fail(err, SEO_ENOMEM, "internal_error", "out of memory");
		goto out;
	}
	n = fread(buf, 1, MIGRATION_MAX_BYTES + 1, f);
	if (ferror(f)) {
		rc = acct__fail(err, SEO_EIO, "internal_error",
				"could not read \"%s\": %s", path, strerror(errno));
		goto out;
	}
	if (n > MIGRATION_MAX_BYTES) {
		rc = acct__fail(err, SEO_ETOOBIG, "internal_error",
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

/* Applies one file unless recorded; *did is 1 when this call applied it. */
static int apply_one(acct__conn *c, const char *version, const char *sql,
		     int *did, acct_err *err)
{
	PGresult *r = NULL;
	char now[24];
	const char *params[2] = {version, now};
	ExecStatusType st;
	int rc;

	*did = 0;
	rc = acct__begin(c, err);
	if (rc != 0)
		return rc;
	rc = acct__exec(c, ACCT_Q_MIGRATE_QUIET, 0, NULL, NULL, err);
	if (rc == 0)
		rc = acct__exec(c, ACCT_Q_MIGRATE_LOCK, 0, NULL, NULL, err);
	/* Under the lock, so that two first starters cannot both create it. */
	if (rc == 0)
		rc = acct__exec(c, ACCT_Q_MIGRATE_TABLE, 0, NULL, NULL, err);
	if (rc == 0)
		rc = acct__exec(c, ACCT_Q_MIGRATE_APPLIED, 1, params, &r, err);
	if (rc != 0 || PQntuples(r) > 0)
		goto out;
	PQclear(r);
	/* The file may hold many statements: the simple protocol runs them
	 * all inside our transaction. */
	r = PQexec(c->pg, sql);
	st = PQresultStatus(r);
	if (st != PGRES_COMMAND_OK && st != PGRES_TUPLES_OK &&
	    st != PGRES_EMPTY_QUERY) {
		rc = acct__db_fail(err, version, PQresultErrorMessage(r));
		goto out;
	}
	snprintf(now, sizeof(now), "%lld", (long long)seo_now_ms());
	rc = acct__exec(c, ACCT_Q_MIGRATE_RECORD, 2, params, NULL, err);
	if (rc == 0)
		*did = 1;
out:
	PQclear(r);
	if (rc == 0)
		return acct__commit(c, err);
	acct__rollback(c);
	return rc;
}

int acct_migrate(PGconn *db, const char *dir, int *applied, acct_err *err)
{
	acct__conn c = {.pg = db, .oneshot = 1};
	struct dirent **names = NULL;
	int n, rc = 0;

	*applied = 0;
	n = scandir(dir, &names, is_migration, alphasort);
	if (n < 0)
		return acct__fail(err, SEO_ENOTFOUND, "internal_error",
				  "could not read migrations directory \"%s\": %s",
				  dir, strerror(errno));
	for (int i = 0; i < n && rc == 0; i++) {
		char path[PATH_MAX], version[256];
		char *sql = NULL;
		int did;

		snprintf(path, sizeof(path), "%s/%s", dir, names[i]->d_name);
		snprintf(version, sizeof(version), "%.*s",
			 (int)(strlen(names[i]->d_name) - 4), names[i]->d_name);
		rc = read_file(path, &sql, err);
		if (rc == 0)
			rc = apply_one(&c, version, sql, &did, err);
		if (rc == 0)
			*applied += did;
		free(sql);
	}
	for (int i = 0; i < n; i++)
		free(names[i]);
	free(names);
	return rc;
}

static int is_dir(const char *path)
{
	struct stat st;

	return stat(path, &st) == 0 && S_ISDIR(st.st_mode);
}

int acct_migrations_dir(char *out, size_t n)
{
	const char *env = seo_config(SEO_CFG_MIGRATIONS_DIR);
	char exe[PATH_MAX];
	ssize_t len;
	char *slash;

	if (env != NULL && env[0] != '\0')
		return (size_t)snprintf(out, n, "%s", env) < n ? 0 : SEO_ETOOBIG;
	len = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	if (len < 0)
		return SEO_ENOTFOUND;
	exe[len] = '\0';
	slash = strrchr(exe, '/');
	if (slash != NULL)
		*slash = '\0';
	for (size_t i = 0; i < sizeof(exe_relative) / sizeof(exe_relative[0]); i++)
		if ((size_t)snprintf(out, n, "%s/%s", exe, exe_relative[i]) < n &&
		    is_dir(out))
			return 0;
	return SEO_ENOTFOUND;
}

/*
 * seo/pg.h: what every PostgreSQL user of the project shares (library
 * seo_pg, over libpq): the connection string, connecting with our session
 * settings, and the migrations runner.
 *
 * Each component owns its tables and declares its migration set (a
 * seo_pg_set: its name, its file prefix, the variable naming its
 * directory and where the directory is beside the executable); all sets
 * record applied files in one schema_migrations(version, applied_at)
 * table, by file name without ".sql", so the prefixes of different
 * components must differ.
 *
 * Functions return 0 or a negative SEO_E* code; where `err` is passed (it
 * may not be NULL) it receives a lowercase message on failure, which may
 * carry the server's detail and is for logs, never for API clients.
 */
#ifndef SEO_PG_H
#define SEO_PG_H

#include <stddef.h>

#include <libpq-fe.h>

#include "seo/config.h"

/* SEO_PG_URL, else the local cluster of ./seo. Static or the
 * environment's; never NULL. */
const char *seo_pg_url(void);

/*
 * Connects to `url`, giving up after `timeout_s` seconds (0: libpq's
 * default, no limit), routes server notices to our log and sets
 * synchronous_commit on, so that no answer precedes the durability of
 * what it reports. The caller PQfinish()es *out. SEO_EDB when the server
 * cannot be reached or refuses.
 */
int seo_pg_connect(const char *url, int timeout_s, PGconn **out, char *err,
		   size_t err_len);

/*
 * A component's migrations, declared by the component (static data it
 * owns). Its files are PREFIX + three digits + "_" + name + ".sql".
 */
typedef struct seo_pg_set {
	const char *name;   /* the owner, for messages ("svc-<name>") */
	const char *prefix; /* before the digits ("ex_"); may be "" */
	seo_cfg var;        /* the variable naming the directory */
	/* NULL-terminated paths relative to the executable's directory, tried
	 * in order: the source tree (build/bin, build/tests), then an
	 * installed tree (../share/seo/...). */
	const char *const *beside_exe;
} seo_pg_set;

/*
 * Applies the files of `set` found in `dir` not yet recorded in
 * schema_migrations, in name order, each in its own transaction under one
 * transaction-level advisory lock shared by every migrator, so that
 * concurrent starters apply each file once. Files must not contain
 * transaction control. *applied counts the files this call applied. `db`
 * must be idle.
 */
int seo_pg_migrate(PGconn *db, const seo_pg_set *set, const char *dir,
		   int *applied, char *err, size_t err_len);

/*
 * Finds the directory of `set` into `out` (`n` bytes): its variable when
 * set, else the first of its `beside_exe` paths that exists. SEO_ENOTFOUND
 * when none exists, SEO_ETOOBIG when `out` is too small.
 */
int seo_pg_migrations_dir(const seo_pg_set *set, char *out, size_t n);

/* The variable naming the directory of `set` ("SEO_MIGRATIONS_DIR"), for
 * messages. */
const char *seo_pg_migrations_var(const seo_pg_set *set);

#endif

/*
 * seo/pg.h: what every PostgreSQL user of the project shares (library
 * seo_pg, over libpq): the connection string, connecting with our session
 * settings, and the migrations runner.
 *
 * Each service owns its tables and its migrations directory; all of them
 * record applied files in one schema_migrations(version, applied_at)
 * table, by file name without ".sql", so file names of different
 * components must differ: svc-account's are NNN_name.sql, svc-realtime's
 * rt_NNN_name.sql.
 *
 * Functions return 0 or a negative SEO_E* code; where `err` is passed (it
 * may not be NULL) it receives a lowercase message on failure, which may
 * carry the server's detail and is for logs, never for API clients.
 */
#ifndef SEO_PG_H
#define SEO_PG_H

#include <stddef.h>

#include <libpq-fe.h>

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

/* The migration sets, one per component owning tables. */
typedef enum seo_pg_set {
	SEO_PG_ACCOUNT,  /* svc-account/migrations: NNN_name.sql */
	SEO_PG_REALTIME, /* svc-realtime/migrations: rt_NNN_name.sql */
	SEO__PG_SET_COUNT
} seo_pg_set;

/*
 * Applies the files of `set` found in `dir` (PREFIX + three digits + "_"
 * + name + ".sql") not yet recorded in schema_migrations, in name order,
 * each in its own transaction under one transaction-level advisory lock
 * shared by every migrator, so that concurrent starters apply each file
 * once. Files must not contain transaction control. *applied counts the
 * files this call applied. `db` must be idle.
 */
int seo_pg_migrate(PGconn *db, seo_pg_set set, const char *dir, int *applied,
		   char *err, size_t err_len);

/*
 * Finds the directory of `set` into `out` (`n` bytes): its variable
 * (SEO_MIGRATIONS_DIR, SEO_REALTIME_MIGRATIONS_DIR), else relative to the
 * running executable: <exe dir>/../../<component>/migrations (build/bin,
 * build-asan/bin, build/tests) or <exe dir>/../share/seo/<name> (an
 * installed tree: migrations, realtime-migrations). SEO_ENOTFOUND when
 * none exists, SEO_ETOOBIG when `out` is too small.
 */
int seo_pg_migrations_dir(seo_pg_set set, char *out, size_t n);

/* The variable naming the directory of `set` ("SEO_MIGRATIONS_DIR"), for
 * messages. */
const char *seo_pg_migrations_var(seo_pg_set set);

#endif

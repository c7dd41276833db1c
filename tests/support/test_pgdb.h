/*
 * test_pgdb.h: a scratch database for the unit tests that need
 * PostgreSQL, on the server named by SEO_TEST_PG_URL (linked into each;
 * test_pgdb.c). Each test program makes its own, named after its pid, so
 * that programs can run in parallel.
 */
#ifndef TEST_PGDB_H
#define TEST_PGDB_H

typedef struct test_pgdb {
	char admin_url[1024]; /* SEO_TEST_PG_URL */
	char name[64];        /* "<prefix>_<pid>" */
	char url[1536];       /* conninfo of the scratch database */
} test_pgdb;

/*
 * Drops any database left under the same name, creates it afresh and fills
 * t->url with the admin connection's host, port, user, password and SSL
 * mode plus the new database's name. Returns 0, or -1 after printing why
 * to stderr.
 */
int test_pgdb_create(test_pgdb *t, const char *admin_url, const char *prefix);

/* Drops the database, closing its sessions. Returns 0 or -1. */
int test_pgdb_drop(test_pgdb *t);

#endif

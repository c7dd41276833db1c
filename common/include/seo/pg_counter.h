/*
 * seo/pg_counter.h: the capped daily counter (library seo_pg): how many
 * times something happened on a UTC day, per key or for the whole
 * service, never above a cap, shared by every replica through one
 * conditional upsert (no read-then-write race).
 *
 * The table belongs to the component that counts (its migrations create
 * it) and has this shape:
 *
 *   CREATE TABLE <table> (day date NOT NULL, [<key> text NOT NULL,]
 *       <count> integer NOT NULL CHECK (<count> >= 0),
 *       PRIMARY KEY (day[, <key>]));
 *
 * Functions return 0 or a negative SEO_E* code; `err` (not NULL) receives
 * "<table> failed: <server message>" on a database failure (SEO_EDB), for
 * logs only.
 */
#ifndef SEO_PG_COUNTER_H
#define SEO_PG_COUNTER_H

#include <stddef.h>
#include <stdint.h>

#include <libpq-fe.h>

/* A counter's table and columns: static data of the component, trusted
 * SQL identifiers. */
typedef struct seo_pg_counter {
	const char *table;
	const char *key;   /* the key column; NULL: one count per day */
	const char *count; /* the count column */
} seo_pg_counter;

/*
 * Counts one on `day` ("YYYY-MM-DD") for `key` (ignored when the counter
 * has no key column) unless `cap` were counted already: SEO_EDENIED then,
 * and nothing is counted.
 */
int seo_pg_counter_add(PGconn *pg, const seo_pg_counter *c, const char *day,
		       const char *key, int cap, char *err, size_t err_len);

/* Takes one back (a call refused after it was counted); a count at 0 or
 * absent stays so. */
int seo_pg_counter_undo(PGconn *pg, const seo_pg_counter *c, const char *day,
			const char *key, char *err, size_t err_len);

/* Deletes the rows of UTC days before the one holding `at_ms` (Unix ms);
 * *deleted counts them (for a retention job). */
int seo_pg_counter_purge(PGconn *pg, const seo_pg_counter *c, int64_t at_ms,
			 int64_t *deleted, char *err, size_t err_len);

#endif

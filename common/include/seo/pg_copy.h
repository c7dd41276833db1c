/*
 * seo/pg_copy.h: rows for COPY ... FROM STDIN in PostgreSQL's text format
 * (library seo_pg), built in one growing buffer and sent with
 * seo_pg_copy() (seo/pg_stmt.h).
 *
 * Fields are separated by a tab, rows end with a newline, SQL NULL is
 * \N, and a value's backslash, tab, newline and carriage return are
 * written as \\, \t, \n and \r; every other byte stands for itself. The
 * writer owns `data`; seo_copy_free() frees it. Out of memory is sticky:
 * the adds after it do nothing and `oom` stays 1.
 */
#ifndef SEO_PG_COPY_H
#define SEO_PG_COPY_H

#include <stddef.h>
#include <stdint.h>

typedef struct seo_copy {
	char *data;
	size_t len, cap;
	int at_row_start;
	int oom;
} seo_copy;

void seo_copy_init(seo_copy *w);

/* A text field; NULL writes SQL NULL. */
void seo_copy_text(seo_copy *w, const char *s);

/* An integer field. */
void seo_copy_int(seo_copy *w, int64_t v);

/* Ends the row. */
void seo_copy_row_end(seo_copy *w);

/* Frees the buffer; the writer is empty again. */
void seo_copy_free(seo_copy *w);

#endif

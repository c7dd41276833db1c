/*
 * COPY text rows (seo/pg_copy.h). The bytes a value must escape come
 * from one table: the letter after the backslash, 0 for a byte written
 * as it is.
 */
#include "seo/pg_copy.h"

#include <stdlib.h>
#include <string.h>

static const char escape_of[256] = {
	['\\'] = '\\', ['\t'] = 't', ['\n'] = 'n', ['\r'] = 'r',
};

void seo_copy_init(seo_copy *w)
{
	memset(w, 0, sizeof(*w));
	w->at_row_start = 1;
}

/* Room for `n` more bytes; 0 or -1 (out of memory, sticky). */
static int reserve(seo_copy *w, size_t n)
{
	size_t cap = w->cap != 0 ? w->cap : 256;
	char *p;

	if (w->oom)
		return -1;
	if (w->len + n <= w->cap)
		return 0;
	while (cap < w->len + n)
		cap *= 2;
	p = realloc(w->data, cap);
	if (p == NULL) {
		w->oom = 1;
		return -1;
	}
	w->data = p;
	w->cap = cap;
	return 0;
}

/* The separator before a field; 0 or -1. */
static int field_start(seo_copy *w, size_t n)
{
	if (reserve(w, n + 1) != 0)
		return -1;
	if (!w->at_row_start)
		w->data[w->len++] = '\t';
	w->at_row_start = 0;
	return 0;
}

void seo_copy_text(seo_copy *w, const char *s)
{
	size_t n;
	char *o;

	if (s == NULL) {
		if (field_start(w, 2) == 0) {
			memcpy(w->data + w->len, "\\N", 2);
			w->len += 2;
		}
		return;
	}
	/* At worst every byte doubles. */
	n = strlen(s);
	if (field_start(w, 2 * n) != 0)
		return;
	o = w->data + w->len;
	for (const unsigned char *p = (const void *)s; *p != '\0'; p++) {
		char e = escape_of[*p];

		if (e != 0) {
			*o++ = '\\';
			*o++ = e;
		} else {
			*o++ = (char)*p;
		}
	}
	w->len = (size_t)(o - w->data);
}

void seo_copy_int(seo_copy *w, int64_t v)
{
	char buf[24], *p = buf + sizeof(buf);
	uint64_t u = v < 0 ? 0 - (uint64_t)v : (uint64_t)v;
	size_t n;

	do {
		*--p = (char)('0' + u % 10);
		u /= 10;
	} while (u != 0);
	if (v < 0)
		*--p = '-';
	n = (size_t)(buf + sizeof(buf) - p);
	if (field_start(w, n) != 0)
		return;
	memcpy(w->data + w->len, p, n);
	w->len += n;
}

void seo_copy_row_end(seo_copy *w)
{
	if (reserve(w, 1) != 0)
		return;
	w->data[w->len++] = '\n';
	w->at_row_start = 1;
}

void seo_copy_free(seo_copy *w)
{
	free(w->data);
	seo_copy_init(w);
}

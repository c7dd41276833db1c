/*
 * seo/json_write.h: JSON text written piece by piece into one growing
 * buffer, without a jansson tree and without printf, byte for byte as
 * jansson's json_dumps(..., JSON_COMPACT) writes the same values.
 *
 * The writer owns its buffer (malloc()ed, grown by realloc()). A write
 * that cannot grow it marks the writer failed and every later write does
 * nothing: check once, at seo_jw_finish(). Strings are written as jansson
 * writes them: '"' and '\\' escaped, control characters as \b \f \n \r \t
 * or \u00XX, everything else (non-ASCII, '/') as is.
 */
#ifndef SEO_JSON_WRITE_H
#define SEO_JSON_WRITE_H

#include <stddef.h>
#include <string.h>

typedef struct seo_jw {
	char *buf;  /* the text so far (not NUL-terminated); the writer's */
	size_t len; /* its length */
	size_t cap;
	int failed; /* an allocation failed: the text lacks a part */
} seo_jw;

#define SEO_JW_INIT {NULL, 0, 0, 0}

/* Makes room for `n` more bytes. Returns 0, or SEO_ENOMEM (and marks the
 * writer failed). */
int seo_jw_reserve(seo_jw *w, size_t n);

/* Appends s[0..n) as it is. */
static inline void seo_jw_raw(seo_jw *w, const char *s, size_t n)
{
	if (w->cap - w->len < n && seo_jw_reserve(w, n) != 0)
		return;
	memcpy(w->buf + w->len, s, n);
	w->len += n;
}

static inline void seo_jw_char(seo_jw *w, char c)
{
	if (w->cap == w->len && seo_jw_reserve(w, 1) != 0)
		return;
	w->buf[w->len++] = c;
}

/* Integers in decimal, as "%lld" and "%llu" write them. */
void seo_jw_int(seo_jw *w, long long v);
void seo_jw_uint(seo_jw *w, unsigned long long v);

/* A finite double as jansson writes a real: "%.17g", then ".0" when that
 * holds neither '.' nor 'e', and the exponent without '+' and leading
 * zeros (0.1 -> 0.10000000000000001, 100 -> 100.0, 1e21 -> 1e21). The
 * caller writes non-finite values as it sees fit (jansson has none). */
void seo_jw_real(seo_jw *w, double v);

/* s[0..n), which must be well-formed UTF-8 without NUL bytes
 * (seo_utf8_prefix() of seo/pbjson.h), as a quoted JSON string. */
void seo_jw_string(seo_jw *w, const char *s, size_t n);

/* s[0..n) as a quoted JSON string, each byte that is no part of a
 * well-formed UTF-8 sequence (or is NUL) written as U+FFFD. */
void seo_jw_string_lossy(seo_jw *w, const char *s, size_t n);

/* Forgets the text, keeping the buffer for the next one. */
static inline void seo_jw_reset(seo_jw *w)
{
	w->len = 0;
	w->failed = 0;
}

/*
 * The text, NUL-terminated, handed to the caller, who free()s it; its
 * length (without the NUL) in *len when `len` is not NULL. The writer is
 * left empty (SEO_JW_INIT). Returns NULL when a write failed (the buffer is
 * freed then) or when nothing was written and no room can be made.
 */
char *seo_jw_finish(seo_jw *w, size_t *len);

/* Frees the buffer; the writer is left empty. */
void seo_jw_free(seo_jw *w);

#endif

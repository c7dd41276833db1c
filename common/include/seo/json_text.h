/*
 * seo/json_text.h: JSON text in and out, telling a failed allocation from
 * bad text.
 *
 * jansson's json_dumps() ignores a failed write of an object key: when its
 * buffer cannot grow there, it goes on and returns a text with the key's
 * bytes missing (jansson 2.14, dump.c), which a client would get as a
 * malformed answer. seo_json_dumps() measures the text first and writes it
 * into one buffer of that size, where no write can fail.
 *
 * jansson's parser reports a failed allocation as a syntax error ("string
 * or '}' expected"), so that a client's valid body would be answered 400.
 * seo_json_init() gives jansson an allocator that notes its failures on
 * the calling thread, and seo_json_loadb() reads that note.
 */
#ifndef SEO_JSON_TEXT_H
#define SEO_JSON_TEXT_H

#include <stddef.h>

#include <jansson.h>

/*
 * The text of `v` as json_dumps(v, flags) writes it, NUL-terminated, in
 * malloc()ed memory the caller frees; its length (without the NUL) in *len
 * when `len` is not NULL. Returns NULL when out of memory, or when
 * json_dumps() would (a value other than an array or object without
 * JSON_ENCODE_ANY).
 */
char *seo_json_dumps(const json_t *v, size_t flags, size_t *len);

/*
 * Routes jansson's allocations through malloc() called from this library
 * (a test wrapping malloc at link time sees them too) and notes their
 * failures for seo_json_loadb(). Call once at the start of main(), before
 * any JSON value exists.
 */
void seo_json_init(void);

/*
 * json_loadb(buf, len, flags, err), all or nothing. On NULL, *oom is 1
 * when an allocation failed meanwhile (the text may well be JSON; jansson
 * may even have returned a value missing a part, dropped here), else 0 and
 * `err` says what is wrong with the text. Without seo_json_init(), *oom is
 * always 0 and a failed allocation reads as bad text.
 */
json_t *seo_json_loadb(const char *buf, size_t len, size_t flags,
		       json_error_t *err, int *oom);

#endif

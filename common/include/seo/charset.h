/*
 * seo/charset.h: which charset a fetched HTML or XML document is in, and
 * its conversion to valid UTF-8 (the fetcher of seo/fetch.h converts text
 * bodies with these).
 */
#ifndef SEO_CHARSET_H
#define SEO_CHARSET_H

#include <stddef.h>

#include "seo/arena.h"

/*
 * Picks the charset of an HTML document the HTML5 way: a byte order mark,
 * then the Content-Type charset parameter (`content_type` may be NULL),
 * then a <meta charset> or http-equiv declaration in the first 1024 bytes,
 * then UTF-8 when the bytes are valid UTF-8, else windows-1252. Labels are
 * normalised (latin1 and us-ascii become windows-1252). Returns a string
 * on `a`, or NULL when out of memory.
 */
const char *seo_charset_detect(const char *body, size_t len,
			       const char *content_type, seo_arena *a);

/*
 * Converts `len` bytes in `charset` to UTF-8 (iconv), dropping a BOM and
 * replacing undecodable bytes with U+FFFD, so that the result is always
 * valid UTF-8. An unknown charset is read as UTF-8. The NUL-terminated
 * result is allocated on `a`. Returns 0 or SEO_ENOMEM.
 */
int seo_to_utf8(const char *in, size_t len, const char *charset, seo_arena *a,
		char **out, size_t *out_len);

#endif

/*
 * body.h: the one collector of response bodies in seo_http; the fetcher
 * and the provider client hand it to libcurl as their write callback.
 */
#ifndef SEO_HTTP_BODY_H
#define SEO_HTTP_BODY_H

#include <stddef.h>

typedef struct seo__body {
	char *data;    /* malloc'd, NUL-terminated; NULL until a byte came */
	size_t len, cap;
	size_t max;    /* bytes accepted at most */
	int too_large; /* a write went past `max` */
} seo__body;

/*
 * CURLOPT_WRITEFUNCTION with a seo__body as its data: appends the bytes,
 * or returns short (libcurl then aborts with CURLE_WRITE_ERROR) when they
 * would pass `max` (too_large set) or memory runs out.
 */
size_t seo__body_write(char *data, size_t size, size_t n, void *ud);

/* Forgets the bytes and too_large; keeps the buffer and `max`. */
void seo__body_reset(seo__body *b);

/* Frees the buffer; `b` may then be reset and reused. */
void seo__body_free(seo__body *b);

#endif

/*
 * fuzz.h: what the libFuzzer targets share. A broken invariant aborts, so
 * that libFuzzer records the input like any crash; assert() is not used
 * because a release build would compile it out.
 */
#ifndef SEO_FUZZ_H
#define SEO_FUZZ_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rt.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define FUZZ_CHECK(cond)                                                     \
	do {                                                                 \
		if (!(cond)) {                                               \
			fprintf(stderr, "%s:%d: invariant failed: %s\n",     \
				__FILE__, __LINE__, #cond);                  \
			abort();                                             \
		}                                                            \
	} while (0)

/* The input as a NUL-terminated string, cut at its first NUL (C string
 * APIs cannot see past it). The caller frees it. */
static inline char *fuzz_cstr(const uint8_t *data, size_t size)
{
	size_t n = strnlen((const char *)data, size);
	char *s = malloc(n + 1);

	FUZZ_CHECK(s != NULL);
	memcpy(s, data, n);
	s[n] = '\0';
	return s;
}

/*
 * The input as the fetcher hands a page to the analysers: charset
 * detected and converted to UTF-8 on `a`, with a few fixed headers.
 */
static inline rt_page fuzz_page(const uint8_t *data, size_t size, seo_arena *a)
{
	static const seo_header headers[] = {
		{"content-type", "text/html"},
		{"x-robots-tag", "noarchive, nofollow"},
		{"content-language", "en-GB"},
	};
	const char *cs = seo_charset_detect((const char *)data, size, "text/html", a);
	char *html;
	size_t len;

	FUZZ_CHECK(cs != NULL);
	FUZZ_CHECK(seo_to_utf8((const char *)data, size, cs, a, &html, &len) == 0);
	FUZZ_CHECK(html[len] == '\0');
	return (rt_page){"https://www.example.com/dir/page?x=1",
			 "https://www.example.com/dir/page?x=1", 200, 12,
			 html, len, headers, sizeof(headers) / sizeof(headers[0])};
}

#endif

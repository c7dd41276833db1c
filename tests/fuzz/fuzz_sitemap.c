/*
 * fuzz_sitemap.c: the sitemap reader on the input as is (plain XML, or a
 * gzip stream when the bytes start with its magic), then on the input
 * gzipped here, so that every mutation also goes through the inflating
 * path. Both readings must agree: the reader is handed the same bytes.
 */
#include "fuzz.h"

#include "seo/errors.h"

#include <zlib.h>

#define MAX_URLS 50
#define MAX_CHILDREN 20

/* gzip of data[0..size) on the heap, length in *out_len. */
static unsigned char *gzip(const uint8_t *data, size_t size, size_t *out_len)
{
	z_stream z;
	unsigned char *out;
	size_t cap;

	memset(&z, 0, sizeof(z));
	FUZZ_CHECK(deflateInit2(&z, Z_BEST_SPEED, Z_DEFLATED, 16 + MAX_WBITS, 8,
				Z_DEFAULT_STRATEGY) == Z_OK);
	cap = deflateBound(&z, (uLong)size);
	out = malloc(cap);
	FUZZ_CHECK(out != NULL);
	z.next_in = (Bytef *)data;
	z.avail_in = (uInt)size;
	z.next_out = out;
	z.avail_out = (uInt)cap;
	FUZZ_CHECK(deflate(&z, Z_FINISH) == Z_STREAM_END);
	*out_len = cap - z.avail_out;
	deflateEnd(&z);
	return out;
}

static int parse(const uint8_t *data, size_t size, seo_arena *a, rt_sitemap_doc *d)
{
	int rc = rt_sitemap_parse((const char *)data, size, MAX_URLS, MAX_CHILDREN, a, d);

	FUZZ_CHECK(rc == 0 || rc == SEO_EINVAL);
	if (rc != 0) {
		FUZZ_CHECK(d->error != NULL);
		return rc;
	}
	FUZZ_CHECK(d->kind == RT_SITEMAP_URLSET || d->kind == RT_SITEMAP_INDEX);
	FUZZ_CHECK(d->n_urls <= MAX_URLS && d->n_children <= MAX_CHILDREN);
	FUZZ_CHECK(d->n_children <= d->children_total);
	for (size_t i = 0; i < d->n_urls; i++)
		FUZZ_CHECK(d->urls[i].loc != NULL && d->urls[i].loc[0] != '\0');
	for (size_t i = 0; i < d->n_children; i++)
		FUZZ_CHECK(d->children[i] != NULL && d->children[i][0] != '\0');
	return rc;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	seo_arena *a = seo_arena_new(0);
	rt_sitemap_doc plain, zipped;
	unsigned char *z;
	size_t zlen;
	int rc;

	FUZZ_CHECK(a != NULL);
	rc = parse(data, size, a, &plain);
	/* gzip of a gzip stream would be read once inflated, not twice */
	if (size >= 2 && data[0] == 0x1f && data[1] == 0x8b) {
		seo_arena_free(a);
		return 0;
	}
	z = gzip(data, size, &zlen);
	FUZZ_CHECK(parse(z, zlen, a, &zipped) == rc);
	FUZZ_CHECK(zipped.kind == plain.kind);
	FUZZ_CHECK(zipped.n_urls == plain.n_urls);
	FUZZ_CHECK(zipped.children_total == plain.children_total);
	FUZZ_CHECK(zipped.truncated == plain.truncated);
	FUZZ_CHECK((zipped.error == NULL) == (plain.error == NULL));
	free(z);
	seo_arena_free(a);
	return 0;
}

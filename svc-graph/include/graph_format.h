/*
 * graph_format.h: what the two halves of svc-graph name the same way: the
 * index's format version, domain names as the crawl files and the index
 * write them, day numbers, and the supported platforms. The `graph_format`
 * library defines these; the ingest (graph_ingest.h, writes the index) and
 * the query side (graph.h, reads it) both link it. The index's files are
 * described in docs/index-format.md and laid out in svc-graph/format/
 * format.h.
 *
 * Ownership: nothing here allocates; strings returned are static.
 */
#ifndef SEO_GRAPH_FORMAT_H
#define SEO_GRAPH_FORMAT_H

#include <stddef.h>
#include <stdint.h>

#define GRAPH_FORMAT_VERSION 3
#define GRAPH_DOMAIN_MAX 253

/* ---- domain names ---- */

/*
 * Normalises a user-supplied domain: seo_domain_normalize() in the graph's
 * form (seo/domain.h: scheme, userinfo, port, path, query, trailing dot
 * and a leading "www." are dropped, letters are lowercased and an IDN
 * becomes punycode). Writes the bare host into `out` (`outlen` bytes with
 * the NUL). Returns 0, or SEO_EINVAL when it is not a domain name.
 */
int graph_normalize_domain(const char *input, char *out, size_t outlen);

/* Reverses the labels of the `len` bytes of `name` ("www.example.com" <->
 * "com.example.www", the crawl's vertex names) into `out` (len + 1
 * bytes). */
void graph_reverse_labels(const char *name, size_t len, char *out);

/* ---- dates ---- */

/* Days since 1970-01-01 of a proleptic Gregorian date, and back (the
 * index's registration days). */
int32_t graph_days_from_civil(int y, unsigned m, unsigned d);
void graph_civil_from_days(int32_t z, int *y, unsigned *m, unsigned *d);

/* ---- platforms ---- */

/*
 * The site builders, CMSs, shops and payment providers whose domains the
 * index keeps (the spec's supported slugs). seo-ingest runs the technology
 * fingerprint engine (seo/tech.h) over every WAT response record; a domain
 * is on a platform when any of its captured pages shows it.
 */
#define GRAPH_PLATFORM_COUNT 19

typedef struct graph_platform {
	const char *slug;     /* "godaddy_builder" */
	const char *name;     /* "GoDaddy Website Builder", for display */
	const char *category; /* "website_builder", "cms", "ecommerce", ... */
	const char *tech;     /* the technology of data/tech/rules.json */
} graph_platform;

/* The supported platforms, in their index order (static, *n of them). */
const graph_platform *graph_platforms(size_t *n);

/* The supported slugs, comma-separated (static). */
const char *graph_platform_slugs(void);

/*
 * The platform named by `name`: a slug, a name or a common alias ("wp",
 * "word press", "godaddy", "big commerce"), in any case, blanks, hyphens
 * and underscores alike. Returns 0 and sets *idx (an index into
 * graph_platforms()), or SEO_ENOTFOUND.
 */
int graph_platform_find(const char *name, size_t *idx);

#endif

/*
 * gen.h: what the crawl generators share; not a public API.
 */
#ifndef CRAWLGEN_GEN_H
#define CRAWLGEN_GEN_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include <seo/arena.h>

#include "crawlgen.h"

typedef struct rng {
	uint64_t s;
} rng;

/* splitmix64: tiny, fast and the same on every platform */
static inline uint64_t next(rng *r)
{
	uint64_t z = (r->s += 0x9e3779b97f4a7c15ULL);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	return z ^ (z >> 31);
}

static inline double unif(rng *r)
{
	return (double)(next(r) >> 11) / 9007199254740992.0;
}

static inline int cmp_u32(const void *a, const void *b)
{
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;

	return x < y ? -1 : x > y;
}

/* ---- the files (formats.c) ---- */

/* Creates dir/name and lists it as input *n of `kind` in `in` (the path
 * on `a`); NULL (logged) when it cannot be made. */
FILE *crawlgen__create(const char *dir, const char *name, seo_arena *a,
		       graph_input *in, graph_input_kind kind, size_t *n);

/* Closes `f`; 0, or SEO_EIO when it or an earlier write failed. */
int crawlgen__close_ok(FILE *f);

#define RANKS_HEADER \
	"#harmonicc_pos\t#harmonicc_val\t#pr_pos\t#pr_val\t#host_rev\t#n_hosts\n"

/* One line of domain-ranks.txt for the domain at position p (0 first) by
 * in-degree: centrality values follow the in-degree, the PageRank position
 * swaps a few neighbours so that the two orders differ. */
void crawlgen__rank_line(FILE *f, uint32_t p, uint32_t indeg, uint32_t n,
			 const char *rev);

/* Appends one WARC record as its own gzip member, as Common Crawl does;
 * 0 or SEO_EIO. */
int crawlgen__warc_member(const char *path, const char *type,
			  const char *uri, const char *date, const char *body);

/* A WAT file in `dir` with its warcinfo record, listed in `in`; 0,
 * SEO_ENOMEM or SEO_EIO. */
int crawlgen__wat_create(const char *dir, const char *name, seo_arena *a,
			 graph_input *in, size_t *n, const char **path);

/* ---- names and pages (pages.c) ---- */

/* The name of synthetic domain i: unique for every i. */
void crawlgen__demo_name(uint32_t i, char *out, size_t outlen);

/* A WAT record's JSON as it is built: `len` bytes at `p`, NUL-terminated;
 * zeros to start, `p` the caller's to free. */
typedef struct crawlgen__body {
	char *p;
	size_t len, cap;
} crawlgen__body;

/* Each returns 0 or SEO_ENOMEM (wat_page_end() SEO_EIO too). */

/* Starts the metadata record of page p of domain number i, `name`, in
 * `body`: sets its URI and capture date (in the crawl's two months). */
int crawlgen__wat_page_begin(crawlgen__body *body, uint32_t i,
			     const char *name, uint32_t p, char uri[160],
			     char date[32], rng *r);

/* Appends link number k of the page, to domain `target`: anchors branded,
 * generic, naked or partial, some images and nofollows. */
int crawlgen__wat_link(crawlgen__body *body, const char *target, uint32_t k,
		       rng *r);

/* Ends the record and appends it to the WAT file at `path`. */
int crawlgen__wat_page_end(crawlgen__body *body, const char *path,
			   const char *uri, const char *date);

#endif

/*
 * format.h: the index on disk, as the ingest writes it and the query side
 * reads it; not a public API. Both halves include it and nothing else of
 * each other.
 *
 * The layout is described in docs/index-format.md; the structs here are
 * written and mapped as they are (little-endian, packed by hand so that no
 * padding depends on the compiler).
 */
#ifndef GRAPH_FORMAT_INTERNAL_H
#define GRAPH_FORMAT_INTERNAL_H

#include <stddef.h>
#include <stdint.h>

#include "graph_format.h"

#define GRAPH__MAGIC 0x31584449475345ULL /* "ESGIDX1" */
#define GRAPH__NONE UINT32_MAX

/* meta.bin: fixed header read at open. */
typedef struct graph__meta {
	uint64_t magic;
	uint32_t version;
	uint32_t as_of;          /* latest capture, Unix seconds; 0 unknown */
	uint64_t n_domains;
	uint64_t n_edges;
	uint64_t n_links;
	uint64_t n_urls;
	uint64_t n_anchors;
	uint64_t n_strs;
	uint64_t n_captures;
	uint32_t max_refdomains;
	uint32_t flags;          /* GRAPH__META_* inputs present */
	char release[64];
} graph__meta;

enum {
	GRAPH__META_RANKS = 1,
	GRAPH__META_TRANCO = 2,
};

/* domains.bin: one per domain id. */
typedef struct graph__dom {
	uint64_t linking_hosts;  /* sum of host counts of referring domains */
	uint32_t ref_domains;    /* in-degree of the domain graph */
	uint32_t out_domains;    /* out-degree */
	uint32_t hosts;
	uint32_t hc_pos;         /* harmonic-centrality position; 0 unknown */
	uint32_t pr_pos;         /* PageRank position; 0 unknown */
	uint32_t tranco;         /* 0 absent */
	uint32_t rank;           /* importance position, 0 strongest */
	int32_t registered_day;  /* days since 1970-01-01; INT32_MIN unknown */
	uint32_t registrar;      /* strs id or GRAPH__NONE */
	uint32_t first_seen;     /* Unix seconds; 0 never */
	uint32_t last_seen;
	uint32_t total_urls;
	uint32_t inbound_links;  /* URL-level links from other domains */
	uint32_t url_referrers;  /* distinct domains among them */
	uint32_t out_links;      /* URL-level links to other domains */
	uint32_t top_out_domain; /* GRAPH__NONE when out_links is 0 */
	uint32_t top_out_links;
	uint8_t score;
	uint8_t pad[3];
} graph__dom;
_Static_assert(sizeof(graph__dom) == 80, "graph__dom layout");

/* links.bin: URL-level links grouped by target domain, ordered by the
 * source's importance rank, then newest first. */
typedef struct graph__link {
	uint32_t from_dom;
	uint32_t from_url;
	uint32_t to_url;
	uint32_t anchor;  /* anchors id or GRAPH__NONE */
	uint32_t rel;     /* strs id or GRAPH__NONE */
	uint32_t ts;      /* crawl time, Unix seconds */
	uint32_t type;    /* GRAPH__LT_* */
} graph__link;
_Static_assert(sizeof(graph__link) == 28, "graph__link layout");

enum { GRAPH__LT_HYPERLINK = 0, GRAPH__LT_IMAGE = 1 };

/* pages.bin and anchors.bin rows. */
typedef struct graph__agg {
	uint32_t id;      /* urls or anchors id */
	uint32_t links;
	uint32_t domains;
} graph__agg;

/* outl.bin rows, grouped by source domain, most frequent first. */
typedef struct graph__outl {
	uint32_t to_dom;
	uint32_t to_url;
	uint32_t anchor;
	uint32_t type;
	uint32_t count;
} graph__outl;

/* urlidx.bin rows: latest capture of each URL of a domain. */
typedef struct graph__cap {
	uint32_t url;
	uint32_t ts;
	uint32_t mime;    /* strs id or GRAPH__NONE */
	uint32_t status;
} graph__cap;

/* status.bin rows. */
typedef struct graph__status {
	uint32_t status;
	uint32_t count;
} graph__status;

/* plat.bin rows: a domain on a platform and its public suffix. */
typedef struct graph__pdom {
	uint32_t dom;
	uint32_t tld;     /* plattld id */
} graph__pdom;

/*
 * Skip entries of long lists, so that a deep page starts where it starts
 * instead of after every entry before it. inskip.dir and linkskip.dir list
 * the lists of more than GRAPH__SKIP entries, ascending by key (importance
 * position for in-lists, domain id for link groups); entry j (from 1) of
 * a list is its place GRAPH__SKIP * j entries in.
 */
#define GRAPH__SKIP 128

typedef struct graph__skipdir {
	uint32_t key;
	uint32_t n;       /* entries of the list in the .bin file */
	uint64_t first;   /* its first entry there */
} graph__skipdir;
_Static_assert(sizeof(graph__skipdir) == 16, "graph__skipdir layout");

/* inskip.bin: where an in-list's entry GRAPH__SKIP * j starts, and the
 * position before it (the varints are gaps). linkskip.bin is u32: the
 * index in its group of the first link of referrer GRAPH__SKIP * j. */
typedef struct graph__inskip {
	uint32_t at;      /* bytes from the start of the list */
	uint32_t prev;    /* the position of entry GRAPH__SKIP * j - 1 */
} graph__inskip;
_Static_assert(sizeof(graph__inskip) == 8, "graph__inskip layout");

/* ---- similar domains: what the ingest stores and the query reads ---- */

/*
 * A domain linked from at least 1/GRAPH__SIM_SHARE of all domains is
 * heavy: the query may count it in reverse (every in-list against its
 * linkers), and the ingest stores its first GRAPH__SIM_ROWS rows and its
 * total (simtop.*), so that the pages callers read cost a lookup.
 */
#define GRAPH__SIM_SHARE 16
#define GRAPH__SIM_ROWS 1000

static inline int graph__sim_heavy(uint64_t ref_domains, uint64_t n)
{
	return ref_domains > 0 && ref_domains * GRAPH__SIM_SHARE >= n;
}

/* A row: a domain (importance position) and the linkers it shares; also
 * simtop.bin's record. */
typedef struct graph__sim {
	uint32_t id, count;
} graph__sim;
_Static_assert(sizeof(graph__sim) == 8, "graph__sim layout");

/* simtop.dir: the heavy domains by position. */
typedef struct graph__simdir {
	uint32_t pos;
	uint32_t rows;    /* rows stored: the total, at most GRAPH__SIM_ROWS */
	uint64_t total;
	uint64_t first;   /* its first row in simtop.bin */
} graph__simdir;
_Static_assert(sizeof(graph__simdir) == 24, "graph__simdir layout");

/* Result order: more shared linkers first, then the stronger domain. */
static inline int graph__sim_before(const graph__sim *a, const graph__sim *b)
{
	return a->count > b->count || (a->count == b->count && a->id < b->id);
}

static inline int graph__sim_cmp(const void *pa, const void *pb)
{
	return graph__sim_before(pa, pb) ? -1 : graph__sim_before(pb, pa);
}

/* The first k rows of a result, in a heap whose root is the last of them,
 * so that a candidate is rejected by one comparison. v (k entries) is the
 * caller's. */
typedef struct graph__simtop {
	graph__sim *v;
	size_t len, k;
} graph__simtop;

static inline void graph__top_swap(graph__simtop *t, size_t i, size_t j)
{
	graph__sim s = t->v[i];

	t->v[i] = t->v[j];
	t->v[j] = s;
}

static inline void graph__top_push(graph__simtop *t, graph__sim s)
{
	size_t j;

	if (t->len < t->k) {
		t->v[t->len] = s;
		for (j = t->len++;
		     j > 0 && graph__sim_before(&t->v[(j - 1) / 2], &t->v[j]);
		     j = (j - 1) / 2)
			graph__top_swap(t, j, (j - 1) / 2);
		return;
	}
	if (t->k == 0 || !graph__sim_before(&s, &t->v[0]))
		return;
	t->v[0] = s;
	for (j = 0;;) {
		size_t l = 2 * j + 1, r = l + 1, m = j;

		if (l < t->len && graph__sim_before(&t->v[m], &t->v[l]))
			m = l;
		if (r < t->len && graph__sim_before(&t->v[m], &t->v[r]))
			m = r;
		if (m == j)
			break;
		graph__top_swap(t, j, m);
		j = m;
	}
}

/* The shared count a domain must exceed to enter the rows when domains
 * arrive in position order: a later domain loses every tie. */
static inline uint32_t graph__top_floor(const graph__simtop *t)
{
	if (t->len < t->k)
		return 0;
	return t->k ? t->v[0].count : UINT32_MAX;
}

/* ---- varints ---- */

static inline size_t graph__varint_put(uint8_t *p, uint64_t v)
{
	size_t n = 0;

	while (v >= 0x80) {
		p[n++] = (uint8_t)(v | 0x80);
		v >>= 7;
	}
	p[n++] = (uint8_t)v;
	return n;
}

static inline const uint8_t *graph__varint_get(const uint8_t *p,
					       uint64_t *v)
{
	uint64_t r = 0;
	unsigned shift = 0;

	while (*p & 0x80) {
		r |= (uint64_t)(*p++ & 0x7f) << shift;
		shift += 7;
	}
	*v = r | ((uint64_t)*p++ << shift);
	return p;
}

/* ---- names ---- */

/* Registrable domain of a normalised name (seo_domain_normalize()) into
 * `out` (GRAPH_DOMAIN_MAX + 1 bytes); a name that is itself a public
 * suffix, or unknown to the list, is copied as it is. */
void graph__registrable(const char *name, char *out);

/* ---- platforms ---- */

/* Index into graph_platforms() of a technology name of the rule file, or
 * -1 when it is no supported platform. */
int graph__platform_of_tech(const char *tech);

#endif

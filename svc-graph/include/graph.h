/*
 * graph.h: the query half of svc-graph (library `graph_index`): the crawl
 * link graph as a memory-mapped, read-only index with the queries the
 * link-graph endpoints answer. The index is written by the ingest half
 * (graph_ingest.h); what both name alike is in graph_format.h.
 *
 * Ownership: a graph_index is opened and closed by its caller. Query rows
 * are allocated from the caller's arena; the strings inside them point
 * either into that arena or into the index mapping, so rows must not
 * outlive the arena nor the index. A graph_index is immutable once open and
 * safe to query from several threads at once (similar-domains keeps a
 * bounded scratch of its own inside it, freed with the index).
 *
 * Domains are given as the user typed them; every query normalises its
 * domain argument (graph_normalize_domain) and fails with SEO_EINVAL when
 * it is malformed. A well-formed domain the index does not hold answers 0
 * with no rows and total 0.
 */
#ifndef SEO_GRAPH_H
#define SEO_GRAPH_H

#include <stddef.h>
#include <stdint.h>

#include <seo/arena.h>

#include "graph_format.h"

/* Upper bound on a page, whatever the caller asks (the spec's maximum). */
#define GRAPH_LIMIT_MAX 1000

/* ---- the index ---- */

typedef struct graph_index graph_index;

/* Maps the index at `dir`. Returns 0 and sets *out (closed with
 * graph_index_close), SEO_ENOTFOUND when there is no index, SEO_EINVAL
 * when it is not a complete index of this format version or of format 2
 * (served without the skip entries and stored similar domains of 3). */
int graph_index_open(const char *dir, graph_index **out);

/* Unmaps the index; NULL is allowed. No row may be used afterwards. */
void graph_index_close(graph_index *ix);

/* The release label and counts, owned by the index. */
const char *graph_index_release(const graph_index *ix);
uint64_t graph_index_domain_count(const graph_index *ix);
uint64_t graph_index_edge_count(const graph_index *ix);

/* Paging: rows [offset, offset + limit) of the full ordered result. */
typedef struct graph_page {
	uint32_t limit;
	uint64_t offset;
} graph_page;

typedef enum graph_sort {
	GRAPH_SORT_IMPORTANCE, /* one row per referring domain, strongest first */
	GRAPH_SORT_RECENT,     /* every URL-level link, newest first */
} graph_sort;

typedef struct graph_refdomain_row {
	const char *from_domain;
	uint32_t total_links;
	uint8_t from_domain_score;
} graph_refdomain_row;

typedef struct graph_backlink_row {
	const char *from_domain;
	const char *from_url;
	const char *to_url;
	const char *anchor_text; /* NULL when the link had none */
	const char *rel;         /* NULL when the link had none */
	const char *link_type;   /* "hyperlink" or "image" */
	uint32_t domain_host_count;
	int64_t crawled_at;      /* Unix seconds */
	uint8_t from_domain_score;
} graph_backlink_row;

typedef struct graph_backlink_filter {
	const char *from_domain; /* NULL: any */
	const char *link_type;   /* NULL: any; "hyperlink" or "image" */
} graph_backlink_filter;

typedef struct graph_outbound_row {
	const char *to_domain;
	const char *to_url;
	const char *anchor_text; /* NULL when none */
	const char *link_type;
	uint32_t edge_count;
} graph_outbound_row;

typedef struct graph_outbound_summary {
	uint64_t unique_destinations;
	const char *top_domain;  /* NULL when no URL-level outbound link */
	double top_domain_concentration;
} graph_outbound_summary;

typedef struct graph_anchor_row {
	const char *anchor_text;
	uint32_t link_count;
	uint32_t domain_count;
} graph_anchor_row;

typedef struct graph_top_page_row {
	const char *url;
	uint32_t inbound_links;
	uint32_t referring_domains;
} graph_top_page_row;

enum graph_risk_flag {
	GRAPH_RISK_NEW_DOMAIN = 1 << 0,
	GRAPH_RISK_HIGH_AUTHORITY_NEW_DOMAIN = 1 << 1,
	GRAPH_RISK_NO_TRANCO_PRESENCE = 1 << 2,
	GRAPH_RISK_LOW_AUTHORITY = 1 << 3,
};

/* The spec's name of one risk flag bit. */
const char *graph_risk_flag_name(unsigned flag);

typedef struct graph_authority {
	uint8_t score;
	uint64_t referring_domains;
	uint64_t total_host_count;
	const char *registered_at; /* "YYYY-MM-DD" in the arena, or NULL */
	const char *registrar;     /* NULL when unknown */
	uint32_t popularity_rank;  /* Tranco rank; 0 when absent */
	uint8_t health_score;
	unsigned risk_flags;       /* enum graph_risk_flag bits */
} graph_authority;

typedef struct graph_domain_rank {
	uint64_t inbound_edges;
	uint64_t unique_domains;
	double avg_linking_host_count;
} graph_domain_rank;

typedef struct graph_crawl_history {
	int64_t first_seen; /* Unix seconds; 0 when never captured */
	int64_t last_seen;
	uint64_t total_urls;
} graph_crawl_history;

typedef struct graph_similar_row {
	const char *similar_domain;
	uint32_t shared_linkers;
} graph_similar_row;

typedef struct graph_intersect_row {
	const char *domain;
	uint8_t domain_score;
} graph_intersect_row;

typedef struct graph_status_row {
	uint16_t status_code;
	uint32_t count;
} graph_status_row;

typedef struct graph_url_row {
	const char *url;
	uint16_t status_code;
	const char *mime; /* NULL when unknown */
	int64_t crawled_at;
} graph_url_row;

/*
 * Every list query fills *rows (arena-allocated, *n of them) with the page
 * and *total with the number of rows of the whole result. Returns 0, or
 * SEO_EINVAL for a malformed domain, SEO_ENOMEM.
 */
int graph_referring_domains(const graph_index *ix, const char *domain,
			    const graph_page *pg, seo_arena *a,
			    graph_refdomain_row **rows, size_t *n,
			    uint64_t *total);

int graph_backlinks(const graph_index *ix, const char *domain,
		    graph_sort sort, const graph_backlink_filter *filter,
		    const graph_page *pg, seo_arena *a,
		    graph_backlink_row **rows, size_t *n, uint64_t *total);

/* Outbound URL-level links grouped by (destination URL, anchor, type),
 * most frequent first; `summary` may be NULL. */
int graph_outbound_links(const graph_index *ix, const char *domain,
			 const graph_page *pg, seo_arena *a,
			 graph_outbound_row **rows, size_t *n, uint64_t *total,
			 graph_outbound_summary *summary);

int graph_anchor_text(const graph_index *ix, const char *domain,
		      const graph_page *pg, seo_arena *a,
		      graph_anchor_row **rows, size_t *n, uint64_t *total);

int graph_top_pages(const graph_index *ix, const char *domain,
		    const graph_page *pg, seo_arena *a,
		    graph_top_page_row **rows, size_t *n, uint64_t *total);

/* Shared-linker counts, exact: domains that the referrers of `domain` also
 * link to, most shared first, then by importance; never `domain` itself
 * (docs/metrics.md). */
int graph_similar_domains(const graph_index *ix, const char *domain,
			  const graph_page *pg, seo_arena *a,
			  graph_similar_row **rows, size_t *n,
			  uint64_t *total);

/* How many first rows of `domain`'s similar domains the index stores
 * (written at ingest for the heaviest domains; pages within them are read,
 * not counted): sets *rows, 0 when none. Returns 0, or SEO_EINVAL for a
 * malformed domain. */
int graph_similar_stored(const graph_index *ix, const char *domain,
			 uint64_t *rows);

/* Domains linking to `domain_a` but not to `domain_b`, strongest first. */
int graph_link_intersect(const graph_index *ix, const char *domain_a,
			 const char *domain_b, const graph_page *pg,
			 seo_arena *a, graph_intersect_row **rows, size_t *n,
			 uint64_t *total);

#define GRAPH_OVERLAP_MAX 5

typedef struct graph_overlap_row {
	const char *domain;
	uint8_t domain_score;
	unsigned links_to; /* bit i set: links to domains[i] */
} graph_overlap_row;

/*
 * Referring domains of 1 to GRAPH_OVERLAP_MAX domains merged in importance
 * order, each with the set of those domains it links to, kept when it
 * links to at least `min_count` of them (domain overlap: min_count =
 * n_domains) and does not link to `exclude` (NULL: no exclusion; the link
 * gap: competitors' referrers that do not link to you). The domains
 * themselves and `exclude` are never rows. SEO_EINVAL when a domain is
 * malformed or n_domains is out of range.
 */
int graph_domain_overlap(const graph_index *ix, const char *const *domains,
			 size_t n_domains, unsigned min_count,
			 const char *exclude, const graph_page *pg,
			 seo_arena *a, graph_overlap_row **rows, size_t *n,
			 uint64_t *total);

/* Capture counts per HTTP status, ascending status. */
int graph_status_codes(const graph_index *ix, const char *domain,
		       seo_arena *a, graph_status_row **rows, size_t *n);

/* Captured URLs (latest capture each), in URL order. */
int graph_url_index(const graph_index *ix, const char *domain,
		    const graph_page *pg, seo_arena *a, graph_url_row **rows,
		    size_t *n, uint64_t *total);

/* Single-object queries. A domain without data gets zeros and NULLs
 * (and, for the authority, the risk flags of a score of 0 without Tranco
 * presence, as docs/metrics.md defines). */
int graph_authority_get(const graph_index *ix, const char *domain,
			seo_arena *a, graph_authority *out);
int graph_domain_rank_get(const graph_index *ix, const char *domain,
			  graph_domain_rank *out);
int graph_crawl_history_get(const graph_index *ix, const char *domain,
			    graph_crawl_history *out);

/* Derived per-row enrichment (docs/metrics.md). */
const char *graph_link_quality(uint8_t from_domain_score);
const char *graph_anchor_type(const char *anchor_text, const char *link_type,
			      const char *to_domain);

/* ---- domains per platform (the table is graph_format.h's) ---- */

typedef struct graph_platform_count {
	const graph_platform *platform;
	uint64_t count; /* domains on it */
} graph_platform_count;

/* Every supported platform with its domain count, most domains first,
 * then by name; `out` has GRAPH_PLATFORM_COUNT entries. */
void graph_platform_trends(const graph_index *ix,
			   graph_platform_count out[GRAPH_PLATFORM_COUNT]);

typedef enum graph_platform_sort {
	GRAPH_PSORT_DA_DESC,   /* authority descending, then domain name */
	GRAPH_PSORT_DA_ASC,    /* authority ascending, then domain name */
	GRAPH_PSORT_DOMAIN_ASC,
} graph_platform_sort;

typedef struct graph_platform_query {
	size_t platform;          /* index into graph_platforms() */
	uint8_t min_da, max_da;   /* authority bounds, inclusive (0, 100: all) */
	const char *tld;          /* public suffix ("com", "co.uk"), any case,
				   * a leading dot ignored; NULL or "": any */
	graph_platform_sort sort;
	uint32_t limit;           /* at most GRAPH_LIMIT_MAX are returned */
} graph_platform_query;

typedef struct graph_platform_row {
	const char *domain;
	const char *tld;          /* its public suffix */
	uint8_t da_score;
} graph_platform_row;

/*
 * The first `limit` domains on a platform that pass the filters, in the
 * query's order; *total counts every domain on the platform, whatever the
 * filters and the limit. Rows are on `a` (strings in the index mapping).
 * Returns 0, SEO_EINVAL for a platform index out of range, SEO_ENOMEM.
 */
int graph_platform_domains(const graph_index *ix,
			   const graph_platform_query *q, seo_arena *a,
			   graph_platform_row **rows, size_t *n,
			   uint64_t *total);

#endif

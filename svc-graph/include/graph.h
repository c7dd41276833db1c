/*
 * graph.h: the crawl link graph, as an ingest (crawl files in their public
 * formats to an index directory) and as a memory-mapped, read-only index
 * with the queries the link-graph endpoints answer.
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

#define GRAPH_FORMAT_VERSION 3
#define GRAPH_DOMAIN_MAX 253
/* Upper bound on a page, whatever the caller asks (the spec's maximum). */
#define GRAPH_LIMIT_MAX 1000

/* ---- domain names ---- */

/*
 * Normalises a user-supplied domain: seo_domain_normalize() in the graph's
 * form (seo/domain.h: scheme, userinfo, port, path, query, trailing dot
 * and a leading "www." are dropped, letters are lowercased and an IDN
 * becomes punycode). Writes the bare host into `out` (`outlen` bytes with
 * the NUL). Returns 0, or SEO_EINVAL when it is not a domain name.
 */
int graph_normalize_domain(const char *input, char *out, size_t outlen);

/* ---- ingest ---- */

typedef enum graph_input_kind {
	GRAPH_IN_VERTICES,
	GRAPH_IN_EDGES,
	GRAPH_IN_RANKS,
	GRAPH_IN_WAT,
	GRAPH_IN_CDX,
	GRAPH_IN_TRANCO,
	GRAPH_IN_WHOIS,
} graph_input_kind;

typedef struct graph_input {
	graph_input_kind kind;
	const char *path;
} graph_input;

/* Called now and then during an ingest (e.g. for a terminal progress
 * line): `phase` is a short label, `done`/`total` bytes of the current
 * input (total 0 when unknown), `records` records read so far. */
typedef void (*graph_progress_fn)(void *ctx, const char *phase,
				  uint64_t done, uint64_t total,
				  uint64_t records);

typedef struct graph_ingest_opts {
	const char *out_dir;   /* final index directory; must not exist */
	const char *release;   /* release label, e.g. "CC-MAIN-2024-30" */
	const graph_input *inputs;
	size_t n_inputs;
	size_t mem_mb;         /* the whole ingest's budget in MiB; 0 means 2048 */
	const char *tmp_dir;   /* sorted runs; NULL: next to out_dir */
	graph_progress_fn progress; /* may be NULL */
	void *progress_ctx;
} graph_ingest_opts;

/* What an ingest read and wrote, for the tool's report and the tests. */
typedef struct graph_ingest_stats {
	uint64_t domains;
	uint64_t domain_edges;
	uint64_t links;          /* URL-level links between domains */
	uint64_t urls;
	uint64_t anchors;
	uint64_t captures;       /* CDX lines and WAT responses */
	uint64_t records;        /* input records read, all inputs */
	uint64_t malformed;      /* input lines or records skipped */
	uint64_t edge_bytes;     /* in- and out-link CSR, offsets and skip
				  * entries included */
	double bytes_per_edge;   /* edge_bytes / domain_edges */
	uint64_t index_bytes;    /* whole directory */
	uint64_t runs_spilled;   /* sorted runs written to disk */
	uint64_t dict_runs;      /* of which runs of URLs and anchors */
	double seconds;
	uint64_t platform_domains; /* (domain, platform) pairs stored */
	uint64_t similar_domains;  /* heavy domains whose similar domains
				    * are stored */
	uint32_t similar_passes;   /* passes over the in-lists counting them
				    * (more when --mem-mb is short) */
	double similar_seconds;    /* what counting them took */
} graph_ingest_stats;

/*
 * Reads every input and writes a complete index at opts->out_dir: files go
 * to a temporary sibling directory that is renamed when complete, so the
 * directory is either whole or absent. A malformed line or record is
 * logged (file and line) and counted, never fatal. Fills `stats` when not
 * NULL. WAT inputs need the technology rule file (seo_tech_rules_path()):
 * their pages' platforms are detected with it. Returns 0, SEO_EINVAL
 * without out_dir or release (or a release over 63 bytes, or a rule file
 * that does not parse), SEO_EEXIST when out_dir exists, SEO_ENOTFOUND when
 * an input or the rule file cannot be found, SEO_EIO or SEO_ENOMEM.
 */
int graph_ingest(const graph_ingest_opts *opts, graph_ingest_stats *stats);

/*
 * Writes a deterministic synthetic crawl in the public formats into `dir`
 * (created when missing) and fills `inputs` (at least 8 entries) with what
 * it wrote; the paths are allocated from `a`. `scale` 1 is the demo (a few
 * thousand domains). Returns 0 or SEO_EIO/SEO_ENOMEM.
 */
int graph_demo_write(const char *dir, unsigned scale, seo_arena *a,
		     graph_input *inputs, size_t *n_inputs);

/*
 * Writes a deterministic synthetic domain graph of `n_domains` (at least
 * 2) domains and `n_edges` distinct edges (fewer only when the degrees
 * drawn cannot hold them: out-degrees stop at n / 4) into `dir` (created when
 * missing): domain-vertices.txt, domain-edges.txt, domain-ranks.txt and
 * a WAT file with URL-level links from one domain in 16, with web-like
 * skew (power-law in- and out-degrees, 40 % of the domains never linked
 * to) and ids unrelated to popularity. The same `seed` gives the same
 * files. Fills `inputs` (at least 4 entries; paths allocated from `a`).
 * Returns 0, SEO_EINVAL, SEO_EIO or SEO_ENOMEM.
 */
int graph_synth_write(const char *dir, uint32_t n_domains, uint64_t n_edges,
		      uint64_t seed, seo_arena *a, graph_input *inputs,
		      size_t *n_inputs);

/* Removes `dir` and everything below it (a demo crawl, an unfinished
 * index, a test's scratch); what cannot be removed is left. */
void graph_remove_dir(const char *dir);

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

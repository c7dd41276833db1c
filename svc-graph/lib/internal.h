/*
 * internal.h: what the graph library's files share; not a public API.
 *
 * The on-disk layout is described in docs/index-format.md; the structs
 * here are written and mapped as they are (little-endian, packed by hand
 * so that no padding depends on the compiler).
 */
#ifndef GRAPH_INTERNAL_H
#define GRAPH_INTERNAL_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include <zlib.h>

#include "graph.h"

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

/* ---- growable arrays ---- */

typedef struct graph__buf {
	char *p;
	size_t len, cap;
} graph__buf;

int graph__buf_put(graph__buf *b, const void *data, size_t n);
int graph__buf_reserve(graph__buf *b, size_t total);

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

/* ---- input streams (plain or gzip, concatenated members) ---- */

typedef struct graph__reader {
	gzFile gz;
	const char *path;
	char *buf;
	size_t cap, len, pos;
	uint64_t line;      /* lines consumed so far */
	uint64_t size;      /* file size on disk */
	int eof;
	void *sha;          /* EVP_MD_CTX over the decompressed content */
} graph__reader;

int graph__reader_open(graph__reader *r, const char *path);
/* Returns 1 with the next line (no end-of-line bytes, NUL-terminated,
 * valid until the next call), 0 at the end, or SEO_EIO. */
int graph__reader_line(graph__reader *r, char **line, size_t *len);
/* Reads exactly `n` bytes into a buffer valid until the next call; 1, 0
 * when the input ends first, or SEO_EIO. */
int graph__reader_bytes(graph__reader *r, size_t n, char **data);
uint64_t graph__reader_offset(graph__reader *r);
/* Closes and writes the SHA-256 of what was read into `hex` (may be NULL). */
void graph__reader_close(graph__reader *r, char hex[65]);

/* ---- external sort of fixed-size records ---- */

typedef int (*graph__cmp_fn)(const void *a, const void *b);
typedef struct graph__xsort graph__xsort;

/* Orders graph__edge records by (a, b); a sort given this comparison
 * uses a radix sort. */
int graph__cmp_pair(const void *a, const void *b);

int graph__xsort_new(size_t recsize, graph__cmp_fn cmp, size_t mem_bytes,
		     const char *tmp_dir, graph__xsort **out);
int graph__xsort_add(graph__xsort *s, const void *rec);
/* Ends the input; records then come out in order from _next(). */
int graph__xsort_finish(graph__xsort *s);
/* 1 with *rec (valid until the next call), 0 at the end, or SEO_EIO. */
int graph__xsort_next(graph__xsort *s, const void **rec);
uint64_t graph__xsort_count(const graph__xsort *s);
uint64_t graph__xsort_runs(const graph__xsort *s);
void graph__xsort_free(graph__xsort *s);

/* ---- string dictionaries (ingest side) ---- */

typedef struct graph__dict {
	graph__buf blob;   /* NUL-terminated strings */
	uint64_t *off;     /* start of string i in blob */
	uint32_t n, ocap;
	uint32_t *slots;   /* open addressing; GRAPH__NONE empty */
	uint32_t nslots;
} graph__dict;

int graph__dict_intern(graph__dict *d, const char *s, size_t len,
		       uint32_t *id);
int graph__dict_find(const graph__dict *d, const char *s, size_t len,
		     uint32_t *id);
static inline const char *graph__dict_str(const graph__dict *d, uint32_t id)
{
	return d->blob.p + d->off[id];
}
void graph__dict_free(graph__dict *d);

/* ---- names ---- */

/* Reverses the labels of `name` ("www.example.com" <-> "com.example.www")
 * into `out` (len + 1 bytes). */
void graph__reverse_labels(const char *name, size_t len, char *out);

/* Registrable domain of the host of an absolute http(s) or
 * scheme-relative URL, lowercased, into `out` (GRAPH_DOMAIN_MAX + 1
 * bytes). 0, or SEO_EINVAL when the URL has no usable host. */
int graph__url_domain(const char *url, char *out);

/* Registrable domain of a host name (already lowercase). */
int graph__host_domain(const char *host, size_t len, char *out);

/* Decodes the HTML character references the WAT extractor leaves in
 * attribute values (&amp; &lt; &gt; &quot; &#39; &#NN;) in place. */
size_t graph__html_unescape(char *s, size_t len);

/* Days since 1970-01-01 of a proleptic Gregorian date. */
int32_t graph__days_from_civil(int y, unsigned m, unsigned d);
void graph__civil_from_days(int32_t z, int *y, unsigned *m, unsigned *d);

/* "YYYY-MM-DDThh:mm:ssZ" or "YYYYMMDDhhmmss" to Unix seconds; 0 when
 * malformed. */
int64_t graph__parse_time(const char *s);

/* ---- the ingest: readers.c parses, build.c writes the index ---- */

/* Per-domain facts gathered while reading. */
typedef struct graph__dattr {
	uint32_t hosts;
	uint32_t hc_pos;
	uint32_t pr_pos;
	uint32_t tranco;
	int32_t reg_day;
	uint32_t registrar;
} graph__dattr;

/* A URL-level link as sorted during the ingest. */
typedef struct graph__lrec {
	uint32_t to_dom, from_dom, to_url, from_url, anchor, rel, ts, type;
} graph__lrec;

/* A capture (CDX line or WAT response). */
typedef struct graph__crec {
	uint32_t dom, url, ts, status, mime;
} graph__crec;

typedef struct graph__edge {
	uint32_t a, b;
} graph__edge;

typedef struct graph__builder {
	const graph_ingest_opts *opts;
	graph__dict doms;      /* reversed domain names, id = first seen */
	graph__dict urls, anchors, strs;
	graph__dattr *attr;
	size_t attr_cap;
	uint32_t *vmap;        /* vertex id of the input -> domain id */
	size_t vmap_len, vmap_cap;
	graph__xsort *edges;   /* (from, to) */
	graph__xsort *links;   /* by target domain */
	graph__xsort *outl;    /* by source domain */
	graph__xsort *caps;    /* by domain, URL, newest first */
	uint32_t as_of;
	uint32_t flags;        /* GRAPH__META_* */
	void *inputs_json;     /* json_t array for the manifest */
	uint64_t records, malformed;
	const char *phase;
	int64_t last_progress_ms;
	graph_ingest_stats *stats;
} graph__builder;

/* Reads one input into the builder (readers.c). Malformed lines are
 * counted, not fatal; returns 0 or an I/O or memory error. */
int graph__read_input(graph__builder *b, const graph_input *in);

/* Domain id for a reversed name, created when new. */
int graph__b_domain_rev(graph__builder *b, const char *rev, size_t len,
			uint32_t *id);
/* Domain id for a forward registrable domain name. */
int graph__b_domain(graph__builder *b, const char *domain, uint32_t *id);

/* Reports progress when due. */
void graph__b_progress(graph__builder *b, uint64_t done, uint64_t total);

/* Output files of the index, by name. */
int graph__write_file(const char *dir, const char *name, const void *data,
		      size_t len);

#endif

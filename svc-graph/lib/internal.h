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

#include <seo/errors.h>
#include <seo/tech.h>

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

/* A new file in `dir`, unlinked at once so that it vanishes with the
 * process whatever happens (the caller closes *fd); SEO_EIO, logged with
 * `what` it was for, when it cannot be made. */
int graph__tmp_fd(const char *dir, const char *what, int *fd);

/* ---- the memory budget of an ingest ---- */

/*
 * --mem-mb in bytes. Sort buffers (with the scratch space of sorting
 * them), dictionaries and the resident shares of mapped arrays take from
 * it and give back; nothing here allocates, it only keeps the count.
 */
typedef struct graph__mem {
	size_t cap;
	size_t used;
} graph__mem;

static inline size_t graph__mem_free(const graph__mem *m)
{
	return m->used < m->cap ? m->cap - m->used : 0;
}

/* ---- file-backed arrays ---- */

/*
 * A file mapped MAP_SHARED whose resident pages are bounded: accesses
 * mark the blocks of the mapping they may fault in. The share of resident
 * bytes grows a block at a time from the pool, up to `max_share`; when it
 * can grow no more, every page of the mapping is dropped (MADV_DONTNEED).
 * The data stays in the file and the page cache, from which the next
 * access faults it back, and the kernel writes dirty pages back on its
 * own. So RSS stays within the share whatever the file's size; an array
 * within its share is never dropped, and sequential access costs a page
 * fault per page, as reading the file would.
 */
typedef struct graph__marr {
	char *p;           /* the mapping; NULL while nothing is mapped */
	size_t len;        /* bytes in use */
	size_t mapped;     /* bytes mapped (the file's size) */
	graph__mem *pool;  /* where the share comes from; may be NULL */
	size_t share;      /* resident bytes allowed, taken from the pool */
	size_t max_share;
	size_t touched;    /* bytes of the blocks marked */
	size_t last_blk;   /* the block marked last */
	uint64_t *seen;    /* a bit per block, set since the last drop */
	int fd;
} graph__marr;

/* Blocks of 64 KiB: on a read fault the kernel maps up to that much of
 * what the page cache holds around the page (fault-around). */
#define GRAPH__BLOCK_SHIFT 16

/* An array that maps nothing (what _close() leaves). */
void graph__marr_init(graph__marr *m);
/* A writable array in a new file: `dir/name`, or an unlinked temporary
 * file in `dir` when name is NULL. Empty until graph__marr_resize(). */
int graph__marr_create(graph__marr *m, const char *dir, const char *name,
		       graph__mem *pool, size_t max_share);
/* Maps an existing file read-only (an empty file maps nothing). */
int graph__marr_open(graph__marr *m, const char *path, graph__mem *pool,
		     size_t max_share);
/* Sets the bytes in use, growing the file and the mapping (which may
 * move: pointers from graph__marr_at() are then stale). New bytes read
 * as zeros. */
int graph__marr_resize(graph__marr *m, size_t len);
/* The share that keeps an array of `len` bytes resident whole. */
size_t graph__marr_fit(size_t len);
/* Takes up to `bytes` more share from the pool at once (within
 * max_share and what the pool has free). */
void graph__marr_reserve(graph__marr *m, size_t bytes);
/* Drops every resident page and gives the share back to the pool. */
void graph__marr_shrink(graph__marr *m);
/* Marks block `blk`: a bigger share, or every resident page dropped. */
void graph__marr_mark(graph__marr *m, size_t blk);
/* Cuts the file to the bytes in use and writes it to disk. */
int graph__marr_sync(graph__marr *m);
/* Unmaps, closes, frees what the array allocated and gives the share
 * back (the struct is the caller's). */
void graph__marr_close(graph__marr *m);

/* `n` (at least 1) bytes at `off`, counted against the share. */
static inline void *graph__marr_at(graph__marr *m, size_t off, size_t n)
{
	size_t blk = off >> GRAPH__BLOCK_SHIFT;
	size_t last = (off + n - 1) >> GRAPH__BLOCK_SHIFT;

	for (; blk <= last; blk++)
		if (!(m->seen[blk >> 6] >> (blk & 63) & 1))
			graph__marr_mark(m, blk);
	return m->p + off;
}

static inline uint32_t *graph__marr_u32(graph__marr *m, uint32_t i)
{
	return graph__marr_at(m, (size_t)i * sizeof(uint32_t),
			      sizeof(uint32_t));
}

/* ---- external sort of fixed-size records ---- */

/* Moves heap[i] down a binary min-heap of `len` indices ordered by
 * less(ctx, a, b) (the merges of sorted runs). */
void graph__sift_down(size_t *heap, size_t len, size_t i,
		      int (*less)(const void *ctx, size_t a, size_t b),
		      const void *ctx);

typedef int (*graph__cmp_fn)(const void *a, const void *b);
typedef struct graph__xsort graph__xsort;

/* Orders graph__edge records by (a, b); a sort given this comparison
 * uses a radix sort. */
int graph__cmp_pair(const void *a, const void *b);

/*
 * A sort whose buffer grows up to `mem_bytes` while `pool` (may be NULL)
 * has room for it and its sorting scratch (as much again), its first
 * sixteenth regardless; a full buffer is written out as a sorted run to
 * an unlinked file in tmp_dir (past 128 runs the 64 smallest are merged
 * into one). The pool is charged for the buffer, the scratch until the
 * last sort, and the read buffers of the merge. graph__xsort_free() frees
 * everything and gives the charge back. With `cmp` NULL it is a spool:
 * the same bounded buffer and runs, but nothing sorted, and the records
 * come back in no particular order.
 */
int graph__xsort_new(size_t recsize, graph__cmp_fn cmp, size_t mem_bytes,
		     const char *tmp_dir, graph__mem *pool,
		     graph__xsort **out);
int graph__xsort_add(graph__xsort *s, const void *rec);
/* Before finish: writes what the buffer holds as a run and frees the
 * buffer, giving its share back to the pool. */
int graph__xsort_release(graph__xsort *s);
/* Bytes of the pool release() would give back (0 once finished). */
size_t graph__xsort_held(const graph__xsort *s);
/* Ends the input; records then come out in order from _next(). */
int graph__xsort_finish(graph__xsort *s);
/* 1 with *rec (valid until the next call), 0 at the end, or SEO_EIO. */
int graph__xsort_next(graph__xsort *s, const void **rec);
uint64_t graph__xsort_count(const graph__xsort *s);
/* Runs written to disk, merged ones included. */
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
/* Bytes allocated (strings, offsets, hash table). */
size_t graph__dict_bytes(const graph__dict *d);
/* Frees the hash table: strings stay readable by id, nothing more can be
 * found or interned. */
void graph__dict_freeze(graph__dict *d);
void graph__dict_free(graph__dict *d);

/*
 * A dictionary of URLs or anchors that spills when the budget is short.
 * Reading gives each string a temporary id, first seen first within a
 * generation (the strings in memory at once); a generation the budget
 * cannot keep is written sorted as a run to an unlinked file in tmp_dir
 * and memory starts over, so a string may have a temporary id in each
 * generation. When reading ends, the runs and the last generation merge:
 * the final id of a string is its rank among the distinct strings in
 * byte order, whatever the budget, which keeps the index the same byte for
 * byte and lets string order be id order. The caller fills `map`
 * (temporary id -> final id) from the merge. `pool` is charged for the
 * generation in memory and the runs' buffers (the sort of a generation
 * takes less than its hash table gives back).
 */
struct graph__srun;

typedef struct graph__sdict {
	graph__dict cur;       /* this generation: temporary id base + i */
	uint32_t base;
	graph__mem *pool;
	size_t charged;
	char tmp_dir[4096];
	struct graph__srun *runs;  /* while merging, runs[n_runs] is cur */
	size_t n_runs;
	uint64_t spilled;      /* runs written, merged ones included */
	int merging;
	uint32_t *perm;        /* cur's ids in string order, while merging */
	size_t *heap, heap_len, popped;
	char *prev;            /* the string merged last */
	size_t prev_cap;
	uint32_t n;            /* distinct strings merged so far */
	graph__marr map;       /* u32 per temporary id: its final id */
} graph__sdict;

/* An empty dictionary; SEO_EINVAL when tmp_dir is too long. */
int graph__sdict_init(graph__sdict *d, const char *tmp_dir,
		      graph__mem *pool);
/* The temporary id of `len` bytes of `s`, interned when new;
 * SEO_ETOOBIG past 2^32 - 2 temporary ids, SEO_EINVAL once merging. */
int graph__sdict_intern(graph__sdict *d, const char *s, size_t len,
			uint32_t *tmp);
/* Bytes a spill would give back (0 once merging). */
size_t graph__sdict_held(const graph__sdict *d);
/* Temporary ids given (the length of `map`). */
uint32_t graph__sdict_tmp_ids(const graph__sdict *d);
/* Writes the generation in memory as a run (past 32 runs, merges them
 * into one) and starts a new one; 0, SEO_EIO or SEO_ENOMEM. */
int graph__sdict_spill(graph__sdict *d);
/* Ends reading and starts the merge. */
int graph__sdict_merge(graph__sdict *d);
/* 1 with the next string in byte order (valid until the next call), one
 * of its temporary ids and its final id, *fresh set the first time it
 * comes (a string comes once per temporary id, in a row); 0 at the end
 * (`n` is then the number of distinct strings); SEO_EIO or SEO_ENOMEM. */
int graph__sdict_next(graph__sdict *d, const char **s, uint32_t *tmp,
		      uint32_t *id, int *fresh);
/* Frees the runs and the strings once merged (not `map`). */
void graph__sdict_end(graph__sdict *d);
/* Frees everything, `map` included, and gives the charge back. */
void graph__sdict_free(graph__sdict *d);

/* The final id of temporary id `tmp`, once `map` is filled. */
static inline uint32_t graph__sdict_id(graph__sdict *d, uint32_t tmp)
{
	return tmp == GRAPH__NONE ? GRAPH__NONE :
				    *graph__marr_u32(&d->map, tmp);
}

/* ---- names ---- */

/* Reverses the labels of `name` ("www.example.com" <-> "com.example.www")
 * into `out` (len + 1 bytes). */
void graph__reverse_labels(const char *name, size_t len, char *out);

/* Registrable domain of the host of an absolute http(s) or
 * scheme-relative URL, the host read by seo_domain_normalize(), into `out`
 * (GRAPH_DOMAIN_MAX + 1 bytes). 0, or SEO_EINVAL when the URL has no
 * usable host. */
int graph__url_domain(const char *url, char *out);

/* Registrable domain of a normalised name (seo_domain_normalize()) into
 * `out` (GRAPH_DOMAIN_MAX + 1 bytes); a name that is itself a public
 * suffix, or unknown to the list, is copied as it is. */
void graph__registrable(const char *name, char *out);

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

/* A change to a domain's record, sorted by id and applied while
 * domains.bin is written in order: the inputs that name domains in
 * another order (ranks, Tranco, whois) never write it at random. */
typedef struct graph__upd {
	uint32_t id;
	uint32_t seq;     /* order of arrival: a later change wins */
	uint32_t kind;    /* GRAPH__UPD_* */
	uint32_t a, b, c;
} graph__upd;

enum {
	GRAPH__UPD_RANKS,    /* a hc_pos, b pr_pos, c hosts (when 0) */
	GRAPH__UPD_TRANCO,   /* a rank (the best wins) */
	GRAPH__UPD_WHOIS,    /* a registered_day, b registrar */
	GRAPH__UPD_LINKING,  /* a, b: linking_hosts, low and high */
};

/* Domain names while reading (build.c). */
typedef struct graph__names graph__names;

/*
 * The state of an ingest. Memory: `mem` counts what the sorts, the
 * dictionaries and the resident shares of `dom` and `vmap` (and of the
 * mapped names) hold; the records themselves live in files.
 */
typedef struct graph__builder {
	const graph_ingest_opts *opts;
	const char *dir;       /* the index directory being written */
	graph__mem mem;        /* --mem-mb */
	graph__names *names;   /* ids below `base`: the vertices file's
				* names, in byte order, in mapped files */
	uint32_t base;
	graph__dict doms;      /* reversed names of the other domains,
				* id - base, first seen */
	graph__sdict urls, anchors;  /* temporary ids while reading */
	graph__dict strs;
	size_t dict_charged;   /* what doms, strs and the names' fence hold
				* of mem */
	graph__marr dom;       /* domains.bin: a graph__dom per id */
	uint32_t n_doms;
	graph__marr vmap;      /* vertex id -> domain id (u32), only once the
				* vertices file stops giving id == vertex id */
	int vmap_mapped;
	uint64_t vmap_len;     /* 1 + the largest vertex id seen */
	graph__xsort *edges;   /* (from, to) */
	graph__xsort *links_in; /* URL-level links as read (a spool: their
				 * URL and anchor ids are not final yet) */
	graph__xsort *caps_in;  /* captures as read (a spool) */
	graph__xsort *links;   /* once final: by target domain */
	graph__xsort *outl;    /* once final: by source domain */
	graph__xsort *caps;    /* once final: by domain, URL, newest first */
	graph__xsort *plats;   /* (platform, domain) pairs */
	graph__xsort *upd;     /* graph__upd by id, then arrival */
	seo_tech_rules *tech;  /* the platforms' rules; NULL without WAT */
	uint64_t *plat_seen;   /* recent (domain, platform bits), so that a
				* domain's pages do not repeat pairs */
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

/* Domain id for a name of the vertices file: the next id while the file
 * is in byte order, else as graph__b_domain_rev(). */
int graph__b_vertex(graph__builder *b, const char *rev, size_t len,
		    uint32_t *id);
/* Records that vertex `vid` of the vertices file is domain `id`. */
int graph__b_vertex_map(graph__builder *b, uint64_t vid, uint32_t id);
/* Domain id for a reversed name, created when new. */
int graph__b_domain_rev(graph__builder *b, const char *rev, size_t len,
			uint32_t *id);
/* Domain id for a forward registrable domain name. */
int graph__b_domain(graph__builder *b, const char *domain, uint32_t *id);
/* Queues a change to domain `id` (GRAPH__UPD_*). */
int graph__b_update(graph__builder *b, uint32_t id, uint32_t kind,
		    uint32_t x, uint32_t y, uint32_t z);
/* Interns a string in one of b's dictionaries, charged to the budget;
 * SEO_ETOOBIG (logged) when the dictionaries outgrow it. */
int graph__b_intern(graph__builder *b, graph__dict *d, const char *s,
		    size_t len, uint32_t *id);
/* Temporary id of a URL or anchor (b->urls, b->anchors), the budget kept
 * by spilling a generation when short. */
int graph__b_string(graph__builder *b, graph__sdict *d, const char *s,
		    size_t len, uint32_t *tmp);

/* Domain id of vertex `vid`; SEO_ENOTFOUND when the vertices file did not
 * list it. */
static inline int graph__b_vertex_id(graph__builder *b, uint64_t vid,
				     uint32_t *id)
{
	if (vid >= b->vmap_len)
		return SEO_ENOTFOUND;
	*id = b->vmap_mapped ? *graph__marr_u32(&b->vmap, (uint32_t)vid) :
			       (uint32_t)vid;
	return *id == GRAPH__NONE ? SEO_ENOTFOUND : 0;
}

/* The record of domain `id` in domains.bin; valid until the next domain
 * is created. Reading writes only new records: changes to others are
 * queued (graph__b_update()). */
static inline graph__dom *graph__b_dom(graph__builder *b, uint32_t id)
{
	return graph__marr_at(&b->dom, (size_t)id * sizeof(graph__dom),
			      sizeof(graph__dom));
}

/* Reports progress when due. */
void graph__b_progress(graph__builder *b, uint64_t done, uint64_t total);

/* ---- platforms (platform_index.c) ---- */

/* Index into graph_platforms() of a technology name of the rule file, or
 * -1 when it is no supported platform. */
int graph__platform_of_tech(const char *tech);

/* The platform section of an open index (index.c), checked at open. */
typedef struct graph__platview {
	const uint64_t *off;      /* GRAPH_PLATFORM_COUNT + 1, into doms */
	const graph__pdom *doms;  /* per platform, authority desc, then name */
	const uint32_t *byname;   /* per platform, positions in its doms
				   * group in domain-name order */
	const char *tld_str;
	const uint64_t *tld_off;
	uint64_t n_tlds;
	const graph__dom *dom;    /* domains.bin */
} graph__platview;

void graph__index_platforms(const graph_index *ix, graph__platview *v);

/* Forward name of domain `id` of an open index (in the mapping). */
const char *graph__index_domain_name(const graph_index *ix, uint32_t id);

/* ---- similar domains (index.c) ---- */

/* How graph__similar_domains() answers: the stored rows when they hold
 * the page, else the cheaper count for the domain; or the way given (the
 * tests compare them). STORED answers SEO_ENOTFOUND when the index does
 * not store the page. */
typedef enum graph__sim_method {
	GRAPH__SIM_AUTO,
	GRAPH__SIM_FORWARD,
	GRAPH__SIM_REVERSE,
	GRAPH__SIM_STORED,
} graph__sim_method;

/* graph_similar_domains(), counted by `method`. */
int graph__similar_domains(const graph_index *ix, const char *domain,
			   const graph_page *pg, graph__sim_method method,
			   seo_arena *a, graph_similar_row **rows, size_t *n,
			   uint64_t *total);

/* Output files of the index, by name. */
int graph__write_file(const char *dir, const char *name, const void *data,
		      size_t len);

#endif

/*
 * ingest.h: what the ingest's files share; not a public API. The format
 * they write is ../format/format.h's.
 */
#ifndef GRAPH_INGEST_INTERNAL_H
#define GRAPH_INGEST_INTERNAL_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include <zlib.h>

#include <seo/errors.h>
#include <seo/tech.h>

#include "format.h"
#include "graph_ingest.h"

/* ---- growable arrays ---- */

typedef struct graph__buf {
	char *p;
	size_t len, cap;
} graph__buf;

int graph__buf_put(graph__buf *b, const void *data, size_t n);
int graph__buf_reserve(graph__buf *b, size_t total);

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

/* The longest line of any input format, end of line excluded: 1 MiB,
 * fifty times the longest line of the real crawl samples. A longer line
 * is malformed and dropped as it streams by, so that the reader's buffer
 * stays within a few MiB whatever the input. */
#define GRAPH__LINE_MAX ((size_t)1 << 20)
/* The largest block graph__reader_bytes() reads (a WARC record's
 * Content-Length). */
#define GRAPH__RECORD_MAX ((size_t)64 << 20)
/* graph__reader_line(): a line longer than GRAPH__LINE_MAX was skipped. */
#define GRAPH__LINE_TOO_LONG 2

int graph__reader_open(graph__reader *r, const char *path);
/* Returns 1 with the next line (no end-of-line bytes, NUL-terminated,
 * valid until the next call), GRAPH__LINE_TOO_LONG when the next line was
 * longer than GRAPH__LINE_MAX (consumed, counted in r->line, not
 * returned), 0 at the end, or SEO_EIO. */
int graph__reader_line(graph__reader *r, char **line, size_t *len);
/* Reads exactly `n` (at most GRAPH__RECORD_MAX) bytes into a buffer valid
 * until the next call; 1, 0 when the input ends first, or SEO_EIO. */
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

/* ---- fields of the inputs (fields.c) ---- */

/* Registrable domain of the host of an absolute http(s) or
 * scheme-relative URL, the host read by seo_domain_normalize(), into `out`
 * (GRAPH_DOMAIN_MAX + 1 bytes). 0, or SEO_EINVAL when the URL has no
 * usable host. */
int graph__url_domain(const char *url, char *out);

/* Decodes the HTML character references the WAT extractor leaves in
 * attribute values (&amp; &lt; &gt; &quot; &#39; &#NN;) in place. */
size_t graph__html_unescape(char *s, size_t len);

/* "YYYY-MM-DDThh:mm:ssZ" or "YYYYMMDDhhmmss" to Unix seconds; 0 when
 * malformed. */
int64_t graph__parse_time(const char *s);

/* ---- the ingest: readers.c parses, the write_*.c write the index ---- */

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

/* Domain names while reading (domains.c). */
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

/* ---- writing the index ---- */

/* Resident share of arrays read or written in order. */
#define SEQ_SHARE ((size_t)4 << 20)

#define CMP(x, y) do { if ((x) != (y)) return (x) < (y) ? -1 : 1; } while (0)

/*
 * Makes room in the array at *vp (a pointer to any element type, `size`
 * bytes each) for element `n`, doubling *cap from `first`. Returns 0 or
 * SEO_ENOMEM (the array stays as it was).
 */
int graph__grow(void *vp, size_t n, size_t *cap, size_t size, size_t first);

/* A file of the index streamed out (outfile.c). */
typedef struct graph__wfile {
	FILE *f;
	uint64_t bytes;
	char path[8400];
} graph__wfile;

/* Creates dir/name, or with `append` continues it (bytes counts from its
 * current size). 0 or SEO_EIO (logged). */
int graph__w_open_mode(graph__wfile *w, const char *dir, const char *name,
		       int append);
/* graph__w_open_mode() creating the file. */
int graph__w_open(graph__wfile *w, const char *dir, const char *name);
/* Flushes, syncs and closes; 0 or SEO_EIO. Closing a closed file is 0. */
int graph__w_close(graph__wfile *w);

/* Logs that a write to `w` failed; SEO_EIO. */
int graph__w_failed(const graph__wfile *w);

/* Appends `n` bytes; 0 or SEO_EIO (logged). */
static inline int graph__w_put(graph__wfile *w, const void *p, size_t n)
{
	if (n && fwrite(p, 1, n, w->f) != n)
		return graph__w_failed(w);
	w->bytes += n;
	return 0;
}

/* An offsets file: value of every id up to and including `id`. */
typedef struct graph__offw {
	graph__wfile w;
	uint64_t next; /* next id whose offset is due */
} graph__offw;

/* Writes `value` as the offset of every id not yet written up to `id`. */
int graph__off_upto(graph__offw *o, uint64_t id, uint64_t value);

/* Skip entries of long lists as they are written (inskip.*, linkskip.*;
 * docs/index-format.md): the lists come in key order, and a list's
 * directory entry follows its last skip entry. */
typedef struct graph__skipw {
	graph__wfile dir, bin;
	uint64_t entries;  /* in bin so far */
	uint64_t first;    /* the current list's first entry */
	uint32_t key;      /* the current list */
} graph__skipw;

/* Creates name.dir and name.bin in `dir`; 0 or SEO_EIO. */
int graph__skip_open(graph__skipw *s, const char *dir, const char *name);
/* Appends the next skip entry (`size` bytes) of list `key`. */
int graph__skip_add(graph__skipw *s, uint32_t key, const void *e,
		    size_t size);
/* Writes the last directory entry and closes both files. */
int graph__skip_close(graph__skipw *s);

/* Output files of the index, by name. */
int graph__write_file(const char *dir, const char *name, const void *data,
		      size_t len);

/* ---- the budget (budget.c) ---- */

/*
 * Makes `need` more bytes fit in the budget if it can: writes sort
 * buffers and dictionary generations out, largest first, then drops the
 * resident pages of the mapped arrays of the reading phase (they take a
 * share again as they are used).
 */
int graph__mem_make_room(graph__builder *b, size_t need);

/* A mapped array of `len` bytes (named in the index directory, or an
 * unlinked temporary file when name is NULL) that may keep up to
 * `max_share` resident, of which `reserve` at once when the budget can
 * make room for it. */
int graph__b_array(graph__builder *b, graph__marr *m, const char *name,
		   size_t len, size_t max_share, size_t reserve);

/* Maps a file of the index read-only. */
int graph__b_map(graph__builder *b, graph__marr *m, const char *name,
		 size_t max_share);

/* Counts what a dictionary (or the names' fence) grew by; SEO_ETOOBIG
 * (logged) when nothing else can make room for it. */
int graph__dict_grew(graph__builder *b, size_t bytes);

/* Frees the dictionaries' hash tables once nothing more is looked up. */
void graph__freeze_dicts(graph__builder *b);

/* ---- domain names (domains.c) ---- */

enum { NAMES_OPEN, NAMES_STREAM, NAMES_SORTED, NAMES_DICT };

/* One name in this many is kept in memory, to find the others by. */
#define FENCE_EVERY 32

/*
 * While the vertices file lists its names in byte order (the contract's
 * lexicographic order of the reversed name), each name goes straight to
 * domrev.* and domfwd.* with the next id: no hash table holds them. A
 * name is then found by a binary search of every FENCE_EVERY-th name (in
 * memory) and a scan of at most that many in the mapped domrev.str.
 * Domains met only in other inputs get the ids from b->base on, in
 * b->doms. Without a vertices file, or with one out of order, every name
 * is in b->doms and the files are written at the end.
 */
struct graph__names {
	int state;                 /* NAMES_* */
	graph__wfile rev, rev_off, fwd, fwd_off;
	char last[GRAPH_DOMAIN_MAX + 1];
	graph__buf fence;          /* every FENCE_EVERY-th name */
	graph__buf fence_name;     /* u32: where each is in `fence` */
	graph__buf fence_at;       /* u64: where each is in domrev.str */
	size_t fence_charged;      /* what the three hold of b->mem */
	graph__marr off, str;      /* domrev.off, domrev.str, once sealed */
	int pread;                 /* str too big for the budget: lookups
				    * read it (the page cache, not RSS) */
	char blk[FENCE_EVERY * (GRAPH_DOMAIN_MAX + 1)];
};

/* Reversed name of domain `id`. */
const char *graph__dom_rev(graph__builder *b, uint32_t id);

/*
 * The vertices are read: their names are mapped. Lookups read them at
 * random, so the mapping serves them only when it can stay resident
 * whole within an eighth of the budget; else each lookup reads its block
 * of names (from the page cache) rather than fault pages in and out.
 */
int graph__names_seal(graph__builder *b);

/* Gives back what the fence holds. */
void graph__fence_free(graph__builder *b);

/* Frees the names, their files' mappings and the fence. */
void graph__names_free(graph__builder *b);

/* ---- queued changes to domain records (updates.c) ---- */

/* Orders graph__upd by id, then arrival. */
int graph__cmp_upd(const void *pa, const void *pb);

/* A finished sort of changes, read along with the records in id order. */
typedef struct graph__updq {
	graph__xsort *xs;
	const graph__upd *cur;  /* the next change; NULL after the last */
} graph__updq;

/* Finishes the sort `xs` and reads its first change. */
int graph__updq_start(graph__updq *q, graph__xsort *xs);

/* Applies the changes of domain `id` to its record. */
int graph__updq_apply(graph__updq *q, uint32_t id, graph__dom *d);

/* ---- the writing phases, in the order ingest.c runs them ---- */

/* What the phases hand on to each other. */
typedef struct graph__wctx {
	graph__builder *b;
	const char *dir;
	uint32_t n;
	/* u32 columns, in unlinked files: */
	graph__marr refdeg; /* by id: referring domains, while counting */
	graph__marr rank;   /* by id: importance position */
	graph__marr hosts;  /* by position: host count, for the in-links */
	graph__marr byrank; /* byrank.u32, for the in-links */
	graph__xsort *lupd; /* linking hosts by id (graph__upd) */
	uint64_t n_edges;
	uint64_t edge_bytes;
	uint64_t n_links, n_captures;
	uint32_t max_ref;
	uint64_t plat_count[GRAPH_PLATFORM_COUNT];
	uint32_t *heavy;    /* positions of the heavy domains, ascending
			     * (graph__sim_heavy(): at most 16 E / n) */
	size_t n_heavy, heavy_cap;
} graph__wctx;

/* Ends a sort of the reading phase, once written out (ingest.c). */
void graph__sort_done(graph__builder *b, graph__xsort **s);

/* Each phase returns 0, SEO_EIO or SEO_ENOMEM. */

/* stage.off / stage.dat: the deduplicated domain graph in reading ids,
 * as delta varints, kept on disk until the importance ranks are known.
 * Counts out-degrees (in order) and in-degrees (at random, in a column). */
int graph__write_stage(graph__wctx *c);

/*
 * Applies the queued ranks, Tranco and whois facts and scores every
 * domain, in id order; then sorts them into the importance order (an
 * external sort, not a sort of the records in place): byrank.u32 in
 * order, the rank column at random, the host counts by position.
 */
int graph__rank_domains(graph__wctx *c);

/* Re-reads the stage into the out- and in-link CSRs, in rank space. */
int graph__write_csrs(graph__wctx *c);

/* domains.bin's importance positions and linking hosts, from the rank
 * column and the in-link pass's sums, in id order. */
int graph__write_ranks(graph__wctx *c);

/*
 * Sorts the records of the spool at *spool (as read, in no order, their
 * URL and anchor ids temporary) into the `n` new sorts *out[i] of orders
 * cmp[i], each record through `final` once: the ids are final, so equal
 * records lie next to each other, which they need not do on temporary
 * ids (a string spilled in several generations has one in each). The
 * spool is freed; the sorts are finished, and the caller's to free.
 */
int graph__sort_final(graph__builder *b, graph__xsort **spool, size_t size,
		      void (*final)(graph__builder *b, void *rec),
		      const graph__cmp_fn *cmp, graph__xsort **const *out,
		      size_t n);

/* Sorts the links once their ids are final, by target for here and by
 * source for graph__write_outbound(). */
int graph__write_links(graph__wctx *c);

/* outl.*: the links by source domain, grouped, most frequent first. */
int graph__write_outbound(graph__wctx *c);

/* The captures come by domain, then URL (whose final ids are the URLs'
 * byte order), newest first: each domain's URL rows are in order. */
int graph__write_captures(graph__wctx *c);

/*
 * plat.off, plat.bin, platname.u32 and plattld.*: the (platform, domain)
 * pairs of the WAT records, one group per platform. A group is held in
 * memory while it is sorted (about 24 bytes and a name per domain).
 */
int graph__write_platforms(graph__wctx *c);

/* name.str and name.off of a dictionary, in id order. */
int graph__write_dict(const char *dir, const char *name,
		      const graph__dict *d);

/* Merges a dictionary of URLs or anchors into name.str and name.off, the
 * strings in byte order, and fills its map of temporary to final ids. */
int graph__write_sdict(graph__wctx *c, const char *name, graph__sdict *d);

/*
 * domrev.*, domfwd.* and domsorted.u32. The names of the vertices file
 * (ids below base) are in the files already and in byte order: the other
 * domains' names follow them, and domsorted merges the two orders.
 */
int graph__write_domain_names(graph__wctx *c);

/* simtop.*: the similar domains of the heavy domains. */
int graph__write_similar(graph__wctx *c);

/*
 * The rule file reduced to what can show a platform: the platforms'
 * technologies and those implying one (WordPress.com implies WordPress),
 * their implies of anything else dropped. Detection of a platform is the
 * same as with the whole file, for a tenth of the patterns per record
 * (rules.c).
 */
int graph__platform_rules(seo_tech_rules **out);

#endif

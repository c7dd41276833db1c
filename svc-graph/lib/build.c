/*
 * build.c: the ingest driver and the index writer.
 *
 * Reading fills dictionaries, the per-domain records of domains.bin (a
 * file-backed array), external sorts (domain edges, platform pairs,
 * changes to domain records) and spools (URL-level links, captures: their
 * URL and anchor ids become final only when reading ends, and they are
 * sorted then). Writing streams each sort once, in domain-id order, into
 * the CSR files of docs/index-format.md. Everything goes to a temporary
 * sibling of the output directory which is renamed into place only when
 * complete.
 *
 * Memory is bounded by --mem-mb (b->mem): the sorts and the dictionaries of
 * URLs and anchors spill runs, per-domain arrays live in files of which
 * only a share stays resident, and the dictionaries of domain names and
 * small strings fail the ingest rather than outgrow the budget.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <jansson.h>
#include <libpsl.h>

#include <seo/errors.h>
#include <seo/log.h>
#include <seo/util.h>

#include "internal.h"

/* Resident share of arrays read or written in order. */
#define SEQ_SHARE ((size_t)4 << 20)

/*
 * Makes room in the array at *vp (a pointer to any element type, `size`
 * bytes each) for element `n`, doubling *cap from `first`. Returns 0 or
 * SEO_ENOMEM (the array stays as it was).
 */
static int grow(void *vp, size_t n, size_t *cap, size_t size, size_t first)
{
	size_t want = *cap ? *cap * 2 : first;
	void *v, *p;

	if (n < *cap)
		return 0;
	memcpy(&v, vp, sizeof(v));
	p = realloc(v, want * size);
	if (!p)
		return SEO_ENOMEM;
	memcpy(vp, &p, sizeof(p));
	*cap = want;
	return 0;
}

/* ---- streamed output files ---- */

typedef struct wfile {
	FILE *f;
	uint64_t bytes;
	char path[8400];
} wfile;

/* Creates dir/name, or with `append` continues it (bytes counts from its
 * current size). */
static int w_open_mode(wfile *w, const char *dir, const char *name,
		       int append)
{
	struct stat st;

	snprintf(w->path, sizeof(w->path), "%s/%s", dir, name);
	w->bytes = 0;
	w->f = fopen(w->path, append ? "abe" : "wbe");
	if (!w->f || (append && fstat(fileno(w->f), &st) != 0)) {
		log_error("cannot create \"%s\": %s", w->path, strerror(errno));
		if (w->f)
			fclose(w->f);
		w->f = NULL;
		return SEO_EIO;
	}
	if (append)
		w->bytes = (uint64_t)st.st_size;
	setvbuf(w->f, NULL, _IOFBF, 1 << 20);
	return 0;
}

static int w_open(wfile *w, const char *dir, const char *name)
{
	return w_open_mode(w, dir, name, 0);
}

static int w_put(wfile *w, const void *p, size_t n)
{
	if (n && fwrite(p, 1, n, w->f) != n) {
		log_error("cannot write \"%s\": %s", w->path, strerror(errno));
		return SEO_EIO;
	}
	w->bytes += n;
	return 0;
}

static int w_close(wfile *w)
{
	int rc = 0;

	if (!w->f)
		return 0;
	if (fflush(w->f) != 0 || fsync(fileno(w->f)) != 0) {
		log_error("cannot write \"%s\": %s", w->path, strerror(errno));
		rc = SEO_EIO;
	}
	fclose(w->f);
	w->f = NULL;
	return rc;
}

/* An offsets file: value of every id up to and including `id`. */
typedef struct offw {
	wfile w;
	uint64_t next; /* next id whose offset is due */
} offw;

static int off_upto(offw *o, uint64_t id, uint64_t value)
{
	int rc = 0;

	while (!rc && o->next <= id) {
		rc = w_put(&o->w, &value, sizeof(value));
		o->next++;
	}
	return rc;
}

/* Skip entries of long lists as they are written (inskip.*, linkskip.*;
 * docs/index-format.md): the lists come in key order, and a list's
 * directory entry follows its last skip entry. */
typedef struct skipw {
	wfile dir, bin;
	uint64_t entries;  /* in bin so far */
	uint64_t first;    /* the current list's first entry */
	uint32_t key;      /* the current list */
} skipw;

static int skip_open(skipw *s, const char *dir, const char *name)
{
	char path[64];
	int rc;

	s->entries = s->first = 0;
	s->key = GRAPH__NONE;
	snprintf(path, sizeof(path), "%s.dir", name);
	rc = w_open(&s->dir, dir, path);
	snprintf(path, sizeof(path), "%s.bin", name);
	return rc ? rc : w_open(&s->bin, dir, path);
}

static int skip_flush(skipw *s)
{
	graph__skipdir d = { s->key, (uint32_t)(s->entries - s->first),
			     s->first };

	if (s->entries == s->first)
		return 0;
	s->first = s->entries;
	return w_put(&s->dir, &d, sizeof(d));
}

/* Appends the next skip entry (`size` bytes) of list `key`. */
static int skip_add(skipw *s, uint32_t key, const void *e, size_t size)
{
	int rc = 0;

	if (key != s->key) {
		rc = skip_flush(s);
		s->key = key;
	}
	if (!rc)
		rc = w_put(&s->bin, e, size);
	s->entries++;
	return rc;
}

static int skip_close(skipw *s)
{
	int rc = skip_flush(s);

	if (!rc)
		rc = w_close(&s->dir);
	if (!rc)
		rc = w_close(&s->bin);
	w_close(&s->dir);
	w_close(&s->bin);
	return rc;
}

/* ---- domain names, kept in files ---- */

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
	wfile rev, rev_off, fwd, fwd_off;
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

/* ---- the budget ---- */

/* The sorts still filling, whose buffers can go to disk to make room. */
static size_t open_sorts(graph__builder *b, graph__xsort **s)
{
	graph__xsort *all[] = { b->edges, b->links_in, b->caps_in, b->links,
				b->outl, b->caps, b->plats, b->upd };
	size_t n = 0;

	for (size_t i = 0; i < sizeof(all) / sizeof(all[0]); i++)
		if (all[i])
			s[n++] = all[i];
	return n;
}

/*
 * Makes `need` more bytes fit in the budget if it can: writes sort
 * buffers and dictionary generations out, largest first, then drops the
 * resident pages of the mapped arrays of the reading phase (they take a
 * share again as they are used).
 */
static int mem_make_room(graph__builder *b, size_t need)
{
	graph__marr *arrays[] = { &b->dom, &b->vmap, &b->names->str,
				  &b->names->off };
	graph__sdict *dicts[] = { &b->urls, &b->anchors };
	graph__xsort *s[16];
	size_t n = open_sorts(b, s);

	while (b->mem.used + need > b->mem.cap) {
		graph__xsort *big = NULL;
		graph__sdict *bigd = NULL;
		size_t most = 0;
		int rc;

		for (size_t i = 0; i < n; i++)
			if (graph__xsort_held(s[i]) > most) {
				most = graph__xsort_held(s[i]);
				big = s[i];
			}
		for (size_t i = 0; i < sizeof(dicts) / sizeof(dicts[0]); i++)
			if (graph__sdict_held(dicts[i]) > most) {
				most = graph__sdict_held(dicts[i]);
				bigd = dicts[i];
			}
		if (!most)
			break;
		rc = bigd ? graph__sdict_spill(bigd) :
			    graph__xsort_release(big);
		if (rc)
			return rc;
	}
	for (size_t i = 0; i < sizeof(arrays) / sizeof(arrays[0]) &&
			   b->mem.used + need > b->mem.cap; i++)
		graph__marr_shrink(arrays[i]);
	return 0;
}

/* A mapped array of `len` bytes (named in the index directory, or an
 * unlinked temporary file when name is NULL) that may keep up to
 * `max_share` resident, of which `reserve` at once when the budget can
 * make room for it. */
static int b_array(graph__builder *b, graph__marr *m, const char *name,
		   size_t len, size_t max_share, size_t reserve)
{
	int rc = mem_make_room(b, reserve);

	if (!rc)
		rc = graph__marr_create(m, name ? b->dir : b->opts->tmp_dir,
					name, &b->mem, max_share);
	if (!rc && len > 0)
		rc = graph__marr_resize(m, len);
	if (!rc)
		graph__marr_reserve(m, reserve);
	return rc;
}

/* Maps a file of the index read-only. */
static int b_map(graph__builder *b, graph__marr *m, const char *name,
		 size_t max_share)
{
	char path[8400];

	snprintf(path, sizeof(path), "%s/%s", b->dir, name);
	return graph__marr_open(m, path, &b->mem, max_share);
}

/* Counts what a dictionary (or the names' fence) grew by; SEO_ETOOBIG
 * (logged) when nothing else can make room for it. */
static int dict_grew(graph__builder *b, size_t bytes)
{
	int rc;

	b->dict_charged += bytes;
	b->mem.used += bytes;
	rc = mem_make_room(b, 0);
	if (rc || b->mem.used <= b->mem.cap)
		return rc;
	log_error("the dictionaries of domain names and small strings need "
		  "%zu MiB and the budget (--mem-mb %zu) has no more room: "
		  "raise --mem-mb",
		  b->dict_charged >> 20, b->mem.cap >> 20);
	return SEO_ETOOBIG;
}

int graph__b_intern(graph__builder *b, graph__dict *d, const char *s,
		    size_t len, uint32_t *id)
{
	size_t before = graph__dict_bytes(d), after;
	int rc = graph__dict_intern(d, s, len, id);

	if (rc || (after = graph__dict_bytes(d)) == before)
		return rc;
	return dict_grew(b, after - before);
}

int graph__b_string(graph__builder *b, graph__sdict *d, const char *s,
		    size_t len, uint32_t *tmp)
{
	int rc = graph__sdict_intern(d, s, len, tmp);

	if (!rc && b->mem.used > b->mem.cap)
		rc = mem_make_room(b, 0);
	return rc;
}

/* Frees the dictionaries' hash tables once nothing more is looked up. */
static void freeze_dicts(graph__builder *b)
{
	graph__dict *d[] = { &b->doms, &b->strs };

	for (size_t i = 0; i < sizeof(d) / sizeof(d[0]); i++) {
		size_t before = graph__dict_bytes(d[i]);

		graph__dict_freeze(d[i]);
		b->dict_charged -= before - graph__dict_bytes(d[i]);
		b->mem.used -= before - graph__dict_bytes(d[i]);
	}
}

/* ---- domain records ---- */

/* Appends the record of a new domain, which gets id `id`. */
static int new_domain(graph__builder *b, uint32_t id)
{
	int rc;

	if (id != b->n_doms || b->n_doms >= GRAPH__NONE - 1)
		return SEO_ETOOBIG;
	rc = graph__marr_resize(&b->dom,
				((size_t)id + 1) * sizeof(graph__dom));
	if (rc)
		return rc;
	*graph__b_dom(b, id) = (graph__dom){ .registered_day = INT32_MIN,
					     .registrar = GRAPH__NONE,
					     .top_out_domain = GRAPH__NONE };
	b->n_doms++;
	return 0;
}

int graph__b_vertex_map(graph__builder *b, uint64_t vid, uint32_t id)
{
	uint64_t len = b->vmap_len, v = b->vmap_mapped ? len : 0;
	int rc;

	/* the contract's vertices file numbers its lines 0..n-1, which are
	 * our ids too: no map at all */
	if (!b->vmap_mapped && vid == len && id == vid) {
		b->vmap_len++;
		return 0;
	}
	if (!b->vmap_mapped) {
		rc = b_array(b, &b->vmap, NULL, 0, b->mem.cap / 8, 0);
		if (rc)
			return rc;
		b->vmap_mapped = 1;
	}
	if (vid >= len)
		b->vmap_len = vid + 1;
	rc = graph__marr_resize(&b->vmap, b->vmap_len * sizeof(uint32_t));
	if (rc)
		return rc;
	/* a new map starts with the ids so far, which were the vertex ids;
	 * gaps are no vertex */
	for (; v < b->vmap_len; v++)
		*graph__marr_u32(&b->vmap, (uint32_t)v) =
			v < len ? (uint32_t)v : GRAPH__NONE;
	*graph__marr_u32(&b->vmap, (uint32_t)vid) = id;
	return 0;
}

/* ---- domain names ---- */

/* strcmp() of a key of `len` bytes with a NUL-terminated name. */
static int cmp_key(const char *key, size_t len, const char *name)
{
	int c = strncmp(key, name, len);

	return c ? c : name[len] ? -1 : 0;
}

/* Reversed name of domain `id`. */
static const char *dom_rev(graph__builder *b, uint32_t id)
{
	graph__names *nm = b->names;
	const uint64_t *off;

	if (id >= b->base)
		return graph__dict_str(&b->doms, id - b->base);
	off = graph__marr_at(&nm->off, (size_t)id * sizeof(uint64_t),
			     sizeof(uint64_t));
	return graph__marr_at(&nm->str, *off, GRAPH_DOMAIN_MAX + 1);
}

static int names_find(graph__builder *b, const char *key, size_t len,
		      uint32_t *id)
{
	graph__names *nm = b->names;
	const uint32_t *name = (const uint32_t *)nm->fence_name.p;
	const uint64_t *at = (const uint64_t *)nm->fence_at.p;
	size_t n = nm->fence_name.len / sizeof(uint32_t), lo = 0, hi = n;
	size_t span;
	const char *s;
	uint32_t i, end;

	/* the last fence name not after the key */
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (cmp_key(key, len, nm->fence.p + name[mid]) < 0)
			hi = mid;
		else
			lo = mid + 1;
	}
	if (lo == 0)
		return SEO_ENOTFOUND;
	i = (uint32_t)(lo - 1) * FENCE_EVERY;
	end = b->base - i > FENCE_EVERY ? i + FENCE_EVERY : b->base;
	span = (lo < n ? at[lo] : nm->str.len) - at[lo - 1];
	if (!nm->pread) {
		s = graph__marr_at(&nm->str, at[lo - 1], span);
	} else if (pread(nm->str.fd, nm->blk, span, (off_t)at[lo - 1]) ==
		   (ssize_t)span) {
		s = nm->blk;
	} else {
		log_error("cannot read domrev.str: %s", strerror(errno));
		return SEO_EIO;
	}
	for (; i < end; i++, s += strlen(s) + 1) {
		int c = cmp_key(key, len, s);

		if (c <= 0) {
			*id = i;
			return c ? SEO_ENOTFOUND : 0;
		}
	}
	return SEO_ENOTFOUND;
}

/* Keeps every FENCE_EVERY-th name in memory, charged as a dictionary. */
static int fence_add(graph__builder *b, const char *rev, size_t len)
{
	graph__names *nm = b->names;
	size_t before = nm->fence.cap + nm->fence_name.cap + nm->fence_at.cap;
	uint32_t where = (uint32_t)nm->fence.len;
	int rc;

	if (nm->fence.len + len + 1 > UINT32_MAX)
		return SEO_ETOOBIG;
	if ((rc = graph__buf_put(&nm->fence_name, &where, sizeof(where))) ||
	    (rc = graph__buf_put(&nm->fence_at, &nm->rev.bytes,
				 sizeof(nm->rev.bytes))) ||
	    (rc = graph__buf_put(&nm->fence, rev, len)) ||
	    (rc = graph__buf_put(&nm->fence, "", 1)))
		return rc;
	before = nm->fence.cap + nm->fence_name.cap + nm->fence_at.cap - before;
	nm->fence_charged += before;
	return before ? dict_grew(b, before) : 0;
}

static int names_stream(graph__builder *b, const char *rev, size_t len)
{
	graph__names *nm = b->names;
	char fwd[GRAPH_DOMAIN_MAX + 1];
	int rc;

	if (nm->state == NAMES_OPEN) {
		if ((rc = w_open(&nm->rev, b->dir, "domrev.str")) ||
		    (rc = w_open(&nm->rev_off, b->dir, "domrev.off")) ||
		    (rc = w_open(&nm->fwd, b->dir, "domfwd.str")) ||
		    (rc = w_open(&nm->fwd_off, b->dir, "domfwd.off")))
			return rc;
		nm->state = NAMES_STREAM;
	}
	if (b->base % FENCE_EVERY == 0 && (rc = fence_add(b, rev, len)))
		return rc;
	graph__reverse_labels(rev, len, fwd);
	if ((rc = w_put(&nm->rev_off, &nm->rev.bytes, sizeof(uint64_t))) ||
	    (rc = w_put(&nm->rev, rev, len)) ||
	    (rc = w_put(&nm->rev, "", 1)) ||
	    (rc = w_put(&nm->fwd_off, &nm->fwd.bytes, sizeof(uint64_t))) ||
	    (rc = w_put(&nm->fwd, fwd, len + 1)))
		return rc;
	memcpy(nm->last, rev, len);
	nm->last[len] = '\0';
	return 0;
}

/*
 * The vertices are read: their names are mapped. Lookups read them at
 * random, so the mapping serves them only when it can stay resident
 * whole within an eighth of the budget; else each lookup reads its block
 * of names (from the page cache) rather than fault pages in and out.
 */
static int names_seal(graph__builder *b)
{
	graph__names *nm = b->names;
	size_t whole;
	int rc;

	if (nm->state != NAMES_STREAM)
		return 0;
	nm->state = NAMES_SORTED;
	if ((rc = w_close(&nm->rev)) || (rc = w_close(&nm->rev_off)) ||
	    (rc = w_close(&nm->fwd)) || (rc = w_close(&nm->fwd_off)) ||
	    (rc = b_map(b, &nm->off, "domrev.off", b->mem.cap / 32)) ||
	    (rc = b_map(b, &nm->str, "domrev.str", b->mem.cap / 8)))
		return rc;
	whole = graph__marr_fit(nm->str.len);
	if (whole <= nm->str.max_share && (rc = mem_make_room(b, whole)))
		return rc;
	graph__marr_reserve(&nm->str, whole);
	nm->pread = nm->str.share < whole;
	if (nm->pread)
		graph__marr_shrink(&nm->str);
	return 0;
}

/* Gives back what the fence holds. */
static void fence_free(graph__builder *b)
{
	graph__names *nm = b->names;

	b->dict_charged -= nm->fence_charged;
	b->mem.used -= nm->fence_charged;
	nm->fence_charged = 0;
	free(nm->fence.p);
	free(nm->fence_name.p);
	free(nm->fence_at.p);
	memset(&nm->fence, 0, sizeof(nm->fence));
	memset(&nm->fence_name, 0, sizeof(nm->fence_name));
	memset(&nm->fence_at, 0, sizeof(nm->fence_at));
}

/* The vertices file is not in byte order after all: every name so far
 * goes to the hash table, where it gets the id it has, and the files go
 * (they are written whole at the end). */
static int names_to_dict(graph__builder *b)
{
	graph__names *nm = b->names;
	static const char *const files[] = { "domrev.str", "domrev.off",
					     "domfwd.str", "domfwd.off" };
	char path[8400];
	int rc = names_seal(b);

	for (uint32_t i = 0; !rc && i < b->base; i++) {
		const char *r = dom_rev(b, i);
		uint32_t id;

		rc = graph__b_intern(b, &b->doms, r, strlen(r), &id);
	}
	if (rc)
		return rc;
	b->base = 0;
	nm->state = NAMES_DICT;
	fence_free(b);
	graph__marr_close(&nm->off);
	graph__marr_close(&nm->str);
	for (size_t i = 0; i < sizeof(files) / sizeof(files[0]); i++) {
		snprintf(path, sizeof(path), "%s/%s", b->dir, files[i]);
		unlink(path);
	}
	return 0;
}

static void names_free(graph__builder *b)
{
	graph__names *nm = b->names;

	if (!nm)
		return;
	if (nm->rev.f)
		fclose(nm->rev.f);
	if (nm->rev_off.f)
		fclose(nm->rev_off.f);
	if (nm->fwd.f)
		fclose(nm->fwd.f);
	if (nm->fwd_off.f)
		fclose(nm->fwd_off.f);
	graph__marr_close(&nm->off);
	graph__marr_close(&nm->str);
	fence_free(b);
	free(nm);
	b->names = NULL;
}

int graph__b_vertex(graph__builder *b, const char *rev, size_t len,
		    uint32_t *id)
{
	graph__names *nm = b->names;
	int rc;

	if (nm->state == NAMES_OPEN ||
	    (nm->state == NAMES_STREAM && cmp_key(rev, len, nm->last) > 0)) {
		rc = names_stream(b, rev, len);
		if (!rc)
			rc = new_domain(b, b->base);
		if (!rc)
			*id = b->base++;
		return rc;
	}
	if (nm->state == NAMES_STREAM) {
		log_info("the vertices file is not in byte order at \"%s\": "
			 "domain names are kept in memory", rev);
		rc = names_to_dict(b);
		if (rc)
			return rc;
	}
	return graph__b_domain_rev(b, rev, len, id);
}

int graph__b_domain_rev(graph__builder *b, const char *rev, size_t len,
			uint32_t *id)
{
	graph__names *nm = b->names;
	uint32_t before = b->doms.n, did;
	int rc;

	if (nm->state == NAMES_STREAM && (rc = names_seal(b)))
		return rc;
	if (nm->state == NAMES_OPEN)
		nm->state = NAMES_DICT;
	if (b->base > 0 && names_find(b, rev, len, id) == 0)
		return 0;
	rc = graph__b_intern(b, &b->doms, rev, len, &did);
	if (rc)
		return rc;
	*id = b->base + did;
	return b->doms.n == before ? 0 : new_domain(b, *id);
}

int graph__b_domain(graph__builder *b, const char *domain, uint32_t *id)
{
	char rev[GRAPH_DOMAIN_MAX + 1];
	size_t len = strlen(domain);

	if (len > GRAPH_DOMAIN_MAX)
		return SEO_EINVAL;
	graph__reverse_labels(domain, len, rev);
	return graph__b_domain_rev(b, rev, len, id);
}

int graph__b_update(graph__builder *b, uint32_t id, uint32_t kind,
		    uint32_t x, uint32_t y, uint32_t z)
{
	/* the arrival number: how many the sort holds already */
	uint64_t seq = graph__xsort_count(b->upd);
	graph__upd u = { id, (uint32_t)seq, kind, x, y, z };

	if (seq >= UINT32_MAX)
		return SEO_ETOOBIG;
	return graph__xsort_add(b->upd, &u);
}

void graph__b_progress(graph__builder *b, uint64_t done, uint64_t total)
{
	int64_t now = seo_mono_ms();

	if (!b->opts->progress || now - b->last_progress_ms < 500)
		return;
	b->last_progress_ms = now;
	b->opts->progress(b->opts->progress_ctx, b->phase, done, total,
			  b->records);
}

/* ---- comparisons ---- */

#define CMP(x, y) do { if ((x) != (y)) return (x) < (y) ? -1 : 1; } while (0)

/* Links with the same source page, target, anchor, type and rel are one
 * link seen in several crawls: these orders put them next to each other,
 * newest first, so that only the first is kept. */
static int same_link(const graph__lrec *a, const graph__lrec *b)
{
	return a->from_url == b->from_url && a->to_url == b->to_url &&
	       a->anchor == b->anchor && a->type == b->type && a->rel == b->rel;
}

static int cmp_link_by_target(const void *pa, const void *pb)
{
	const graph__lrec *a = pa, *b = pb;

	CMP(a->to_dom, b->to_dom);
	CMP(a->from_dom, b->from_dom);
	CMP(a->from_url, b->from_url);
	CMP(a->to_url, b->to_url);
	CMP(a->anchor, b->anchor);
	CMP(a->type, b->type);
	CMP(a->rel, b->rel);
	CMP(b->ts, a->ts);
	return 0;
}

static int cmp_link_by_source(const void *pa, const void *pb)
{
	const graph__lrec *a = pa, *b = pb;

	CMP(a->from_dom, b->from_dom);
	CMP(a->to_dom, b->to_dom);
	CMP(a->to_url, b->to_url);
	CMP(a->anchor, b->anchor);
	CMP(a->type, b->type);
	CMP(a->from_url, b->from_url);
	CMP(a->rel, b->rel);
	CMP(b->ts, a->ts);
	return 0;
}

static int cmp_cap(const void *pa, const void *pb)
{
	const graph__crec *a = pa, *b = pb;

	CMP(a->dom, b->dom);
	CMP(a->url, b->url);
	CMP(b->ts, a->ts);
	CMP(a->status, b->status);
	CMP(a->mime, b->mime);
	return 0;
}

static int cmp_upd(const void *pa, const void *pb)
{
	const graph__upd *a = pa, *b = pb;

	CMP(a->id, b->id);
	CMP(a->seq, b->seq);
	return 0;
}

/* ---- queued changes to domain records ---- */

static void apply_upd(graph__dom *d, const graph__upd *u)
{
	switch (u->kind) {
	case GRAPH__UPD_RANKS:
		d->hc_pos = u->a;
		d->pr_pos = u->b;
		if (d->hosts == 0)
			d->hosts = u->c;
		break;
	case GRAPH__UPD_TRANCO:
		/* several names can fold into one registrable domain: the
		 * best rank wins */
		if (d->tranco == 0 || u->a < d->tranco)
			d->tranco = u->a;
		break;
	case GRAPH__UPD_WHOIS:
		d->registered_day = (int32_t)u->a;
		d->registrar = u->b;
		break;
	case GRAPH__UPD_LINKING:
		d->linking_hosts = (uint64_t)u->b << 32 | u->a;
		break;
	}
}

/* A finished sort of changes, read along with the records in id order. */
typedef struct updq {
	graph__xsort *xs;
	const graph__upd *cur;  /* the next change; NULL after the last */
} updq;

static int updq_next(updq *q)
{
	const void *rec;
	int rc = graph__xsort_next(q->xs, &rec);

	q->cur = rc == 1 ? rec : NULL;
	return rc < 0 ? rc : 0;
}

static int updq_start(updq *q, graph__xsort *xs)
{
	int rc = graph__xsort_finish(xs);

	q->xs = xs;
	return rc ? rc : updq_next(q);
}

/* Applies the changes of domain `id` to its record. */
static int updq_apply(updq *q, uint32_t id, graph__dom *d)
{
	int rc = 0;

	while (!rc && q->cur && q->cur->id == id) {
		apply_upd(d, q->cur);
		rc = updq_next(q);
	}
	return rc;
}


/* ---- writing phases ---- */

typedef struct wctx {
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
} wctx;

/* A u32 per domain, read or written at random: resident whole when the
 * budget can make room for it, else (much) slower. */
static int column(wctx *c, graph__marr *m)
{
	size_t len = (size_t)c->n * sizeof(uint32_t);
	size_t whole = graph__marr_fit(len);
	int rc = b_array(c->b, m, NULL, len ? len : sizeof(uint32_t), whole,
			 whole);

	if (!rc && m->share < whole)
		log_warn("--mem-mb %zu holds %zu MiB of a per-domain column "
			 "of %zu MiB: its pages will fault in and out, "
			 "slowly; a larger --mem-mb keeps it whole",
			 c->b->mem.cap >> 20, m->share >> 20, whole >> 20);
	return rc;
}

/* Ends a sort of the reading phase, once written out. */
static void sort_done(graph__builder *b, graph__xsort **s)
{
	b->stats->runs_spilled += graph__xsort_runs(*s);
	graph__xsort_free(*s);
	*s = NULL;
}

/* stage.off / stage.dat: the deduplicated domain graph in reading ids,
 * as delta varints, kept on disk until the importance ranks are known.
 * Counts out-degrees (in order) and in-degrees (at random, in a column). */
static int write_stage(wctx *c)
{
	graph__builder *b = c->b;
	offw off = { 0 };
	wfile dat = { 0 };
	const void *rec;
	graph__edge prev = { GRAPH__NONE, GRAPH__NONE };
	uint32_t outd = 0;
	uint8_t vb[10];
	int rc;

	b->phase = "domain graph";
	if ((rc = graph__xsort_finish(b->edges)) ||
	    (rc = column(c, &c->refdeg)) ||
	    (rc = w_open(&off.w, c->dir, "stage.off")) ||
	    (rc = w_open(&dat, c->dir, "stage.dat")))
		goto out;
	while ((rc = graph__xsort_next(b->edges, &rec)) == 1) {
		const graph__edge *e = rec;

		if (e->a == prev.a && e->b == prev.b)
			continue;
		if (e->a != prev.a) {
			if (prev.a != GRAPH__NONE)
				graph__b_dom(b, prev.a)->out_domains = outd;
			outd = 0;
			rc = off_upto(&off, e->a, dat.bytes);
			if (rc)
				goto out;
			prev.b = GRAPH__NONE;
		}
		/* first target as is, then gaps (never 0: deduplicated) */
		rc = w_put(&dat, vb, graph__varint_put(vb, prev.b == GRAPH__NONE ?
						      e->b : e->b - prev.b));
		if (rc)
			goto out;
		prev = *e;
		outd++;
		(*graph__marr_u32(&c->refdeg, e->b))++;
		c->n_edges++;
	}
	if (rc < 0)
		goto out;
	if (prev.a != GRAPH__NONE)
		graph__b_dom(b, prev.a)->out_domains = outd;
	rc = off_upto(&off, c->n, dat.bytes);
	if (!rc)
		rc = w_close(&dat);
	if (!rc)
		rc = w_close(&off.w);
out:
	w_close(&dat);
	w_close(&off.w);
	sort_done(b, &b->edges);
	return rc;
}

/*
 * Authority score 0..100 (docs/metrics.md): a weighted mean of the
 * log-scaled referring-domain count, the harmonic-centrality position and
 * the Tranco rank, over the signals this release has.
 */
static uint8_t authority(const graph__dom *d, uint32_t max_ref, uint64_t n,
			 uint32_t flags)
{
	double s = 0, w = 0.5;

	if (max_ref > 0)
		s += 0.5 * log1p(d->ref_domains) / log1p(max_ref);
	if (flags & GRAPH__META_RANKS) {
		w += 0.3;
		if (d->hc_pos > 0)
			s += 0.3 * (1.0 - log((double)d->hc_pos) /
					      log((double)n + 1.0));
	}
	if (flags & GRAPH__META_TRANCO) {
		w += 0.2;
		if (d->tranco > 0 && d->tranco <= 1000000)
			s += 0.2 * (1.0 - log((double)d->tranco) / log(1e6 + 1));
	}
	s = floor(100.0 * s / w + 0.5);
	return (uint8_t)(s < 0 ? 0 : s > 100 ? 100 : s);
}

/* A domain's place in the importance order, with what the in-link pass
 * needs of it. */
typedef struct ikey {
	uint32_t score, ref, hc, id, hosts;
} ikey;

/* Authority descending, referring domains descending, harmonic-centrality
 * position ascending (unknown last), id. */
static int cmp_ikey(const void *pa, const void *pb)
{
	const ikey *a = pa, *b = pb;

	CMP(b->score, a->score);
	CMP(b->ref, a->ref);
	CMP(a->hc, b->hc);
	CMP(a->id, b->id);
	return 0;
}

/*
 * Applies the queued ranks, Tranco and whois facts and scores every
 * domain, in id order; then sorts them into the importance order (an
 * external sort, not a sort of the records in place): byrank.u32 in
 * order, the rank column at random, the host counts by position.
 */
static int rank_domains(wctx *c)
{
	graph__builder *b = c->b;
	graph__xsort *xs = NULL;
	updq q = { 0 };
	wfile w = { 0 };
	const void *rec;
	uint32_t r = 0;
	int rc;

	b->phase = "ranks";
	for (uint32_t i = 0; i < c->n; i++) {
		uint32_t ref = *graph__marr_u32(&c->refdeg, i);

		if (ref > c->max_ref)
			c->max_ref = ref;
	}
	if ((rc = column(c, &c->rank)) || (rc = column(c, &c->hosts)) ||
	    (rc = graph__xsort_new(sizeof(ikey), cmp_ikey, b->mem.cap,
				   b->opts->tmp_dir, &b->mem, &xs)) ||
	    (rc = updq_start(&q, b->upd)))
		goto out;
	for (uint32_t i = 0; i < c->n; i++) {
		graph__dom *d = graph__b_dom(b, i);
		ikey k;

		if ((rc = updq_apply(&q, i, d)))
			goto out;
		d->ref_domains = *graph__marr_u32(&c->refdeg, i);
		d->score = authority(d, c->max_ref, c->n, b->flags);
		k = (ikey){ d->score, d->ref_domains,
			    d->hc_pos ? d->hc_pos : UINT32_MAX, i, d->hosts };
		if ((rc = graph__xsort_add(xs, &k)))
			goto out;
	}
	graph__marr_close(&c->refdeg);
	sort_done(b, &b->upd);
	if ((rc = graph__xsort_finish(xs)) ||
	    (rc = w_open(&w, c->dir, "byrank.u32")))
		goto out;
	while ((rc = graph__xsort_next(xs, &rec)) == 1) {
		const ikey *k = rec;

		*graph__marr_u32(&c->rank, k->id) = r;
		*graph__marr_u32(&c->hosts, r++) = k->hosts;
		if ((rc = w_put(&w, &k->id, sizeof(k->id))))
			goto out;
	}
	if (rc < 0 || (rc = w_close(&w)))
		goto out;
	b->stats->runs_spilled += graph__xsort_runs(xs);
out:
	w_close(&w);
	graph__xsort_free(xs);
	return rc;
}

/* Queues the in-link pass's sum of the host counts of the referrers of
 * the domain at position `pos`: domains.bin is written in id order. */
static int linking_hosts(wctx *c, uint32_t pos, uint64_t sum)
{
	graph__upd u = { *graph__marr_u32(&c->byrank, pos), 0,
			 GRAPH__UPD_LINKING, (uint32_t)sum,
			 (uint32_t)(sum >> 32), 0 };

	return graph__xsort_add(c->lupd, &u);
}

/* The end of the in-list of position `pos` (`deg` referrers whose host
 * counts sum to `sum`): its linking hosts queued, and its place among
 * the heavy domains. */
static int in_list_end(wctx *c, uint32_t pos, uint32_t deg, uint64_t sum)
{
	int rc = linking_hosts(c, pos, sum);

	if (rc || !graph__sim_heavy(deg, c->n))
		return rc;
	rc = grow(&c->heavy, c->n_heavy, &c->heavy_cap, sizeof(*c->heavy), 64);
	if (!rc)
		c->heavy[c->n_heavy++] = pos;
	return rc;
}

/*
 * Writes a CSR from edges sorted by (a, b): offsets indexed by a, the b of
 * each list as a first value then gaps, in varints. Both ends are
 * importance positions, so the default order is the stored order and the
 * gaps stay small: most links point at the few strongest domains. The
 * in-lists get skip entries (inskip.*) every GRAPH__SKIP entries.
 */
static int write_csr(wctx *c, graph__xsort *xs, const char *off_name,
		     const char *dat_name, int in)
{
	offw off = { 0 };
	wfile dat = { 0 };
	skipw sk = { 0 };
	const void *rec;
	uint32_t prev_a = GRAPH__NONE, prev_b = 0, deg = 0;
	uint64_t sum = 0, list_at = 0;
	uint8_t vb[10];
	int rc;

	if ((rc = graph__xsort_finish(xs)) ||
	    (rc = w_open(&off.w, c->dir, off_name)) ||
	    (rc = w_open(&dat, c->dir, dat_name)) ||
	    (in && (rc = skip_open(&sk, c->dir, "inskip"))))
		goto out;
	while ((rc = graph__xsort_next(xs, &rec)) == 1) {
		const graph__edge *e = rec;
		uint32_t v = e->b - prev_b;

		if (e->a != prev_a) {
			if (in && prev_a != GRAPH__NONE &&
			    (rc = in_list_end(c, prev_a, deg, sum)))
				goto out;
			sum = 0;
			deg = 0;
			list_at = dat.bytes;
			rc = off_upto(&off, e->a, dat.bytes);
			v = e->b;
			prev_a = e->a;
		} else if (in && deg % GRAPH__SKIP == 0 &&
			   dat.bytes - list_at <= UINT32_MAX) {
			/* (entries past 4 GiB into a list are decoded) */
			graph__inskip k = { (uint32_t)(dat.bytes - list_at),
					    prev_b };

			rc = skip_add(&sk, e->a, &k, sizeof(k));
		} else {
			rc = 0;
		}
		if (!rc)
			rc = w_put(&dat, vb, graph__varint_put(vb, v));
		if (rc)
			goto out;
		prev_b = e->b;
		deg++;
		if (in)
			sum += *graph__marr_u32(&c->hosts, e->b);
	}
	if (rc < 0)
		goto out;
	if (in && prev_a != GRAPH__NONE &&
	    (rc = in_list_end(c, prev_a, deg, sum)))
		goto out;
	rc = off_upto(&off, c->n, dat.bytes);
	if (!rc)
		rc = w_close(&dat);
	if (!rc)
		rc = w_close(&off.w);
	if (!rc && in)
		rc = skip_close(&sk);
	c->edge_bytes += dat.bytes + off.w.bytes + sk.dir.bytes + sk.bin.bytes;
	c->b->stats->runs_spilled += graph__xsort_runs(xs);
out:
	w_close(&dat);
	w_close(&off.w);
	w_close(&sk.dir);
	w_close(&sk.bin);
	return rc;
}

/* Re-reads the stage into the out- and in-link CSRs, in rank space. */
static int write_csrs(wctx *c)
{
	graph__builder *b = c->b;
	graph__xsort *xo = NULL, *xi = NULL;
	graph__marr stage;
	char path[8400];
	FILE *fo = NULL;
	uint64_t o0, o1;
	int rc;

	graph__marr_init(&stage);
	b->phase = "domain links";
	if ((rc = graph__xsort_new(sizeof(graph__edge), graph__cmp_pair,
				   b->mem.cap / 4, b->opts->tmp_dir, &b->mem,
				   &xo)) ||
	    (rc = graph__xsort_new(sizeof(graph__edge), graph__cmp_pair,
				   b->mem.cap / 4, b->opts->tmp_dir, &b->mem,
				   &xi)) ||
	    (rc = b_map(b, &stage, "stage.dat", SEQ_SHARE)))
		goto out;
	snprintf(path, sizeof(path), "%s/stage.off", c->dir);
	fo = fopen(path, "rbe");
	if (!fo || fread(&o0, sizeof(o0), 1, fo) != 1) {
		rc = SEO_EIO;
		goto out;
	}
	for (uint32_t from = 0; from < c->n; from++) {
		const uint8_t *p, *end;
		uint32_t rfrom = *graph__marr_u32(&c->rank, from);
		uint64_t v, t = 0;

		if (fread(&o1, sizeof(o1), 1, fo) != 1 || o1 < o0 ||
		    o1 > stage.len) {
			rc = SEO_EIO;
			goto out;
		}
		if (o1 == o0)
			continue;
		p = graph__marr_at(&stage, o0, o1 - o0);
		end = p + (o1 - o0);
		for (int first = 1; p < end; first = 0) {
			graph__edge eo, ei;

			p = graph__varint_get(p, &v);
			t = first ? v : t + v;
			eo.a = ei.b = rfrom;
			eo.b = ei.a = *graph__marr_u32(&c->rank, (uint32_t)t);
			if ((rc = graph__xsort_add(xo, &eo)) ||
			    (rc = graph__xsort_add(xi, &ei)))
				goto out;
		}
		o0 = o1;
	}
	graph__marr_close(&stage);
	if ((rc = write_csr(c, xo, "out.off", "out.dat", 0)))
		goto out;
	graph__xsort_free(xo);
	xo = NULL;
	if ((rc = b_map(b, &c->byrank, "byrank.u32", SEQ_SHARE)) ||
	    (rc = graph__xsort_new(sizeof(graph__upd), cmp_upd, b->mem.cap / 8,
				   b->opts->tmp_dir, &b->mem, &c->lupd)) ||
	    (rc = write_csr(c, xi, "in.off", "in.dat", 1)))
		goto out;
out:
	if (fo)
		fclose(fo);
	graph__marr_close(&stage);
	graph__marr_close(&c->byrank);
	graph__marr_close(&c->hosts);
	graph__xsort_free(xo);
	graph__xsort_free(xi);
	/* the stage is not part of the index */
	snprintf(path, sizeof(path), "%s/stage.dat", c->dir);
	unlink(path);
	snprintf(path, sizeof(path), "%s/stage.off", c->dir);
	unlink(path);
	return rc;
}

/* ---- URL-level links, grouped by target domain ---- */

typedef struct grp {
	graph__lrec *v;
	size_t n, cap;
} grp;

static int grp_push(grp *g, const graph__lrec *r)
{
	int rc = grow(&g->v, g->n, &g->cap, sizeof(*g->v), 256);

	if (rc)
		return rc;
	g->v[g->n++] = *r;
	return 0;
}

static void final_link(graph__builder *b, void *rec)
{
	graph__lrec *r = rec;

	r->from_url = graph__sdict_id(&b->urls, r->from_url);
	r->to_url = graph__sdict_id(&b->urls, r->to_url);
	r->anchor = graph__sdict_id(&b->anchors, r->anchor);
}

static void final_cap(graph__builder *b, void *rec)
{
	graph__crec *r = rec;

	r->url = graph__sdict_id(&b->urls, r->url);
}

/*
 * Sorts the records of the spool at *spool (as read, in no order, their
 * URL and anchor ids temporary) into the `n` new sorts *out[i] of orders
 * cmp[i], each record through `final` once: the ids are final, so equal
 * records lie next to each other, which they need not do on temporary
 * ids (a string spilled in several generations has one in each). The
 * spool is freed; the sorts are finished, and the caller's to free.
 */
static int sort_final(graph__builder *b, graph__xsort **spool, size_t size,
		      void (*final)(graph__builder *b, void *rec),
		      const graph__cmp_fn *cmp, graph__xsort **const *out,
		      size_t n)
{
	char rec[sizeof(graph__lrec)];
	const void *r;
	int rc = graph__xsort_finish(*spool);

	for (size_t i = 0; !rc && i < n; i++)
		rc = graph__xsort_new(size, cmp[i], b->mem.cap / 4,
				      b->opts->tmp_dir, &b->mem, out[i]);
	while (!rc && (rc = graph__xsort_next(*spool, &r)) == 1) {
		memcpy(rec, r, size);
		final(b, rec);
		rc = 0;
		for (size_t i = 0; !rc && i < n; i++)
			rc = graph__xsort_add(*out[i], rec);
	}
	for (size_t i = 0; !rc && i < n; i++)
		rc = graph__xsort_finish(*out[i]);
	sort_done(b, spool);
	return rc;
}

/* While a group is sorted its to_dom, the same for the whole group,
 * holds the source's importance position (see flush_group()). */
static int cmp_link_importance(const void *pa, const void *pb)
{
	const graph__lrec *a = pa, *b = pb;

	CMP(a->to_dom, b->to_dom);
	CMP(b->ts, a->ts);
	CMP(a->from_url, b->from_url);
	CMP(a->to_url, b->to_url);
	CMP(a->anchor, b->anchor);
	CMP(a->type, b->type);
	CMP(a->rel, b->rel);
	return 0;
}

static int cmp_recent(const void *pa, const void *pb, void *ctx)
{
	const graph__lrec *v = ctx;
	uint32_t a = *(const uint32_t *)pa, b = *(const uint32_t *)pb;

	CMP(v[b].ts, v[a].ts);
	CMP(a, b);
	return 0;
}

/* (key, from_dom) pairs, aggregated into graph__agg rows. */
typedef struct kd {
	uint32_t key, dom;
} kd;

static int cmp_kd(const void *pa, const void *pb)
{
	const kd *a = pa, *b = pb;

	CMP(a->key, b->key);
	CMP(a->dom, b->dom);
	return 0;
}

/* Ties go by id, which is the strings' byte order. */
static int cmp_agg(const void *pa, const void *pb)
{
	const graph__agg *a = pa, *b = pb;

	CMP(b->domains, a->domains);
	CMP(b->links, a->links);
	CMP(a->id, b->id);
	return 0;
}

/* Aggregates `n` pairs into rows sorted strongest first and appends them
 * to `w`; returns the row count in *rows. */
static int write_aggs(kd *pairs, size_t n, wfile *w, graph__agg *tmp,
		      uint64_t *rows)
{
	size_t m = 0;

	qsort(pairs, n, sizeof(kd), cmp_kd);
	for (size_t i = 0; i < n; i++) {
		if (m == 0 || tmp[m - 1].id != pairs[i].key) {
			tmp[m].id = pairs[i].key;
			tmp[m].links = 0;
			tmp[m].domains = 0;
			m++;
		}
		tmp[m - 1].links++;
		if (i == 0 || pairs[i - 1].key != pairs[i].key ||
		    pairs[i - 1].dom != pairs[i].dom)
			tmp[m - 1].domains++;
	}
	qsort(tmp, m, sizeof(graph__agg), cmp_agg);
	*rows = m;
	return w_put(w, tmp, m * sizeof(graph__agg));
}

typedef struct linkw {
	offw off, poff, aoff;
	wfile dat, recent, pages, anchors;
	skipw skip;        /* linkskip.*: every GRAPH__SKIP-th referrer */
	uint32_t *perm;
	kd *pairs;
	graph__agg *aggs;
	size_t cap;
} linkw;

/* Writes the links of one target domain, `n` at `v`. */
static int flush_group(wctx *c, linkw *lw, graph__lrec *v, size_t n)
{
	uint32_t to = v[0].to_dom, referrers = 0;
	graph__dom *d;
	uint64_t rows;
	size_t np = 0;
	int rc;

	if (n > lw->cap) {
		size_t cap = n;

		free(lw->perm);
		free(lw->pairs);
		free(lw->aggs);
		lw->perm = malloc(cap * sizeof(uint32_t));
		lw->pairs = malloc(cap * sizeof(kd));
		lw->aggs = malloc(cap * sizeof(graph__agg));
		lw->cap = cap;
		if (!lw->perm || !lw->pairs || !lw->aggs)
			return SEO_ENOMEM;
	}
	if ((rc = off_upto(&lw->off, to, lw->dat.bytes / sizeof(graph__link))) ||
	    (rc = off_upto(&lw->poff, to, lw->pages.bytes / sizeof(graph__agg))) ||
	    (rc = off_upto(&lw->aoff, to, lw->anchors.bytes / sizeof(graph__agg))))
		return rc;
	/* one read of the rank column per link, not one per comparison */
	for (size_t i = 0; i < n; i++)
		v[i].to_dom = *graph__marr_u32(&c->rank, v[i].from_dom);
	qsort(v, n, sizeof(graph__lrec), cmp_link_importance);
	for (size_t i = 0; i < n; i++) {
		graph__link l = { v[i].from_dom, v[i].from_url,
				  v[i].to_url, v[i].anchor, v[i].rel,
				  v[i].ts, v[i].type };

		v[i].to_dom = to;
		rc = w_put(&lw->dat, &l, sizeof(l));
		if (rc)
			return rc;
		if (i == 0 || v[i - 1].from_dom != v[i].from_dom) {
			uint32_t at = (uint32_t)i;

			if (referrers > 0 && referrers % GRAPH__SKIP == 0 &&
			    (rc = skip_add(&lw->skip, to, &at, sizeof(at))))
				return rc;
			referrers++;
		}
		lw->perm[i] = (uint32_t)i;
	}
	d = graph__b_dom(c->b, to);
	d->url_referrers = referrers;
	d->inbound_links = (uint32_t)n;
	c->n_links += n;
	qsort_r(lw->perm, n, sizeof(uint32_t), cmp_recent, v);
	rc = w_put(&lw->recent, lw->perm, n * sizeof(uint32_t));
	if (rc)
		return rc;
	for (size_t i = 0; i < n; i++) {
		lw->pairs[i].key = v[i].to_url;
		lw->pairs[i].dom = v[i].from_dom;
	}
	rc = write_aggs(lw->pairs, n, &lw->pages, lw->aggs, &rows);
	if (rc)
		return rc;
	for (size_t i = 0; i < n; i++) {
		if (v[i].anchor == GRAPH__NONE)
			continue;
		lw->pairs[np].key = v[i].anchor;
		lw->pairs[np++].dom = v[i].from_dom;
	}
	return write_aggs(lw->pairs, np, &lw->anchors, lw->aggs, &rows);
}

/* Sorts the links once their ids are final, by target for here and by
 * source for write_outbound(). */
static int write_links(wctx *c)
{
	const graph__cmp_fn by[] = { cmp_link_by_target, cmp_link_by_source };
	graph__xsort **const sorts[] = { &c->b->links, &c->b->outl };
	linkw lw = { 0 };
	grp g = { 0 };
	const void *rec;
	int rc;

	c->b->phase = "links";
	if ((rc = sort_final(c->b, &c->b->links_in, sizeof(graph__lrec),
			     final_link, by, sorts, 2)) ||
	    (rc = w_open(&lw.off.w, c->dir, "links.off")) ||
	    (rc = w_open(&lw.poff.w, c->dir, "pages.off")) ||
	    (rc = w_open(&lw.aoff.w, c->dir, "anchortext.off")) ||
	    (rc = w_open(&lw.dat, c->dir, "links.bin")) ||
	    (rc = w_open(&lw.recent, c->dir, "recent.u32")) ||
	    (rc = w_open(&lw.pages, c->dir, "pages.bin")) ||
	    (rc = w_open(&lw.anchors, c->dir, "anchortext.bin")) ||
	    (rc = skip_open(&lw.skip, c->dir, "linkskip")))
		goto out;
	while ((rc = graph__xsort_next(c->b->links, &rec)) == 1) {
		const graph__lrec *r = rec;

		if (g.n > 0 && g.v[g.n - 1].to_dom == r->to_dom &&
		    same_link(&g.v[g.n - 1], r))
			continue;
		if (g.n > 0 && g.v[0].to_dom != r->to_dom) {
			rc = flush_group(c, &lw, g.v, g.n);
			if (rc)
				goto out;
			g.n = 0;
		}
		rc = grp_push(&g, r);
		if (rc)
			goto out;
	}
	if (rc < 0)
		goto out;
	if (g.n > 0 && (rc = flush_group(c, &lw, g.v, g.n)))
		goto out;
	if ((rc = off_upto(&lw.off, c->n, lw.dat.bytes / sizeof(graph__link))) ||
	    (rc = off_upto(&lw.poff, c->n, lw.pages.bytes / sizeof(graph__agg))) ||
	    (rc = off_upto(&lw.aoff, c->n,
			   lw.anchors.bytes / sizeof(graph__agg))))
		goto out;
	if ((rc = w_close(&lw.off.w)) || (rc = w_close(&lw.poff.w)) ||
	    (rc = w_close(&lw.aoff.w)) || (rc = w_close(&lw.dat)) ||
	    (rc = w_close(&lw.recent)) || (rc = w_close(&lw.pages)) ||
	    (rc = w_close(&lw.anchors)) || (rc = skip_close(&lw.skip)))
		goto out;
out:
	w_close(&lw.off.w);
	w_close(&lw.poff.w);
	w_close(&lw.aoff.w);
	w_close(&lw.dat);
	w_close(&lw.recent);
	w_close(&lw.pages);
	w_close(&lw.anchors);
	w_close(&lw.skip.dir);
	w_close(&lw.skip.bin);
	free(lw.perm);
	free(lw.pairs);
	free(lw.aggs);
	free(g.v);
	sort_done(c->b, &c->b->links);
	return rc;
}

/* ---- outbound links, grouped by source domain ---- */

static int cmp_outl(const void *pa, const void *pb)
{
	const graph__outl *a = pa, *b = pb;

	CMP(b->count, a->count);
	CMP(a->to_dom, b->to_dom);
	CMP(a->to_url, b->to_url);
	CMP(a->anchor, b->anchor);
	CMP(a->type, b->type);
	return 0;
}

typedef struct outg {
	graph__outl *v;
	size_t n, cap;
	uint32_t from;
	uint32_t cur_dom, cur_links; /* running total for one destination */
} outg;

static int outg_flush(wctx *c, outg *g, offw *off, wfile *dat)
{
	graph__dom *d = graph__b_dom(c->b, g->from);
	int rc;

	if (g->n == 0)
		return 0;
	if (g->cur_links > d->top_out_links) {
		d->top_out_links = g->cur_links;
		d->top_out_domain = g->cur_dom;
	}
	rc = off_upto(off, g->from, dat->bytes / sizeof(graph__outl));
	if (rc)
		return rc;
	qsort(g->v, g->n, sizeof(graph__outl), cmp_outl);
	rc = w_put(dat, g->v, g->n * sizeof(graph__outl));
	g->n = 0;
	g->cur_links = 0;
	g->cur_dom = GRAPH__NONE;
	return rc;
}

static int write_outbound(wctx *c)
{
	offw off = { 0 };
	wfile dat = { 0 };
	outg g = { .cur_dom = GRAPH__NONE };
	graph__lrec prev = { .from_dom = GRAPH__NONE };
	const void *rec;
	int rc;

	c->b->phase = "outbound links";
	if ((rc = w_open(&off.w, c->dir, "outl.off")) ||
	    (rc = w_open(&dat, c->dir, "outl.bin")))
		goto out;
	while ((rc = graph__xsort_next(c->b->outl, &rec)) == 1) {
		const graph__lrec *r = rec;
		graph__outl *last = g.n ? &g.v[g.n - 1] : NULL;
		graph__dom *d;

		if (prev.from_dom == r->from_dom && prev.to_dom == r->to_dom &&
		    same_link(&prev, r))
			continue;
		prev = *r;

		if (g.n > 0 && g.from != r->from_dom) {
			rc = outg_flush(c, &g, &off, &dat);
			if (rc)
				goto out;
			last = NULL;
		}
		g.from = r->from_dom;
		d = graph__b_dom(c->b, r->from_dom);
		d->out_links++;
		if (r->to_dom != g.cur_dom) {
			if (g.cur_links > d->top_out_links) {
				d->top_out_links = g.cur_links;
				d->top_out_domain = g.cur_dom;
			}
			g.cur_dom = r->to_dom;
			g.cur_links = 0;
		}
		g.cur_links++;
		if (last && last->to_dom == r->to_dom &&
		    last->to_url == r->to_url && last->anchor == r->anchor &&
		    last->type == r->type) {
			last->count++;
			continue;
		}
		if ((rc = grow(&g.v, g.n, &g.cap, sizeof(*g.v), 256)))
			goto out;
		g.v[g.n++] = (graph__outl){ r->to_dom, r->to_url, r->anchor,
					    r->type, 1 };
	}
	if (rc < 0)
		goto out;
	if ((rc = outg_flush(c, &g, &off, &dat)) ||
	    (rc = off_upto(&off, c->n, dat.bytes / sizeof(graph__outl))) ||
	    (rc = w_close(&dat)) || (rc = w_close(&off.w)))
		goto out;
out:
	w_close(&dat);
	w_close(&off.w);
	free(g.v);
	sort_done(c->b, &c->b->outl);
	return rc;
}

/* ---- captures: URL index, status histogram, first/last seen ---- */

static int cmp_status(const void *pa, const void *pb)
{
	const graph__status *a = pa, *b = pb;

	CMP(a->status, b->status);
	return 0;
}

typedef struct capg {
	graph__cap *v;
	size_t n, cap;
	graph__status st[64];
	size_t nst;
	uint32_t dom;
} capg;

static int capg_flush(wctx *c, capg *g, offw *uoff, wfile *udat,
		      offw *soff, wfile *sdat)
{
	int rc;

	if (g->n == 0)
		return 0;
	if ((rc = off_upto(uoff, g->dom, udat->bytes / sizeof(graph__cap))) ||
	    (rc = off_upto(soff, g->dom, sdat->bytes / sizeof(graph__status))))
		return rc;
	qsort(g->st, g->nst, sizeof(graph__status), cmp_status);
	graph__b_dom(c->b, g->dom)->total_urls = (uint32_t)g->n;
	rc = w_put(udat, g->v, g->n * sizeof(graph__cap));
	if (!rc)
		rc = w_put(sdat, g->st, g->nst * sizeof(graph__status));
	g->n = 0;
	g->nst = 0;
	return rc;
}

/* The captures come by domain, then URL (whose final ids are the URLs'
 * byte order), newest first: each domain's URL rows are in order. */
static int write_captures(wctx *c)
{
	const graph__cmp_fn by = cmp_cap;
	graph__xsort **const sorts = &c->b->caps;
	offw uoff = { 0 }, soff = { 0 };
	wfile udat = { 0 }, sdat = { 0 };
	capg g = { 0 };
	const void *rec;
	uint32_t prev_url = GRAPH__NONE;
	int rc;

	c->b->phase = "captures";
	if ((rc = sort_final(c->b, &c->b->caps_in, sizeof(graph__crec),
			     final_cap, &by, &sorts, 1)) ||
	    (rc = w_open(&uoff.w, c->dir, "urlidx.off")) ||
	    (rc = w_open(&udat, c->dir, "urlidx.bin")) ||
	    (rc = w_open(&soff.w, c->dir, "status.off")) ||
	    (rc = w_open(&sdat, c->dir, "status.bin")))
		goto out;
	while ((rc = graph__xsort_next(c->b->caps, &rec)) == 1) {
		const graph__crec *r = rec;
		graph__dom *d = graph__b_dom(c->b, r->dom);
		size_t k;

		c->n_captures++;
		if (g.n > 0 && g.dom != r->dom) {
			rc = capg_flush(c, &g, &uoff, &udat, &soff, &sdat);
			if (rc)
				goto out;
			prev_url = GRAPH__NONE;
		}
		g.dom = r->dom;
		if (r->ts && (!d->first_seen || r->ts < d->first_seen))
			d->first_seen = r->ts;
		if (r->ts > d->last_seen)
			d->last_seen = r->ts;
		if (r->status) {
			for (k = 0; k < g.nst && g.st[k].status != r->status; k++)
				;
			/* more than 64 distinct statuses is not HTTP */
			if (k < sizeof(g.st) / sizeof(g.st[0])) {
				if (k == g.nst)
					g.st[g.nst++] = (graph__status){ r->status, 0 };
				g.st[k].count++;
			}
		}
		/* sorted newest first per URL: the first is the latest */
		if (r->url == prev_url)
			continue;
		prev_url = r->url;
		if ((rc = grow(&g.v, g.n, &g.cap, sizeof(*g.v), 256)))
			goto out;
		g.v[g.n++] = (graph__cap){ r->url, r->ts, r->mime, r->status };
	}
	if (rc < 0)
		goto out;
	if ((rc = capg_flush(c, &g, &uoff, &udat, &soff, &sdat)) ||
	    (rc = off_upto(&uoff, c->n, udat.bytes / sizeof(graph__cap))) ||
	    (rc = off_upto(&soff, c->n, sdat.bytes / sizeof(graph__status))) ||
	    (rc = w_close(&udat)) || (rc = w_close(&uoff.w)) ||
	    (rc = w_close(&sdat)) || (rc = w_close(&soff.w)))
		goto out;
out:
	w_close(&udat);
	w_close(&uoff.w);
	w_close(&sdat);
	w_close(&soff.w);
	free(g.v);
	sort_done(c->b, &c->b->caps);
	return rc;
}

/* ---- dictionaries ---- */

static int write_dict(const char *dir, const char *name, const graph__dict *d)
{
	char fn[256];
	uint64_t end = d->blob.len;
	wfile w = { 0 };
	int rc;

	snprintf(fn, sizeof(fn), "%s.str", name);
	rc = graph__write_file(dir, fn, d->blob.p ? d->blob.p : "", d->blob.len);
	if (rc)
		return rc;
	snprintf(fn, sizeof(fn), "%s.off", name);
	if ((rc = w_open(&w, dir, fn)) ||
	    (rc = w_put(&w, d->off, (size_t)d->n * sizeof(uint64_t))) ||
	    (rc = w_put(&w, &end, sizeof(end))))
		goto out;
	rc = w_close(&w);
out:
	w_close(&w);
	return rc;
}

/* Merges a dictionary of URLs or anchors into name.str and name.off, the
 * strings in byte order, and fills its map of temporary to final ids. */
static int write_sdict(wctx *c, const char *name, graph__sdict *d)
{
	size_t len = (size_t)graph__sdict_tmp_ids(d) * sizeof(uint32_t);
	wfile str = { 0 }, off = { 0 };
	char fn[64];
	const char *s;
	uint32_t tmp, id;
	uint64_t end;
	int fresh, rc;

	c->b->phase = name;
	c->b->stats->runs_spilled += d->spilled;
	c->b->stats->dict_runs += d->spilled;
	if ((rc = graph__sdict_merge(d)) ||
	    (rc = b_array(c->b, &d->map, NULL, len, c->b->mem.cap / 8,
			  graph__marr_fit(len))))
		goto out;
	snprintf(fn, sizeof(fn), "%s.str", name);
	if ((rc = w_open(&str, c->dir, fn)))
		goto out;
	snprintf(fn, sizeof(fn), "%s.off", name);
	if ((rc = w_open(&off, c->dir, fn)))
		goto out;
	while ((rc = graph__sdict_next(d, &s, &tmp, &id, &fresh)) == 1) {
		end = str.bytes;
		if (fresh && ((rc = w_put(&off, &end, sizeof(end))) ||
			      (rc = w_put(&str, s, strlen(s) + 1))))
			goto out;
		*graph__marr_u32(&d->map, tmp) = id;
	}
	end = str.bytes;
	if (rc < 0 || (rc = w_put(&off, &end, sizeof(end))) ||
	    (rc = w_close(&str)) || (rc = w_close(&off)))
		goto out;
out:
	w_close(&str);
	w_close(&off);
	graph__sdict_end(d);
	return rc;
}

static int cmp_rev_name(const void *pa, const void *pb, void *ctx)
{
	return strcmp(dom_rev(ctx, *(const uint32_t *)pa),
		      dom_rev(ctx, *(const uint32_t *)pb));
}

/* Appends a name and its offset to a names dictionary being written. */
static int put_name(wfile *str, wfile *off, const char *name, size_t len)
{
	int rc = w_put(off, &str->bytes, sizeof(str->bytes));

	return rc ? rc : w_put(str, name, len + 1);
}

/*
 * domrev.*, domfwd.* and domsorted.u32. The names of the vertices file
 * (ids below base) are in the files already and in byte order: the other
 * domains' names follow them, and domsorted merges the two orders.
 */
static int write_domain_names(wctx *c)
{
	graph__builder *b = c->b;
	int append = b->base > 0;
	wfile rev = { 0 }, rev_off = { 0 }, fwd = { 0 }, fwd_off = { 0 };
	wfile sorted = { 0 };
	uint32_t *more = NULL, n_more = c->n - b->base, j = 0;
	char name[GRAPH_DOMAIN_MAX + 1];
	int rc;

	b->phase = "domain names";
	if ((rc = w_open_mode(&rev, c->dir, "domrev.str", append)) ||
	    (rc = w_open_mode(&rev_off, c->dir, "domrev.off", append)) ||
	    (rc = w_open_mode(&fwd, c->dir, "domfwd.str", append)) ||
	    (rc = w_open_mode(&fwd_off, c->dir, "domfwd.off", append)) ||
	    (rc = w_open(&sorted, c->dir, "domsorted.u32")))
		goto out;
	more = malloc((size_t)n_more * sizeof(uint32_t) + 1);
	if (!more) {
		rc = SEO_ENOMEM;
		goto out;
	}
	for (uint32_t i = 0; i < n_more; i++) {
		const char *r = graph__dict_str(&b->doms, i);
		size_t len = strlen(r);

		graph__reverse_labels(r, len, name);
		if ((rc = put_name(&rev, &rev_off, r, len)) ||
		    (rc = put_name(&fwd, &fwd_off, name, len)))
			goto out;
		more[i] = b->base + i;
	}
	if ((rc = w_put(&rev_off, &rev.bytes, sizeof(rev.bytes))) ||
	    (rc = w_put(&fwd_off, &fwd.bytes, sizeof(fwd.bytes))))
		goto out;
	qsort_r(more, n_more, sizeof(uint32_t), cmp_rev_name, b);
	for (uint32_t i = 0; i < b->base || j < n_more;) {
		uint32_t id = j == n_more ||
			(i < b->base && strcmp(dom_rev(b, i),
					       dom_rev(b, more[j])) < 0) ?
			i++ : more[j++];

		if ((rc = w_put(&sorted, &id, sizeof(id))))
			goto out;
	}
	if ((rc = w_close(&rev)) || (rc = w_close(&rev_off)) ||
	    (rc = w_close(&fwd)) || (rc = w_close(&fwd_off)))
		goto out;
	rc = w_close(&sorted);
out:
	w_close(&rev);
	w_close(&rev_off);
	w_close(&fwd);
	w_close(&fwd_off);
	w_close(&sorted);
	free(more);
	return rc;
}


/* ---- platforms ---- */

/* One domain of the platform being written. */
typedef struct pent {
	uint32_t dom, tld;
	uint8_t score;
	size_t name; /* forward name, offset in the group's names */
} pent;

typedef struct platw {
	offw off;
	wfile dat, byname;
	graph__dict tlds;
	pent *v;
	uint32_t *pos;
	size_t n, cap, pos_cap;
	graph__buf names;
} platw;

static int cmp_pent_da(const void *pa, const void *pb, void *ctx)
{
	const pent *a = pa, *b = pb;
	const char *names = ctx;
	int c;

	CMP(b->score, a->score);
	c = strcmp(names + a->name, names + b->name);
	return c ? c : (a->dom > b->dom) - (a->dom < b->dom);
}

static int cmp_pent_name(const void *pa, const void *pb, void *ctx)
{
	const platw *w = ctx;
	const pent *a = &w->v[*(const uint32_t *)pa];
	const pent *b = &w->v[*(const uint32_t *)pb];
	int c = strcmp(w->names.p + a->name, w->names.p + b->name);

	return c ? c : (a->dom > b->dom) - (a->dom < b->dom);
}

/* Adds domain `dom` to the group: its forward name, public suffix (as
 * libpsl has it: "com", "co.uk") and authority. */
static int platw_add(wctx *c, platw *w, uint32_t dom)
{
	const char *rev = dom_rev(c->b, dom);
	char name[GRAPH_DOMAIN_MAX + 1];
	const char *tld;
	size_t len = strlen(rev);
	pent *e;
	int rc;

	if ((rc = grow(&w->v, w->n, &w->cap, sizeof(*w->v), 1024)))
		return rc;
	e = &w->v[w->n];
	graph__reverse_labels(rev, len, name);
	tld = psl_unregistrable_domain(psl_builtin(), name);
	if (!tld || !*tld)
		tld = strrchr(name, '.') ? strrchr(name, '.') + 1 : name;
	e->dom = dom;
	e->score = graph__b_dom(c->b, dom)->score;
	e->name = w->names.len;
	if ((rc = graph__dict_intern(&w->tlds, tld, strlen(tld), &e->tld)) ||
	    (rc = graph__buf_put(&w->names, name, len + 1)))
		return rc;
	w->n++;
	return 0;
}

/* Writes platform p's group: its domains by authority, then its name
 * order as positions in that group. */
static int platw_flush(wctx *c, platw *w, uint32_t p)
{
	int rc;

	if (w->n == 0)
		return 0;
	if (w->n > w->pos_cap) {
		uint32_t *pos = realloc(w->pos, w->n * sizeof(*pos));

		if (!pos)
			return SEO_ENOMEM;
		w->pos = pos;
		w->pos_cap = w->n;
	}
	if ((rc = off_upto(&w->off, p, w->dat.bytes / sizeof(graph__pdom))))
		return rc;
	qsort_r(w->v, w->n, sizeof(pent), cmp_pent_da, w->names.p);
	for (size_t i = 0; i < w->n && !rc; i++) {
		graph__pdom d = { w->v[i].dom, w->v[i].tld };

		w->pos[i] = (uint32_t)i;
		rc = w_put(&w->dat, &d, sizeof(d));
	}
	if (rc)
		return rc;
	qsort_r(w->pos, w->n, sizeof(uint32_t), cmp_pent_name, w);
	rc = w_put(&w->byname, w->pos, w->n * sizeof(uint32_t));
	c->plat_count[p] = w->n;
	w->n = 0;
	w->names.len = 0;
	return rc;
}

/*
 * plat.off, plat.bin, platname.u32 and plattld.*: the (platform, domain)
 * pairs of the WAT records, one group per platform. A group is held in
 * memory while it is sorted (about 24 bytes and a name per domain).
 */
static int write_platforms(wctx *c)
{
	platw w = { 0 };
	graph__edge prev = { GRAPH__NONE, GRAPH__NONE };
	const void *rec;
	int rc;

	c->b->phase = "platforms";
	if ((rc = graph__xsort_finish(c->b->plats)) ||
	    (rc = w_open(&w.off.w, c->dir, "plat.off")) ||
	    (rc = w_open(&w.dat, c->dir, "plat.bin")) ||
	    (rc = w_open(&w.byname, c->dir, "platname.u32")))
		goto out;
	while ((rc = graph__xsort_next(c->b->plats, &rec)) == 1) {
		const graph__edge *e = rec;

		if (e->a == prev.a && e->b == prev.b)
			continue;
		if (e->a != prev.a && (rc = platw_flush(c, &w, prev.a)))
			goto out;
		prev = *e;
		if ((rc = platw_add(c, &w, e->b)))
			goto out;
	}
	if (rc < 0 || (rc = platw_flush(c, &w, prev.a)) ||
	    (rc = off_upto(&w.off, GRAPH_PLATFORM_COUNT,
			   w.dat.bytes / sizeof(graph__pdom))) ||
	    (rc = w_close(&w.dat)) || (rc = w_close(&w.byname)) ||
	    (rc = w_close(&w.off.w)))
		goto out;
	c->b->stats->platform_domains = w.dat.bytes / sizeof(graph__pdom);
	rc = write_dict(c->dir, "plattld", &w.tlds);
out:
	w_close(&w.off.w);
	w_close(&w.dat);
	w_close(&w.byname);
	graph__dict_free(&w.tlds);
	free(w.v);
	free(w.pos);
	free(w.names.p);
	sort_done(c->b, &c->b->plats);
	return rc;
}

/* ---- similar domains of the heavy domains ---- */

/*
 * The exact answer of graph_similar_domains() for every heavy domain
 * (graph__sim_heavy()): its first GRAPH__SIM_ROWS rows and its total, in
 * simtop.*. One pass over in.dat counts up to 64 heavy domains at once:
 * each linker gets a mask of the heavy domains of the pass it links to
 * (w bytes a domain, resident), then every domain's in-list adds up its
 * linkers' masks, and each heavy domain keeps its rows in a heap as the
 * query does, the domains arriving in position order. A budget too small
 * for 8 bytes a domain makes narrower masks and more passes: the same
 * rows.
 */
#define SIM_BITS 64
/* In-list entries decoded before their masks are read: the reads of a
 * batch miss the cache at once, not one after the other. */
#define SIM_BATCH 64
/* Masks are added a byte at a time into eight one-byte counters of a
 * word (sim_spread), which hold this many before they are emptied. */
#define SIM_LANE_MAX 255

/* Byte i of sim_spread(x) is bit i of x. */
static uint64_t sim_spread(unsigned x)
{
	uint64_t v = 0;

	for (unsigned i = 0; i < 8; i++)
		v |= (uint64_t)(x >> i & 1) << (8 * i);
	return v;
}

/* Empties the byte counters acc[0 .. w - 1] into cnt[], noting in *seen
 * the heavy domains counted. */
static void sim_lanes_flush(uint64_t *acc, unsigned w, uint32_t *cnt,
			    uint64_t *seen)
{
	const uint64_t low7 = 0x7f7f7f7f7f7f7f7fULL;

	for (unsigned j = 0; j < w; j++) {
		uint64_t v = acc[j];
		/* the high bit of each byte that is not zero */
		uint64_t nz = (((v & low7) + low7) | v) & ~low7;

		for (; nz; nz &= nz - 1) {
			unsigned byte = (unsigned)__builtin_ctzll(nz) / 8;

			cnt[8 * j + byte] += (uint32_t)(v >> (8 * byte) & 0xff);
			*seen |= (uint64_t)1 << (8 * j + byte);
		}
		acc[j] = 0;
	}
}

/* Mask bytes a domain for one pass to count all `heavy` domains, or 64 of
 * them at most. */
static unsigned sim_mask_bytes(size_t heavy)
{
	return heavy >= SIM_BITS ? SIM_BITS / 8 : (unsigned)(heavy + 7) / 8;
}

/* An in-list read through its file-backed array a block at a time, so
 * that a list longer than the array's share stays within it. */
typedef struct simlist {
	graph__marr *dat;
	uint64_t at, end;    /* file offsets: next entry, end of the list */
	uint64_t r;
	int first;
} simlist;

/* Up to `max` positions of the list into v; their number. */
static unsigned simlist_get(simlist *l, uint32_t *v, unsigned max)
{
	unsigned n = 0;

	while (n < max && l->at < l->end) {
		uint64_t blk_end = ((l->at >> GRAPH__BLOCK_SHIFT) + 1)
				   << GRAPH__BLOCK_SHIFT;
		/* a varint may start before the block's end and end after */
		uint64_t stop = blk_end < l->end ? blk_end : l->end;
		uint64_t span = stop + 10 < l->end ? stop + 10 : l->end;
		const uint8_t *p0 = graph__marr_at(l->dat, l->at, span - l->at);
		const uint8_t *p = p0, *e = p0 + (stop - l->at);

		while (n < max && p < e) {
			uint64_t v64;

			p = graph__varint_get(p, &v64);
			l->r = l->first ? v64 : l->r + v64;
			l->first = 0;
			v[n++] = (uint32_t)l->r;
		}
		l->at += (uint64_t)(p - p0);
	}
	return n;
}

static void simlist_begin(simlist *l, graph__marr *ioff, graph__marr *idat,
			  uint32_t pos)
{
	const uint64_t *o = graph__marr_at(ioff, (size_t)pos * 8, 16);

	l->dat = idat;
	l->at = o[0];
	l->end = o[1];
	l->r = 0;
	l->first = 1;
}

/* One pass: the heavy domains heavy[0 .. nh - 1] (nh <= 8 w) counted into
 * tops[] and totals[]. */
static void sim_pass(wctx *c, graph__marr *ioff, graph__marr *idat,
		     graph__marr *mask, unsigned w, const uint32_t *heavy,
		     unsigned nh, graph__simtop *tops, uint64_t *totals)
{
	size_t blk = (size_t)1 << GRAPH__BLOCK_SHIFT;
	uint32_t cnt[SIM_BITS] = { 0 }, v[SIM_BATCH];
	uint64_t spread[256], acc[SIM_BITS / 8] = { 0 };
	simlist l;
	unsigned got;

	for (unsigned x = 0; x < 256; x++)
		spread[x] = sim_spread(x);
	for (size_t at = 0; at < mask->len; at += blk)
		memset(graph__marr_at(mask, at, 1), 0,
		       mask->len - at < blk ? mask->len - at : blk);
	for (unsigned b = 0; b < nh; b++) {
		simlist_begin(&l, ioff, idat, heavy[b]);
		while ((got = simlist_get(&l, v, SIM_BATCH)) > 0)
			for (unsigned i = 0; i < got; i++) {
				uint8_t *m = graph__marr_at(
					mask, (size_t)v[i] * w + b / 8, 1);

				*m |= (uint8_t)(1u << (b % 8));
			}
	}
	for (uint32_t pos = 0; pos < c->n; pos++) {
		uint64_t seen = 0;
		unsigned since = 0;

		if ((pos & 0xffff) == 0)
			graph__b_progress(c->b, pos, c->n);
		simlist_begin(&l, ioff, idat, pos);
		while ((got = simlist_get(&l, v, SIM_BATCH)) > 0) {
			for (unsigned i = 0; i < got; i++)
				__builtin_prefetch(mask->p + (size_t)v[i] * w);
			for (unsigned i = 0; i < got; i++) {
				const uint8_t *m = graph__marr_at(
					mask, (size_t)v[i] * w, w);

				for (unsigned j = 0; j < w; j++)
					acc[j] += spread[m[j]];
				if (++since == SIM_LANE_MAX) {
					sim_lanes_flush(acc, w, cnt, &seen);
					since = 0;
				}
			}
		}
		sim_lanes_flush(acc, w, cnt, &seen);
		for (; seen; seen &= seen - 1) {
			unsigned b = (unsigned)__builtin_ctzll(seen);

			/* the domain itself is never a row */
			if (heavy[b] != pos) {
				totals[b]++;
				graph__top_push(&tops[b],
						(graph__sim){ pos, cnt[b] });
			}
			cnt[b] = 0;
		}
	}
}

static int write_similar(wctx *c)
{
	graph__builder *b = c->b;
	graph__marr ioff, idat, mask;
	graph__simtop tops[SIM_BITS];
	uint64_t totals[SIM_BITS], rows = 0;
	wfile dir = { 0 }, bin = { 0 };
	graph__sim *heaps = NULL;
	size_t k = c->n < GRAPH__SIM_ROWS ? c->n : GRAPH__SIM_ROWS;
	/* the heaps of the heavy domains of a byte of masks */
	size_t heap_per = 8 * (k ? k : 1) * sizeof(graph__sim);
	size_t len, whole, heap_bytes = 0;
	unsigned w = sim_mask_bytes(c->n_heavy), passes = 0;
	int64_t t0 = seo_mono_ms();
	int rc;

	graph__marr_init(&ioff);
	graph__marr_init(&idat);
	graph__marr_init(&mask);
	b->phase = "similar domains";
	if ((rc = w_open(&dir, c->dir, "simtop.dir")) ||
	    (rc = w_open(&bin, c->dir, "simtop.bin")) || c->n_heavy == 0)
		goto out;
	/* the widest masks the budget holds whole */
	rc = mem_make_room(b, graph__marr_fit((size_t)c->n * w) + heap_per * w);
	while (!rc && w > 1 &&
	       graph__marr_fit((size_t)c->n * w) + heap_per * w >
		       graph__mem_free(&b->mem))
		w--;
	len = (size_t)c->n * w;
	whole = graph__marr_fit(len);
	heap_bytes = heap_per * w;
	if (!rc && !(heaps = malloc(heap_bytes)))
		rc = SEO_ENOMEM;
	if (rc)
		goto out;
	b->mem.used += heap_bytes;
	if ((rc = b_map(b, &ioff, "in.off", SEQ_SHARE)) ||
	    (rc = b_map(b, &idat, "in.dat", SEQ_SHARE)) ||
	    (rc = b_array(b, &mask, NULL, len, whole, whole)))
		goto out;
	if (mask.share < whole)
		log_warn("--mem-mb %zu holds %zu MiB of the similar-domains "
			 "masks of %zu MiB: their pages will fault in and out, "
			 "slowly; a larger --mem-mb keeps them whole",
			 b->mem.cap >> 20, mask.share >> 20, whole >> 20);
	for (size_t g0 = 0; !rc && g0 < c->n_heavy;
	     g0 += (size_t)w * 8, passes++) {
		size_t left = c->n_heavy - g0;
		unsigned nh = (unsigned)(left < (size_t)w * 8 ? left : w * 8);

		for (unsigned i = 0; i < nh; i++) {
			tops[i] = (graph__simtop){ heaps + i * k, 0, k };
			totals[i] = 0;
		}
		sim_pass(c, &ioff, &idat, &mask, w, c->heavy + g0, nh, tops,
			 totals);
		for (unsigned i = 0; !rc && i < nh; i++) {
			graph__simdir d = { c->heavy[g0 + i],
					    (uint32_t)tops[i].len, totals[i],
					    rows };

			qsort(tops[i].v, tops[i].len, sizeof(graph__sim),
			      graph__sim_cmp);
			rows += tops[i].len;
			if (!(rc = w_put(&dir, &d, sizeof(d))))
				rc = w_put(&bin, tops[i].v,
					   tops[i].len * sizeof(graph__sim));
		}
	}
	if (!rc) {
		b->stats->similar_domains = c->n_heavy;
		b->stats->similar_passes = passes;
		b->stats->similar_seconds =
			(double)(seo_mono_ms() - t0) / 1000.0;
		log_debug("similar domains of %zu heavy domains stored in "
			  "%.2f s (passes over the in-lists: %u, masks of %u "
			  "bytes)", c->n_heavy, b->stats->similar_seconds,
			  passes, w);
	}
out:
	if (heaps)
		b->mem.used -= heap_bytes;
	if (!rc)
		rc = w_close(&dir);
	if (!rc)
		rc = w_close(&bin);
	w_close(&dir);
	w_close(&bin);
	graph__marr_close(&mask);
	graph__marr_close(&idat);
	graph__marr_close(&ioff);
	free(heaps);
	return rc;
}

/* ---- the manifest ---- */

static uint64_t dir_bytes(const char *dir)
{
	DIR *d = opendir(dir);
	struct dirent *e;
	uint64_t sum = 0;

	if (!d)
		return 0;
	while ((e = readdir(d))) {
		char p[8400];
		struct stat st;

		snprintf(p, sizeof(p), "%s/%s", dir, e->d_name);
		if (stat(p, &st) == 0 && S_ISREG(st.st_mode))
			sum += (uint64_t)st.st_size;
	}
	closedir(d);
	return sum;
}

static int write_meta(wctx *c)
{
	graph__builder *b = c->b;
	graph_ingest_stats *s = b->stats;
	graph__meta m = { 0 };
	json_t *j;
	char *text;
	int rc;

	m.magic = GRAPH__MAGIC;
	m.version = GRAPH_FORMAT_VERSION;
	m.as_of = b->as_of;
	m.n_domains = c->n;
	m.n_edges = c->n_edges;
	m.n_links = c->n_links;
	m.n_urls = b->urls.n;
	m.n_anchors = b->anchors.n;
	m.n_strs = b->strs.n;
	m.n_captures = c->n_captures;
	m.max_refdomains = c->max_ref;
	m.flags = b->flags;
	snprintf(m.release, sizeof(m.release), "%s", b->opts->release);
	rc = graph__marr_sync(&b->dom);
	if (!rc)
		rc = graph__write_file(c->dir, "meta.bin", &m, sizeof(m));
	if (rc)
		return rc;
	s->domains = c->n;
	s->domain_edges = c->n_edges;
	s->links = c->n_links;
	s->urls = b->urls.n;
	s->anchors = b->anchors.n;
	s->captures = c->n_captures;
	s->records = b->records;
	s->malformed = b->malformed;
	s->edge_bytes = c->edge_bytes;
	s->bytes_per_edge = c->n_edges ? (double)c->edge_bytes /
						 (double)c->n_edges : 0;
	j = json_pack("{s:i, s:s, s:O, s:{s:I, s:I, s:I, s:I, s:I, s:I, s:I},"
		      " s:{s:I, s:f}}",
		      "format_version", GRAPH_FORMAT_VERSION, "release",
		      b->opts->release, "inputs", b->inputs_json, "counts",
		      "domains", (json_int_t)c->n, "domain_edges",
		      (json_int_t)c->n_edges, "links", (json_int_t)c->n_links,
		      "urls", (json_int_t)b->urls.n, "anchors",
		      (json_int_t)b->anchors.n, "captures",
		      (json_int_t)c->n_captures, "malformed",
		      (json_int_t)b->malformed, "edges", "bytes",
		      (json_int_t)c->edge_bytes, "bytes_per_edge",
		      s->bytes_per_edge);
	{
		json_t *pl = json_object();
		size_t np;
		const graph_platform *p = graph_platforms(&np);

		for (size_t i = 0; pl && i < np; i++)
			json_object_set_new(pl, p[i].slug,
					    json_integer((json_int_t)c->plat_count[i]));
		if (!pl || json_object_set_new(j, "platforms", pl) != 0) {
			json_decref(j);
			j = NULL;
		}
	}
	text = j ? json_dumps(j, JSON_INDENT(2) | JSON_SORT_KEYS) : NULL;
	json_decref(j);
	if (!text)
		return SEO_ENOMEM;
	/* last file written: its presence marks a finished directory */
	rc = graph__write_file(c->dir, "manifest.json", text, strlen(text));
	free(text);
	return rc;
}

static int sync_dir(const char *path)
{
	int fd = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);

	if (fd < 0)
		return SEO_EIO;
	fsync(fd);
	close(fd);
	return 0;
}


/* domains.bin's importance positions and linking hosts, from the rank
 * column and the in-link pass's sums, in id order. */
static int write_ranks(wctx *c)
{
	updq q = { 0 };
	int rc = updq_start(&q, c->lupd);

	for (uint32_t i = 0; !rc && i < c->n; i++) {
		graph__dom *d = graph__b_dom(c->b, i);

		d->rank = *graph__marr_u32(&c->rank, i);
		rc = updq_apply(&q, i, d);
	}
	c->b->stats->runs_spilled += graph__xsort_runs(c->lupd);
	graph__xsort_free(c->lupd);
	c->lupd = NULL;
	graph__marr_close(&c->rank);
	return rc;
}

static int write_index(graph__builder *b)
{
	wctx c = { .b = b, .dir = b->dir, .n = b->n_doms };
	int rc;

	graph__marr_init(&c.refdeg);
	graph__marr_init(&c.rank);
	graph__marr_init(&c.hosts);
	graph__marr_init(&c.byrank);
	/* reading is over: no string is interned any more, no vertex id
	 * or name looked up (the names' fence goes back to the budget) */
	freeze_dicts(b);
	if (b->names)
		fence_free(b);
	graph__marr_close(&b->vmap);
	if ((rc = write_stage(&c)) || (rc = rank_domains(&c)) ||
	    (rc = write_csrs(&c)) || (rc = write_sdict(&c, "urls", &b->urls)) ||
	    (rc = write_sdict(&c, "anchors", &b->anchors)) ||
	    (rc = write_links(&c)) || (rc = write_ranks(&c)) ||
	    (rc = write_outbound(&c)) || (rc = write_captures(&c)))
		goto out;
	/* no more ids to make final */
	graph__marr_close(&b->urls.map);
	graph__marr_close(&b->anchors.map);
	if ((rc = write_platforms(&c)) || (rc = write_domain_names(&c)) ||
	    (rc = write_dict(b->dir, "strs", &b->strs)) ||
	    (rc = write_similar(&c)))
		goto out;
	rc = write_meta(&c);
out:
	graph__marr_close(&c.refdeg);
	graph__marr_close(&c.rank);
	graph__marr_close(&c.hosts);
	graph__marr_close(&c.byrank);
	graph__xsort_free(c.lupd);
	free(c.heavy);
	return rc;
}

/* The name an implies entry gives ("WordPress\\;confidence:50"). */
static int implied_is(const char *entry, const json_t *techs)
{
	char name[256];
	size_t n = strcspn(entry, "\\");

	if (n >= sizeof(name))
		return 0;
	memcpy(name, entry, n);
	name[n] = '\0';
	return json_object_get(techs, name) != NULL;
}

/* Whether technology `def` implies one in `techs`; an implies entry is
 * one string or an array of them. */
static int implies_one(const json_t *def, const json_t *techs)
{
	const json_t *imp = json_object_get(def, "implies"), *e;
	size_t i;

	if (json_is_string(imp))
		return implied_is(json_string_value(imp), techs);
	json_array_foreach(imp, i, e)
		if (json_is_string(e) &&
		    implied_is(json_string_value(e), techs))
			return 1;
	return 0;
}

/*
 * The rule file reduced to what can show a platform: the platforms'
 * technologies and those implying one (WordPress.com implies WordPress),
 * their implies of anything else dropped. Detection of a platform is the
 * same as with the whole file, for a tenth of the patterns per record.
 */
static int platform_rules(seo_tech_rules **out)
{
	char path[4096], err[256];
	json_error_t jerr;
	json_t *root = NULL, *keep = json_object(), *sub = json_object();
	json_t *techs, *def, *e;
	const char *name;
	char *text = NULL;
	size_t i;
	int rc, grew = 1;

	if (!keep || !sub) {
		rc = SEO_ENOMEM;
		goto out;
	}
	rc = seo_tech_rules_path(path, sizeof(path));
	if (!rc && access(path, R_OK) != 0)
		rc = SEO_ENOTFOUND;
	if (rc) {
		log_error("no technology rule file for the platforms of the WAT "
			  "records (SEO_TECH_RULES, or data/tech/rules.json "
			  "beside the executable): %s", seo_strerror(rc));
		goto out;
	}
	root = json_load_file(path, 0, &jerr);
	techs = json_object_get(root, "technologies");
	if (!json_is_object(techs)) {
		log_error("cannot read the rule file \"%s\": %s", path,
			  root ? "no technologies" : jerr.text);
		rc = SEO_EINVAL;
		goto out;
	}
	json_object_foreach(techs, name, def)
		if (graph__platform_of_tech(name) >= 0)
			json_object_set(keep, name, def);
	if (json_object_size(keep) < GRAPH_PLATFORM_COUNT)
		log_warn("the rule file \"%s\" lacks %zu of the %d platforms",
			 path, GRAPH_PLATFORM_COUNT - json_object_size(keep),
			 GRAPH_PLATFORM_COUNT);
	while (grew) {
		grew = 0;
		json_object_foreach(techs, name, def)
			if (!json_object_get(keep, name) &&
			    implies_one(def, keep)) {
				json_object_set(keep, name, def);
				grew = 1;
			}
	}
	json_object_foreach(keep, name, def) {
		json_t *copy = json_copy(def), *imp = json_array();
		json_t *list = json_object_get(def, "implies");

		if (json_is_string(list) &&
		    implied_is(json_string_value(list), keep))
			json_array_append(imp, list);
		json_array_foreach(list, i, e)
			if (json_is_string(e) &&
			    implied_is(json_string_value(e), keep))
				json_array_append(imp, e);
		/* set_new takes its value, even when it fails */
		if (!copy)
			json_decref(imp);
		rc = !copy || json_object_set_new(copy, "implies", imp) ||
				     json_object_set(sub, name, copy) ?
			     SEO_ENOMEM : 0;
		json_decref(copy);
		if (rc)
			goto out;
	}
	def = json_pack("{s:O, s:O?}", "technologies", sub, "categories",
			json_object_get(root, "categories"));
	text = def ? json_dumps(def, JSON_COMPACT) : NULL;
	json_decref(def);
	if (!text) {
		rc = SEO_ENOMEM;
		goto out;
	}
	rc = seo_tech_rules_parse(text, strlen(text), out, err, sizeof(err));
	if (rc)
		log_error("rule file \"%s\": %s", path, err);
out:
	free(text);
	json_decref(root);
	json_decref(keep);
	json_decref(sub);
	return rc;
}

/* Inputs are read in this order whatever the command line says:
 * vertices define the ids the edges use. */
static const graph_input_kind read_order[] = {
	GRAPH_IN_VERTICES, GRAPH_IN_EDGES, GRAPH_IN_RANKS, GRAPH_IN_TRANCO,
	GRAPH_IN_WHOIS,    GRAPH_IN_WAT,   GRAPH_IN_CDX,
};

int graph_ingest(const graph_ingest_opts *opts_in, graph_ingest_stats *stats)
{
	graph_ingest_opts opts = *opts_in;
	graph_ingest_stats local = { 0 };
	graph__builder b = { 0 };
	char tmp[4200], tdir[4200];
	struct stat st;
	int64_t t0 = seo_mono_ms();
	int rc, made = 0;

	if (!opts.out_dir || !opts.release || !*opts.release ||
	    strlen(opts.release) >= sizeof(((graph__meta *)0)->release))
		return SEO_EINVAL;
	if (!stats)
		stats = &local;
	memset(stats, 0, sizeof(*stats));
	if (opts.mem_mb == 0)
		opts.mem_mb = 2048;
	if (stat(opts.out_dir, &st) == 0) {
		log_error("index directory \"%s\" already exists", opts.out_dir);
		return SEO_EEXIST;
	}
	snprintf(tmp, sizeof(tmp), "%s.tmp-%ld", opts.out_dir, (long)getpid());
	if (!opts.tmp_dir)
		opts.tmp_dir = tmp;
	snprintf(tdir, sizeof(tdir), "%s", opts.tmp_dir);
	opts.tmp_dir = tdir;
	if (mkdir(tmp, 0755) != 0) {
		log_error("cannot create \"%s\": %s", tmp, strerror(errno));
		return SEO_EIO;
	}
	made = 1;
	b.opts = &opts;
	b.dir = tmp;
	b.stats = stats;
	b.mem.cap = opts.mem_mb << 20;
	b.inputs_json = json_array();
	b.names = calloc(1, sizeof(*b.names));
	graph__marr_init(&b.dom);
	graph__marr_init(&b.vmap);
	if (b.names) {
		graph__marr_init(&b.names->off);
		graph__marr_init(&b.names->str);
	}
	if ((rc = graph__sdict_init(&b.urls, opts.tmp_dir, &b.mem)) ||
	    (rc = graph__sdict_init(&b.anchors, opts.tmp_dir, &b.mem)))
		goto out;
	for (size_t i = 0; !b.tech && i < opts.n_inputs; i++)
		if (opts.inputs[i].kind == GRAPH_IN_WAT &&
		    (rc = platform_rules(&b.tech)))
			goto out;
	/* the sorts fill at once while reading and take what the budget
	 * has room for, each up to a part of it: the domain graph's is by
	 * far the largest input */
	if (!b.inputs_json || !b.names) {
		rc = SEO_ENOMEM;
		goto out;
	}
	if ((rc = b_array(&b, &b.dom, "domains.bin", 0, b.mem.cap / 4, 0)) ||
	    (rc = graph__xsort_new(sizeof(graph__edge), graph__cmp_pair,
				   b.mem.cap / 4, opts.tmp_dir, &b.mem,
				   &b.edges)) ||
	    (rc = graph__xsort_new(sizeof(graph__lrec), NULL, b.mem.cap / 4,
				   opts.tmp_dir, &b.mem, &b.links_in)) ||
	    (rc = graph__xsort_new(sizeof(graph__crec), NULL, b.mem.cap / 16,
				   opts.tmp_dir, &b.mem, &b.caps_in)) ||
	    (rc = graph__xsort_new(sizeof(graph__edge), graph__cmp_pair,
				   b.mem.cap / 32, opts.tmp_dir, &b.mem,
				   &b.plats)) ||
	    (rc = graph__xsort_new(sizeof(graph__upd), cmp_upd,
				   b.mem.cap / 16, opts.tmp_dir, &b.mem,
				   &b.upd)))
		goto out;
	for (size_t k = 0; k < sizeof(read_order) / sizeof(read_order[0]); k++)
		for (size_t i = 0; i < opts.n_inputs; i++) {
			if (opts.inputs[i].kind != read_order[k])
				continue;
			/* the vertices, read first, are all in */
			if (read_order[k] != GRAPH_IN_VERTICES &&
			    (rc = names_seal(&b)))
				goto out;
			rc = graph__read_input(&b, &opts.inputs[i]);
			if (rc)
				goto out;
		}
	if ((rc = names_seal(&b)) || (rc = write_index(&b)))
		goto out;
	stats->index_bytes = dir_bytes(tmp);
	sync_dir(tmp);
	if (rename(tmp, opts.out_dir) != 0) {
		log_error("cannot rename \"%s\" to \"%s\": %s", tmp,
			  opts.out_dir, strerror(errno));
		rc = errno == EEXIST || errno == ENOTEMPTY ? SEO_EEXIST :
							     SEO_EIO;
		goto out;
	}
	made = 0;
	stats->seconds = (double)(seo_mono_ms() - t0) / 1000.0;
out:
	if (made)
		graph_remove_dir(tmp);
	graph__xsort_free(b.edges);
	graph__xsort_free(b.links_in);
	graph__xsort_free(b.caps_in);
	graph__xsort_free(b.links);
	graph__xsort_free(b.outl);
	graph__xsort_free(b.caps);
	graph__xsort_free(b.plats);
	graph__xsort_free(b.upd);
	seo_tech_rules_free(b.tech);
	free(b.plat_seen);
	graph__dict_free(&b.doms);
	graph__sdict_free(&b.urls);
	graph__sdict_free(&b.anchors);
	graph__dict_free(&b.strs);
	names_free(&b);
	graph__marr_close(&b.dom);
	graph__marr_close(&b.vmap);
	json_decref(b.inputs_json);
	return rc;
}

/*
 * index.c: the memory-mapped index and its queries.
 *
 * Every file of the directory is mapped read-only at open and checked
 * against the counts of meta.bin, so queries index the arrays without
 * bounds surprises and without parsing. Per-domain lists are CSR: an
 * offsets file (n + 1 entries) and a data file.
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <seo/errors.h>
#include <seo/log.h>

#include "internal.h"

typedef struct map {
	const void *p;
	size_t len;
} map;

enum {
	F_META, F_DOMAINS, F_BYRANK, F_DOMSORTED,
	F_DOMREV_STR, F_DOMREV_OFF, F_DOMFWD_STR, F_DOMFWD_OFF,
	F_OUT_OFF, F_OUT_DAT, F_IN_OFF, F_IN_DAT,
	F_LINKS_OFF, F_LINKS, F_RECENT, F_PAGES_OFF, F_PAGES,
	F_ANCH_OFF, F_ANCH, F_OUTL_OFF, F_OUTL,
	F_URLIDX_OFF, F_URLIDX, F_STATUS_OFF, F_STATUS,
	F_URLS_STR, F_URLS_OFF, F_ANCHORS_STR, F_ANCHORS_OFF,
	F_STRS_STR, F_STRS_OFF,
	F_PLAT_OFF, F_PLAT, F_PLAT_BYNAME, F_PLATTLD_STR, F_PLATTLD_OFF,
	F_INSKIP_DIR, F_INSKIP, F_LINKSKIP_DIR, F_LINKSKIP,
	F_SIMTOP_DIR, F_SIMTOP,
	F__COUNT
};

static const char *const file_names[F__COUNT] = {
	"meta.bin", "domains.bin", "byrank.u32", "domsorted.u32",
	"domrev.str", "domrev.off", "domfwd.str", "domfwd.off",
	"out.off", "out.dat", "in.off", "in.dat",
	"links.off", "links.bin", "recent.u32", "pages.off", "pages.bin",
	"anchortext.off", "anchortext.bin", "outl.off", "outl.bin",
	"urlidx.off", "urlidx.bin", "status.off", "status.bin",
	"urls.str", "urls.off", "anchors.str", "anchors.off",
	"strs.str", "strs.off",
	"plat.off", "plat.bin", "platname.u32", "plattld.str", "plattld.off",
	"inskip.dir", "inskip.bin", "linkskip.dir", "linkskip.bin",
	"simtop.dir", "simtop.bin",
};

/* Files from here on are new in format 3 (skip entries, stored similar
 * domains): an index of format 2 is served without them, its deep pages
 * decoded from the start and its similar domains counted. */
#define F_SINCE_3 F_INSKIP_DIR
#define FORMAT_OLDEST 2

typedef struct sim_cache sim_cache;

struct graph_index {
	map f[F__COUNT];
	const graph__meta *meta;
	const graph__dom *dom;
	uint64_t n;
	sim_cache *sim; /* similar domains' scratch and bitmaps */
};

#define ARR(ix, id, type) ((const type *)(ix)->f[id].p)

static int sim_cache_new(graph_index *ix);
static void sim_cache_free(sim_cache *sc);

static int map_file(const char *dir, const char *name, map *m)
{
	char path[4200];
	struct stat st;
	int fd, rc = 0;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return errno == ENOENT ? SEO_ENOTFOUND : SEO_EIO;
	if (fstat(fd, &st) != 0) {
		rc = SEO_EIO;
		goto out;
	}
	m->len = (size_t)st.st_size;
	/* an empty file maps to an empty array */
	m->p = "";
	if (m->len > 0) {
		void *p = mmap(NULL, m->len, PROT_READ, MAP_SHARED, fd, 0);

		if (p == MAP_FAILED) {
			rc = SEO_EIO;
			goto out;
		}
		m->p = p;
	}
out:
	close(fd);
	return rc;
}

void graph_index_close(graph_index *ix)
{
	if (!ix)
		return;
	for (int i = 0; i < F__COUNT; i++)
		if (ix->f[i].len > 0)
			munmap((void *)ix->f[i].p, ix->f[i].len);
	sim_cache_free(ix->sim);
	free(ix);
}

/* An offsets file of n + 1 entries from 0 to `limit`. The entries in
 * between are not walked: at full scale that would read gigabytes at
 * every open, and the writer emits them ascending by construction. */
static int check_off(const graph_index *ix, int id, uint64_t limit)
{
	const uint64_t *o = ARR(ix, id, uint64_t);

	return ix->f[id].len == (ix->n + 1) * sizeof(uint64_t) && o[0] == 0 &&
	       o[ix->n] == limit;
}

/* The platform section: one group per platform over plat.bin, the name
 * order beside it, and the suffix dictionary (docs/index-format.md). */
static int check_platforms(const graph_index *ix)
{
	const uint64_t *o = ARR(ix, F_PLAT_OFF, uint64_t);
	const uint64_t *t = ARR(ix, F_PLATTLD_OFF, uint64_t);
	size_t nt = ix->f[F_PLATTLD_OFF].len / 8;
	uint64_t n = ix->f[F_PLAT].len / sizeof(graph__pdom);
	size_t ts = ix->f[F_PLATTLD_STR].len;

	return ix->f[F_PLAT_OFF].len == (GRAPH_PLATFORM_COUNT + 1) * 8 &&
	       o[0] == 0 && o[GRAPH_PLATFORM_COUNT] == n &&
	       ix->f[F_PLAT].len == n * sizeof(graph__pdom) &&
	       ix->f[F_PLAT_BYNAME].len == n * 4 && nt >= 1 &&
	       ix->f[F_PLATTLD_OFF].len == nt * 8 && t[0] == 0 &&
	       t[nt - 1] == ts &&
	       (ts == 0 ||
		((const char *)ix->f[F_PLATTLD_STR].p)[ts - 1] == '\0');
}

static int check(const graph_index *ix)
{
	const graph__meta *m = ix->meta;
	uint64_t n = ix->n;

	if (ix->f[F_DOMAINS].len != n * sizeof(graph__dom) ||
	    ix->f[F_BYRANK].len != n * 4 || ix->f[F_DOMSORTED].len != n * 4 ||
	    ix->f[F_LINKS].len != m->n_links * sizeof(graph__link) ||
	    ix->f[F_RECENT].len != m->n_links * 4)
		return 0;
	if (!check_off(ix, F_DOMREV_OFF, ix->f[F_DOMREV_STR].len) ||
	    !check_off(ix, F_DOMFWD_OFF, ix->f[F_DOMFWD_STR].len) ||
	    !check_off(ix, F_OUT_OFF, ix->f[F_OUT_DAT].len) ||
	    !check_off(ix, F_IN_OFF, ix->f[F_IN_DAT].len) ||
	    !check_off(ix, F_LINKS_OFF, m->n_links) ||
	    !check_off(ix, F_PAGES_OFF, ix->f[F_PAGES].len / sizeof(graph__agg)) ||
	    !check_off(ix, F_ANCH_OFF, ix->f[F_ANCH].len / sizeof(graph__agg)) ||
	    !check_off(ix, F_OUTL_OFF, ix->f[F_OUTL].len / sizeof(graph__outl)) ||
	    !check_off(ix, F_URLIDX_OFF, ix->f[F_URLIDX].len / sizeof(graph__cap)) ||
	    !check_off(ix, F_STATUS_OFF,
		       ix->f[F_STATUS].len / sizeof(graph__status)))
		return 0;
	if (ix->f[F_URLS_OFF].len != (m->n_urls + 1) * 8 ||
	    ix->f[F_ANCHORS_OFF].len != (m->n_anchors + 1) * 8 ||
	    ix->f[F_STRS_OFF].len != (m->n_strs + 1) * 8)
		return 0;
	if (!check_platforms(ix))
		return 0;
	/* skip and similar-domains entries are checked against these
	 * sizes where they are used */
	if (ix->f[F_INSKIP_DIR].len % sizeof(graph__skipdir) ||
	    ix->f[F_INSKIP].len % sizeof(graph__inskip) ||
	    ix->f[F_LINKSKIP_DIR].len % sizeof(graph__skipdir) ||
	    ix->f[F_LINKSKIP].len % sizeof(uint32_t) ||
	    ix->f[F_SIMTOP_DIR].len % sizeof(graph__simdir) ||
	    ix->f[F_SIMTOP].len % sizeof(graph__sim))
		return 0;
	/* string blobs end with a NUL so that every entry is a C string */
	for (int s = F_DOMREV_STR; s <= F_STRS_STR; s++) {
		if (s != F_DOMREV_STR && s != F_DOMFWD_STR && s != F_URLS_STR &&
		    s != F_ANCHORS_STR && s != F_STRS_STR)
			continue;
		if (ix->f[s].len > 0 &&
		    ((const char *)ix->f[s].p)[ix->f[s].len - 1] != '\0')
			return 0;
	}
	return 1;
}

int graph_index_open(const char *dir, graph_index **out)
{
	graph_index *ix = calloc(1, sizeof(*ix));
	int rc = 0, missing_v3 = 0;

	if (!ix)
		return SEO_ENOMEM;
	/* the manifest is written last: without it the index is partial */
	{
		map m = { 0 };

		rc = map_file(dir, "manifest.json", &m);
		if (m.len > 0)
			munmap((void *)m.p, m.len);
		if (rc)
			goto out;
	}
	for (int i = 0; i < F__COUNT; i++) {
		rc = map_file(dir, file_names[i], &ix->f[i]);
		if (rc == SEO_ENOTFOUND && i >= F_SINCE_3) {
			ix->f[i] = (map){ "", 0 };
			missing_v3 = 1;
			continue;
		}
		if (rc) {
			log_error("cannot map index file \"%s/%s\": %s", dir,
				  file_names[i], seo_strerror(rc));
			rc = rc == SEO_ENOTFOUND ? SEO_EINVAL : rc;
			goto out;
		}
	}
	ix->meta = ARR(ix, F_META, graph__meta);
	if (ix->f[F_META].len != sizeof(graph__meta) ||
	    ix->meta->magic != GRAPH__MAGIC ||
	    ix->meta->version < FORMAT_OLDEST ||
	    ix->meta->version > GRAPH_FORMAT_VERSION ||
	    (ix->meta->version >= 3 && missing_v3) ||
	    ix->meta->release[sizeof(ix->meta->release) - 1] != '\0') {
		log_error("\"%s\" is not a whole index of format version %d "
			  "to %d", dir, FORMAT_OLDEST, GRAPH_FORMAT_VERSION);
		rc = SEO_EINVAL;
		goto out;
	}
	ix->n = ix->meta->n_domains;
	ix->dom = ARR(ix, F_DOMAINS, graph__dom);
	if (!check(ix)) {
		log_error("index \"%s\" is inconsistent", dir);
		rc = SEO_EINVAL;
		goto out;
	}
	rc = sim_cache_new(ix);
	if (rc)
		goto out;
	*out = ix;
	ix = NULL;
out:
	graph_index_close(ix);
	return rc;
}

const char *graph_index_release(const graph_index *ix)
{
	return ix->meta->release;
}

uint64_t graph_index_domain_count(const graph_index *ix)
{
	return ix->n;
}

uint64_t graph_index_edge_count(const graph_index *ix)
{
	return ix->meta->n_edges;
}

/* ---- strings ---- */

static const char *str_at(const graph_index *ix, int str, int off,
			  uint32_t id)
{
	if (id == GRAPH__NONE)
		return NULL;
	return (const char *)ix->f[str].p + ARR(ix, off, uint64_t)[id];
}

static const char *dom_name(const graph_index *ix, uint32_t id)
{
	return str_at(ix, F_DOMFWD_STR, F_DOMFWD_OFF, id);
}

static const char *url_str(const graph_index *ix, uint32_t id)
{
	return str_at(ix, F_URLS_STR, F_URLS_OFF, id);
}

static const char *anchor_str(const graph_index *ix, uint32_t id)
{
	return str_at(ix, F_ANCHORS_STR, F_ANCHORS_OFF, id);
}

static const char *small_str(const graph_index *ix, uint32_t id)
{
	return str_at(ix, F_STRS_STR, F_STRS_OFF, id);
}

static const char *type_name(uint32_t t)
{
	return t == GRAPH__LT_IMAGE ? "image" : "hyperlink";
}

/* Binary search of the reversed name in domsorted.u32. */
static int find_rev(const graph_index *ix, const char *rev, uint32_t *id)
{
	const uint32_t *sorted = ARR(ix, F_DOMSORTED, uint32_t);
	uint64_t lo = 0, hi = ix->n;

	while (lo < hi) {
		uint64_t mid = lo + (hi - lo) / 2;
		int c = strcmp(str_at(ix, F_DOMREV_STR, F_DOMREV_OFF,
				      sorted[mid]), rev);

		if (c == 0) {
			*id = sorted[mid];
			return 0;
		}
		if (c < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	return SEO_ENOTFOUND;
}

/*
 * Resolves a user's domain: 0 with *id, SEO_ENOTFOUND when well-formed but
 * absent, SEO_EINVAL when malformed. A subdomain falls back to its
 * registrable domain, the level the index keeps.
 */
static int lookup(const graph_index *ix, const char *domain, uint32_t *id)
{
	char norm[GRAPH_DOMAIN_MAX + 1], rev[GRAPH_DOMAIN_MAX + 1];
	char reg[GRAPH_DOMAIN_MAX + 1];
	int rc = graph_normalize_domain(domain, norm, sizeof(norm));

	if (rc)
		return rc;
	graph__reverse_labels(norm, strlen(norm), rev);
	if (find_rev(ix, rev, id) == 0)
		return 0;
	graph__registrable(norm, reg);
	if (strcmp(reg, norm) == 0)
		return SEO_ENOTFOUND;
	graph__reverse_labels(reg, strlen(reg), rev);
	return find_rev(ix, rev, id);
}

/* Common prologue: resolves the domain and clears the outputs. Returns
 * 1 when found, 0 when absent (outputs empty), or an error. */
static int start(const graph_index *ix, const char *domain, uint32_t *id,
		 size_t *n, uint64_t *total)
{
	int rc;

	if (n)
		*n = 0;
	if (total)
		*total = 0;
	rc = lookup(ix, domain, id);
	if (rc == SEO_ENOTFOUND)
		return 0;
	return rc ? rc : 1;
}

/* start() for a one-domain query: clears the `size` bytes of its result
 * `out` and sets *d when found. */
static int dom_start(const graph_index *ix, const char *domain, void *out,
		     size_t size, const graph__dom **d)
{
	uint32_t id;
	int rc = start(ix, domain, &id, NULL, NULL);

	memset(out, 0, size);
	if (rc > 0)
		*d = &ix->dom[id];
	return rc;
}

static uint32_t page_limit(const graph_page *pg)
{
	return pg->limit > GRAPH_LIMIT_MAX ? GRAPH_LIMIT_MAX : pg->limit;
}

static void *rows_alloc(seo_arena *a, size_t n, size_t size)
{
	return seo_arena_alloc(a, n ? n * size : 1);
}

/* ---- referring domains ---- */

/* Links from the domain at importance position `r` within the links of
 * one target: the group is ordered by that position, so two searches. */
static uint32_t links_from(const graph_index *ix, uint32_t to, uint32_t r)
{
	const uint64_t *off = ARR(ix, F_LINKS_OFF, uint64_t);
	const graph__link *l = ARR(ix, F_LINKS, graph__link);
	uint64_t lo = off[to], hi = off[to + 1], a, b;

	while (lo < hi) {
		uint64_t mid = lo + (hi - lo) / 2;

		if (ix->dom[l[mid].from_dom].rank < r)
			lo = mid + 1;
		else
			hi = mid;
	}
	a = lo;
	hi = off[to + 1];
	while (lo < hi) {
		uint64_t mid = lo + (hi - lo) / 2;

		if (ix->dom[l[mid].from_dom].rank <= r)
			lo = mid + 1;
		else
			hi = mid;
	}
	b = lo;
	return (uint32_t)(b - a);
}

/* The first of the `n` entries of a directory (`stride` bytes each,
 * ascending by their leading u32 key) whose key is not below `key`; `n`
 * when none is. */
static uint64_t dir_lower_bound(const void *dir, uint64_t n, size_t stride,
				uint32_t key)
{
	const unsigned char *p = dir;
	uint64_t lo = 0, hi = n;

	while (lo < hi) {
		uint64_t mid = lo + (hi - lo) / 2;
		uint32_t k;

		memcpy(&k, p + mid * stride, sizeof(k));
		if (k < key)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

/* The skip entries (entries of `size` bytes in file `binf`) of the list
 * `key` of directory `dirf`: their number and the first, or 0 when the
 * list has none or its directory entry disagrees with the file. */
static uint32_t skip_find(const graph_index *ix, int dirf, int binf,
			  size_t size, uint32_t key, uint64_t *first)
{
	const graph__skipdir *d = ARR(ix, dirf, graph__skipdir);
	uint64_t nd = ix->f[dirf].len / sizeof(*d);
	uint64_t have = ix->f[binf].len / size;
	uint64_t lo = dir_lower_bound(d, nd, sizeof(*d), key);

	if (lo == nd || d[lo].key != key || d[lo].first > have ||
	    d[lo].n > have - d[lo].first)
		return 0;
	*first = d[lo].first;
	return d[lo].n;
}

/*
 * Walks the in-list of the domain at importance position `to`: the
 * positions of its referrers, ascending. The varints are decoded a skip
 * block (GRAPH__SKIP entries) at a time into buf, so that a step is a
 * load; in_pass() passes over whole blocks below its target by the skip
 * entries without decoding them. Lives on the caller's stack; holds
 * nothing to free.
 */
typedef struct in_iter {
	const uint8_t *start, *p, *end; /* the list; p: the next to decode */
	const graph__inskip *skip;      /* its skip entries, nskip of them */
	uint32_t nskip;
	uint32_t r;                     /* the last position decoded */
	uint64_t k;                     /* entries decoded */
	uint32_t i, n;                  /* the next entry of buf, its count */
	uint32_t buf[GRAPH__SKIP];
} in_iter;

static void in_begin(const graph_index *ix, uint32_t to, in_iter *it)
{
	const uint64_t *off = ARR(ix, F_IN_OFF, uint64_t);
	const uint8_t *dat = ARR(ix, F_IN_DAT, uint8_t);
	uint64_t first = 0;

	it->start = it->p = dat + off[to];
	it->end = dat + off[to + 1];
	it->r = 0;
	it->k = 0;
	it->i = it->n = 0;
	it->skip = NULL;
	/* an entry takes a byte at least: a list of GRAPH__SKIP bytes or
	 * fewer has no skip entries to look up */
	it->nskip = it->end - it->start <= GRAPH__SKIP ? 0 :
		    skip_find(ix, F_INSKIP_DIR, F_INSKIP, sizeof(*it->skip),
			      to, &first);
	if (it->nskip > 0)
		it->skip = ARR(ix, F_INSKIP, graph__inskip) + first;
}

/* In each byte of a word: its high bit, its low bit. */
#define BYTES_HIGH 0x8080808080808080ULL
#define BYTES_ONE 0x0101010101010101ULL

/* Decodes the rest of the block of entry k into buf (the whole block
 * unless in_seek() started inside it); 0 at the end of the list. */
static int in_fill(in_iter *it)
{
	const uint8_t *p = it->p, *end = it->end;
	uint32_t r = it->r, n = 0;
	uint32_t want = GRAPH__SKIP - (uint32_t)(it->k % GRAPH__SKIP);

	while (n < want && p < end) {
		uint64_t w, v;

		/* the gaps of a long list are mostly below 128: eight bytes
		 * without a continuation bit are eight of them (the index is
		 * little-endian, as the host) */
		if (want - n >= 8 && end - p >= 8) {
			memcpy(&w, p, sizeof(w));
			if (!(w & BYTES_HIGH)) {
				for (unsigned b = 0; b < 8; b++) {
					r += (uint32_t)(w >> 8 * b) & 0xff;
					it->buf[n++] = r;
				}
				p += 8;
				continue;
			}
		}
		p = graph__varint_get(p, &v);
		r += (uint32_t)v;
		it->buf[n++] = r;
	}
	it->p = p;
	it->r = r;
	it->k += n;
	it->i = 0;
	it->n = n;
	return n > 0;
}

static int in_next(in_iter *it, uint32_t *rank)
{
	if (it->i == it->n && !in_fill(it))
		return 0;
	*rank = it->buf[it->i++];
	return 1;
}

/* Entries the walk has passed (returned or leapt over). */
static uint64_t in_done(const in_iter *it)
{
	return it->k - (it->n - it->i);
}

/* Continues at block j (from 1: entry GRAPH__SKIP * j) by its skip entry,
 * dropping what buf holds; 0 when the entry points outside the list. */
static int in_jump(in_iter *it, uint64_t j)
{
	const graph__inskip *e = &it->skip[j - 1];

	if (e->at >= (uint64_t)(it->end - it->start))
		return 0;
	it->p = it->start + e->at;
	it->r = e->prev;
	it->k = j * GRAPH__SKIP;
	it->i = it->n = 0;
	return 1;
}

/*
 * Makes buf hold an entry not below t, passing the blocks that end below
 * it by galloping over the skip entries (entry j holds the last position
 * of block j - 1), so that a target far ahead costs a few lookups and one
 * block; 0 when the list ends before t.
 */
static int in_reach(in_iter *it, uint32_t t)
{
	while (it->i == it->n || it->buf[it->n - 1] < t) {
		/* skip entry m ends the block being decoded */
		uint64_t m = it->k / GRAPH__SKIP, step = 1, hi;

		if (m < it->nskip && it->skip[m].prev < t) {
			while (m + step < it->nskip &&
			       it->skip[m + step].prev < t) {
				m += step;
				step *= 2;
			}
			hi = m + step < it->nskip ? m + step : it->nskip;
			while (hi - m > 1) {
				uint64_t mid = m + (hi - m) / 2;

				if (it->skip[mid].prev < t)
					m = mid;
				else
					hi = mid;
			}
			if (in_jump(it, m + 1))
				continue;
		}
		if (!in_fill(it))
			return 0;
	}
	return 1;
}

/* Passes the entries below t: 1 when the list holds one not below it
 * (then the next entry), 0 when it ends first. */
static int in_pass(in_iter *it, uint32_t t)
{
	uint32_t i;

	if (!in_reach(it, t))
		return 0;
	for (i = it->i; it->buf[i] < t; i++)
		;
	it->i = i;
	return 1;
}

/* Whether the list holds t, passing its entries below t: asked for
 * ascending t, it walks the list once. */
static int in_has(in_iter *it, uint32_t t)
{
	return in_pass(it, t) && it->buf[it->i] == t;
}

/* The next entry, not passed; UINT32_MAX (no position) at the end. */
static uint32_t in_head(in_iter *it)
{
	if (it->i == it->n && !in_fill(it))
		return UINT32_MAX;
	return it->buf[it->i];
}

/* Takes every entry decoded and not yet passed at once, for a loop that
 * keeps its place in a register: their number (0 at the end of the list)
 * and *v, valid until the next call on it. */
static uint32_t in_take(in_iter *it, const uint32_t **v)
{
	uint32_t m;

	if (it->i == it->n && !in_fill(it))
		return 0;
	*v = it->buf + it->i;
	m = it->n - it->i;
	it->i = it->n;
	return m;
}

/* Starts the in-list of position `to` past its first `skip` entries: from
 * the skip entry before them, then fewer than GRAPH__SKIP entries of its
 * block. */
static void in_seek(const graph_index *ix, uint32_t to, uint64_t skip,
		    in_iter *it)
{
	uint64_t j = skip / GRAPH__SKIP;

	in_begin(ix, to, it);
	if (j > it->nskip)
		j = it->nskip;
	if (j > 0)
		in_jump(it, j);
	while (in_done(it) < skip) {
		uint64_t left = skip - in_done(it);

		if (it->i == it->n && !in_fill(it))
			return;
		it->i += left < it->n - it->i ? (uint32_t)left : it->n - it->i;
	}
}

int graph_referring_domains(const graph_index *ix, const char *domain,
			    const graph_page *pg, seo_arena *a,
			    graph_refdomain_row **rows, size_t *n,
			    uint64_t *total)
{
	const uint32_t *by_rank = ARR(ix, F_BYRANK, uint32_t);
	uint32_t id, r, limit = page_limit(pg);
	graph_refdomain_row *out;
	in_iter it;
	int rc = start(ix, domain, &id, n, total);

	*rows = NULL;
	if (rc <= 0)
		return rc;
	*total = ix->dom[id].ref_domains;
	out = rows_alloc(a, limit, sizeof(*out));
	if (!out)
		return SEO_ENOMEM;
	*rows = out;
	if (pg->offset >= *total)
		return 0;
	in_seek(ix, ix->dom[id].rank, pg->offset, &it);
	while (*n < limit && in_next(&it, &r)) {
		uint32_t from;
		uint32_t links;

		from = by_rank[r];
		links = links_from(ix, id, r);
		out[*n].from_domain = dom_name(ix, from);
		/* the domain graph proves at least one link */
		out[*n].total_links = links ? links : 1;
		out[*n].from_domain_score = ix->dom[from].score;
		(*n)++;
	}
	return 0;
}

/* ---- backlinks ---- */

/* The end of the run of links from one referrer that starts at k, in a
 * group ending at hi (its links are contiguous): galloping, so that a
 * referrer of one link costs a comparison or two. */
static uint64_t run_end(const graph__link *l, uint64_t k, uint64_t hi)
{
	uint32_t from = l[k].from_dom;
	uint64_t in = k, step = 1, out;

	while (step < hi - in && l[in + step].from_dom == from) {
		in += step;
		step *= 2;
	}
	out = step < hi - in ? in + step : hi;
	while (out - in > 1) {
		uint64_t mid = in + (out - in) / 2;

		if (l[mid].from_dom == from)
			in = mid;
		else
			out = mid;
	}
	return out;
}

/* The first link of referrer number `skip` of the group [lo, hi) of
 * domain id, in importance order (a run of links per referrer): from the
 * last skip entry before it, then a run at a time. */
static uint64_t referrer_seek(const graph_index *ix, uint32_t id,
			      uint64_t lo, uint64_t hi, uint64_t skip)
{
	const uint32_t *e = ARR(ix, F_LINKSKIP, uint32_t);
	const graph__link *l = ARR(ix, F_LINKS, graph__link);
	uint64_t first = 0, j = skip / GRAPH__SKIP, k = lo;
	uint32_t n;

	if (j > 0 && (n = skip_find(ix, F_LINKSKIP_DIR, F_LINKSKIP,
				    sizeof(*e), id, &first)) > 0) {
		if (j > n)
			j = n;
		if (e[first + j - 1] < hi - lo) {
			k = lo + e[first + j - 1];
			skip -= j * GRAPH__SKIP;
		}
	}
	for (; skip > 0 && k < hi; skip--)
		k = run_end(l, k, hi);
	return k;
}

static void fill_backlink(const graph_index *ix, const graph__link *l,
			  graph_backlink_row *row)
{
	row->from_domain = dom_name(ix, l->from_dom);
	row->from_url = url_str(ix, l->from_url);
	row->to_url = url_str(ix, l->to_url);
	row->anchor_text = anchor_str(ix, l->anchor);
	row->rel = small_str(ix, l->rel);
	row->link_type = type_name(l->type);
	row->domain_host_count = ix->dom[l->from_dom].hosts;
	row->crawled_at = l->ts;
	row->from_domain_score = ix->dom[l->from_dom].score;
}

int graph_backlinks(const graph_index *ix, const char *domain,
		    graph_sort sort, const graph_backlink_filter *filter,
		    const graph_page *pg, seo_arena *a,
		    graph_backlink_row **rows, size_t *n, uint64_t *total)
{
	const uint64_t *off = ARR(ix, F_LINKS_OFF, uint64_t);
	const graph__link *links = ARR(ix, F_LINKS, graph__link);
	const uint32_t *recent = ARR(ix, F_RECENT, uint32_t);
	uint32_t id, from = GRAPH__NONE, limit = page_limit(pg);
	int type = -1;
	graph_backlink_row *out;
	uint64_t lo, hi, prev_from = GRAPH__NONE;
	int rc = start(ix, domain, &id, n, total);

	*rows = NULL;
	if (rc <= 0)
		return rc;
	if (filter && filter->link_type) {
		if (strcmp(filter->link_type, "hyperlink") == 0)
			type = GRAPH__LT_HYPERLINK;
		else if (strcmp(filter->link_type, "image") == 0)
			type = GRAPH__LT_IMAGE;
		else
			return 0; /* no link has another type */
	}
	if (filter && filter->from_domain) {
		rc = lookup(ix, filter->from_domain, &from);
		if (rc == SEO_ENOTFOUND)
			return 0;
		if (rc)
			return rc;
	}
	out = rows_alloc(a, limit, sizeof(*out));
	if (!out)
		return SEO_ENOMEM;
	lo = off[id];
	hi = off[id + 1];
	if (from != GRAPH__NONE) {
		/* one referrer: its links are one run of the group */
		uint32_t r = ix->dom[from].rank;
		uint64_t a0 = lo, b0 = hi;

		while (a0 < b0) {
			uint64_t mid = a0 + (b0 - a0) / 2;

			if (ix->dom[links[mid].from_dom].rank < r)
				a0 = mid + 1;
			else
				b0 = mid;
		}
		lo = a0;
		hi = lo + links_from(ix, id, r);
	}
	*rows = out;
	/* Without a type filter the rows are known without reading the
	 * links before the page: one per referrer in importance order (the
	 * newest of its run, which is newest first, as recent wants), one
	 * per link in recent order. */
	if (type < 0 && sort == GRAPH_SORT_IMPORTANCE && from == GRAPH__NONE) {
		*total = ix->dom[id].url_referrers;
		if (pg->offset >= *total)
			return 0;
		for (uint64_t k = referrer_seek(ix, id, lo, hi, pg->offset);
		     k < hi && *n < limit; k = run_end(links, k, hi))
			fill_backlink(ix, &links[k], &out[(*n)++]);
		return 0;
	}
	if (type < 0) {
		if (sort == GRAPH_SORT_IMPORTANCE)
			hi = lo + (hi > lo);
		*total = hi - lo;
		if (pg->offset >= *total)
			return 0;
		for (uint64_t k = lo + pg->offset; k < hi && *n < limit; k++)
			fill_backlink(ix, &links[from == GRAPH__NONE ?
							 off[id] + recent[k] :
							 k],
				      &out[(*n)++]);
		return 0;
	}
	for (uint64_t k = lo; k < hi; k++) {
		uint64_t at = sort == GRAPH_SORT_RECENT && from == GRAPH__NONE ?
				      off[id] + recent[k] : k;
		const graph__link *l = &links[at];

		if (l->type != (uint32_t)type)
			continue;
		/* one row per referrer: its newest matching link (a single
		 * referrer's run is already newest first, as recent wants) */
		if (sort == GRAPH_SORT_IMPORTANCE) {
			if (l->from_dom == prev_from)
				continue;
			prev_from = l->from_dom;
		}
		if (*total >= pg->offset && *n < limit)
			fill_backlink(ix, l, &out[(*n)++]);
		(*total)++;
	}
	return 0;
}

/* ---- outbound ---- */

int graph_outbound_links(const graph_index *ix, const char *domain,
			 const graph_page *pg, seo_arena *a,
			 graph_outbound_row **rows, size_t *n, uint64_t *total,
			 graph_outbound_summary *summary)
{
	const uint64_t *off = ARR(ix, F_OUTL_OFF, uint64_t);
	const graph__outl *ol = ARR(ix, F_OUTL, graph__outl);
	uint32_t id, limit = page_limit(pg);
	graph_outbound_row *out;
	int rc = start(ix, domain, &id, n, total);

	*rows = NULL;
	if (summary)
		memset(summary, 0, sizeof(*summary));
	if (rc <= 0)
		return rc;
	*total = off[id + 1] - off[id];
	out = rows_alloc(a, limit, sizeof(*out));
	if (!out)
		return SEO_ENOMEM;
	for (uint64_t k = off[id] + pg->offset; k < off[id + 1] && *n < limit;
	     k++) {
		graph_outbound_row *row = &out[(*n)++];

		row->to_domain = dom_name(ix, ol[k].to_dom);
		row->to_url = url_str(ix, ol[k].to_url);
		row->anchor_text = anchor_str(ix, ol[k].anchor);
		row->link_type = type_name(ol[k].type);
		row->edge_count = ol[k].count;
	}
	if (summary) {
		const graph__dom *d = &ix->dom[id];

		summary->unique_destinations = d->out_domains;
		summary->top_domain = dom_name(ix, d->top_out_domain);
		summary->top_domain_concentration =
			d->out_links ? (double)d->top_out_links / d->out_links :
				       0.0;
	}
	*rows = out;
	return 0;
}

/* ---- aggregates ---- */

static int agg_page(const graph_index *ix, int offf, int datf,
		    const char *domain, const graph_page *pg,
		    const graph__agg **first, size_t *n, uint64_t *total)
{
	const uint64_t *off;
	uint32_t id, limit = page_limit(pg);
	uint64_t b, e;
	int rc = start(ix, domain, &id, n, total);

	if (rc <= 0)
		return rc;
	off = ARR(ix, offf, uint64_t);
	b = off[id];
	e = off[id + 1];
	*total = e - b;
	*first = ARR(ix, datf, graph__agg) + b + pg->offset;
	*n = pg->offset >= *total ? 0 :
	     *total - pg->offset < limit ? (size_t)(*total - pg->offset) :
					   limit;
	return 1;
}

/* Fills one result row from an aggregate record. */
typedef void (*agg_fill)(const graph_index *ix, const graph__agg *g,
			 void *row);

/* A page of an aggregate file as rows of `size` bytes, allocated on `a`,
 * into the row pointer at `rows` (NULL when none). */
static int agg_rows(const graph_index *ix, int offf, int datf,
		    const char *domain, const graph_page *pg, seo_arena *a,
		    size_t size, agg_fill fill, void *rows, size_t *n,
		    uint64_t *total)
{
	const graph__agg *g = NULL;
	int rc = agg_page(ix, offf, datf, domain, pg, &g, n, total);
	char *v = NULL;

	if (rc > 0) {
		v = rows_alloc(a, *n, size);
		rc = v ? 0 : SEO_ENOMEM;
	}
	for (size_t i = 0; v && i < *n; i++)
		fill(ix, &g[i], v + i * size);
	memcpy(rows, &v, sizeof(v));
	return rc;
}

static void fill_anchor(const graph_index *ix, const graph__agg *g,
			void *row)
{
	graph_anchor_row *r = row;

	r->anchor_text = anchor_str(ix, g->id);
	r->link_count = g->links;
	r->domain_count = g->domains;
}

int graph_anchor_text(const graph_index *ix, const char *domain,
		      const graph_page *pg, seo_arena *a,
		      graph_anchor_row **rows, size_t *n, uint64_t *total)
{
	return agg_rows(ix, F_ANCH_OFF, F_ANCH, domain, pg, a, sizeof(**rows),
			fill_anchor, rows, n, total);
}

static void fill_top_page(const graph_index *ix, const graph__agg *g,
			  void *row)
{
	graph_top_page_row *r = row;

	r->url = url_str(ix, g->id);
	r->inbound_links = g->links;
	r->referring_domains = g->domains;
}

int graph_top_pages(const graph_index *ix, const char *domain,
		    const graph_page *pg, seo_arena *a,
		    graph_top_page_row **rows, size_t *n, uint64_t *total)
{
	return agg_rows(ix, F_PAGES_OFF, F_PAGES, domain, pg, a,
			sizeof(**rows), fill_top_page, rows, n, total);
}

/* ---- similar domains ---- */

/*
 * Two exact ways to count, for every other domain, the linkers it shares
 * with domain t (docs/index-format.md, "Costs of the queries"):
 *
 * - forward: each linker's out-list, counted in a dense counter; costs the
 *   out-degrees of t's linkers, which for a domain linked from a large
 *   share of the web is most of the graph;
 * - reverse: t's linkers marked in a bitmap, then every domain's in-list
 *   read against it. A domain whose in-degree cannot reach the page only
 *   needs one marked linker to count in `total`; the others are counted in
 *   full (the heaviest by a popcount against a cached bitmap of their own
 *   in-list). It costs about one in-list entry per linked domain plus the
 *   in-lists of the domains that can still make the page.
 *
 * Both give the same rows, counts, order and total. The heavy domains'
 * first GRAPH__SIM_ROWS rows and total are stored at ingest (simtop.*):
 * a page within them is read, not counted.
 */

/* The stored rows of position t, or NULL when the index has none for it
 * (or its entry disagrees with simtop.bin). */
static const graph__simdir *sim_stored(const graph_index *ix, uint32_t t)
{
	const graph__simdir *d = ARR(ix, F_SIMTOP_DIR, graph__simdir);
	uint64_t nd = ix->f[F_SIMTOP_DIR].len / sizeof(*d);
	uint64_t have = ix->f[F_SIMTOP].len / sizeof(graph__sim);
	uint64_t lo = dir_lower_bound(d, nd, sizeof(*d), t);

	if (lo == nd || d[lo].pos != t || d[lo].first > have ||
	    d[lo].rows > have - d[lo].first || d[lo].rows > d[lo].total)
		return NULL;
	return &d[lo];
}

/* Whether the stored rows answer the page: it ends within them, or they
 * are the whole result. */
static int sim_stored_holds(const graph__simdir *sd, const graph_page *pg,
			    uint32_t limit)
{
	return sd->rows == sd->total ||
	       (pg->offset <= sd->rows && limit <= sd->rows - pg->offset);
}

/* The page of the `len` rows v[], in answer order. */
static int similar_page(const graph_index *ix, const graph__sim *v,
			uint64_t len, const graph_page *pg, uint32_t limit,
			seo_arena *a, graph_similar_row **rows, size_t *n)
{
	const uint32_t *by_rank = ARR(ix, F_BYRANK, uint32_t);

	*rows = rows_alloc(a, limit, sizeof(**rows));
	if (!*rows)
		return SEO_ENOMEM;
	for (uint64_t i = pg->offset; i < len && *n < limit; i++) {
		(*rows)[*n].similar_domain = dom_name(ix, by_rank[v[i].id]);
		(*rows)[*n].shared_linkers = v[i].count;
		(*n)++;
	}
	return 0;
}

static int similar_from_store(const graph_index *ix,
			      const graph__simdir *sd, const graph_page *pg,
			      uint32_t limit, seo_arena *a,
			      graph_similar_row **rows, size_t *n,
			      uint64_t *total)
{
	*total = sd->total;
	return similar_page(ix, ARR(ix, F_SIMTOP, graph__sim) + sd->first,
			    sd->rows, pg, limit, a, rows, n);
}

/*
 * What the similar-domains count keeps per index until it is closed:
 * - bitmaps of the in-lists of the most linked domains, built by the
 *   reverse count on first use, within DENSE_MAX_BYTES: a popcount over
 *   n/64 words instead of decoding at least n/DENSE_MIN_SHARE entries.
 *   A slot is published once with release semantics and never changes,
 *   so readers take no lock;
 * - the forward count's counter, n zeros between calls, lent to one call
 *   at a time: a fresh one costs a page fault per page it touches, more
 *   than a small count itself.
 */
#define DENSE_MAX_BYTES ((size_t)64 << 20)
#define DENSE_MIN_SHARE 128
#define DENSE_SLOTS 16384

struct sim_cache {
	_Atomic(uint64_t *) *slot; /* by importance position, < nslots */
	size_t nslots;
	atomic_size_t bytes;       /* reserved by the bitmaps built */
	pthread_mutex_t counter_mu;
	uint32_t *counter;         /* NULL until first lent */
};

static int sim_cache_new(graph_index *ix)
{
	sim_cache *sc = calloc(1, sizeof(*sc));

	if (!sc)
		return SEO_ENOMEM;
	sc->nslots = ix->n < DENSE_SLOTS ? (size_t)ix->n : DENSE_SLOTS;
	sc->slot = calloc(sc->nslots ? sc->nslots : 1, sizeof(*sc->slot));
	if (!sc->slot) {
		free(sc);
		return SEO_ENOMEM;
	}
	atomic_init(&sc->bytes, 0);
	pthread_mutex_init(&sc->counter_mu, NULL);
	ix->sim = sc;
	return 0;
}

static void sim_cache_free(sim_cache *sc)
{
	if (!sc)
		return;
	for (size_t i = 0; i < sc->nslots; i++)
		free(atomic_load(&sc->slot[i]));
	free(sc->slot);
	pthread_mutex_destroy(&sc->counter_mu);
	free(sc->counter);
	free(sc);
}

/* A counter of n zeros: the index's own (*lent set) when no other call
 * has it, else a new one. Given back zeroed with counter_give(). */
static uint32_t *counter_take(const graph_index *ix, int *lent)
{
	sim_cache *sc = ix->sim;

	*lent = pthread_mutex_trylock(&sc->counter_mu) == 0;
	if (!*lent)
		return calloc(ix->n, sizeof(uint32_t));
	if (!sc->counter)
		sc->counter = calloc(ix->n, sizeof(uint32_t));
	if (!sc->counter) {
		*lent = 0;
		pthread_mutex_unlock(&sc->counter_mu);
	}
	return sc->counter;
}

static void counter_give(const graph_index *ix, uint32_t *count, int lent)
{
	if (lent)
		pthread_mutex_unlock(&ix->sim->counter_mu);
	else
		free(count);
}

static int similar_forward(const graph_index *ix, uint32_t t,
			   graph__simtop *top, uint64_t *total)
{
	const uint64_t *ooff = ARR(ix, F_OUT_OFF, uint64_t);
	const uint8_t *odat = ARR(ix, F_OUT_DAT, uint8_t);
	uint32_t *count, *touched = NULL;
	size_t nt = 0, cap = 0;
	uint32_t r, next;
	in_iter it;
	int more, lent, rc = 0;

	count = counter_take(ix, &lent);
	if (!count)
		return SEO_ENOMEM;
	in_begin(ix, t, &it);
	more = in_next(&it, &next);
	while (more) {
		const uint8_t *p, *e;
		uint64_t v, c = 0;

		r = next;
		/* the next out-list is fetched while this one is counted */
		more = in_next(&it, &next);
		if (more)
			__builtin_prefetch(odat + ooff[next]);
		for (p = odat + ooff[r], e = odat + ooff[r + 1]; p < e;) {
			p = graph__varint_get(p, &v);
			c += v;
			if (nt == cap) {
				size_t nc = cap ? cap * 2 : 1024;
				uint32_t *np = realloc(touched, nc * sizeof(*np));

				if (!np) {
					rc = SEO_ENOMEM;
					goto out;
				}
				touched = np;
				cap = nc;
			}
			/* no branch on the count just read: it is often a
			 * cache miss, and a mispredicted branch on it would
			 * stall every load behind it */
			touched[nt] = (uint32_t)c;
			nt += count[c]++ == 0;
		}
	}
	count[t] = 0;
	for (size_t i = 0; i < nt; i++) {
		uint32_t c = touched[i];

		if (count[c] == 0)
			continue;
		(*total)++;
		graph__top_push(top, (graph__sim){ c, count[c] });
	}
out:
	for (size_t i = 0; i < nt; i++)
		count[touched[i]] = 0;
	counter_give(ix, count, lent);
	free(touched);
	return rc;
}

static size_t mark_words(const graph_index *ix)
{
	return (size_t)((ix->n + 63) / 64);
}

static int marked(const uint64_t *m, uint64_t r)
{
	return (int)(m[r >> 6] >> (r & 63) & 1);
}

/* Sets the bits of the in-list [p, e) in m. */
static void mark_list(const uint8_t *p, const uint8_t *e, uint64_t *m)
{
	uint64_t v, r = 0;

	while (p < e) {
		p = graph__varint_get(p, &v);
		r += v;
		m[r >> 6] |= (uint64_t)1 << (r & 63);
	}
}

/* The cached bitmap of the in-list of position c, or NULL. */
static const uint64_t *dense_get(const graph_index *ix, uint64_t c)
{
	if (c >= ix->sim->nslots)
		return NULL;
	return atomic_load_explicit(&ix->sim->slot[c], memory_order_acquire);
}

/* Whether position c, of in-degree deg, gets a bitmap of its own. */
static int dense_worth(const graph_index *ix, uint64_t c, uint32_t deg)
{
	return c < ix->sim->nslots &&
	       (uint64_t)deg * DENSE_MIN_SHARE >= ix->n;
}

/*
 * The bitmap of position c's in-list from the cache, built and published
 * first when c is worth a slot and the budget allows; NULL otherwise (or
 * out of memory): the caller then reads the list itself.
 */
static const uint64_t *dense_build(const graph_index *ix, uint64_t c,
				   uint32_t deg)
{
	const uint64_t *ioff = ARR(ix, F_IN_OFF, uint64_t);
	const uint8_t *idat = ARR(ix, F_IN_DAT, uint8_t);
	sim_cache *sc = ix->sim;
	size_t size = mark_words(ix) * sizeof(uint64_t);
	uint64_t *m, *none = NULL;
	const uint64_t *have = dense_get(ix, c);

	if (have || !dense_worth(ix, c, deg) ||
	    atomic_load(&sc->bytes) + size > DENSE_MAX_BYTES)
		return have;
	if (atomic_fetch_add(&sc->bytes, size) + size > DENSE_MAX_BYTES ||
	    !(m = calloc(mark_words(ix), sizeof(uint64_t)))) {
		atomic_fetch_sub(&sc->bytes, size);
		return NULL;
	}
	mark_list(idat + ioff[c], idat + ioff[c + 1], m);
	if (atomic_compare_exchange_strong_explicit(&sc->slot[c], &none, m,
						    memory_order_release,
						    memory_order_acquire))
		return m;
	/* another call published the same bitmap meanwhile */
	free(m);
	atomic_fetch_sub(&sc->bytes, size);
	return none;
}

/* The bits set in both a and b. */
#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__)
/* Without -mpopcnt the builtin is a table lookup per byte; the popcnt
 * instruction is chosen at load time where the CPU has it. */
__attribute__((target_clones("popcnt", "default")))
#endif
static uint32_t and_count(const uint64_t *a, const uint64_t *b, size_t words)
{
	uint64_t s = 0;

	for (size_t i = 0; i < words; i++)
		s += (uint64_t)__builtin_popcountll(a[i] & b[i]);
	return (uint32_t)s;
}

/* Whether the rest [p, e) of an in-list, read so far up to position r,
 * holds a marked linker. */
static int any_marked(const uint8_t *p, const uint8_t *e, uint64_t r,
		      const uint64_t *m)
{
	uint64_t v;

	while (p < e) {
		p = graph__varint_get(p, &v);
		r += v;
		if (marked(m, r))
			return 1;
	}
	return 0;
}

/*
 * The marked linkers of the in-list [p, e) of `deg` entries, or, once even
 * all those left could not lift the count above `floor`, 0 or 1 (whether
 * any is marked) with *cut set.
 */
static uint32_t count_marked(const uint8_t *p, const uint8_t *e,
			     const uint64_t *m, uint32_t deg, uint32_t floor,
			     int *cut)
{
	uint64_t v, r = 0;
	uint32_t n = 0, left = deg;

	*cut = 0;
	while (p < e) {
		p = graph__varint_get(p, &v);
		r += v;
		n += (uint32_t)marked(m, r);
		left -= left > 0;
		if ((uint64_t)n + left <= floor) {
			*cut = 1;
			return n > 0 || any_marked(p, e, r, m);
		}
	}
	return n;
}

/* Lists ahead of the one read whose first bytes are fetched meanwhile. */
#define SCAN_AHEAD 16

static int similar_reverse(const graph_index *ix, uint32_t t,
			   graph__simtop *top, uint64_t *total)
{
	const uint64_t *ioff = ARR(ix, F_IN_OFF, uint64_t);
	const uint8_t *idat = ARR(ix, F_IN_DAT, uint8_t);
	const uint32_t *by_rank = ARR(ix, F_BYRANK, uint32_t);
	size_t words = mark_words(ix);
	const uint64_t *mark;
	uint64_t *own = NULL, shared = 0;

	mark = dense_build(ix, t, ix->dom[by_rank[t]].ref_domains);
	if (!mark) {
		own = calloc(words, sizeof(uint64_t));
		if (!own)
			return SEO_ENOMEM;
		mark_list(idat + ioff[t], idat + ioff[t + 1], own);
		mark = own;
	}
	for (uint64_t c = 0; c < ix->n; c++) {
		const uint8_t *p = idat + ioff[c], *e = idat + ioff[c + 1];
		uint32_t floor = graph__top_floor(top), deg, n;
		const uint64_t *other;
		int cut = 0;

		if (c + SCAN_AHEAD < ix->n)
			__builtin_prefetch(idat + ioff[c + SCAN_AHEAD]);
		if (p == e || c == t)
			continue;
		/* an entry takes at least a byte: the length bounds the
		 * degree before domains.bin is read */
		if ((uint64_t)(e - p) <= floor ||
		    (deg = ix->dom[by_rank[c]].ref_domains) <= floor) {
			shared += (uint64_t)any_marked(p, e, 0, mark);
			continue;
		}
		other = dense_build(ix, c, deg);
		if (other)
			n = and_count(mark, other, words);
		else
			n = count_marked(p, e, mark, deg, floor, &cut);
		if (n == 0)
			continue;
		shared++;
		if (!cut)
			graph__top_push(top, (graph__sim){ (uint32_t)c, n });
	}
	*total = shared;
	free(own);
	return 0;
}

/* Whether the reverse count is the cheaper one for position t and a page
 * ending at row k: t is heavy (graph__sim_heavy(), the ingest's test for
 * storing its rows too) and its linkers' out-lists hold at least
 * 1/GRAPH__SIM_SHARE of all out-list bytes (linkers that link nowhere else
 * are cheap forward). Deep pages, whose last row shares few linkers,
 * count forward. */
static int reverse_pays(const graph_index *ix, uint32_t t, uint64_t k)
{
	const uint64_t *ooff = ARR(ix, F_OUT_OFF, uint64_t);
	const uint32_t *by_rank = ARR(ix, F_BYRANK, uint32_t);
	uint64_t need = ix->f[F_OUT_DAT].len / GRAPH__SIM_SHARE, bytes = 0;
	in_iter it;
	uint32_t r;

	if (k > GRAPH_LIMIT_MAX ||
	    !graph__sim_heavy(ix->dom[by_rank[t]].ref_domains, ix->n))
		return 0;
	in_begin(ix, t, &it);
	while (bytes < need && in_next(&it, &r))
		bytes += ooff[r + 1] - ooff[r];
	return bytes >= need;
}

int graph__similar_domains(const graph_index *ix, const char *domain,
			   const graph_page *pg, graph__sim_method method,
			   seo_arena *a, graph_similar_row **rows, size_t *n,
			   uint64_t *total)
{
	uint32_t id, t, limit = page_limit(pg);
	graph__simtop top = { 0 };
	const graph__simdir *sd;
	int rc = start(ix, domain, &id, n, total);

	*rows = NULL;
	if (rc <= 0)
		return rc;
	/* No linker, nothing shared: no counter to allocate. */
	if (ix->dom[id].ref_domains == 0)
		return 0;
	t = ix->dom[id].rank;
	if (method == GRAPH__SIM_AUTO || method == GRAPH__SIM_STORED) {
		sd = sim_stored(ix, t);
		if (sd && sim_stored_holds(sd, pg, limit))
			return similar_from_store(ix, sd, pg, limit, a, rows, n,
						  total);
		if (method == GRAPH__SIM_STORED)
			return SEO_ENOTFOUND;
	}
	/* rows past the last domain never exist: only the total is counted */
	top.k = pg->offset >= ix->n ? 0 :
		pg->offset + limit < ix->n ? (size_t)(pg->offset + limit) :
					     (size_t)ix->n;
	top.v = malloc((top.k ? top.k : 1) * sizeof(*top.v));
	if (!top.v)
		return SEO_ENOMEM;
	if (method == GRAPH__SIM_AUTO)
		method = reverse_pays(ix, t, top.k) ? GRAPH__SIM_REVERSE :
						      GRAPH__SIM_FORWARD;
	if (method == GRAPH__SIM_REVERSE)
		rc = similar_reverse(ix, t, &top, total);
	else
		rc = similar_forward(ix, t, &top, total);
	if (rc)
		goto out;
	qsort(top.v, top.len, sizeof(*top.v), graph__sim_cmp);
	rc = similar_page(ix, top.v, top.len, pg, limit, a, rows, n);
out:
	free(top.v);
	return rc;
}

int graph_similar_domains(const graph_index *ix, const char *domain,
			  const graph_page *pg, seo_arena *a,
			  graph_similar_row **rows, size_t *n,
			  uint64_t *total)
{
	return graph__similar_domains(ix, domain, pg, GRAPH__SIM_AUTO, a, rows,
				      n, total);
}

int graph_similar_stored(const graph_index *ix, const char *domain,
			 uint64_t *rows)
{
	const graph__simdir *sd;
	uint32_t id;
	int rc = start(ix, domain, &id, NULL, NULL);

	*rows = 0;
	if (rc <= 0)
		return rc;
	sd = sim_stored(ix, ix->dom[id].rank);
	if (sd)
		*rows = sd->rows;
	return 0;
}

/* ---- link intersect, overlap and gap ---- */

/*
 * One walk answers the three: the entries of a driving in-list that are
 * in every list of need[] and neither in the excluded list nor among
 * self[] (the domains asked about, never rows). All ascend by position,
 * so the rows come in importance order. The driver is taken a block at a
 * time: a block spanning fewer than SPAN positions gets a byte per
 * position where the other lists' entries in the span are counted, and
 * each of its entries is a row when its byte says every needed list and
 * nothing else has it: no branch per entry (merging dense lists entry by
 * entry costs a mispredicted branch every few entries) and no chain of
 * read-modify-writes of one word (as bits would be). A sparser block asks
 * each list for each of its entries, and the lists leap.
 */
#define SPAN 4096
/* a byte's mark of the excluded list or a domain asked about: above any
 * count of needed lists */
#define SPAN_OUT (GRAPH_OVERLAP_MAX + 1)

/* A walk and where its rows go: each counted in total, those from row
 * `offset` on, up to `limit`, put in page[]. The caller's, on its stack. */
typedef struct rows_walk {
	in_iter *drive;
	in_iter *need[GRAPH_OVERLAP_MAX];
	size_t nneed;
	in_iter *excl;            /* NULL: none */
	const uint32_t *self;
	size_t nself;
	uint64_t offset;          /* rows before the page */
	uint32_t limit;
	uint32_t *page;           /* the page's positions, limit of them */
	size_t n;
	uint64_t total;
} rows_walk;

static int is_self(const rows_walk *w, uint32_t r)
{
	for (size_t i = 0; i < w->nself; i++)
		if (w->self[i] == r)
			return 1;
	return 0;
}

/* Counts row r and puts it on the page if the page has reached it. */
static void walk_put(rows_walk *w, uint32_t r)
{
	if (w->total >= w->offset && w->n < w->limit)
		w->page[w->n++] = r;
	w->total++;
}

/* Adds `mark` to hit[r - lo] for the list's entries r in [lo, hi],
 * passing them and those below lo. */
static void in_mark(in_iter *it, uint32_t lo, uint32_t hi, uint8_t *hit,
		    uint8_t mark)
{
	if (!in_pass(it, lo))
		return;
	for (;;) {
		uint32_t i = it->i, n = it->n;

		for (; i < n && it->buf[i] <= hi; i++)
			hit[it->buf[i] - lo] += mark;
		it->i = i;
		if (i < n || !in_fill(it))
			return;
	}
}

/* The rows among the m driver entries v[], which span fewer than SPAN
 * positions. */
static void walk_span(rows_walk *w, const uint32_t *v, uint32_t m)
{
	uint32_t lo = v[0], hi = v[m - 1];
	uint8_t hit[SPAN], want = (uint8_t)w->nneed;
	uint64_t cnt = 0;

	memset(hit, 0, hi - lo + 1);
	for (size_t s = 0; s < w->nneed; s++)
		in_mark(w->need[s], lo, hi, hit, 1);
	if (w->excl)
		in_mark(w->excl, lo, hi, hit, SPAN_OUT);
	for (size_t i = 0; i < w->nself; i++)
		if (w->self[i] >= lo && w->self[i] <= hi)
			hit[w->self[i] - lo] = SPAN_OUT;
	for (uint32_t j = 0; j < m; j++)
		cnt += hit[v[j] - lo] == want;
	/* the page is elsewhere: only the count matters */
	if (w->total + cnt <= w->offset || w->n == w->limit) {
		w->total += cnt;
		return;
	}
	for (uint32_t j = 0; j < m; j++)
		if (hit[v[j] - lo] == want)
			walk_put(w, v[j]);
}

/* The rows among the m driver entries v[], one entry at a time. */
static void walk_each(rows_walk *w, const uint32_t *v, uint32_t m)
{
	for (uint32_t j = 0; j < m; j++) {
		size_t s = 0;

		while (s < w->nneed && in_has(w->need[s], v[j]))
			s++;
		if (s == w->nneed && !(w->excl && in_has(w->excl, v[j])) &&
		    !is_self(w, v[j]))
			walk_put(w, v[j]);
	}
}

static void walk_rows(rows_walk *w)
{
	for (;;) {
		const uint32_t *v;
		uint32_t floor = 0, m;

		/* no row lies below the furthest next entry of a needed list:
		 * the driver leaps there */
		for (size_t s = 0; s < w->nneed; s++) {
			uint32_t h = in_head(w->need[s]);

			floor = h > floor ? h : floor;
		}
		if (floor == UINT32_MAX || !in_pass(w->drive, floor) ||
		    (m = in_take(w->drive, &v)) == 0)
			return;
		if (v[m - 1] - v[0] < SPAN)
			walk_span(w, v, m);
		else
			walk_each(w, v, m);
	}
}

int graph_link_intersect(const graph_index *ix, const char *domain_a,
			 const char *domain_b, const graph_page *pg,
			 seo_arena *a, graph_intersect_row **rows, size_t *n,
			 uint64_t *total)
{
	const uint32_t *by_rank = ARR(ix, F_BYRANK, uint32_t);
	uint32_t ida, idb, self_b = 0, page[GRAPH_LIMIT_MAX];
	in_iter ia, ib;
	rows_walk w = { .drive = &ia, .self = &self_b, .page = page };
	int rc;

	*rows = NULL;
	rc = start(ix, domain_a, &ida, n, total);
	if (rc <= 0) {
		/* a malformed domain_b is still an error */
		char tmp[GRAPH_DOMAIN_MAX + 1];

		return rc < 0 ? rc :
				graph_normalize_domain(domain_b, tmp, sizeof(tmp));
	}
	rc = lookup(ix, domain_b, &idb);
	if (rc && rc != SEO_ENOTFOUND)
		return rc;
	w.offset = pg->offset;
	w.limit = page_limit(pg);
	*rows = rows_alloc(a, w.limit, sizeof(**rows));
	if (!*rows)
		return SEO_ENOMEM;
	in_begin(ix, ix->dom[ida].rank, &ia);
	if (rc == 0) {
		self_b = ix->dom[idb].rank;
		in_begin(ix, self_b, &ib);
		w.excl = &ib;
		w.nself = 1;
	}
	walk_rows(&w);
	for (size_t i = 0; i < w.n; i++) {
		uint32_t d = by_rank[page[i]];

		(*rows)[i].domain = dom_name(ix, d);
		(*rows)[i].domain_score = ix->dom[d].score;
	}
	*n = w.n;
	*total = w.total;
	return 0;
}

/*
 * The referrers of all k domains (domain overlap; k = 1: the link gap of
 * one competitor): the shortest list drives, and the others are needed
 * in that order (the sparser first, the likelier to reject an entry).
 */
static void overlap_all(in_iter *it, size_t k, rows_walk *w)
{
	size_t ord[GRAPH_OVERLAP_MAX];

	for (size_t i = 0; i < k; i++) {
		size_t j = i;

		for (; j > 0 && it[ord[j - 1]].end - it[ord[j - 1]].start >
				       it[i].end - it[i].start; j--)
			ord[j] = ord[j - 1];
		ord[j] = i;
	}
	w->drive = &it[ord[0]];
	for (size_t i = 1; i < k; i++)
		w->need[w->nneed++] = &it[ord[i]];
	walk_rows(w);
}

/*
 * The referrers of at least min_count of the k domains in slots marked
 * live, where those are sparse: a k-way merge. The set of the domains
 * each row links to goes to masks[], beside the page.
 */
static void any_merge(in_iter *it, const int *live, size_t k,
		      unsigned min_count, rows_walk *w, unsigned *masks)
{
	uint32_t cur[GRAPH_OVERLAP_MAX];
	int more[GRAPH_OVERLAP_MAX];

	for (size_t i = 0; i < k; i++)
		more[i] = live[i] && in_next(&it[i], &cur[i]);
	for (;;) {
		uint32_t r = UINT32_MAX;
		unsigned mask = 0, count = 0;

		for (size_t i = 0; i < k; i++)
			if (more[i] && cur[i] < r)
				r = cur[i];
		if (r == UINT32_MAX)
			return;
		for (size_t i = 0; i < k; i++)
			if (more[i] && cur[i] == r) {
				mask |= 1u << i;
				count++;
				more[i] = in_next(&it[i], &cur[i]);
			}
		if (count < min_count || (w->excl && in_has(w->excl, r)) ||
		    is_self(w, r))
			continue;
		if (w->total >= w->offset && w->n < w->limit)
			masks[w->n] = mask;
		walk_put(w, r);
	}
}

/*
 * any_merge() where the lists are dense: SPAN positions at a time from
 * the lowest next entry, each list's entries marked by its bit in a byte
 * per position (the excluded list and the domains asked about by the high
 * bit), then the bytes read eight at a time: a row where at least
 * min_count low bits are set and not the high one.
 */
static void any_span(in_iter *it, const int *live, size_t k,
		     unsigned min_count, rows_walk *w, unsigned *masks)
{
	uint64_t need = (uint64_t)(0x80 - (min_count ? min_count : 1)) *
			BYTES_ONE;
	uint8_t hit[SPAN];

	for (;;) {
		uint32_t lo = UINT32_MAX, hi;

		for (size_t i = 0; i < k; i++) {
			uint32_t h = live[i] ? in_head(&it[i]) : UINT32_MAX;

			lo = h < lo ? h : lo;
		}
		if (lo == UINT32_MAX)
			return;
		hi = lo < UINT32_MAX - SPAN ? lo + SPAN - 1 : UINT32_MAX - 1;
		memset(hit, 0, sizeof(hit));
		for (size_t i = 0; i < k; i++)
			if (live[i])
				in_mark(&it[i], lo, hi, hit, (uint8_t)(1u << i));
		if (w->excl)
			in_mark(w->excl, lo, hi, hit, 0x80);
		for (size_t i = 0; i < w->nself; i++)
			if (w->self[i] >= lo && w->self[i] <= hi)
				hit[w->self[i] - lo] |= 0x80;
		for (uint32_t o = 0; o <= hi - lo; o += 8) {
			uint64_t x, c, rows;

			memcpy(&x, hit + o, sizeof(x));
			if (!x)
				continue;
			/* per byte: the low bits set, then whether they reach
			 * min_count and the high bit is clear */
			c = x & ~BYTES_HIGH;
			c -= (c >> 1) & 0x5555555555555555ULL;
			c = (c & 0x3333333333333333ULL) +
			    ((c >> 2) & 0x3333333333333333ULL);
			c = (c + (c >> 4)) & 0x0f0f0f0f0f0f0f0fULL;
			rows = (c + need) & ~x & BYTES_HIGH;
			/* the word's rows (eight at most) all come before the
			 * page, or the page is full: only counted */
			if (w->n == w->limit || w->total + 8 <= w->offset) {
				w->total += ((rows >> 7) * BYTES_ONE) >> 56;
				continue;
			}
			for (; rows; rows &= rows - 1) {
				uint32_t b = (uint32_t)__builtin_ctzll(rows) / 8;

				if (w->total >= w->offset && w->n < w->limit)
					masks[w->n] = hit[o + b] & 0x7fu;
				walk_put(w, lo + o + b);
			}
		}
	}
}

/*
 * The referrers of at least min_count of the k domains (the link gap of
 * several competitors). A window costs a pass over SPAN bytes, and there
 * are at most n / SPAN of them: they pay where the lists hold about an
 * entry every eight positions (their bytes, at least one an entry, come
 * to n / 8); sparser lists are merged.
 */
static void overlap_any(const graph_index *ix, in_iter *it,
			const int *live, size_t k, unsigned min_count,
			rows_walk *w, unsigned *masks)
{
	uint64_t bytes = 0;

	for (size_t i = 0; i < k; i++)
		bytes += live[i] ? (uint64_t)(it[i].end - it[i].start) : 0;
	if (bytes * 8 >= ix->n)
		any_span(it, live, k, min_count, w, masks);
	else
		any_merge(it, live, k, min_count, w, masks);
}

int graph_domain_overlap(const graph_index *ix, const char *const *domains,
			 size_t n_domains, unsigned min_count,
			 const char *exclude, const graph_page *pg,
			 seo_arena *a, graph_overlap_row **rows, size_t *n,
			 uint64_t *total)
{
	const uint32_t *by_rank = ARR(ix, F_BYRANK, uint32_t);
	in_iter it[GRAPH_OVERLAP_MAX + 1];
	uint32_t self[GRAPH_OVERLAP_MAX + 1], page[GRAPH_LIMIT_MAX], id;
	unsigned masks[GRAPH_LIMIT_MAX];
	int live[GRAPH_OVERLAP_MAX + 1] = { 0 };
	rows_walk w = { .self = self, .page = page };
	size_t k = n_domains;
	int every = 1, rc;

	*rows = NULL;
	*n = 0;
	*total = 0;
	if (n_domains == 0 || n_domains > GRAPH_OVERLAP_MAX)
		return SEO_EINVAL;
	/* slot k holds the excluded domain's referrers */
	for (size_t i = 0; i <= k; i++) {
		const char *d = i < k ? domains[i] : exclude;

		if (!d)
			continue;
		rc = lookup(ix, d, &id);
		if (rc == SEO_ENOTFOUND)
			continue;
		if (rc)
			return rc;
		self[w.nself++] = ix->dom[id].rank;
		in_begin(ix, ix->dom[id].rank, &it[i]);
		live[i] = 1;
	}
	w.offset = pg->offset;
	w.limit = page_limit(pg);
	w.excl = live[k] ? &it[k] : NULL;
	*rows = rows_alloc(a, w.limit, sizeof(**rows));
	if (!*rows)
		return SEO_ENOMEM;
	for (size_t i = 0; i < k; i++)
		every &= live[i];
	/* with one domain, the rows of any are those of all (and none link
	 * to two) */
	if (k == 1 || min_count >= k) {
		if (every && (k > 1 || min_count <= 1))
			overlap_all(it, k, &w);
		for (size_t i = 0; i < w.n; i++)
			masks[i] = (1u << k) - 1;
	} else {
		overlap_any(ix, it, live, k, min_count, &w, masks);
	}
	for (size_t i = 0; i < w.n; i++) {
		uint32_t d = by_rank[page[i]];

		(*rows)[i].domain = dom_name(ix, d);
		(*rows)[i].domain_score = ix->dom[d].score;
		(*rows)[i].links_to = masks[i];
	}
	*n = w.n;
	*total = w.total;
	return 0;
}

/* ---- captures ---- */

int graph_status_codes(const graph_index *ix, const char *domain,
		       seo_arena *a, graph_status_row **rows, size_t *n)
{
	const uint64_t *off = ARR(ix, F_STATUS_OFF, uint64_t);
	const graph__status *st = ARR(ix, F_STATUS, graph__status);
	uint32_t id;
	int rc = start(ix, domain, &id, n, NULL);

	*rows = NULL;
	if (rc <= 0)
		return rc;
	*n = (size_t)(off[id + 1] - off[id]);
	*rows = rows_alloc(a, *n, sizeof(**rows));
	if (!*rows)
		return SEO_ENOMEM;
	for (size_t i = 0; i < *n; i++) {
		(*rows)[i].status_code = (uint16_t)st[off[id] + i].status;
		(*rows)[i].count = st[off[id] + i].count;
	}
	return 0;
}

int graph_url_index(const graph_index *ix, const char *domain,
		    const graph_page *pg, seo_arena *a, graph_url_row **rows,
		    size_t *n, uint64_t *total)
{
	const uint64_t *off = ARR(ix, F_URLIDX_OFF, uint64_t);
	const graph__cap *c = ARR(ix, F_URLIDX, graph__cap);
	uint32_t id, limit = page_limit(pg);
	int rc = start(ix, domain, &id, n, total);

	*rows = NULL;
	if (rc <= 0)
		return rc;
	*total = off[id + 1] - off[id];
	*rows = rows_alloc(a, limit, sizeof(**rows));
	if (!*rows)
		return SEO_ENOMEM;
	for (uint64_t k = off[id] + pg->offset; k < off[id + 1] && *n < limit;
	     k++) {
		graph_url_row *row = &(*rows)[(*n)++];

		row->url = url_str(ix, c[k].url);
		row->status_code = (uint16_t)c[k].status;
		row->mime = small_str(ix, c[k].mime);
		row->crawled_at = c[k].ts;
	}
	return 0;
}

/* ---- single objects ---- */

const char *graph_risk_flag_name(unsigned flag)
{
	switch (flag) {
	case GRAPH_RISK_NEW_DOMAIN:
		return "new_domain";
	case GRAPH_RISK_HIGH_AUTHORITY_NEW_DOMAIN:
		return "high_authority_new_domain";
	case GRAPH_RISK_NO_TRANCO_PRESENCE:
		return "no_tranco_presence";
	case GRAPH_RISK_LOW_AUTHORITY:
		return "low_authority";
	default:
		return NULL;
	}
}

int graph_authority_get(const graph_index *ix, const char *domain,
			seo_arena *a, graph_authority *out)
{
	const graph__dom *d = NULL;
	int health = 100;
	int rc = dom_start(ix, domain, out, sizeof(*out), &d);

	if (rc < 0)
		return rc;
	if (rc == 0) {
		/* no data at all: nothing vouches for the domain */
		out->risk_flags = GRAPH_RISK_NO_TRANCO_PRESENCE |
				  GRAPH_RISK_LOW_AUTHORITY;
		out->health_score = 70;
		return 0;
	}
	out->score = d->score;
	out->referring_domains = d->ref_domains;
	out->total_host_count = d->hosts;
	out->registrar = small_str(ix, d->registrar);
	out->popularity_rank = d->tranco;
	if (d->registered_day != INT32_MIN) {
		int y;
		unsigned m, day;

		graph__civil_from_days(d->registered_day, &y, &m, &day);
		out->registered_at = seo_arena_printf(a, "%04d-%02u-%02u", y,
						      m, day);
		if (!out->registered_at)
			return SEO_ENOMEM;
		/* "new" against the crawl's own clock, not the wall clock:
		 * the same index answers the same way every day */
		if (ix->meta->as_of &&
		    (int64_t)ix->meta->as_of / 86400 - d->registered_day < 365) {
			out->risk_flags |= GRAPH_RISK_NEW_DOMAIN;
			health -= 20;
			if (d->score >= 40) {
				out->risk_flags |=
					GRAPH_RISK_HIGH_AUTHORITY_NEW_DOMAIN;
				health -= 30;
			}
		}
	}
	if (d->tranco == 0) {
		out->risk_flags |= GRAPH_RISK_NO_TRANCO_PRESENCE;
		health -= 10;
	}
	if (d->score < 20) {
		out->risk_flags |= GRAPH_RISK_LOW_AUTHORITY;
		health -= 20;
	}
	out->health_score = (uint8_t)(health < 0 ? 0 : health);
	return 0;
}

int graph_domain_rank_get(const graph_index *ix, const char *domain,
			  graph_domain_rank *out)
{
	const graph__dom *d = NULL;
	int rc = dom_start(ix, domain, out, sizeof(*out), &d);

	if (rc <= 0)
		return rc;
	out->unique_domains = d->ref_domains;
	/* URL-level links where seen, one edge per referrer known only
	 * from the domain graph */
	out->inbound_edges = d->inbound_links +
			     (d->ref_domains > d->url_referrers ?
				      d->ref_domains - d->url_referrers : 0);
	out->avg_linking_host_count =
		d->ref_domains ? (double)d->linking_hosts / d->ref_domains : 0;
	return 0;
}

int graph_crawl_history_get(const graph_index *ix, const char *domain,
			    graph_crawl_history *out)
{
	const graph__dom *d = NULL;
	int rc = dom_start(ix, domain, out, sizeof(*out), &d);

	if (rc <= 0)
		return rc;
	out->first_seen = d->first_seen;
	out->last_seen = d->last_seen;
	out->total_urls = d->total_urls;
	return 0;
}

/* ---- enrichment ---- */

const char *graph_link_quality(uint8_t score)
{
	return score >= 50 ? "high" : score >= 20 ? "medium" : "low";
}

const char *graph_anchor_type(const char *anchor, const char *link_type,
			      const char *to_domain)
{
	static const char *const generic[] = {
		"click here", "here", "read more", "more", "link", "website",
		"this", "visit", "learn more", "home", "source", "continue",
	};
	char label[GRAPH_DOMAIN_MAX + 1];
	size_t ll;

	if (link_type && strcmp(link_type, "image") == 0)
		return "image";
	if (!anchor || !*anchor)
		return "generic";
	for (size_t i = 0; i < sizeof(generic) / sizeof(generic[0]); i++)
		if (strcasecmp(anchor, generic[i]) == 0)
			return "generic";
	if (strncasecmp(anchor, "http://", 7) == 0 ||
	    strncasecmp(anchor, "https://", 8) == 0 ||
	    (to_domain && strcasestr(anchor, to_domain)))
		return "naked";
	/* the brand is the label left of the public suffix */
	ll = to_domain ? strcspn(to_domain, ".") : 0;
	if (ll > 0 && ll < sizeof(label)) {
		memcpy(label, to_domain, ll);
		label[ll] = '\0';
		if (strcasestr(anchor, label))
			return "branded";
	}
	return "partial";
}

/* ---- for platform_index.c ---- */

void graph__index_platforms(const graph_index *ix, graph__platview *v)
{
	v->off = ARR(ix, F_PLAT_OFF, uint64_t);
	v->doms = ARR(ix, F_PLAT, graph__pdom);
	v->byname = ARR(ix, F_PLAT_BYNAME, uint32_t);
	v->tld_str = ARR(ix, F_PLATTLD_STR, char);
	v->tld_off = ARR(ix, F_PLATTLD_OFF, uint64_t);
	v->n_tlds = ix->f[F_PLATTLD_OFF].len / 8 - 1;
	v->dom = ix->dom;
}

const char *graph__index_domain_name(const graph_index *ix, uint32_t id)
{
	return dom_name(ix, id);
}

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

/* Walks the in-list of the domain at importance position `to`: the
 * positions of its referrers, ascending. */
typedef struct in_iter {
	const uint8_t *p, *end;
	uint64_t r;
	int first;
} in_iter;

static void in_begin(const graph_index *ix, uint32_t to, in_iter *it)
{
	const uint64_t *off = ARR(ix, F_IN_OFF, uint64_t);
	const uint8_t *dat = ARR(ix, F_IN_DAT, uint8_t);

	it->p = dat + off[to];
	it->end = dat + off[to + 1];
	it->r = 0;
	it->first = 1;
}

static int in_next(in_iter *it, uint32_t *rank)
{
	uint64_t v;

	if (it->p >= it->end)
		return 0;
	it->p = graph__varint_get(it->p, &v);
	it->r = it->first ? v : it->r + v;
	it->first = 0;
	*rank = (uint32_t)it->r;
	return 1;
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

/* Starts the in-list of position `to` past its first `skip` entries: from
 * the last skip entry before them, then a varint at a time (fewer than
 * GRAPH__SKIP). */
static void in_seek(const graph_index *ix, uint32_t to, uint64_t skip,
		    in_iter *it)
{
	const graph__inskip *e = ARR(ix, F_INSKIP, graph__inskip);
	uint64_t first = 0, j = skip / GRAPH__SKIP;
	uint32_t n, r;

	in_begin(ix, to, it);
	if (j > 0 && (n = skip_find(ix, F_INSKIP_DIR, F_INSKIP, sizeof(*e),
				    to, &first)) > 0) {
		if (j > n)
			j = n;
		e += first + j - 1;
		if (e->at < (uint64_t)(it->end - it->p)) {
			it->p += e->at;
			it->r = e->prev;
			it->first = 0;
			skip -= j * GRAPH__SKIP;
		}
	}
	for (; skip > 0 && in_next(it, &r); skip--)
		;
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

/* ---- link intersect ---- */

int graph_link_intersect(const graph_index *ix, const char *domain_a,
			 const char *domain_b, const graph_page *pg,
			 seo_arena *a, graph_intersect_row **rows, size_t *n,
			 uint64_t *total)
{
	const uint32_t *by_rank = ARR(ix, F_BYRANK, uint32_t);
	uint32_t ida, idb = GRAPH__NONE, ra, rb = 0, limit = page_limit(pg);
	in_iter ia, ib = { 0 };
	int have_b, rc;

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
	*rows = rows_alloc(a, limit, sizeof(**rows));
	if (!*rows)
		return SEO_ENOMEM;
	in_begin(ix, ix->dom[ida].rank, &ia);
	have_b = 0;
	if (rc == 0) {
		in_begin(ix, ix->dom[idb].rank, &ib);
		have_b = in_next(&ib, &rb);
	}
	/* both lists ascend by importance position: a merge difference
	 * keeps the importance order */
	while (in_next(&ia, &ra)) {
		while (have_b && rb < ra)
			have_b = in_next(&ib, &rb);
		if (have_b && rb == ra)
			continue;
		if (by_rank[ra] == idb)
			continue;
		if (*total >= pg->offset && *n < limit) {
			uint32_t d = by_rank[ra];

			(*rows)[*n].domain = dom_name(ix, d);
			(*rows)[*n].domain_score = ix->dom[d].score;
			(*n)++;
		}
		(*total)++;
	}
	return 0;
}

/* ---- overlap and gap ---- */

/* Row r of an overlap or gap: not one of the domains asked about, nor
 * a referrer of the excluded domain (slot k, advanced here). */
static int overlap_keeps(in_iter *it, uint32_t *cur, int *live, size_t k,
			 const uint32_t *self, size_t nself, uint32_t r)
{
	while (live[k] && cur[k] < r)
		live[k] = in_next(&it[k], &cur[k]);
	if (live[k] && cur[k] == r)
		return 0;
	for (size_t i = 0; i < nself; i++)
		if (self[i] == r)
			return 0;
	return 1;
}

/* Counts row r and puts it on the page if the page has reached it. */
static void overlap_emit(const graph_index *ix, uint32_t r, unsigned mask,
			 const graph_page *pg, uint32_t limit,
			 graph_overlap_row *rows, size_t *n, uint64_t *total)
{
	if (*total >= pg->offset && *n < limit) {
		uint32_t d = ARR(ix, F_BYRANK, uint32_t)[r];

		rows[*n].domain = dom_name(ix, d);
		rows[*n].domain_score = ix->dom[d].score;
		rows[*n].links_to = mask;
		(*n)++;
	}
	(*total)++;
}

/* The referrers of all k domains: each list leaps to the largest current
 * position, so the long lists are read in a tight loop rather than merged
 * entry by entry. The same rows as the merge. */
static int overlap_all(const graph_index *ix, in_iter *it, uint32_t *cur,
		       int *live, size_t k, const uint32_t *self,
		       size_t nself, const graph_page *pg, uint32_t limit,
		       graph_overlap_row *rows, size_t *n, uint64_t *total)
{
	for (size_t i = 0; i < k; i++)
		if (!live[i])
			return 0;
	for (;;) {
		uint32_t r = cur[0];
		int same = 1;

		for (size_t i = 1; i < k; i++)
			if (cur[i] > r)
				r = cur[i];
		for (size_t i = 0; i < k; i++) {
			while (cur[i] < r)
				if (!in_next(&it[i], &cur[i]))
					return 0;
			same &= cur[i] == r;
		}
		if (!same)
			continue;
		if (overlap_keeps(it, cur, live, k, self, nself, r))
			overlap_emit(ix, r, (1u << k) - 1, pg, limit, rows, n,
				     total);
		for (size_t i = 0; i < k; i++)
			if (!in_next(&it[i], &cur[i]))
				return 0;
	}
}

int graph_domain_overlap(const graph_index *ix, const char *const *domains,
			 size_t n_domains, unsigned min_count,
			 const char *exclude, const graph_page *pg,
			 seo_arena *a, graph_overlap_row **rows, size_t *n,
			 uint64_t *total)
{
	in_iter it[GRAPH_OVERLAP_MAX + 1];
	uint32_t cur[GRAPH_OVERLAP_MAX + 1], self[GRAPH_OVERLAP_MAX + 1];
	int live[GRAPH_OVERLAP_MAX + 1] = { 0 };
	uint32_t limit = page_limit(pg), id;
	size_t k = n_domains, nself = 0;
	int rc;

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
		self[nself++] = ix->dom[id].rank;
		in_begin(ix, ix->dom[id].rank, &it[i]);
		live[i] = in_next(&it[i], &cur[i]);
	}
	*rows = rows_alloc(a, limit, sizeof(**rows));
	if (!*rows)
		return SEO_ENOMEM;
	if (k > 1 && min_count >= k)
		return overlap_all(ix, it, cur, live, k, self, nself, pg, limit,
				   *rows, n, total);
	/* every in-list ascends by position: a k-way merge keeps the
	 * importance order */
	for (;;) {
		uint32_t r = UINT32_MAX;
		unsigned mask = 0, count = 0;

		for (size_t i = 0; i < k; i++)
			if (live[i] && cur[i] < r)
				r = cur[i];
		if (r == UINT32_MAX)
			break;
		for (size_t i = 0; i < k; i++)
			if (live[i] && cur[i] == r) {
				mask |= 1u << i;
				count++;
				live[i] = in_next(&it[i], &cur[i]);
			}
		if (count >= min_count &&
		    overlap_keeps(it, cur, live, k, self, nself, r))
			overlap_emit(ix, r, mask, pg, limit, *rows, n, total);
	}
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

/*
 * walks.c: link intersect, domain overlap and the link gap, as walks over
 * the in-lists of the domains asked about.
 */
#include <stdlib.h>
#include <string.h>

#include <seo/errors.h>

#include "index.h"
#include "inlist.h"

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
	rc = graph__query_start(ix, domain_a, &ida, n, total);
	if (rc <= 0) {
		/* a malformed domain_b is still an error */
		char tmp[GRAPH_DOMAIN_MAX + 1];

		return rc < 0 ? rc :
				graph_normalize_domain(domain_b, tmp,
						       sizeof(tmp));
	}
	rc = graph__lookup(ix, domain_b, &idb);
	if (rc && rc != SEO_ENOTFOUND)
		return rc;
	w.offset = pg->offset;
	w.limit = graph__page_limit(pg);
	*rows = graph__rows_alloc(a, w.limit, sizeof(**rows));
	if (!*rows)
		return SEO_ENOMEM;
	graph__in_begin(ix, ix->dom[ida].rank, &ia);
	if (rc == 0) {
		self_b = ix->dom[idb].rank;
		graph__in_begin(ix, self_b, &ib);
		w.excl = &ib;
		w.nself = 1;
	}
	walk_rows(&w);
	for (size_t i = 0; i < w.n; i++) {
		uint32_t d = by_rank[page[i]];

		(*rows)[i].domain = graph__dom_name(ix, d);
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
				in_mark(&it[i], lo, hi, hit,
					(uint8_t)(1u << i));
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
		rc = graph__lookup(ix, d, &id);
		if (rc == SEO_ENOTFOUND)
			continue;
		if (rc)
			return rc;
		self[w.nself++] = ix->dom[id].rank;
		graph__in_begin(ix, ix->dom[id].rank, &it[i]);
		live[i] = 1;
	}
	w.offset = pg->offset;
	w.limit = graph__page_limit(pg);
	w.excl = live[k] ? &it[k] : NULL;
	*rows = graph__rows_alloc(a, w.limit, sizeof(**rows));
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

		(*rows)[i].domain = graph__dom_name(ix, d);
		(*rows)[i].domain_score = ix->dom[d].score;
		(*rows)[i].links_to = masks[i];
	}
	*n = w.n;
	*total = w.total;
	return 0;
}

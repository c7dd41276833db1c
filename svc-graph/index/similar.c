/*
 * similar.c: similar domains (shared linkers), read from the rows stored
 * at ingest or counted forward or in reverse, exactly.
 */
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include <seo/errors.h>

#include "index.h"
#include "inlist.h"

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
	uint64_t lo = graph__dir_lower_bound(d, nd, sizeof(*d), t);

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

	*rows = graph__rows_alloc(a, limit, sizeof(**rows));
	if (!*rows)
		return SEO_ENOMEM;
	for (uint64_t i = pg->offset; i < len && *n < limit; i++) {
		(*rows)[*n].similar_domain = graph__dom_name(ix,
							     by_rank[v[i].id]);
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

struct graph__sim_cache {
	_Atomic(uint64_t *) *slot; /* by importance position, < nslots */
	size_t nslots;
	atomic_size_t bytes;       /* reserved by the bitmaps built */
	pthread_mutex_t counter_mu;
	uint32_t *counter;         /* NULL until first lent */
};

int graph__sim_cache_new(graph_index *ix)
{
	graph__sim_cache *sc = calloc(1, sizeof(*sc));

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

void graph__sim_cache_free(graph__sim_cache *sc)
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
	graph__sim_cache *sc = ix->sim;

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
	graph__in_begin(ix, t, &it);
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
				uint32_t *np = realloc(touched,
						       nc * sizeof(*np));

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
	graph__sim_cache *sc = ix->sim;
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
	graph__in_begin(ix, t, &it);
	while (bytes < need && in_next(&it, &r))
		bytes += ooff[r + 1] - ooff[r];
	return bytes >= need;
}

int graph__similar_domains(const graph_index *ix, const char *domain,
			   const graph_page *pg, graph__sim_method method,
			   seo_arena *a, graph_similar_row **rows, size_t *n,
			   uint64_t *total)
{
	uint32_t id, t, limit = graph__page_limit(pg);
	graph__simtop top = { 0 };
	const graph__simdir *sd;
	int rc = graph__query_start(ix, domain, &id, n, total);

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
	int rc = graph__query_start(ix, domain, &id, NULL, NULL);

	*rows = 0;
	if (rc <= 0)
		return rc;
	sd = sim_stored(ix, ix->dom[id].rank);
	if (sd)
		*rows = sd->rows;
	return 0;
}

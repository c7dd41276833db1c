/*
 * platforms.c: the queries on the index's platform section
 * (docs/index-format.md): trends and the domains of one platform.
 */
#include <ctype.h>
#include <stdlib.h>
#include <string.h>

#include <seo/errors.h>

#include "index.h"

/* ---- trends ---- */

static int cmp_trend(const void *pa, const void *pb)
{
	const graph_platform_count *a = pa, *b = pb;

	if (a->count != b->count)
		return a->count > b->count ? -1 : 1;
	return strcmp(a->platform->name, b->platform->name);
}

void graph_platform_trends(const graph_index *ix,
			   graph_platform_count out[GRAPH_PLATFORM_COUNT])
{
	graph__platview v;
	size_t n;
	const graph_platform *p = graph_platforms(&n);

	graph__index_platforms(ix, &v);
	for (size_t i = 0; i < n; i++)
		out[i] = (graph_platform_count){&p[i], v.off[i + 1] - v.off[i]};
	qsort(out, n, sizeof(*out), cmp_trend);
}

/* ---- domains of one platform ---- */

/* One query over one platform's group of the section. */
typedef struct pscan {
	const graph_index *ix;
	graph__platview v;
	const graph__pdom *g; /* the group, authority desc, then name */
	uint64_t n;
	const uint32_t *byname;
	uint32_t tld;         /* plattld id, or GRAPH__NONE: any */
	uint8_t lo, hi;
	graph_platform_row *rows;
	size_t n_rows, limit;
} pscan;

static uint8_t score_at(const pscan *s, uint64_t i)
{
	return s->v.dom[s->g[i].dom].score;
}

/* First position whose score is below `score` (scores descend). */
static uint64_t first_below(const pscan *s, int score)
{
	uint64_t lo = 0, hi = s->n;

	while (lo < hi) {
		uint64_t mid = lo + (hi - lo) / 2;

		if (score_at(s, mid) >= score)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

/* Adds the domain at group position i when it passes the filters;
 * returns 1 once the page is full. */
static int take(pscan *s, uint64_t i)
{
	const graph__pdom *d = &s->g[i];
	uint8_t score = score_at(s, i);

	if (s->n_rows >= s->limit)
		return 1;
	if (score < s->lo || score > s->hi ||
	    (s->tld != GRAPH__NONE && d->tld != s->tld))
		return 0;
	s->rows[s->n_rows++] = (graph_platform_row){
		graph__dom_name(s->ix, d->dom),
		s->v.tld_str + s->v.tld_off[d->tld], score};
	return s->n_rows >= s->limit;
}

/* Authority from low to high: each score's run forwards, so that equal
 * scores keep name order. */
static void scan_da_asc(pscan *s)
{
	for (int score = s->lo; score <= s->hi; score++) {
		uint64_t end = first_below(s, score);

		for (uint64_t i = first_below(s, score + 1); i < end; i++)
			if (take(s, i))
				return;
	}
}

static int cmp_name_pos(const void *pa, const void *pb, void *ctx)
{
	const pscan *s = ctx;
	uint64_t a = *(const uint64_t *)pa, b = *(const uint64_t *)pb;

	return strcmp(graph__dom_name(s->ix, s->g[a].dom),
		      graph__dom_name(s->ix, s->g[b].dom));
}

/*
 * Name order. The authority bounds select one slice [b, e) of the group:
 * walking the stored name order finds `limit` rows after about limit * n
 * / (e - b) steps, sorting the slice costs about e - b; the cheaper wins,
 * so that a narrow authority range on a big platform is not a walk of
 * the whole platform.
 */
static int scan_domain_asc(pscan *s, seo_arena *a)
{
	uint64_t b = first_below(s, s->hi + 1), e = first_below(s, s->lo);
	uint64_t k = e - b, *pos;
	size_t m = 0;

	if (k == 0 || k * k > (uint64_t)s->limit * s->n) {
		for (uint64_t j = 0; j < s->n; j++)
			if (take(s, s->byname[j]))
				break;
		return 0;
	}
	pos = seo_arena_alloc(a, k * sizeof(*pos));
	if (pos == NULL)
		return SEO_ENOMEM;
	for (uint64_t i = b; i < e; i++)
		if (s->tld == GRAPH__NONE || s->g[i].tld == s->tld)
			pos[m++] = i;
	qsort_r(pos, m, sizeof(*pos), cmp_name_pos, s);
	for (size_t i = 0; i < m; i++)
		if (take(s, pos[i]))
			break;
	return 0;
}

/* The plattld id of a user's suffix, or GRAPH__NONE when no domain on
 * any platform has it. */
static uint32_t find_tld(const graph__platview *v, const char *tld)
{
	char buf[GRAPH_DOMAIN_MAX + 1];
	size_t n = 0;

	while (*tld == '.')
		tld++;
	for (; *tld && n < GRAPH_DOMAIN_MAX; tld++)
		buf[n++] = (char)tolower((unsigned char)*tld);
	buf[n] = '\0';
	for (uint64_t i = 0; i < v->n_tlds; i++)
		if (strcmp(v->tld_str + v->tld_off[i], buf) == 0)
			return (uint32_t)i;
	return GRAPH__NONE;
}

int graph_platform_domains(const graph_index *ix,
			   const graph_platform_query *q, seo_arena *a,
			   graph_platform_row **rows, size_t *n,
			   uint64_t *total)
{
	pscan s = {.ix = ix, .tld = GRAPH__NONE, .lo = q->min_da,
		   .hi = q->max_da};
	int rc = 0;

	*rows = NULL;
	*n = 0;
	*total = 0;
	if (q->platform >= GRAPH_PLATFORM_COUNT)
		return SEO_EINVAL;
	graph__index_platforms(ix, &s.v);
	s.g = s.v.doms + s.v.off[q->platform];
	s.n = s.v.off[q->platform + 1] - s.v.off[q->platform];
	s.byname = s.v.byname + s.v.off[q->platform];
	s.limit = q->limit > GRAPH_LIMIT_MAX ? GRAPH_LIMIT_MAX : q->limit;
	*total = s.n;
	s.rows = seo_arena_alloc(a, (s.limit + 1) * sizeof(*s.rows));
	if (s.rows == NULL)
		return SEO_ENOMEM;
	if (q->tld != NULL && *q->tld != '\0' &&
	    (s.tld = find_tld(&s.v, q->tld)) == GRAPH__NONE)
		s.limit = 0;
	if (s.lo > s.hi || s.limit == 0 || s.n == 0)
		goto out;
	switch (q->sort) {
	case GRAPH_PSORT_DA_DESC:
		for (uint64_t i = first_below(&s, s.hi + 1),
			      e = first_below(&s, s.lo);
		     i < e; i++)
			if (take(&s, i))
				break;
		break;
	case GRAPH_PSORT_DA_ASC:
		scan_da_asc(&s);
		break;
	case GRAPH_PSORT_DOMAIN_ASC:
		rc = scan_domain_asc(&s, a);
		break;
	}
out:
	*rows = s.rows;
	*n = s.n_rows;
	return rc;
}

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

/*
 * backlinks.c: the URL-level links to a domain, by the source's importance
 * or newest first, filtered by source domain or link type.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <seo/errors.h>

#include "index.h"

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

	if (j > 0 && (n = graph__skip_find(ix, F_LINKSKIP_DIR, F_LINKSKIP,
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
	row->from_domain = graph__dom_name(ix, l->from_dom);
	row->from_url = graph__url_str(ix, l->from_url);
	row->to_url = graph__url_str(ix, l->to_url);
	row->anchor_text = graph__anchor_str(ix, l->anchor);
	row->rel = graph__small_str(ix, l->rel);
	row->link_type = graph__type_name(l->type);
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
	uint32_t id, from = GRAPH__NONE, limit = graph__page_limit(pg);
	int type = -1;
	graph_backlink_row *out;
	uint64_t lo, hi, prev_from = GRAPH__NONE;
	int rc = graph__query_start(ix, domain, &id, n, total);

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
		rc = graph__lookup(ix, filter->from_domain, &from);
		if (rc == SEO_ENOTFOUND)
			return 0;
		if (rc)
			return rc;
	}
	out = graph__rows_alloc(a, limit, sizeof(*out));
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
		hi = lo + graph__links_from(ix, id, r);
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

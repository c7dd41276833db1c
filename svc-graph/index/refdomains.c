/*
 * refdomains.c: the referring domains of a domain, strongest first, with
 * the URL-level links each gives.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <seo/errors.h>

#include "index.h"
#include "inlist.h"

/* Links from the domain at importance position `r` within the links of
 * one target: the group is ordered by that position, so two searches. */
uint32_t graph__links_from(const graph_index *ix, uint32_t to, uint32_t r)
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

int graph_referring_domains(const graph_index *ix, const char *domain,
			    const graph_page *pg, seo_arena *a,
			    graph_refdomain_row **rows, size_t *n,
			    uint64_t *total)
{
	const uint32_t *by_rank = ARR(ix, F_BYRANK, uint32_t);
	uint32_t id, r, limit = graph__page_limit(pg);
	graph_refdomain_row *out;
	in_iter it;
	int rc = graph__query_start(ix, domain, &id, n, total);

	*rows = NULL;
	if (rc <= 0)
		return rc;
	*total = ix->dom[id].ref_domains;
	out = graph__rows_alloc(a, limit, sizeof(*out));
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
		links = graph__links_from(ix, id, r);
		out[*n].from_domain = graph__dom_name(ix, from);
		/* the domain graph proves at least one link */
		out[*n].total_links = links ? links : 1;
		out[*n].from_domain_score = ix->dom[from].score;
		(*n)++;
	}
	return 0;
}

/*
 * aggregates.c: the per-domain lists the ingest stores ready to page:
 * outbound links, anchor text and top pages.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <seo/errors.h>

#include "index.h"

/* ---- outbound ---- */

int graph_outbound_links(const graph_index *ix, const char *domain,
			 const graph_page *pg, seo_arena *a,
			 graph_outbound_row **rows, size_t *n, uint64_t *total,
			 graph_outbound_summary *summary)
{
	const uint64_t *off = ARR(ix, F_OUTL_OFF, uint64_t);
	const graph__outl *ol = ARR(ix, F_OUTL, graph__outl);
	uint32_t id, limit = graph__page_limit(pg);
	graph_outbound_row *out;
	int rc = graph__query_start(ix, domain, &id, n, total);

	*rows = NULL;
	if (summary)
		memset(summary, 0, sizeof(*summary));
	if (rc <= 0)
		return rc;
	*total = off[id + 1] - off[id];
	out = graph__rows_alloc(a, limit, sizeof(*out));
	if (!out)
		return SEO_ENOMEM;
	for (uint64_t k = off[id] + graph__page_skip(pg, *total);
	     k < off[id + 1] && *n < limit; k++) {
		graph_outbound_row *row = &out[(*n)++];

		row->to_domain = graph__dom_name(ix, ol[k].to_dom);
		row->to_url = graph__url_str(ix, ol[k].to_url);
		row->anchor_text = graph__anchor_str(ix, ol[k].anchor);
		row->link_type = graph__type_name(ol[k].type);
		row->edge_count = ol[k].count;
	}
	if (summary) {
		const graph__dom *d = &ix->dom[id];

		summary->unique_destinations = d->out_domains;
		summary->top_domain = graph__dom_name(ix, d->top_out_domain);
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
	uint32_t id, limit = graph__page_limit(pg);
	uint64_t b, e, skip;
	int rc = graph__query_start(ix, domain, &id, n, total);

	if (rc <= 0)
		return rc;
	off = ARR(ix, offf, uint64_t);
	b = off[id];
	e = off[id + 1];
	*total = e - b;
	skip = graph__page_skip(pg, *total);
	*first = ARR(ix, datf, graph__agg) + b + skip;
	*n = *total - skip < limit ? (size_t)(*total - skip) : limit;
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
		v = graph__rows_alloc(a, *n, size);
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

	r->anchor_text = graph__anchor_str(ix, g->id);
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

	r->url = graph__url_str(ix, g->id);
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

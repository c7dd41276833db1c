/*
 * write_captures.c: captures: the URL index, the status histogram and the
 * first and last seen dates of each domain.
 */
#include <stdlib.h>
#include <string.h>

#include <seo/errors.h>
#include <seo/log.h>

#include "ingest.h"

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

static void final_cap(graph__builder *b, void *rec)
{
	graph__crec *r = rec;

	r->url = graph__sdict_id(&b->urls, r->url);
}

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

static int capg_flush(graph__wctx *c, capg *g, graph__offw *uoff,
		      graph__wfile *udat,
		      graph__offw *soff, graph__wfile *sdat)
{
	int rc;

	if (g->n == 0)
		return 0;
	if ((rc = graph__off_upto(uoff, g->dom,
				  udat->bytes / sizeof(graph__cap))) ||
	    (rc = graph__off_upto(soff, g->dom,
				  sdat->bytes / sizeof(graph__status))))
		return rc;
	qsort(g->st, g->nst, sizeof(graph__status), cmp_status);
	graph__b_dom(c->b, g->dom)->total_urls = (uint32_t)g->n;
	rc = graph__w_put(udat, g->v, g->n * sizeof(graph__cap));
	if (!rc)
		rc = graph__w_put(sdat, g->st, g->nst * sizeof(graph__status));
	g->n = 0;
	g->nst = 0;
	return rc;
}

/* The captures come by domain, then URL (whose final ids are the URLs'
 * byte order), newest first: each domain's URL rows are in order. */
int graph__write_captures(graph__wctx *c)
{
	const graph__cmp_fn by = cmp_cap;
	graph__xsort **const sorts = &c->b->caps;
	graph__offw uoff = { 0 }, soff = { 0 };
	graph__wfile udat = { 0 }, sdat = { 0 };
	capg g = { 0 };
	const void *rec;
	uint32_t prev_url = GRAPH__NONE;
	int rc;

	c->b->phase = "captures";
	if ((rc = graph__sort_final(c->b, &c->b->caps_in, sizeof(graph__crec),
				    final_cap, &by, &sorts, 1)) ||
	    (rc = graph__w_open(&uoff.w, c->dir, "urlidx.off")) ||
	    (rc = graph__w_open(&udat, c->dir, "urlidx.bin")) ||
	    (rc = graph__w_open(&soff.w, c->dir, "status.off")) ||
	    (rc = graph__w_open(&sdat, c->dir, "status.bin")))
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
		if ((rc = graph__grow(&g.v, g.n, &g.cap, sizeof(*g.v), 256)))
			goto out;
		g.v[g.n++] = (graph__cap){ r->url, r->ts, r->mime, r->status };
	}
	if (rc < 0)
		goto out;
	if ((rc = capg_flush(c, &g, &uoff, &udat, &soff, &sdat)) ||
	    (rc = graph__off_upto(&uoff, c->n,
				  udat.bytes / sizeof(graph__cap))) ||
	    (rc = graph__off_upto(&soff, c->n,
				  sdat.bytes / sizeof(graph__status))) ||
	    (rc = graph__w_close(&udat)) || (rc = graph__w_close(&uoff.w)) ||
	    (rc = graph__w_close(&sdat)) || (rc = graph__w_close(&soff.w)))
		goto out;
out:
	graph__w_close(&udat);
	graph__w_close(&uoff.w);
	graph__w_close(&sdat);
	graph__w_close(&soff.w);
	free(g.v);
	graph__sort_done(c->b, &c->b->caps);
	return rc;
}

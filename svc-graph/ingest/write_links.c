/*
 * write_links.c: URL-level links, grouped by target domain (links.*,
 * recent.u32, pages.*, anchortext.*, linkskip.*) and by source domain
 * (outl.*), once their URL and anchor ids are final.
 */
#include <stdlib.h>
#include <string.h>

#include <seo/errors.h>
#include <seo/log.h>

#include "ingest.h"

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

/* ---- URL-level links, grouped by target domain ---- */

typedef struct grp {
	graph__lrec *v;
	size_t n, cap;
} grp;

static int grp_push(grp *g, const graph__lrec *r)
{
	int rc = graph__grow(&g->v, g->n, &g->cap, sizeof(*g->v), 256);

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

/*
 * Sorts the records of the spool at *spool (as read, in no order, their
 * URL and anchor ids temporary) into the `n` new sorts *out[i] of orders
 * cmp[i], each record through `final` once: the ids are final, so equal
 * records lie next to each other, which they need not do on temporary
 * ids (a string spilled in several generations has one in each). The
 * spool is freed; the sorts are finished, and the caller's to free.
 */
int graph__sort_final(graph__builder *b, graph__xsort **spool, size_t size,
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
	graph__sort_done(b, spool);
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
static int write_aggs(kd *pairs, size_t n, graph__wfile *w, graph__agg *tmp,
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
	return graph__w_put(w, tmp, m * sizeof(graph__agg));
}

typedef struct linkw {
	graph__offw off, poff, aoff;
	graph__wfile dat, recent, pages, anchors;
	graph__skipw skip;   /* linkskip.*: every GRAPH__SKIP-th referrer */
	uint32_t *perm;
	kd *pairs;
	graph__agg *aggs;
	size_t cap;
} linkw;

/* Writes the links of one target domain, `n` at `v`. */
static int flush_group(graph__wctx *c, linkw *lw, graph__lrec *v, size_t n)
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
	if ((rc = graph__off_upto(&lw->off, to,
				  lw->dat.bytes / sizeof(graph__link))) ||
	    (rc = graph__off_upto(&lw->poff, to,
				  lw->pages.bytes / sizeof(graph__agg))) ||
	    (rc = graph__off_upto(&lw->aoff, to,
				  lw->anchors.bytes / sizeof(graph__agg))))
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
		rc = graph__w_put(&lw->dat, &l, sizeof(l));
		if (rc)
			return rc;
		if (i == 0 || v[i - 1].from_dom != v[i].from_dom) {
			uint32_t at = (uint32_t)i;

			if (referrers > 0 && referrers % GRAPH__SKIP == 0 &&
			    (rc = graph__skip_add(&lw->skip, to, &at,
						  sizeof(at))))
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
	rc = graph__w_put(&lw->recent, lw->perm, n * sizeof(uint32_t));
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
 * source for graph__write_outbound(). */
int graph__write_links(graph__wctx *c)
{
	const graph__cmp_fn by[] = { cmp_link_by_target, cmp_link_by_source };
	graph__xsort **const sorts[] = { &c->b->links, &c->b->outl };
	linkw lw = { 0 };
	grp g = { 0 };
	const void *rec;
	int rc;

	c->b->phase = "links";
	if ((rc = graph__sort_final(c->b, &c->b->links_in, sizeof(graph__lrec),
				    final_link, by, sorts, 2)) ||
	    (rc = graph__w_open(&lw.off.w, c->dir, "links.off")) ||
	    (rc = graph__w_open(&lw.poff.w, c->dir, "pages.off")) ||
	    (rc = graph__w_open(&lw.aoff.w, c->dir, "anchortext.off")) ||
	    (rc = graph__w_open(&lw.dat, c->dir, "links.bin")) ||
	    (rc = graph__w_open(&lw.recent, c->dir, "recent.u32")) ||
	    (rc = graph__w_open(&lw.pages, c->dir, "pages.bin")) ||
	    (rc = graph__w_open(&lw.anchors, c->dir, "anchortext.bin")) ||
	    (rc = graph__skip_open(&lw.skip, c->dir, "linkskip")))
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
	if ((rc = graph__off_upto(&lw.off, c->n,
				  lw.dat.bytes / sizeof(graph__link))) ||
	    (rc = graph__off_upto(&lw.poff, c->n,
				  lw.pages.bytes / sizeof(graph__agg))) ||
	    (rc = graph__off_upto(&lw.aoff, c->n,
				  lw.anchors.bytes / sizeof(graph__agg))))
		goto out;
	if ((rc = graph__w_close(&lw.off.w)) ||
	    (rc = graph__w_close(&lw.poff.w)) ||
	    (rc = graph__w_close(&lw.aoff.w)) || (rc = graph__w_close(&lw.dat)) ||
	    (rc = graph__w_close(&lw.recent)) ||
	    (rc = graph__w_close(&lw.pages)) ||
	    (rc = graph__w_close(&lw.anchors)) ||
	    (rc = graph__skip_close(&lw.skip)))
		goto out;
out:
	graph__w_close(&lw.off.w);
	graph__w_close(&lw.poff.w);
	graph__w_close(&lw.aoff.w);
	graph__w_close(&lw.dat);
	graph__w_close(&lw.recent);
	graph__w_close(&lw.pages);
	graph__w_close(&lw.anchors);
	graph__w_close(&lw.skip.dir);
	graph__w_close(&lw.skip.bin);
	free(lw.perm);
	free(lw.pairs);
	free(lw.aggs);
	free(g.v);
	graph__sort_done(c->b, &c->b->links);
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

static int outg_flush(graph__wctx *c, outg *g, graph__offw *off,
		      graph__wfile *dat)
{
	graph__dom *d = graph__b_dom(c->b, g->from);
	int rc;

	if (g->n == 0)
		return 0;
	if (g->cur_links > d->top_out_links) {
		d->top_out_links = g->cur_links;
		d->top_out_domain = g->cur_dom;
	}
	rc = graph__off_upto(off, g->from, dat->bytes / sizeof(graph__outl));
	if (rc)
		return rc;
	qsort(g->v, g->n, sizeof(graph__outl), cmp_outl);
	rc = graph__w_put(dat, g->v, g->n * sizeof(graph__outl));
	g->n = 0;
	g->cur_links = 0;
	g->cur_dom = GRAPH__NONE;
	return rc;
}

int graph__write_outbound(graph__wctx *c)
{
	graph__offw off = { 0 };
	graph__wfile dat = { 0 };
	outg g = { .cur_dom = GRAPH__NONE };
	graph__lrec prev = { .from_dom = GRAPH__NONE };
	const void *rec;
	int rc;

	c->b->phase = "outbound links";
	if ((rc = graph__w_open(&off.w, c->dir, "outl.off")) ||
	    (rc = graph__w_open(&dat, c->dir, "outl.bin")))
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
		if ((rc = graph__grow(&g.v, g.n, &g.cap, sizeof(*g.v), 256)))
			goto out;
		g.v[g.n++] = (graph__outl){ r->to_dom, r->to_url, r->anchor,
					    r->type, 1 };
	}
	if (rc < 0)
		goto out;
	if ((rc = outg_flush(c, &g, &off, &dat)) ||
	    (rc = graph__off_upto(&off, c->n,
				  dat.bytes / sizeof(graph__outl))) ||
	    (rc = graph__w_close(&dat)) || (rc = graph__w_close(&off.w)))
		goto out;
out:
	graph__w_close(&dat);
	graph__w_close(&off.w);
	free(g.v);
	graph__sort_done(c->b, &c->b->outl);
	return rc;
}

/*
 * write_platforms.c: the platform section (plat.*, platname.u32,
 * plattld.*): each platform's domains by authority and by name.
 */
#include <stdlib.h>
#include <string.h>

#include <libpsl.h>

#include <seo/errors.h>
#include <seo/log.h>

#include "ingest.h"

/* One domain of the platform being written. */
typedef struct pent {
	uint32_t dom, tld;
	uint8_t score;
	size_t name; /* forward name, offset in the group's names */
} pent;

typedef struct platw {
	graph__offw off;
	graph__wfile dat, byname;
	graph__dict tlds;
	pent *v;
	uint32_t *pos;
	size_t n, cap, pos_cap;
	graph__buf names;
} platw;

static int cmp_pent_da(const void *pa, const void *pb, void *ctx)
{
	const pent *a = pa, *b = pb;
	const char *names = ctx;
	int c;

	CMP(b->score, a->score);
	c = strcmp(names + a->name, names + b->name);
	return c ? c : (a->dom > b->dom) - (a->dom < b->dom);
}

static int cmp_pent_name(const void *pa, const void *pb, void *ctx)
{
	const platw *w = ctx;
	const pent *a = &w->v[*(const uint32_t *)pa];
	const pent *b = &w->v[*(const uint32_t *)pb];
	int c = strcmp(w->names.p + a->name, w->names.p + b->name);

	return c ? c : (a->dom > b->dom) - (a->dom < b->dom);
}

/* Adds domain `dom` to the group: its forward name, public suffix (as
 * libpsl has it: "com", "co.uk") and authority. */
static int platw_add(graph__wctx *c, platw *w, uint32_t dom)
{
	const char *rev = graph__dom_rev(c->b, dom);
	char name[GRAPH_DOMAIN_MAX + 1];
	const char *tld;
	size_t len = strlen(rev);
	pent *e;
	int rc;

	if ((rc = graph__grow(&w->v, w->n, &w->cap, sizeof(*w->v), 1024)))
		return rc;
	e = &w->v[w->n];
	graph_reverse_labels(rev, len, name);
	tld = psl_unregistrable_domain(psl_builtin(), name);
	if (!tld || !*tld)
		tld = strrchr(name, '.') ? strrchr(name, '.') + 1 : name;
	e->dom = dom;
	e->score = graph__b_dom(c->b, dom)->score;
	e->name = w->names.len;
	if ((rc = graph__dict_intern(&w->tlds, tld, strlen(tld), &e->tld)) ||
	    (rc = graph__buf_put(&w->names, name, len + 1)))
		return rc;
	w->n++;
	return 0;
}

/* Writes platform p's group: its domains by authority, then its name
 * order as positions in that group. */
static int platw_flush(graph__wctx *c, platw *w, uint32_t p)
{
	int rc;

	if (w->n == 0)
		return 0;
	if (w->n > w->pos_cap) {
		uint32_t *pos = realloc(w->pos, w->n * sizeof(*pos));

		if (!pos)
			return SEO_ENOMEM;
		w->pos = pos;
		w->pos_cap = w->n;
	}
	if ((rc = graph__off_upto(&w->off, p,
				  w->dat.bytes / sizeof(graph__pdom))))
		return rc;
	qsort_r(w->v, w->n, sizeof(pent), cmp_pent_da, w->names.p);
	for (size_t i = 0; i < w->n && !rc; i++) {
		graph__pdom d = { w->v[i].dom, w->v[i].tld };

		w->pos[i] = (uint32_t)i;
		rc = graph__w_put(&w->dat, &d, sizeof(d));
	}
	if (rc)
		return rc;
	qsort_r(w->pos, w->n, sizeof(uint32_t), cmp_pent_name, w);
	rc = graph__w_put(&w->byname, w->pos, w->n * sizeof(uint32_t));
	c->plat_count[p] = w->n;
	w->n = 0;
	w->names.len = 0;
	return rc;
}

/*
 * plat.off, plat.bin, platname.u32 and plattld.*: the (platform, domain)
 * pairs of the WAT records, one group per platform. A group is held in
 * memory while it is sorted (about 24 bytes and a name per domain).
 */
int graph__write_platforms(graph__wctx *c)
{
	platw w = { 0 };
	graph__edge prev = { GRAPH__NONE, GRAPH__NONE };
	const void *rec;
	int rc;

	c->b->phase = "platforms";
	if ((rc = graph__xsort_finish(c->b->plats)) ||
	    (rc = graph__w_open(&w.off.w, c->dir, "plat.off")) ||
	    (rc = graph__w_open(&w.dat, c->dir, "plat.bin")) ||
	    (rc = graph__w_open(&w.byname, c->dir, "platname.u32")))
		goto out;
	while ((rc = graph__xsort_next(c->b->plats, &rec)) == 1) {
		const graph__edge *e = rec;

		if (e->a == prev.a && e->b == prev.b)
			continue;
		if (e->a != prev.a && (rc = platw_flush(c, &w, prev.a)))
			goto out;
		prev = *e;
		if ((rc = platw_add(c, &w, e->b)))
			goto out;
	}
	if (rc < 0 || (rc = platw_flush(c, &w, prev.a)) ||
	    (rc = graph__off_upto(&w.off, GRAPH_PLATFORM_COUNT,
				  w.dat.bytes / sizeof(graph__pdom))) ||
	    (rc = graph__w_close(&w.dat)) || (rc = graph__w_close(&w.byname)) ||
	    (rc = graph__w_close(&w.off.w)))
		goto out;
	c->b->stats->platform_domains = w.dat.bytes / sizeof(graph__pdom);
	rc = graph__write_dict(c->dir, "plattld", &w.tlds);
out:
	graph__w_close(&w.off.w);
	graph__w_close(&w.dat);
	graph__w_close(&w.byname);
	graph__dict_free(&w.tlds);
	free(w.v);
	free(w.pos);
	free(w.names.p);
	graph__sort_done(c->b, &c->b->plats);
	return rc;
}

/*
 * build.c: the ingest driver and the index writer.
 *
 * Reading fills dictionaries, per-domain facts and four external sorts
 * (domain edges, links by target, links by source, captures). Writing
 * then streams each sort once, in domain-id order, into the CSR files of
 * docs/index-format.md. Everything goes to a temporary sibling of the
 * output directory which is renamed into place only when complete.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <jansson.h>

#include <seo/errors.h>
#include <seo/log.h>
#include <seo/util.h>

#include "internal.h"

/* ---- builder ---- */

/*
 * Makes room in the array at *vp (a pointer to any element type, `size`
 * bytes each) for element `n`, doubling *cap from `first`. Returns 0 or
 * SEO_ENOMEM (the array stays as it was).
 */
static int grow(void *vp, size_t n, size_t *cap, size_t size, size_t first)
{
	size_t want = *cap ? *cap * 2 : first;
	void *v, *p;

	if (n < *cap)
		return 0;
	memcpy(&v, vp, sizeof(v));
	p = realloc(v, want * size);
	if (!p)
		return SEO_ENOMEM;
	memcpy(vp, &p, sizeof(p));
	*cap = want;
	return 0;
}

int graph__b_domain_rev(graph__builder *b, const char *rev, size_t len,
			uint32_t *id)
{
	uint32_t before = b->doms.n;
	int rc = graph__dict_intern(&b->doms, rev, len, id);

	if (rc || b->doms.n == before)
		return rc;
	rc = grow(&b->attr, *id, &b->attr_cap, sizeof(*b->attr), 4096);
	if (rc)
		return rc;
	b->attr[*id] = (graph__dattr){ .reg_day = INT32_MIN,
				       .registrar = GRAPH__NONE };
	return 0;
}

int graph__b_domain(graph__builder *b, const char *domain, uint32_t *id)
{
	char rev[GRAPH_DOMAIN_MAX + 1];
	size_t len = strlen(domain);

	if (len > GRAPH_DOMAIN_MAX)
		return SEO_EINVAL;
	graph__reverse_labels(domain, len, rev);
	return graph__b_domain_rev(b, rev, len, id);
}

void graph__b_progress(graph__builder *b, uint64_t done, uint64_t total)
{
	int64_t now = seo_mono_ms();

	if (!b->opts->progress || now - b->last_progress_ms < 500)
		return;
	b->last_progress_ms = now;
	b->opts->progress(b->opts->progress_ctx, b->phase, done, total,
			  b->records);
}

/* ---- comparisons ---- */

#define CMP(x, y) do { if ((x) != (y)) return (x) < (y) ? -1 : 1; } while (0)

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

/* ---- streamed output files ---- */

typedef struct wfile {
	FILE *f;
	uint64_t bytes;
	char path[8400];
} wfile;

static int w_open(wfile *w, const char *dir, const char *name)
{
	snprintf(w->path, sizeof(w->path), "%s/%s", dir, name);
	w->bytes = 0;
	w->f = fopen(w->path, "wbe");
	if (!w->f) {
		log_error("cannot create \"%s\": %s", w->path, strerror(errno));
		return SEO_EIO;
	}
	setvbuf(w->f, NULL, _IOFBF, 1 << 20);
	return 0;
}

static int w_put(wfile *w, const void *p, size_t n)
{
	if (n && fwrite(p, 1, n, w->f) != n) {
		log_error("cannot write \"%s\": %s", w->path, strerror(errno));
		return SEO_EIO;
	}
	w->bytes += n;
	return 0;
}

static int w_close(wfile *w)
{
	int rc = 0;

	if (!w->f)
		return 0;
	if (fflush(w->f) != 0 || fsync(fileno(w->f)) != 0) {
		log_error("cannot write \"%s\": %s", w->path, strerror(errno));
		rc = SEO_EIO;
	}
	fclose(w->f);
	w->f = NULL;
	return rc;
}

/* An offsets file: value of every id up to and including `id`. */
typedef struct offw {
	wfile w;
	uint64_t next; /* next id whose offset is due */
} offw;

static int off_upto(offw *o, uint64_t id, uint64_t value)
{
	int rc = 0;

	while (!rc && o->next <= id) {
		rc = w_put(&o->w, &value, sizeof(value));
		o->next++;
	}
	return rc;
}

/* ---- writing phases ---- */

typedef struct wctx {
	graph__builder *b;
	const char *dir;
	uint32_t n;
	graph__dom *dom;
	uint32_t *rank;     /* domain id -> importance position */
	uint32_t *by_rank;  /* position -> domain id */
	uint32_t *hosts_by_rank; /* a compact copy for the in-link pass */
	uint64_t n_edges;
	uint64_t edge_bytes;
	uint64_t n_links, n_captures;
	uint32_t max_ref;
} wctx;

/* stage.off / stage.dat: the deduplicated domain graph in reading ids,
 * as delta varints, kept on disk until the importance ranks are known. */
static int write_stage(wctx *c)
{
	offw off = { 0 };
	wfile dat = { 0 };
	const void *rec;
	graph__edge prev = { GRAPH__NONE, GRAPH__NONE };
	uint8_t vb[10];
	int rc;

	c->b->phase = "domain graph";
	if ((rc = graph__xsort_finish(c->b->edges)) ||
	    (rc = w_open(&off.w, c->dir, "stage.off")) ||
	    (rc = w_open(&dat, c->dir, "stage.dat")))
		goto out;
	while ((rc = graph__xsort_next(c->b->edges, &rec)) == 1) {
		const graph__edge *e = rec;

		if (e->a == prev.a && e->b == prev.b)
			continue;
		if (e->a != prev.a) {
			rc = off_upto(&off, e->a, dat.bytes);
			if (rc)
				goto out;
			prev.b = GRAPH__NONE;
		}
		/* first target as is, then gaps (never 0: deduplicated) */
		rc = w_put(&dat, vb, graph__varint_put(vb, prev.b == GRAPH__NONE ?
						      e->b : e->b - prev.b));
		if (rc)
			goto out;
		prev = *e;
		c->dom[e->a].out_domains++;
		c->dom[e->b].ref_domains++;
		c->n_edges++;
	}
	if (rc < 0)
		goto out;
	rc = off_upto(&off, c->n, dat.bytes);
	if (!rc)
		rc = w_close(&dat);
	if (!rc)
		rc = w_close(&off.w);
out:
	w_close(&dat);
	w_close(&off.w);
	return rc;
}

/*
 * Authority score 0..100 (docs/metrics.md): a weighted mean of the
 * log-scaled referring-domain count, the harmonic-centrality position and
 * the Tranco rank, over the signals this release has.
 */
static uint8_t authority(const graph__dom *d, uint32_t max_ref, uint64_t n,
			 uint32_t flags)
{
	double s = 0, w = 0.5;

	if (max_ref > 0)
		s += 0.5 * log1p(d->ref_domains) / log1p(max_ref);
	if (flags & GRAPH__META_RANKS) {
		w += 0.3;
		if (d->hc_pos > 0)
			s += 0.3 * (1.0 - log((double)d->hc_pos) /
					      log((double)n + 1.0));
	}
	if (flags & GRAPH__META_TRANCO) {
		w += 0.2;
		if (d->tranco > 0 && d->tranco <= 1000000)
			s += 0.2 * (1.0 - log((double)d->tranco) / log(1e6 + 1));
	}
	s = floor(100.0 * s / w + 0.5);
	return (uint8_t)(s < 0 ? 0 : s > 100 ? 100 : s);
}

static int cmp_importance(const void *pa, const void *pb, void *ctx)
{
	const graph__dom *dom = ctx;
	uint32_t a = *(const uint32_t *)pa, b = *(const uint32_t *)pb;
	uint32_t ha = dom[a].hc_pos ? dom[a].hc_pos : UINT32_MAX;
	uint32_t hb = dom[b].hc_pos ? dom[b].hc_pos : UINT32_MAX;

	CMP(dom[b].score, dom[a].score);
	CMP(dom[b].ref_domains, dom[a].ref_domains);
	CMP(ha, hb);
	CMP(a, b);
	return 0;
}

static int rank_domains(wctx *c)
{
	c->rank = malloc((size_t)c->n * sizeof(uint32_t) + 1);
	c->by_rank = malloc((size_t)c->n * sizeof(uint32_t) + 1);
	if (!c->rank || !c->by_rank)
		return SEO_ENOMEM;
	for (uint32_t i = 0; i < c->n; i++)
		if (c->dom[i].ref_domains > c->max_ref)
			c->max_ref = c->dom[i].ref_domains;
	for (uint32_t i = 0; i < c->n; i++) {
		c->dom[i].score = authority(&c->dom[i], c->max_ref, c->n,
					    c->b->flags);
		c->by_rank[i] = i;
	}
	qsort_r(c->by_rank, c->n, sizeof(uint32_t), cmp_importance, c->dom);
	c->hosts_by_rank = malloc((size_t)c->n * sizeof(uint32_t) + 1);
	if (!c->hosts_by_rank)
		return SEO_ENOMEM;
	for (uint32_t r = 0; r < c->n; r++) {
		c->rank[c->by_rank[r]] = r;
		c->dom[c->by_rank[r]].rank = r;
		c->hosts_by_rank[r] = c->dom[c->by_rank[r]].hosts;
	}
	return graph__write_file(c->dir, "byrank.u32", c->by_rank,
				 (size_t)c->n * sizeof(uint32_t));
}

/*
 * Writes a CSR from edges sorted by (a, b): offsets indexed by a, the b of
 * each list as a first value then gaps, in varints. Both ends are
 * importance positions, so the default order is the stored order and the
 * gaps stay small: most links point at the few strongest domains.
 */
static int write_csr(wctx *c, graph__xsort *xs, const char *off_name,
		     const char *dat_name, int in)
{
	offw off = { 0 };
	wfile dat = { 0 };
	const void *rec;
	uint32_t prev_a = GRAPH__NONE, prev_b = 0;
	uint8_t vb[10];
	int rc;

	if ((rc = graph__xsort_finish(xs)) ||
	    (rc = w_open(&off.w, c->dir, off_name)) ||
	    (rc = w_open(&dat, c->dir, dat_name)))
		goto out;
	while ((rc = graph__xsort_next(xs, &rec)) == 1) {
		const graph__edge *e = rec;

		if (e->a != prev_a) {
			rc = off_upto(&off, e->a, dat.bytes);
			if (!rc)
				rc = w_put(&dat, vb, graph__varint_put(vb, e->b));
			prev_a = e->a;
		} else {
			rc = w_put(&dat, vb, graph__varint_put(vb, e->b - prev_b));
		}
		if (rc)
			goto out;
		prev_b = e->b;
		if (in)
			c->dom[c->by_rank[e->a]].linking_hosts +=
				c->hosts_by_rank[e->b];
	}
	if (rc < 0)
		goto out;
	rc = off_upto(&off, c->n, dat.bytes);
	if (!rc)
		rc = w_close(&dat);
	if (!rc)
		rc = w_close(&off.w);
	c->edge_bytes += dat.bytes + off.w.bytes;
	c->b->stats->runs_spilled += graph__xsort_runs(xs);
out:
	w_close(&dat);
	w_close(&off.w);
	return rc;
}

/* Re-reads the stage into the out- and in-link CSRs, in rank space. */
static int write_csrs(wctx *c)
{
	graph__xsort *xo = NULL, *xi = NULL;
	size_t share = (c->b->opts->mem_mb << 20) / 2;
	const uint8_t *map = NULL;
	char path[8400];
	struct stat st = { 0 };
	FILE *fo = NULL;
	uint64_t o0, o1;
	int fd = -1, rc;

	c->b->phase = "domain links";
	if ((rc = graph__xsort_new(sizeof(graph__edge), graph__cmp_pair, share,
				   c->b->opts->tmp_dir, &xo)) ||
	    (rc = graph__xsort_new(sizeof(graph__edge), graph__cmp_pair, share,
				   c->b->opts->tmp_dir, &xi)))
		goto out;
	snprintf(path, sizeof(path), "%s/stage.dat", c->dir);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0 || fstat(fd, &st) != 0) {
		rc = SEO_EIO;
		goto out;
	}
	if (st.st_size > 0) {
		void *m = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_PRIVATE,
			       fd, 0);

		if (m == MAP_FAILED) {
			rc = SEO_EIO;
			goto out;
		}
		map = m;
	}
	snprintf(path, sizeof(path), "%s/stage.off", c->dir);
	fo = fopen(path, "rbe");
	if (!fo || fread(&o0, sizeof(o0), 1, fo) != 1) {
		rc = SEO_EIO;
		goto out;
	}
	for (uint32_t from = 0; from < c->n; from++) {
		const uint8_t *p, *end;
		uint64_t v, t = 0;

		if (fread(&o1, sizeof(o1), 1, fo) != 1 || o1 < o0 ||
		    o1 > (uint64_t)st.st_size) {
			rc = SEO_EIO;
			goto out;
		}
		p = map + o0;
		end = map + o1;
		for (int first = 1; p < end; first = 0) {
			graph__edge eo, ei;

			p = graph__varint_get(p, &v);
			t = first ? v : t + v;
			eo.a = ei.b = c->rank[from];
			eo.b = ei.a = c->rank[t];
			if ((rc = graph__xsort_add(xo, &eo)) ||
			    (rc = graph__xsort_add(xi, &ei)))
				goto out;
		}
		o0 = o1;
	}
	if ((rc = write_csr(c, xo, "out.off", "out.dat", 0)) ||
	    (rc = write_csr(c, xi, "in.off", "in.dat", 1)))
		goto out;
out:
	if (fo)
		fclose(fo);
	if (map)
		munmap((void *)map, (size_t)st.st_size);
	if (fd >= 0)
		close(fd);
	graph__xsort_free(xo);
	graph__xsort_free(xi);
	/* the stage is not part of the index */
	snprintf(path, sizeof(path), "%s/stage.dat", c->dir);
	unlink(path);
	snprintf(path, sizeof(path), "%s/stage.off", c->dir);
	unlink(path);
	return rc;
}

/* ---- URL-level links, grouped by target domain ---- */

typedef struct grp {
	graph__lrec *v;
	size_t n, cap;
} grp;

static int grp_push(grp *g, const graph__lrec *r)
{
	int rc = grow(&g->v, g->n, &g->cap, sizeof(*g->v), 256);

	if (rc)
		return rc;
	g->v[g->n++] = *r;
	return 0;
}

static int cmp_link_importance(const void *pa, const void *pb, void *ctx)
{
	const graph__lrec *a = pa, *b = pb;
	const uint32_t *rank = ctx;

	CMP(rank[a->from_dom], rank[b->from_dom]);
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

static int cmp_agg_ctx(const void *pa, const void *pb, void *ctx)
{
	const graph__agg *a = pa, *b = pb;
	const graph__dict *d = ctx;

	CMP(b->domains, a->domains);
	CMP(b->links, a->links);
	return strcmp(graph__dict_str(d, a->id), graph__dict_str(d, b->id));
}

/* Aggregates `n` pairs into rows sorted strongest first and appends them
 * to `w`; returns the row count in *rows. */
static int write_aggs(kd *pairs, size_t n, const graph__dict *d, wfile *w,
		      graph__agg *tmp, uint64_t *rows)
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
	qsort_r(tmp, m, sizeof(graph__agg), cmp_agg_ctx, (void *)d);
	*rows = m;
	return w_put(w, tmp, m * sizeof(graph__agg));
}

typedef struct linkw {
	offw off, poff, aoff;
	wfile dat, recent, pages, anchors;
	uint32_t *perm;
	kd *pairs;
	graph__agg *aggs;
	size_t cap;
} linkw;

static int flush_group(wctx *c, linkw *lw, grp *g)
{
	uint32_t to = g->v[0].to_dom;
	uint64_t rows;
	size_t np = 0;
	int rc;

	if (g->n > lw->cap) {
		size_t cap = g->n;

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
	if ((rc = off_upto(&lw->off, to, lw->dat.bytes / sizeof(graph__link))) ||
	    (rc = off_upto(&lw->poff, to, lw->pages.bytes / sizeof(graph__agg))) ||
	    (rc = off_upto(&lw->aoff, to, lw->anchors.bytes / sizeof(graph__agg))))
		return rc;
	qsort_r(g->v, g->n, sizeof(graph__lrec), cmp_link_importance, c->rank);
	for (size_t i = 0; i < g->n; i++) {
		graph__link l = { g->v[i].from_dom, g->v[i].from_url,
				  g->v[i].to_url, g->v[i].anchor, g->v[i].rel,
				  g->v[i].ts, g->v[i].type };

		rc = w_put(&lw->dat, &l, sizeof(l));
		if (rc)
			return rc;
		if (i == 0 || g->v[i - 1].from_dom != g->v[i].from_dom)
			c->dom[to].url_referrers++;
		lw->perm[i] = (uint32_t)i;
	}
	c->dom[to].inbound_links = (uint32_t)g->n;
	c->n_links += g->n;
	qsort_r(lw->perm, g->n, sizeof(uint32_t), cmp_recent, g->v);
	rc = w_put(&lw->recent, lw->perm, g->n * sizeof(uint32_t));
	if (rc)
		return rc;
	for (size_t i = 0; i < g->n; i++) {
		lw->pairs[i].key = g->v[i].to_url;
		lw->pairs[i].dom = g->v[i].from_dom;
	}
	rc = write_aggs(lw->pairs, g->n, &c->b->urls, &lw->pages, lw->aggs,
			&rows);
	if (rc)
		return rc;
	for (size_t i = 0; i < g->n; i++) {
		if (g->v[i].anchor == GRAPH__NONE)
			continue;
		lw->pairs[np].key = g->v[i].anchor;
		lw->pairs[np++].dom = g->v[i].from_dom;
	}
	return write_aggs(lw->pairs, np, &c->b->anchors, &lw->anchors,
			  lw->aggs, &rows);
}

static int write_links(wctx *c)
{
	linkw lw = { 0 };
	grp g = { 0 };
	const void *rec;
	int rc;

	c->b->phase = "links";
	if ((rc = graph__xsort_finish(c->b->links)) ||
	    (rc = w_open(&lw.off.w, c->dir, "links.off")) ||
	    (rc = w_open(&lw.poff.w, c->dir, "pages.off")) ||
	    (rc = w_open(&lw.aoff.w, c->dir, "anchortext.off")) ||
	    (rc = w_open(&lw.dat, c->dir, "links.bin")) ||
	    (rc = w_open(&lw.recent, c->dir, "recent.u32")) ||
	    (rc = w_open(&lw.pages, c->dir, "pages.bin")) ||
	    (rc = w_open(&lw.anchors, c->dir, "anchortext.bin")))
		goto out;
	while ((rc = graph__xsort_next(c->b->links, &rec)) == 1) {
		const graph__lrec *r = rec;

		if (g.n > 0 && g.v[g.n - 1].to_dom == r->to_dom &&
		    same_link(&g.v[g.n - 1], r))
			continue;
		if (g.n > 0 && g.v[0].to_dom != r->to_dom) {
			rc = flush_group(c, &lw, &g);
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
	if (g.n > 0 && (rc = flush_group(c, &lw, &g)))
		goto out;
	if ((rc = off_upto(&lw.off, c->n, lw.dat.bytes / sizeof(graph__link))) ||
	    (rc = off_upto(&lw.poff, c->n, lw.pages.bytes / sizeof(graph__agg))) ||
	    (rc = off_upto(&lw.aoff, c->n,
			   lw.anchors.bytes / sizeof(graph__agg))))
		goto out;
	if ((rc = w_close(&lw.off.w)) || (rc = w_close(&lw.poff.w)) ||
	    (rc = w_close(&lw.aoff.w)) || (rc = w_close(&lw.dat)) ||
	    (rc = w_close(&lw.recent)) || (rc = w_close(&lw.pages)) ||
	    (rc = w_close(&lw.anchors)))
		goto out;
out:
	w_close(&lw.off.w);
	w_close(&lw.poff.w);
	w_close(&lw.aoff.w);
	w_close(&lw.dat);
	w_close(&lw.recent);
	w_close(&lw.pages);
	w_close(&lw.anchors);
	free(lw.perm);
	free(lw.pairs);
	free(lw.aggs);
	free(g.v);
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

static int outg_flush(wctx *c, outg *g, offw *off, wfile *dat)
{
	graph__dom *d = &c->dom[g->from];
	int rc;

	if (g->n == 0)
		return 0;
	if (g->cur_links > d->top_out_links) {
		d->top_out_links = g->cur_links;
		d->top_out_domain = g->cur_dom;
	}
	rc = off_upto(off, g->from, dat->bytes / sizeof(graph__outl));
	if (rc)
		return rc;
	qsort(g->v, g->n, sizeof(graph__outl), cmp_outl);
	rc = w_put(dat, g->v, g->n * sizeof(graph__outl));
	g->n = 0;
	g->cur_links = 0;
	g->cur_dom = GRAPH__NONE;
	return rc;
}

static int write_outbound(wctx *c)
{
	offw off = { 0 };
	wfile dat = { 0 };
	outg g = { .cur_dom = GRAPH__NONE };
	graph__lrec prev = { .from_dom = GRAPH__NONE };
	const void *rec;
	int rc;

	c->b->phase = "outbound links";
	if ((rc = graph__xsort_finish(c->b->outl)) ||
	    (rc = w_open(&off.w, c->dir, "outl.off")) ||
	    (rc = w_open(&dat, c->dir, "outl.bin")))
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
		d = &c->dom[r->from_dom];
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
		if ((rc = grow(&g.v, g.n, &g.cap, sizeof(*g.v), 256)))
			goto out;
		g.v[g.n++] = (graph__outl){ r->to_dom, r->to_url, r->anchor,
					    r->type, 1 };
	}
	if (rc < 0)
		goto out;
	if ((rc = outg_flush(c, &g, &off, &dat)) ||
	    (rc = off_upto(&off, c->n, dat.bytes / sizeof(graph__outl))) ||
	    (rc = w_close(&dat)) || (rc = w_close(&off.w)))
		goto out;
out:
	w_close(&dat);
	w_close(&off.w);
	free(g.v);
	return rc;
}

/* ---- captures: URL index, status histogram, first/last seen ---- */

static int cmp_cap_url(const void *pa, const void *pb, void *ctx)
{
	const graph__cap *a = pa, *b = pb;

	return strcmp(graph__dict_str(ctx, a->url),
		      graph__dict_str(ctx, b->url));
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

static int capg_flush(wctx *c, capg *g, offw *uoff, wfile *udat,
		      offw *soff, wfile *sdat)
{
	int rc;

	if (g->n == 0)
		return 0;
	if ((rc = off_upto(uoff, g->dom, udat->bytes / sizeof(graph__cap))) ||
	    (rc = off_upto(soff, g->dom, sdat->bytes / sizeof(graph__status))))
		return rc;
	qsort_r(g->v, g->n, sizeof(graph__cap), cmp_cap_url, &c->b->urls);
	qsort(g->st, g->nst, sizeof(graph__status), cmp_status);
	c->dom[g->dom].total_urls = (uint32_t)g->n;
	rc = w_put(udat, g->v, g->n * sizeof(graph__cap));
	if (!rc)
		rc = w_put(sdat, g->st, g->nst * sizeof(graph__status));
	g->n = 0;
	g->nst = 0;
	return rc;
}

static int write_captures(wctx *c)
{
	offw uoff = { 0 }, soff = { 0 };
	wfile udat = { 0 }, sdat = { 0 };
	capg g = { 0 };
	const void *rec;
	uint32_t prev_url = GRAPH__NONE;
	int rc;

	c->b->phase = "captures";
	if ((rc = graph__xsort_finish(c->b->caps)) ||
	    (rc = w_open(&uoff.w, c->dir, "urlidx.off")) ||
	    (rc = w_open(&udat, c->dir, "urlidx.bin")) ||
	    (rc = w_open(&soff.w, c->dir, "status.off")) ||
	    (rc = w_open(&sdat, c->dir, "status.bin")))
		goto out;
	while ((rc = graph__xsort_next(c->b->caps, &rec)) == 1) {
		const graph__crec *r = rec;
		graph__dom *d = &c->dom[r->dom];
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
		if ((rc = grow(&g.v, g.n, &g.cap, sizeof(*g.v), 256)))
			goto out;
		g.v[g.n++] = (graph__cap){ r->url, r->ts, r->mime, r->status };
	}
	if (rc < 0)
		goto out;
	if ((rc = capg_flush(c, &g, &uoff, &udat, &soff, &sdat)) ||
	    (rc = off_upto(&uoff, c->n, udat.bytes / sizeof(graph__cap))) ||
	    (rc = off_upto(&soff, c->n, sdat.bytes / sizeof(graph__status))) ||
	    (rc = w_close(&udat)) || (rc = w_close(&uoff.w)) ||
	    (rc = w_close(&sdat)) || (rc = w_close(&soff.w)))
		goto out;
out:
	w_close(&udat);
	w_close(&uoff.w);
	w_close(&sdat);
	w_close(&soff.w);
	free(g.v);
	return rc;
}

/* ---- dictionaries ---- */

static int write_dict(const char *dir, const char *name, const graph__dict *d)
{
	char fn[256];
	uint64_t end = d->blob.len;
	wfile w = { 0 };
	int rc;

	snprintf(fn, sizeof(fn), "%s.str", name);
	rc = graph__write_file(dir, fn, d->blob.p ? d->blob.p : "", d->blob.len);
	if (rc)
		return rc;
	snprintf(fn, sizeof(fn), "%s.off", name);
	if ((rc = w_open(&w, dir, fn)) ||
	    (rc = w_put(&w, d->off, (size_t)d->n * sizeof(uint64_t))) ||
	    (rc = w_put(&w, &end, sizeof(end))))
		goto out;
	rc = w_close(&w);
out:
	w_close(&w);
	return rc;
}

static int cmp_rev_name(const void *pa, const void *pb, void *ctx)
{
	return strcmp(graph__dict_str(ctx, *(const uint32_t *)pa),
		      graph__dict_str(ctx, *(const uint32_t *)pb));
}

static int write_domain_names(wctx *c)
{
	const graph__dict *d = &c->b->doms;
	graph__dict fwd = { 0 };
	uint32_t *sorted = NULL;
	char name[GRAPH_DOMAIN_MAX + 1];
	int rc;

	rc = write_dict(c->dir, "domrev", d);
	if (rc)
		goto out;
	/* forward names by id, laid out as a dictionary without hashing */
	fwd.off = malloc(((size_t)c->n + 1) * sizeof(uint64_t));
	rc = fwd.off ? graph__buf_reserve(&fwd.blob, d->blob.len + 1) :
		       SEO_ENOMEM;
	if (rc)
		goto out;
	for (uint32_t i = 0; i < c->n; i++) {
		const char *r = graph__dict_str(d, i);

		graph__reverse_labels(r, strlen(r), name);
		fwd.off[i] = fwd.blob.len;
		rc = graph__buf_put(&fwd.blob, name, strlen(name) + 1);
		if (rc)
			goto out;
	}
	fwd.n = c->n;
	rc = write_dict(c->dir, "domfwd", &fwd);
	if (rc)
		goto out;
	sorted = malloc((size_t)c->n * sizeof(uint32_t) + 1);
	if (!sorted) {
		rc = SEO_ENOMEM;
		goto out;
	}
	for (uint32_t i = 0; i < c->n; i++)
		sorted[i] = i;
	qsort_r(sorted, c->n, sizeof(uint32_t), cmp_rev_name, (void *)d);
	rc = graph__write_file(c->dir, "domsorted.u32", sorted,
			       (size_t)c->n * sizeof(uint32_t));
out:
	free(sorted);
	graph__dict_free(&fwd);
	return rc;
}

/* ---- the manifest ---- */

static uint64_t dir_bytes(const char *dir)
{
	DIR *d = opendir(dir);
	struct dirent *e;
	uint64_t sum = 0;

	if (!d)
		return 0;
	while ((e = readdir(d))) {
		char p[8400];
		struct stat st;

		snprintf(p, sizeof(p), "%s/%s", dir, e->d_name);
		if (stat(p, &st) == 0 && S_ISREG(st.st_mode))
			sum += (uint64_t)st.st_size;
	}
	closedir(d);
	return sum;
}

static int write_meta(wctx *c)
{
	graph__builder *b = c->b;
	graph_ingest_stats *s = b->stats;
	graph__meta m = { 0 };
	json_t *j;
	char *text;
	int rc;

	m.magic = GRAPH__MAGIC;
	m.version = GRAPH_FORMAT_VERSION;
	m.as_of = b->as_of;
	m.n_domains = c->n;
	m.n_edges = c->n_edges;
	m.n_links = c->n_links;
	m.n_urls = b->urls.n;
	m.n_anchors = b->anchors.n;
	m.n_strs = b->strs.n;
	m.n_captures = c->n_captures;
	m.max_refdomains = c->max_ref;
	m.flags = b->flags;
	snprintf(m.release, sizeof(m.release), "%s", b->opts->release);
	rc = graph__write_file(c->dir, "domains.bin", c->dom,
			       (size_t)c->n * sizeof(graph__dom));
	if (!rc)
		rc = graph__write_file(c->dir, "meta.bin", &m, sizeof(m));
	if (rc)
		return rc;
	s->domains = c->n;
	s->domain_edges = c->n_edges;
	s->links = c->n_links;
	s->urls = b->urls.n;
	s->anchors = b->anchors.n;
	s->captures = c->n_captures;
	s->records = b->records;
	s->malformed = b->malformed;
	s->edge_bytes = c->edge_bytes;
	s->bytes_per_edge = c->n_edges ? (double)c->edge_bytes /
						 (double)c->n_edges : 0;
	j = json_pack("{s:i, s:s, s:O, s:{s:I, s:I, s:I, s:I, s:I, s:I, s:I},"
		      " s:{s:I, s:f}}",
		      "format_version", GRAPH_FORMAT_VERSION, "release",
		      b->opts->release, "inputs", b->inputs_json, "counts",
		      "domains", (json_int_t)c->n, "domain_edges",
		      (json_int_t)c->n_edges, "links", (json_int_t)c->n_links,
		      "urls", (json_int_t)b->urls.n, "anchors",
		      (json_int_t)b->anchors.n, "captures",
		      (json_int_t)c->n_captures, "malformed",
		      (json_int_t)b->malformed, "edges", "bytes",
		      (json_int_t)c->edge_bytes, "bytes_per_edge",
		      s->bytes_per_edge);
	text = j ? json_dumps(j, JSON_INDENT(2) | JSON_SORT_KEYS) : NULL;
	json_decref(j);
	if (!text)
		return SEO_ENOMEM;
	/* last file written: its presence marks a finished directory */
	rc = graph__write_file(c->dir, "manifest.json", text, strlen(text));
	free(text);
	return rc;
}

static int sync_dir(const char *path)
{
	int fd = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);

	if (fd < 0)
		return SEO_EIO;
	fsync(fd);
	close(fd);
	return 0;
}

static int write_index(graph__builder *b, const char *dir)
{
	wctx c = { .b = b, .dir = dir, .n = b->doms.n };
	int rc;

	c.dom = calloc((size_t)c.n + 1, sizeof(graph__dom));
	if (!c.dom)
		return SEO_ENOMEM;
	for (uint32_t i = 0; i < c.n; i++) {
		graph__dom *d = &c.dom[i];

		d->hosts = b->attr[i].hosts;
		d->hc_pos = b->attr[i].hc_pos;
		d->pr_pos = b->attr[i].pr_pos;
		d->tranco = b->attr[i].tranco;
		d->registered_day = b->attr[i].reg_day;
		d->registrar = b->attr[i].registrar;
		d->top_out_domain = GRAPH__NONE;
	}
	/* reading is over: the facts now live in c.dom, and no string is
	 * interned any more, so the hash tables can go */
	free(b->attr);
	b->attr = NULL;
	free(b->doms.slots);
	free(b->urls.slots);
	free(b->anchors.slots);
	free(b->strs.slots);
	b->doms.slots = b->urls.slots = b->anchors.slots = b->strs.slots = NULL;
	b->doms.nslots = b->urls.nslots = b->anchors.nslots = b->strs.nslots = 0;
	if ((rc = write_stage(&c)) || (rc = rank_domains(&c)) ||
	    (rc = write_csrs(&c)) || (rc = write_links(&c)) ||
	    (rc = write_outbound(&c)) || (rc = write_captures(&c)) ||
	    (rc = write_domain_names(&c)) ||
	    (rc = write_dict(dir, "urls", &b->urls)) ||
	    (rc = write_dict(dir, "anchors", &b->anchors)) ||
	    (rc = write_dict(dir, "strs", &b->strs)))
		goto out;
	rc = write_meta(&c);
out:
	free(c.dom);
	free(c.rank);
	free(c.by_rank);
	free(c.hosts_by_rank);
	return rc;
}

/* Inputs are read in this order whatever the command line says:
 * vertices define the ids the edges use. */
static const graph_input_kind read_order[] = {
	GRAPH_IN_VERTICES, GRAPH_IN_EDGES, GRAPH_IN_RANKS, GRAPH_IN_TRANCO,
	GRAPH_IN_WHOIS,    GRAPH_IN_WAT,   GRAPH_IN_CDX,
};

int graph_ingest(const graph_ingest_opts *opts_in, graph_ingest_stats *stats)
{
	graph_ingest_opts opts = *opts_in;
	graph_ingest_stats local = { 0 };
	graph__builder b = { 0 };
	char tmp[4200], tdir[4200];
	struct stat st;
	size_t share;
	int64_t t0 = seo_mono_ms();
	int rc, made = 0;

	if (!opts.out_dir || !opts.release || !*opts.release ||
	    strlen(opts.release) >= sizeof(((graph__meta *)0)->release))
		return SEO_EINVAL;
	if (!stats)
		stats = &local;
	memset(stats, 0, sizeof(*stats));
	if (opts.mem_mb == 0)
		opts.mem_mb = 2048;
	if (stat(opts.out_dir, &st) == 0) {
		log_error("index directory \"%s\" already exists", opts.out_dir);
		return SEO_EEXIST;
	}
	snprintf(tmp, sizeof(tmp), "%s.tmp-%ld", opts.out_dir, (long)getpid());
	if (!opts.tmp_dir)
		opts.tmp_dir = tmp;
	snprintf(tdir, sizeof(tdir), "%s", opts.tmp_dir);
	opts.tmp_dir = tdir;
	if (mkdir(tmp, 0755) != 0) {
		log_error("cannot create \"%s\": %s", tmp, strerror(errno));
		return SEO_EIO;
	}
	made = 1;
	b.opts = &opts;
	b.stats = stats;
	b.inputs_json = json_array();
	/* four sorts fill at once while reading; each gets a share */
	share = (opts.mem_mb << 20) / 4;
	if (!b.inputs_json ||
	    (rc = graph__xsort_new(sizeof(graph__edge), graph__cmp_pair, share,
				   opts.tmp_dir, &b.edges)) ||
	    (rc = graph__xsort_new(sizeof(graph__lrec), cmp_link_by_target,
				   share, opts.tmp_dir, &b.links)) ||
	    (rc = graph__xsort_new(sizeof(graph__lrec), cmp_link_by_source,
				   share, opts.tmp_dir, &b.outl)) ||
	    (rc = graph__xsort_new(sizeof(graph__crec), cmp_cap, share,
				   opts.tmp_dir, &b.caps))) {
		rc = b.inputs_json ? rc : SEO_ENOMEM;
		goto out;
	}
	for (size_t k = 0; k < sizeof(read_order) / sizeof(read_order[0]); k++)
		for (size_t i = 0; i < opts.n_inputs; i++) {
			if (opts.inputs[i].kind != read_order[k])
				continue;
			rc = graph__read_input(&b, &opts.inputs[i]);
			if (rc)
				goto out;
		}
	rc = write_index(&b, tmp);
	if (rc)
		goto out;
	stats->runs_spilled += graph__xsort_runs(b.edges) +
			       graph__xsort_runs(b.links) +
			       graph__xsort_runs(b.outl) +
			       graph__xsort_runs(b.caps);
	stats->index_bytes = dir_bytes(tmp);
	sync_dir(tmp);
	if (rename(tmp, opts.out_dir) != 0) {
		log_error("cannot rename \"%s\" to \"%s\": %s", tmp,
			  opts.out_dir, strerror(errno));
		rc = errno == EEXIST || errno == ENOTEMPTY ? SEO_EEXIST :
							     SEO_EIO;
		goto out;
	}
	made = 0;
	stats->seconds = (double)(seo_mono_ms() - t0) / 1000.0;
out:
	if (made)
		graph_remove_dir(tmp);
	graph__xsort_free(b.edges);
	graph__xsort_free(b.links);
	graph__xsort_free(b.outl);
	graph__xsort_free(b.caps);
	graph__dict_free(&b.doms);
	graph__dict_free(&b.urls);
	graph__dict_free(&b.anchors);
	graph__dict_free(&b.strs);
	free(b.attr);
	free(b.vmap);
	json_decref(b.inputs_json);
	return rc;
}

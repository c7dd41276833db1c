/*
 * write_graph.c: the domain graph: deduplicated edges staged on disk,
 * importance positions and authority scores, then the out- and in-list
 * CSR files (docs/index-format.md).
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <seo/errors.h>
#include <seo/log.h>

#include "ingest.h"

/* A u32 per domain, read or written at random: resident whole when the
 * budget can make room for it, else (much) slower. */
static int column(graph__wctx *c, graph__marr *m)
{
	size_t len = (size_t)c->n * sizeof(uint32_t);
	size_t whole = graph__marr_fit(len);
	int rc = graph__b_array(c->b, m, NULL, len ? len : sizeof(uint32_t),
				whole,
				whole);

	if (!rc && m->share < whole)
		log_warn("--mem-mb %zu holds %zu MiB of a per-domain column "
			 "of %zu MiB: its pages will fault in and out, "
			 "slowly; a larger --mem-mb keeps it whole",
			 c->b->mem.cap >> 20, m->share >> 20, whole >> 20);
	return rc;
}
/* stage.off / stage.dat: the deduplicated domain graph in reading ids,
 * as delta varints, kept on disk until the importance ranks are known.
 * Counts out-degrees (in order) and in-degrees (at random, in a column). */
int graph__write_stage(graph__wctx *c)
{
	graph__builder *b = c->b;
	graph__offw off = { 0 };
	graph__wfile dat = { 0 };
	const void *rec;
	graph__edge prev = { GRAPH__NONE, GRAPH__NONE };
	uint32_t outd = 0;
	uint8_t vb[10];
	int rc;

	b->phase = "domain graph";
	if ((rc = graph__xsort_finish(b->edges)) ||
	    (rc = column(c, &c->refdeg)) ||
	    (rc = graph__w_open(&off.w, c->dir, "stage.off")) ||
	    (rc = graph__w_open(&dat, c->dir, "stage.dat")))
		goto out;
	while ((rc = graph__xsort_next(b->edges, &rec)) == 1) {
		const graph__edge *e = rec;

		if (e->a == prev.a && e->b == prev.b)
			continue;
		if (e->a != prev.a) {
			if (prev.a != GRAPH__NONE)
				graph__b_dom(b, prev.a)->out_domains = outd;
			outd = 0;
			rc = graph__off_upto(&off, e->a, dat.bytes);
			if (rc)
				goto out;
			prev.b = GRAPH__NONE;
		}
		/* first target as is, then gaps (never 0: deduplicated) */
		rc = graph__w_put(&dat, vb, graph__varint_put(vb,
				  prev.b == GRAPH__NONE ? e->b : e->b - prev.b));
		if (rc)
			goto out;
		prev = *e;
		outd++;
		(*graph__marr_u32(&c->refdeg, e->b))++;
		c->n_edges++;
	}
	if (rc < 0)
		goto out;
	if (prev.a != GRAPH__NONE)
		graph__b_dom(b, prev.a)->out_domains = outd;
	rc = graph__off_upto(&off, c->n, dat.bytes);
	if (!rc)
		rc = graph__w_close(&dat);
	if (!rc)
		rc = graph__w_close(&off.w);
out:
	graph__w_close(&dat);
	graph__w_close(&off.w);
	graph__sort_done(b, &b->edges);
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

/* A domain's place in the importance order, with what the in-link pass
 * needs of it. */
typedef struct ikey {
	uint32_t score, ref, hc, id, hosts;
} ikey;

/* Authority descending, referring domains descending, harmonic-centrality
 * position ascending (unknown last), id. */
static int cmp_ikey(const void *pa, const void *pb)
{
	const ikey *a = pa, *b = pb;

	CMP(b->score, a->score);
	CMP(b->ref, a->ref);
	CMP(a->hc, b->hc);
	CMP(a->id, b->id);
	return 0;
}

/*
 * Applies the queued ranks, Tranco and whois facts and scores every
 * domain, in id order; then sorts them into the importance order (an
 * external sort, not a sort of the records in place): byrank.u32 in
 * order, the rank column at random, the host counts by position.
 */
int graph__rank_domains(graph__wctx *c)
{
	graph__builder *b = c->b;
	graph__xsort *xs = NULL;
	graph__updq q = { 0 };
	graph__wfile w = { 0 };
	const void *rec;
	uint32_t r = 0;
	int rc;

	b->phase = "ranks";
	for (uint32_t i = 0; i < c->n; i++) {
		uint32_t ref = *graph__marr_u32(&c->refdeg, i);

		if (ref > c->max_ref)
			c->max_ref = ref;
	}
	if ((rc = column(c, &c->rank)) || (rc = column(c, &c->hosts)) ||
	    (rc = graph__xsort_new(sizeof(ikey), cmp_ikey, b->mem.cap,
				   b->opts->tmp_dir, &b->mem, &xs)) ||
	    (rc = graph__updq_start(&q, b->upd)))
		goto out;
	for (uint32_t i = 0; i < c->n; i++) {
		graph__dom *d = graph__b_dom(b, i);
		ikey k;

		if ((rc = graph__updq_apply(&q, i, d)))
			goto out;
		d->ref_domains = *graph__marr_u32(&c->refdeg, i);
		d->score = authority(d, c->max_ref, c->n, b->flags);
		k = (ikey){ d->score, d->ref_domains,
			    d->hc_pos ? d->hc_pos : UINT32_MAX, i, d->hosts };
		if ((rc = graph__xsort_add(xs, &k)))
			goto out;
	}
	graph__marr_close(&c->refdeg);
	graph__sort_done(b, &b->upd);
	if ((rc = graph__xsort_finish(xs)) ||
	    (rc = graph__w_open(&w, c->dir, "byrank.u32")))
		goto out;
	while ((rc = graph__xsort_next(xs, &rec)) == 1) {
		const ikey *k = rec;

		*graph__marr_u32(&c->rank, k->id) = r;
		*graph__marr_u32(&c->hosts, r++) = k->hosts;
		if ((rc = graph__w_put(&w, &k->id, sizeof(k->id))))
			goto out;
	}
	if (rc < 0 || (rc = graph__w_close(&w)))
		goto out;
	b->stats->runs_spilled += graph__xsort_runs(xs);
out:
	graph__w_close(&w);
	graph__xsort_free(xs);
	return rc;
}

/* Queues the in-link pass's sum of the host counts of the referrers of
 * the domain at position `pos`: domains.bin is written in id order. */
static int linking_hosts(graph__wctx *c, uint32_t pos, uint64_t sum)
{
	graph__upd u = { *graph__marr_u32(&c->byrank, pos), 0,
			 GRAPH__UPD_LINKING, (uint32_t)sum,
			 (uint32_t)(sum >> 32), 0 };

	return graph__xsort_add(c->lupd, &u);
}

/* The end of the in-list of position `pos` (`deg` referrers whose host
 * counts sum to `sum`): its linking hosts queued, and its place among
 * the heavy domains. */
static int in_list_end(graph__wctx *c, uint32_t pos, uint32_t deg, uint64_t sum)
{
	int rc = linking_hosts(c, pos, sum);

	if (rc || !graph__sim_heavy(deg, c->n))
		return rc;
	rc = graph__grow(&c->heavy, c->n_heavy, &c->heavy_cap,
			 sizeof(*c->heavy), 64);
	if (!rc)
		c->heavy[c->n_heavy++] = pos;
	return rc;
}

/*
 * Writes a CSR from edges sorted by (a, b): offsets indexed by a, the b of
 * each list as a first value then gaps, in varints. Both ends are
 * importance positions, so the default order is the stored order and the
 * gaps stay small: most links point at the few strongest domains. The
 * in-lists get skip entries (inskip.*) every GRAPH__SKIP entries.
 */
static int write_csr(graph__wctx *c, graph__xsort *xs, const char *off_name,
		     const char *dat_name, int in)
{
	graph__offw off = { 0 };
	graph__wfile dat = { 0 };
	graph__skipw sk = { 0 };
	const void *rec;
	uint32_t prev_a = GRAPH__NONE, prev_b = 0, deg = 0;
	uint64_t sum = 0, list_at = 0;
	uint8_t vb[10];
	int rc;

	if ((rc = graph__xsort_finish(xs)) ||
	    (rc = graph__w_open(&off.w, c->dir, off_name)) ||
	    (rc = graph__w_open(&dat, c->dir, dat_name)) ||
	    (in && (rc = graph__skip_open(&sk, c->dir, "inskip"))))
		goto out;
	while ((rc = graph__xsort_next(xs, &rec)) == 1) {
		const graph__edge *e = rec;
		uint32_t v = e->b - prev_b;

		if (e->a != prev_a) {
			if (in && prev_a != GRAPH__NONE &&
			    (rc = in_list_end(c, prev_a, deg, sum)))
				goto out;
			sum = 0;
			deg = 0;
			list_at = dat.bytes;
			rc = graph__off_upto(&off, e->a, dat.bytes);
			v = e->b;
			prev_a = e->a;
		} else if (in && deg % GRAPH__SKIP == 0 &&
			   dat.bytes - list_at <= UINT32_MAX) {
			/* (entries past 4 GiB into a list are decoded) */
			graph__inskip k = { (uint32_t)(dat.bytes - list_at),
					    prev_b };

			rc = graph__skip_add(&sk, e->a, &k, sizeof(k));
		} else {
			rc = 0;
		}
		if (!rc)
			rc = graph__w_put(&dat, vb, graph__varint_put(vb, v));
		if (rc)
			goto out;
		prev_b = e->b;
		deg++;
		if (in)
			sum += *graph__marr_u32(&c->hosts, e->b);
	}
	if (rc < 0)
		goto out;
	if (in && prev_a != GRAPH__NONE &&
	    (rc = in_list_end(c, prev_a, deg, sum)))
		goto out;
	rc = graph__off_upto(&off, c->n, dat.bytes);
	if (!rc)
		rc = graph__w_close(&dat);
	if (!rc)
		rc = graph__w_close(&off.w);
	if (!rc && in)
		rc = graph__skip_close(&sk);
	c->edge_bytes += dat.bytes + off.w.bytes + sk.dir.bytes + sk.bin.bytes;
	c->b->stats->runs_spilled += graph__xsort_runs(xs);
out:
	graph__w_close(&dat);
	graph__w_close(&off.w);
	graph__w_close(&sk.dir);
	graph__w_close(&sk.bin);
	return rc;
}

/* Re-reads the stage into the out- and in-link CSRs, in rank space. */
int graph__write_csrs(graph__wctx *c)
{
	graph__builder *b = c->b;
	graph__xsort *xo = NULL, *xi = NULL;
	graph__marr stage;
	char path[8400];
	FILE *fo = NULL;
	uint64_t o0, o1;
	int rc;

	graph__marr_init(&stage);
	b->phase = "domain links";
	if ((rc = graph__xsort_new(sizeof(graph__edge), graph__cmp_pair,
				   b->mem.cap / 4, b->opts->tmp_dir, &b->mem,
				   &xo)) ||
	    (rc = graph__xsort_new(sizeof(graph__edge), graph__cmp_pair,
				   b->mem.cap / 4, b->opts->tmp_dir, &b->mem,
				   &xi)) ||
	    (rc = graph__b_map(b, &stage, "stage.dat", SEQ_SHARE)))
		goto out;
	snprintf(path, sizeof(path), "%s/stage.off", c->dir);
	fo = fopen(path, "rbe");
	if (!fo || fread(&o0, sizeof(o0), 1, fo) != 1) {
		rc = SEO_EIO;
		goto out;
	}
	for (uint32_t from = 0; from < c->n; from++) {
		const uint8_t *p, *end;
		uint32_t rfrom = *graph__marr_u32(&c->rank, from);
		uint64_t v, t = 0;

		if (fread(&o1, sizeof(o1), 1, fo) != 1 || o1 < o0 ||
		    o1 > stage.len) {
			rc = SEO_EIO;
			goto out;
		}
		if (o1 == o0)
			continue;
		p = graph__marr_at(&stage, o0, o1 - o0);
		end = p + (o1 - o0);
		for (int first = 1; p < end; first = 0) {
			graph__edge eo, ei;

			p = graph__varint_get(p, &v);
			t = first ? v : t + v;
			eo.a = ei.b = rfrom;
			eo.b = ei.a = *graph__marr_u32(&c->rank, (uint32_t)t);
			if ((rc = graph__xsort_add(xo, &eo)) ||
			    (rc = graph__xsort_add(xi, &ei)))
				goto out;
		}
		o0 = o1;
	}
	graph__marr_close(&stage);
	if ((rc = write_csr(c, xo, "out.off", "out.dat", 0)))
		goto out;
	graph__xsort_free(xo);
	xo = NULL;
	if ((rc = graph__b_map(b, &c->byrank, "byrank.u32", SEQ_SHARE)) ||
	    (rc = graph__xsort_new(sizeof(graph__upd), graph__cmp_upd,
				   b->mem.cap / 8,
				   b->opts->tmp_dir, &b->mem, &c->lupd)) ||
	    (rc = write_csr(c, xi, "in.off", "in.dat", 1)))
		goto out;
out:
	if (fo)
		fclose(fo);
	graph__marr_close(&stage);
	graph__marr_close(&c->byrank);
	graph__marr_close(&c->hosts);
	graph__xsort_free(xo);
	graph__xsort_free(xi);
	/* the stage is not part of the index */
	snprintf(path, sizeof(path), "%s/stage.dat", c->dir);
	unlink(path);
	snprintf(path, sizeof(path), "%s/stage.off", c->dir);
	unlink(path);
	return rc;
}

/* domains.bin's importance positions and linking hosts, from the rank
 * column and the in-link pass's sums, in id order. */
int graph__write_ranks(graph__wctx *c)
{
	graph__updq q = { 0 };
	int rc = graph__updq_start(&q, c->lupd);

	for (uint32_t i = 0; !rc && i < c->n; i++) {
		graph__dom *d = graph__b_dom(c->b, i);

		d->rank = *graph__marr_u32(&c->rank, i);
		rc = graph__updq_apply(&q, i, d);
	}
	c->b->stats->runs_spilled += graph__xsort_runs(c->lupd);
	graph__xsort_free(c->lupd);
	c->lupd = NULL;
	graph__marr_close(&c->rank);
	return rc;
}

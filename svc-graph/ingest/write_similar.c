/*
 * write_similar.c: the similar domains of the heavy domains, counted once
 * at ingest and stored (simtop.*).
 */
#include <stdlib.h>
#include <string.h>

#include <seo/errors.h>
#include <seo/log.h>
#include <seo/util.h>

#include "ingest.h"

/*
 * The exact answer of graph_similar_domains() for every heavy domain
 * (graph__sim_heavy()): its first GRAPH__SIM_ROWS rows and its total, in
 * simtop.*. One pass over in.dat counts up to 64 heavy domains at once:
 * each linker gets a mask of the heavy domains of the pass it links to
 * (w bytes a domain, resident), then every domain's in-list adds up its
 * linkers' masks, and each heavy domain keeps its rows in a heap as the
 * query does, the domains arriving in position order. A budget too small
 * for 8 bytes a domain makes narrower masks and more passes: the same
 * rows.
 */
#define SIM_BITS 64
/* In-list entries decoded before their masks are read: the reads of a
 * batch miss the cache at once, not one after the other. */
#define SIM_BATCH 64
/* Masks are added a byte at a time into eight one-byte counters of a
 * word (sim_spread), which hold this many before they are emptied. */
#define SIM_LANE_MAX 255

/* Byte i of sim_spread(x) is bit i of x. */
static uint64_t sim_spread(unsigned x)
{
	uint64_t v = 0;

	for (unsigned i = 0; i < 8; i++)
		v |= (uint64_t)(x >> i & 1) << (8 * i);
	return v;
}

/* Empties the byte counters acc[0 .. w - 1] into cnt[], noting in *seen
 * the heavy domains counted. */
static void sim_lanes_flush(uint64_t *acc, unsigned w, uint32_t *cnt,
			    uint64_t *seen)
{
	const uint64_t low7 = 0x7f7f7f7f7f7f7f7fULL;

	for (unsigned j = 0; j < w; j++) {
		uint64_t v = acc[j];
		/* the high bit of each byte that is not zero */
		uint64_t nz = (((v & low7) + low7) | v) & ~low7;

		for (; nz; nz &= nz - 1) {
			unsigned byte = (unsigned)__builtin_ctzll(nz) / 8;

			cnt[8 * j + byte] += (uint32_t)(v >> (8 * byte) & 0xff);
			*seen |= (uint64_t)1 << (8 * j + byte);
		}
		acc[j] = 0;
	}
}

/* Mask bytes a domain for one pass to count all `heavy` domains, or 64 of
 * them at most. */
static unsigned sim_mask_bytes(size_t heavy)
{
	return heavy >= SIM_BITS ? SIM_BITS / 8 : (unsigned)(heavy + 7) / 8;
}

/* An in-list read through its file-backed array a block at a time, so
 * that a list longer than the array's share stays within it. */
typedef struct simlist {
	graph__marr *dat;
	uint64_t at, end;    /* file offsets: next entry, end of the list */
	uint64_t r;
	int first;
} simlist;

/* Up to `max` positions of the list into v; their number. */
static unsigned simlist_get(simlist *l, uint32_t *v, unsigned max)
{
	unsigned n = 0;

	while (n < max && l->at < l->end) {
		uint64_t blk_end = ((l->at >> GRAPH__BLOCK_SHIFT) + 1)
				   << GRAPH__BLOCK_SHIFT;
		/* a varint may start before the block's end and end after */
		uint64_t stop = blk_end < l->end ? blk_end : l->end;
		uint64_t span = stop + 10 < l->end ? stop + 10 : l->end;
		const uint8_t *p0 = graph__marr_at(l->dat, l->at, span - l->at);
		const uint8_t *p = p0, *e = p0 + (stop - l->at);

		while (n < max && p < e) {
			uint64_t v64;

			p = graph__varint_get(p, &v64);
			l->r = l->first ? v64 : l->r + v64;
			l->first = 0;
			v[n++] = (uint32_t)l->r;
		}
		l->at += (uint64_t)(p - p0);
	}
	return n;
}

static void simlist_begin(simlist *l, graph__marr *ioff, graph__marr *idat,
			  uint32_t pos)
{
	const uint64_t *o = graph__marr_at(ioff, (size_t)pos * 8, 16);

	l->dat = idat;
	l->at = o[0];
	l->end = o[1];
	l->r = 0;
	l->first = 1;
}

/* One pass: the heavy domains heavy[0 .. nh - 1] (nh <= 8 w) counted into
 * tops[] and totals[]. */
static void sim_pass(graph__wctx *c, graph__marr *ioff, graph__marr *idat,
		     graph__marr *mask, unsigned w, const uint32_t *heavy,
		     unsigned nh, graph__simtop *tops, uint64_t *totals)
{
	size_t blk = (size_t)1 << GRAPH__BLOCK_SHIFT;
	uint32_t cnt[SIM_BITS] = { 0 }, v[SIM_BATCH];
	uint64_t spread[256], acc[SIM_BITS / 8] = { 0 };
	simlist l;
	unsigned got;

	for (unsigned x = 0; x < 256; x++)
		spread[x] = sim_spread(x);
	for (size_t at = 0; at < mask->len; at += blk)
		memset(graph__marr_at(mask, at, 1), 0,
		       mask->len - at < blk ? mask->len - at : blk);
	for (unsigned b = 0; b < nh; b++) {
		simlist_begin(&l, ioff, idat, heavy[b]);
		while ((got = simlist_get(&l, v, SIM_BATCH)) > 0)
			for (unsigned i = 0; i < got; i++) {
				uint8_t *m = graph__marr_at(
					mask, (size_t)v[i] * w + b / 8, 1);

				*m |= (uint8_t)(1u << (b % 8));
			}
	}
	for (uint32_t pos = 0; pos < c->n; pos++) {
		uint64_t seen = 0;
		unsigned since = 0;

		if ((pos & 0xffff) == 0)
			graph__b_progress(c->b, pos, c->n);
		simlist_begin(&l, ioff, idat, pos);
		while ((got = simlist_get(&l, v, SIM_BATCH)) > 0) {
			for (unsigned i = 0; i < got; i++)
				__builtin_prefetch(mask->p + (size_t)v[i] * w);
			for (unsigned i = 0; i < got; i++) {
				const uint8_t *m = graph__marr_at(
					mask, (size_t)v[i] * w, w);

				for (unsigned j = 0; j < w; j++)
					acc[j] += spread[m[j]];
				if (++since == SIM_LANE_MAX) {
					sim_lanes_flush(acc, w, cnt, &seen);
					since = 0;
				}
			}
		}
		sim_lanes_flush(acc, w, cnt, &seen);
		for (; seen; seen &= seen - 1) {
			unsigned b = (unsigned)__builtin_ctzll(seen);

			/* the domain itself is never a row */
			if (heavy[b] != pos) {
				totals[b]++;
				graph__top_push(&tops[b],
						(graph__sim){ pos, cnt[b] });
			}
			cnt[b] = 0;
		}
	}
}

int graph__write_similar(graph__wctx *c)
{
	graph__builder *b = c->b;
	graph__marr ioff, idat, mask;
	graph__simtop tops[SIM_BITS];
	uint64_t totals[SIM_BITS], rows = 0;
	graph__wfile dir = { 0 }, bin = { 0 };
	graph__sim *heaps = NULL;
	size_t k = c->n < GRAPH__SIM_ROWS ? c->n : GRAPH__SIM_ROWS;
	/* the heaps of the heavy domains of a byte of masks */
	size_t heap_per = 8 * (k ? k : 1) * sizeof(graph__sim);
	size_t len, whole, heap_bytes = 0;
	unsigned w = sim_mask_bytes(c->n_heavy), passes = 0;
	int64_t t0 = seo_mono_ms();
	int rc;

	graph__marr_init(&ioff);
	graph__marr_init(&idat);
	graph__marr_init(&mask);
	b->phase = "similar domains";
	if ((rc = graph__w_open(&dir, c->dir, "simtop.dir")) ||
	    (rc = graph__w_open(&bin, c->dir, "simtop.bin")) || c->n_heavy == 0)
		goto out;
	/* the widest masks the budget holds whole */
	rc = graph__mem_make_room(b, graph__marr_fit((size_t)c->n * w) +
				     heap_per * w);
	while (!rc && w > 1 &&
	       graph__marr_fit((size_t)c->n * w) + heap_per * w >
		       graph__mem_free(&b->mem))
		w--;
	len = (size_t)c->n * w;
	whole = graph__marr_fit(len);
	heap_bytes = heap_per * w;
	if (!rc && !(heaps = malloc(heap_bytes)))
		rc = SEO_ENOMEM;
	if (rc)
		goto out;
	b->mem.used += heap_bytes;
	if ((rc = graph__b_map(b, &ioff, "in.off", SEQ_SHARE)) ||
	    (rc = graph__b_map(b, &idat, "in.dat", SEQ_SHARE)) ||
	    (rc = graph__b_array(b, &mask, NULL, len, whole, whole)))
		goto out;
	if (mask.share < whole)
		log_warn("--mem-mb %zu holds %zu MiB of the similar-domains "
			 "masks of %zu MiB: their pages will fault in and out, "
			 "slowly; a larger --mem-mb keeps them whole",
			 b->mem.cap >> 20, mask.share >> 20, whole >> 20);
	for (size_t g0 = 0; !rc && g0 < c->n_heavy;
	     g0 += (size_t)w * 8, passes++) {
		size_t left = c->n_heavy - g0;
		unsigned nh = (unsigned)(left < (size_t)w * 8 ? left : w * 8);

		for (unsigned i = 0; i < nh; i++) {
			tops[i] = (graph__simtop){ heaps + i * k, 0, k };
			totals[i] = 0;
		}
		sim_pass(c, &ioff, &idat, &mask, w, c->heavy + g0, nh, tops,
			 totals);
		for (unsigned i = 0; !rc && i < nh; i++) {
			graph__simdir d = { c->heavy[g0 + i],
					    (uint32_t)tops[i].len, totals[i],
					    rows };

			qsort(tops[i].v, tops[i].len, sizeof(graph__sim),
			      graph__sim_cmp);
			rows += tops[i].len;
			if (!(rc = graph__w_put(&dir, &d, sizeof(d))))
				rc = graph__w_put(&bin, tops[i].v,
						  tops[i].len * sizeof(graph__sim));
		}
	}
	if (!rc) {
		b->stats->similar_domains = c->n_heavy;
		b->stats->similar_passes = passes;
		b->stats->similar_seconds =
			(double)(seo_mono_ms() - t0) / 1000.0;
		log_debug("similar domains of %zu heavy domains stored in "
			  "%.2f s (passes over the in-lists: %u, masks of %u "
			  "bytes)", c->n_heavy, b->stats->similar_seconds,
			  passes, w);
	}
out:
	if (heaps)
		b->mem.used -= heap_bytes;
	if (!rc)
		rc = graph__w_close(&dir);
	if (!rc)
		rc = graph__w_close(&bin);
	graph__w_close(&dir);
	graph__w_close(&bin);
	graph__marr_close(&mask);
	graph__marr_close(&idat);
	graph__marr_close(&ioff);
	free(heaps);
	return rc;
}

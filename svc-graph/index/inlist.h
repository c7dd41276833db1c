/*
 * inlist.h: walking an in-list (in.off, in.dat, inskip.*), the step the
 * referring-domain, similar-domain and overlap queries repeat most: the
 * steps are inline, only the start of a walk is not (inlist.c).
 */
#ifndef GRAPH_INLIST_H
#define GRAPH_INLIST_H

#include <stdint.h>
#include <string.h>

#include "index.h"

/*
 * Walks the in-list of the domain at importance position `to`: the
 * positions of its referrers, ascending. The varints are decoded a skip
 * block (GRAPH__SKIP entries) at a time into buf, so that a step is a
 * load; in_pass() passes over whole blocks below its target by the skip
 * entries without decoding them. Lives on the caller's stack; holds
 * nothing to free.
 */
typedef struct in_iter {
	const uint8_t *start, *p, *end; /* the list; p: the next to decode */
	const graph__inskip *skip;      /* its skip entries, nskip of them */
	uint32_t nskip;
	uint32_t r;                     /* the last position decoded */
	uint64_t k;                     /* entries decoded */
	uint32_t i, n;                  /* the next entry of buf, its count */
	uint32_t buf[GRAPH__SKIP];
} in_iter;

/* Starts the walk of the in-list of position `to` at its first entry. */
void graph__in_begin(const graph_index *ix, uint32_t to, in_iter *it);

/* In each byte of a word: its high bit, its low bit. */
#define BYTES_HIGH 0x8080808080808080ULL
#define BYTES_ONE 0x0101010101010101ULL

/* Decodes the rest of the block of entry k into buf (the whole block
 * unless in_seek() started inside it); 0 at the end of the list. */
static inline int in_fill(in_iter *it)
{
	const uint8_t *p = it->p, *end = it->end;
	uint32_t r = it->r, n = 0;
	uint32_t want = GRAPH__SKIP - (uint32_t)(it->k % GRAPH__SKIP);

	while (n < want && p < end) {
		uint64_t w, v;

		/* the gaps of a long list are mostly below 128: eight bytes
		 * without a continuation bit are eight of them (the index is
		 * little-endian, as the host) */
		if (want - n >= 8 && end - p >= 8) {
			memcpy(&w, p, sizeof(w));
			if (!(w & BYTES_HIGH)) {
				for (unsigned b = 0; b < 8; b++) {
					r += (uint32_t)(w >> 8 * b) & 0xff;
					it->buf[n++] = r;
				}
				p += 8;
				continue;
			}
		}
		p = graph__varint_get(p, &v);
		r += (uint32_t)v;
		it->buf[n++] = r;
	}
	it->p = p;
	it->r = r;
	it->k += n;
	it->i = 0;
	it->n = n;
	return n > 0;
}

static inline int in_next(in_iter *it, uint32_t *rank)
{
	if (it->i == it->n && !in_fill(it))
		return 0;
	*rank = it->buf[it->i++];
	return 1;
}

/* Entries the walk has passed (returned or leapt over). */
static inline uint64_t in_done(const in_iter *it)
{
	return it->k - (it->n - it->i);
}

/* Continues at block j (from 1: entry GRAPH__SKIP * j) by its skip entry,
 * dropping what buf holds; 0 when the entry points outside the list. */
static inline int in_jump(in_iter *it, uint64_t j)
{
	const graph__inskip *e = &it->skip[j - 1];

	if (e->at >= (uint64_t)(it->end - it->start))
		return 0;
	it->p = it->start + e->at;
	it->r = e->prev;
	it->k = j * GRAPH__SKIP;
	it->i = it->n = 0;
	return 1;
}

/*
 * Makes buf hold an entry not below t, passing the blocks that end below
 * it by galloping over the skip entries (entry j holds the last position
 * of block j - 1), so that a target far ahead costs a few lookups and one
 * block; 0 when the list ends before t.
 */
static inline int in_reach(in_iter *it, uint32_t t)
{
	while (it->i == it->n || it->buf[it->n - 1] < t) {
		/* skip entry m ends the block being decoded */
		uint64_t m = it->k / GRAPH__SKIP, step = 1, hi;

		if (m < it->nskip && it->skip[m].prev < t) {
			while (m + step < it->nskip &&
			       it->skip[m + step].prev < t) {
				m += step;
				step *= 2;
			}
			hi = m + step < it->nskip ? m + step : it->nskip;
			while (hi - m > 1) {
				uint64_t mid = m + (hi - m) / 2;

				if (it->skip[mid].prev < t)
					m = mid;
				else
					hi = mid;
			}
			if (in_jump(it, m + 1))
				continue;
		}
		if (!in_fill(it))
			return 0;
	}
	return 1;
}

/* Passes the entries below t: 1 when the list holds one not below it
 * (then the next entry), 0 when it ends first. */
static inline int in_pass(in_iter *it, uint32_t t)
{
	uint32_t i;

	if (!in_reach(it, t))
		return 0;
	for (i = it->i; it->buf[i] < t; i++)
		;
	it->i = i;
	return 1;
}

/* Whether the list holds t, passing its entries below t: asked for
 * ascending t, it walks the list once. */
static inline int in_has(in_iter *it, uint32_t t)
{
	return in_pass(it, t) && it->buf[it->i] == t;
}

/* The next entry, not passed; UINT32_MAX (no position) at the end. */
static inline uint32_t in_head(in_iter *it)
{
	if (it->i == it->n && !in_fill(it))
		return UINT32_MAX;
	return it->buf[it->i];
}

/* Takes every entry decoded and not yet passed at once, for a loop that
 * keeps its place in a register: their number (0 at the end of the list)
 * and *v, valid until the next call on it. */
static inline uint32_t in_take(in_iter *it, const uint32_t **v)
{
	uint32_t m;

	if (it->i == it->n && !in_fill(it))
		return 0;
	*v = it->buf + it->i;
	m = it->n - it->i;
	it->i = it->n;
	return m;
}

/* Starts the in-list of position `to` past its first `skip` entries: from
 * the skip entry before them, then fewer than GRAPH__SKIP entries of its
 * block. */
static inline void in_seek(const graph_index *ix, uint32_t to, uint64_t skip,
			   in_iter *it)
{
	uint64_t j = skip / GRAPH__SKIP;

	graph__in_begin(ix, to, it);
	if (j > it->nskip)
		j = it->nskip;
	if (j > 0)
		in_jump(it, j);
	while (in_done(it) < skip) {
		uint64_t left = skip - in_done(it);

		if (it->i == it->n && !in_fill(it))
			return;
		it->i += left < it->n - it->i ? (uint32_t)left : it->n - it->i;
	}
}

#endif

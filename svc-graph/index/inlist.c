/*
 * inlist.c: the skip directories of the long lists (inskip.*, linkskip.*)
 * and the start of an in-list walk (inlist.h).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <seo/errors.h>

#include "index.h"
#include "inlist.h"

/* The first of the `n` entries of a directory (`stride` bytes each,
 * ascending by their leading u32 key) whose key is not below `key`; `n`
 * when none is. */
uint64_t graph__dir_lower_bound(const void *dir, uint64_t n, size_t stride,
				uint32_t key)
{
	const unsigned char *p = dir;
	uint64_t lo = 0, hi = n;

	while (lo < hi) {
		uint64_t mid = lo + (hi - lo) / 2;
		uint32_t k;

		memcpy(&k, p + mid * stride, sizeof(k));
		if (k < key)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

/* The skip entries (entries of `size` bytes in file `binf`) of the list
 * `key` of directory `dirf`: their number and the first, or 0 when the
 * list has none or its directory entry disagrees with the file. */
uint32_t graph__skip_find(const graph_index *ix, int dirf, int binf,
			  size_t size, uint32_t key, uint64_t *first)
{
	const graph__skipdir *d = ARR(ix, dirf, graph__skipdir);
	uint64_t nd = ix->f[dirf].len / sizeof(*d);
	uint64_t have = ix->f[binf].len / size;
	uint64_t lo = graph__dir_lower_bound(d, nd, sizeof(*d), key);

	if (lo == nd || d[lo].key != key || d[lo].first > have ||
	    d[lo].n > have - d[lo].first)
		return 0;
	*first = d[lo].first;
	return d[lo].n;
}

void graph__in_begin(const graph_index *ix, uint32_t to, in_iter *it)
{
	const uint64_t *off = ARR(ix, F_IN_OFF, uint64_t);
	const uint8_t *dat = ARR(ix, F_IN_DAT, uint8_t);
	uint64_t first = 0;

	it->start = it->p = dat + off[to];
	it->end = dat + off[to + 1];
	it->r = 0;
	it->k = 0;
	it->i = it->n = 0;
	it->skip = NULL;
	/* an entry takes a byte at least: a list of GRAPH__SKIP bytes or
	 * fewer has no skip entries to look up */
	it->nskip = it->end - it->start <= GRAPH__SKIP ? 0 :
		    graph__skip_find(ix, F_INSKIP_DIR, F_INSKIP,
				     sizeof(*it->skip),
				     to, &first);
	if (it->nskip > 0)
		it->skip = ARR(ix, F_INSKIP, graph__inskip) + first;
}

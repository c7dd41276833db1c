/*
 * lookup.c: from a user's domain to its id, what every query starts
 * with (the strings of ids, what each ends with, are index.h's).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <seo/errors.h>

#include "index.h"

/* Binary search of the reversed name in domsorted.u32. */
static int find_rev(const graph_index *ix, const char *rev, uint32_t *id)
{
	const uint32_t *sorted = ARR(ix, F_DOMSORTED, uint32_t);
	uint64_t lo = 0, hi = ix->n;

	while (lo < hi) {
		uint64_t mid = lo + (hi - lo) / 2;
		int c = strcmp(graph__str_at(ix, F_DOMREV_STR, F_DOMREV_OFF,
					      sorted[mid]), rev);

		if (c == 0) {
			*id = sorted[mid];
			return 0;
		}
		if (c < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	return SEO_ENOTFOUND;
}

/*
 * Resolves a user's domain: 0 with *id, SEO_ENOTFOUND when well-formed but
 * absent, SEO_EINVAL when malformed. A subdomain falls back to its
 * registrable domain, the level the index keeps.
 */
int graph__lookup(const graph_index *ix, const char *domain, uint32_t *id)
{
	char norm[GRAPH_DOMAIN_MAX + 1], rev[GRAPH_DOMAIN_MAX + 1];
	char reg[GRAPH_DOMAIN_MAX + 1];
	int rc = graph_normalize_domain(domain, norm, sizeof(norm));

	if (rc)
		return rc;
	graph_reverse_labels(norm, strlen(norm), rev);
	if (find_rev(ix, rev, id) == 0)
		return 0;
	graph__registrable(norm, reg);
	if (strcmp(reg, norm) == 0)
		return SEO_ENOTFOUND;
	graph_reverse_labels(reg, strlen(reg), rev);
	return find_rev(ix, rev, id);
}

/* Common prologue: resolves the domain and clears the outputs. Returns
 * 1 when found, 0 when absent (outputs empty), or an error. */
int graph__query_start(const graph_index *ix, const char *domain,
		       uint32_t *id, size_t *n, uint64_t *total)
{
	int rc;

	if (n)
		*n = 0;
	if (total)
		*total = 0;
	rc = graph__lookup(ix, domain, id);
	if (rc == SEO_ENOTFOUND)
		return 0;
	return rc ? rc : 1;
}

/* graph__query_start() for a one-domain query: clears the `size` bytes of
 * its result `out` and sets *d when found. */
int graph__dom_start(const graph_index *ix, const char *domain, void *out,
		     size_t size, const graph__dom **d)
{
	uint32_t id;
	int rc = graph__query_start(ix, domain, &id, NULL, NULL);

	memset(out, 0, size);
	if (rc > 0)
		*d = &ix->dom[id];
	return rc;
}

uint32_t graph__page_limit(const graph_page *pg)
{
	return pg->limit > GRAPH_LIMIT_MAX ? GRAPH_LIMIT_MAX : pg->limit;
}

uint64_t graph__page_skip(const graph_page *pg, uint64_t total)
{
	return pg->offset < total ? pg->offset : total;
}

void *graph__rows_alloc(seo_arena *a, size_t n, size_t size)
{
	return seo_arena_alloc(a, n ? n * size : 1);
}

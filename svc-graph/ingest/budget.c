/*
 * budget.c: the memory budget of an ingest (--mem-mb, b->mem): who gives
 * room back when a sort, a dictionary or a mapped array needs it.
 */
#include <stdlib.h>
#include <string.h>

#include <seo/errors.h>
#include <seo/log.h>

#include "ingest.h"

/* The sorts still filling, whose buffers can go to disk to make room. */
static size_t open_sorts(graph__builder *b, graph__xsort **s)
{
	graph__xsort *all[] = { b->edges, b->links_in, b->caps_in, b->links,
				b->outl, b->caps, b->plats, b->upd };
	size_t n = 0;

	for (size_t i = 0; i < sizeof(all) / sizeof(all[0]); i++)
		if (all[i])
			s[n++] = all[i];
	return n;
}

/*
 * Makes `need` more bytes fit in the budget if it can: writes sort
 * buffers and dictionary generations out, largest first, then drops the
 * resident pages of the mapped arrays of the reading phase (they take a
 * share again as they are used).
 */
int graph__mem_make_room(graph__builder *b, size_t need)
{
	graph__marr *arrays[] = { &b->dom, &b->vmap, &b->names->str,
				  &b->names->off };
	graph__sdict *dicts[] = { &b->urls, &b->anchors };
	graph__xsort *s[16];
	size_t n = open_sorts(b, s);

	while (b->mem.used + need > b->mem.cap) {
		graph__xsort *big = NULL;
		graph__sdict *bigd = NULL;
		size_t most = 0;
		int rc;

		for (size_t i = 0; i < n; i++)
			if (graph__xsort_held(s[i]) > most) {
				most = graph__xsort_held(s[i]);
				big = s[i];
			}
		for (size_t i = 0; i < sizeof(dicts) / sizeof(dicts[0]); i++)
			if (graph__sdict_held(dicts[i]) > most) {
				most = graph__sdict_held(dicts[i]);
				bigd = dicts[i];
			}
		if (!most)
			break;
		rc = bigd ? graph__sdict_spill(bigd) :
			    graph__xsort_release(big);
		if (rc)
			return rc;
	}
	for (size_t i = 0; i < sizeof(arrays) / sizeof(arrays[0]) &&
			   b->mem.used + need > b->mem.cap; i++)
		graph__marr_shrink(arrays[i]);
	return 0;
}

/* A mapped array of `len` bytes (named in the index directory, or an
 * unlinked temporary file when name is NULL) that may keep up to
 * `max_share` resident, of which `reserve` at once when the budget can
 * make room for it. */
int graph__b_array(graph__builder *b, graph__marr *m, const char *name,
		   size_t len, size_t max_share, size_t reserve)
{
	int rc = graph__mem_make_room(b, reserve);

	if (!rc)
		rc = graph__marr_create(m, name ? b->dir : b->opts->tmp_dir,
					name, &b->mem, max_share);
	if (!rc && len > 0)
		rc = graph__marr_resize(m, len);
	if (!rc)
		graph__marr_reserve(m, reserve);
	return rc;
}

/* Maps a file of the index read-only. */
int graph__b_map(graph__builder *b, graph__marr *m, const char *name,
		 size_t max_share)
{
	char path[8400];

	snprintf(path, sizeof(path), "%s/%s", b->dir, name);
	return graph__marr_open(m, path, &b->mem, max_share);
}

/* Counts what a dictionary (or the names' fence) grew by; SEO_ETOOBIG
 * (logged) when nothing else can make room for it. */
int graph__dict_grew(graph__builder *b, size_t bytes)
{
	int rc;

	b->dict_charged += bytes;
	b->mem.used += bytes;
	rc = graph__mem_make_room(b, 0);
	if (rc || b->mem.used <= b->mem.cap)
		return rc;
	log_error("the dictionaries of domain names and small strings need "
		  "%zu MiB and the budget (--mem-mb %zu) has no more room: "
		  "raise --mem-mb",
		  b->dict_charged >> 20, b->mem.cap >> 20);
	return SEO_ETOOBIG;
}

int graph__b_intern(graph__builder *b, graph__dict *d, const char *s,
		    size_t len, uint32_t *id)
{
	size_t before = graph__dict_bytes(d), after;
	int rc = graph__dict_intern(d, s, len, id);

	if (rc || (after = graph__dict_bytes(d)) == before)
		return rc;
	return graph__dict_grew(b, after - before);
}

int graph__b_string(graph__builder *b, graph__sdict *d, const char *s,
		    size_t len, uint32_t *tmp)
{
	int rc = graph__sdict_intern(d, s, len, tmp);

	if (!rc && b->mem.used > b->mem.cap)
		rc = graph__mem_make_room(b, 0);
	return rc;
}

/* Frees the dictionaries' hash tables once nothing more is looked up. */
void graph__freeze_dicts(graph__builder *b)
{
	graph__dict *d[] = { &b->doms, &b->strs };

	for (size_t i = 0; i < sizeof(d) / sizeof(d[0]); i++) {
		size_t before = graph__dict_bytes(d[i]);

		graph__dict_freeze(d[i]);
		b->dict_charged -= before - graph__dict_bytes(d[i]);
		b->mem.used -= before - graph__dict_bytes(d[i]);
	}
}

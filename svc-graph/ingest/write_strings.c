/*
 * write_strings.c: the string files: dictionaries (URLs, anchors, small
 * strings) and the domain names in both orders.
 */
#include <stdlib.h>
#include <string.h>

#include <seo/errors.h>
#include <seo/log.h>

#include "ingest.h"

int graph__write_dict(const char *dir, const char *name, const graph__dict *d)
{
	char fn[256];
	uint64_t end = d->blob.len;
	graph__wfile w = { 0 };
	int rc;

	snprintf(fn, sizeof(fn), "%s.str", name);
	rc = graph__write_file(dir, fn, d->blob.p ? d->blob.p : "",
			       d->blob.len);
	if (rc)
		return rc;
	snprintf(fn, sizeof(fn), "%s.off", name);
	if ((rc = graph__w_open(&w, dir, fn)) ||
	    (rc = graph__w_put(&w, d->off, (size_t)d->n * sizeof(uint64_t))) ||
	    (rc = graph__w_put(&w, &end, sizeof(end))))
		goto out;
	rc = graph__w_close(&w);
out:
	graph__w_close(&w);
	return rc;
}

/* Merges a dictionary of URLs or anchors into name.str and name.off, the
 * strings in byte order, and fills its map of temporary to final ids. */
int graph__write_sdict(graph__wctx *c, const char *name, graph__sdict *d)
{
	size_t len = (size_t)graph__sdict_tmp_ids(d) * sizeof(uint32_t);
	graph__wfile str = { 0 }, off = { 0 };
	char fn[64];
	const char *s;
	uint32_t tmp, id;
	uint64_t end;
	int fresh, rc;

	c->b->phase = name;
	c->b->stats->runs_spilled += d->spilled;
	c->b->stats->dict_runs += d->spilled;
	if ((rc = graph__sdict_merge(d)) ||
	    (rc = graph__b_array(c->b, &d->map, NULL, len, c->b->mem.cap / 8,
				 graph__marr_fit(len))))
		goto out;
	snprintf(fn, sizeof(fn), "%s.str", name);
	if ((rc = graph__w_open(&str, c->dir, fn)))
		goto out;
	snprintf(fn, sizeof(fn), "%s.off", name);
	if ((rc = graph__w_open(&off, c->dir, fn)))
		goto out;
	while ((rc = graph__sdict_next(d, &s, &tmp, &id, &fresh)) == 1) {
		end = str.bytes;
		if (fresh && ((rc = graph__w_put(&off, &end, sizeof(end))) ||
			      (rc = graph__w_put(&str, s, strlen(s) + 1))))
			goto out;
		*graph__marr_u32(&d->map, tmp) = id;
	}
	end = str.bytes;
	if (rc < 0 || (rc = graph__w_put(&off, &end, sizeof(end))) ||
	    (rc = graph__w_close(&str)) || (rc = graph__w_close(&off)))
		goto out;
out:
	graph__w_close(&str);
	graph__w_close(&off);
	graph__sdict_end(d);
	return rc;
}

static int cmp_rev_name(const void *pa, const void *pb, void *ctx)
{
	return strcmp(graph__dom_rev(ctx, *(const uint32_t *)pa),
		      graph__dom_rev(ctx, *(const uint32_t *)pb));
}

/* Appends a name and its offset to a names dictionary being written. */
static int put_name(graph__wfile *str, graph__wfile *off, const char *name,
		    size_t len)
{
	int rc = graph__w_put(off, &str->bytes, sizeof(str->bytes));

	return rc ? rc : graph__w_put(str, name, len + 1);
}

/*
 * domrev.*, domfwd.* and domsorted.u32. The names of the vertices file
 * (ids below base) are in the files already and in byte order: the other
 * domains' names follow them, and domsorted merges the two orders.
 */
int graph__write_domain_names(graph__wctx *c)
{
	graph__builder *b = c->b;
	int append = b->base > 0;
	graph__wfile rev = { 0 }, rev_off = { 0 }, fwd = { 0 }, fwd_off = { 0 };
	graph__wfile sorted = { 0 };
	uint32_t *more = NULL, n_more = c->n - b->base, j = 0;
	char name[GRAPH_DOMAIN_MAX + 1];
	int rc;

	b->phase = "domain names";
	if ((rc = graph__w_open_mode(&rev, c->dir, "domrev.str", append)) ||
	    (rc = graph__w_open_mode(&rev_off, c->dir, "domrev.off", append)) ||
	    (rc = graph__w_open_mode(&fwd, c->dir, "domfwd.str", append)) ||
	    (rc = graph__w_open_mode(&fwd_off, c->dir, "domfwd.off", append)) ||
	    (rc = graph__w_open(&sorted, c->dir, "domsorted.u32")))
		goto out;
	more = malloc((size_t)n_more * sizeof(uint32_t) + 1);
	if (!more) {
		rc = SEO_ENOMEM;
		goto out;
	}
	for (uint32_t i = 0; i < n_more; i++) {
		const char *r = graph__dict_str(&b->doms, i);
		size_t len = strlen(r);

		graph_reverse_labels(r, len, name);
		if ((rc = put_name(&rev, &rev_off, r, len)) ||
		    (rc = put_name(&fwd, &fwd_off, name, len)))
			goto out;
		more[i] = b->base + i;
	}
	if ((rc = graph__w_put(&rev_off, &rev.bytes, sizeof(rev.bytes))) ||
	    (rc = graph__w_put(&fwd_off, &fwd.bytes, sizeof(fwd.bytes))))
		goto out;
	qsort_r(more, n_more, sizeof(uint32_t), cmp_rev_name, b);
	for (uint32_t i = 0; i < b->base || j < n_more;) {
		uint32_t id = j == n_more ||
			(i < b->base && strcmp(graph__dom_rev(b, i),
					       graph__dom_rev(b,
							      more[j])) < 0) ?
			i++ : more[j++];

		if ((rc = graph__w_put(&sorted, &id, sizeof(id))))
			goto out;
	}
	if ((rc = graph__w_close(&rev)) || (rc = graph__w_close(&rev_off)) ||
	    (rc = graph__w_close(&fwd)) || (rc = graph__w_close(&fwd_off)))
		goto out;
	rc = graph__w_close(&sorted);
out:
	graph__w_close(&rev);
	graph__w_close(&rev_off);
	graph__w_close(&fwd);
	graph__w_close(&fwd_off);
	graph__w_close(&sorted);
	free(more);
	return rc;
}

/*
 * domains.c: domain ids while reading: the names, kept in files while the
 * vertices file is in order (else in a dictionary), and the records of
 * domains.bin, created as domains are met.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <seo/errors.h>
#include <seo/log.h>

#include "ingest.h"

/* ---- domain records ---- */

/* Appends the record of a new domain, which gets id `id`. */
static int new_domain(graph__builder *b, uint32_t id)
{
	int rc;

	if (id != b->n_doms || b->n_doms >= GRAPH__NONE - 1)
		return SEO_ETOOBIG;
	rc = graph__marr_resize(&b->dom,
				((size_t)id + 1) * sizeof(graph__dom));
	if (rc)
		return rc;
	*graph__b_dom(b, id) = (graph__dom){ .registered_day = INT32_MIN,
					     .registrar = GRAPH__NONE,
					     .top_out_domain = GRAPH__NONE };
	b->n_doms++;
	return 0;
}

int graph__b_vertex_map(graph__builder *b, uint64_t vid, uint32_t id)
{
	uint64_t len = b->vmap_len, v = b->vmap_mapped ? len : 0;
	int rc;

	/* the contract's vertices file numbers its lines 0..n-1, which are
	 * our ids too: no map at all */
	if (!b->vmap_mapped && vid == len && id == vid) {
		b->vmap_len++;
		return 0;
	}
	if (!b->vmap_mapped) {
		rc = graph__b_array(b, &b->vmap, NULL, 0, b->mem.cap / 8, 0);
		if (rc)
			return rc;
		b->vmap_mapped = 1;
	}
	if (vid >= len)
		b->vmap_len = vid + 1;
	rc = graph__marr_resize(&b->vmap, b->vmap_len * sizeof(uint32_t));
	if (rc)
		return rc;
	/* a new map starts with the ids so far, which were the vertex ids;
	 * gaps are no vertex */
	for (; v < b->vmap_len; v++)
		*graph__marr_u32(&b->vmap, (uint32_t)v) =
			v < len ? (uint32_t)v : GRAPH__NONE;
	*graph__marr_u32(&b->vmap, (uint32_t)vid) = id;
	return 0;
}

/* ---- domain names ---- */

/* strcmp() of a key of `len` bytes with a NUL-terminated name. */
static int cmp_key(const char *key, size_t len, const char *name)
{
	int c = strncmp(key, name, len);

	return c ? c : name[len] ? -1 : 0;
}

/* Reversed name of domain `id`. */
const char *graph__dom_rev(graph__builder *b, uint32_t id)
{
	graph__names *nm = b->names;
	const uint64_t *off;

	if (id >= b->base)
		return graph__dict_str(&b->doms, id - b->base);
	off = graph__marr_at(&nm->off, (size_t)id * sizeof(uint64_t),
			     sizeof(uint64_t));
	return graph__marr_at(&nm->str, *off, GRAPH_DOMAIN_MAX + 1);
}

static int names_find(graph__builder *b, const char *key, size_t len,
		      uint32_t *id)
{
	graph__names *nm = b->names;
	const uint32_t *name = (const uint32_t *)nm->fence_name.p;
	const uint64_t *at = (const uint64_t *)nm->fence_at.p;
	size_t n = nm->fence_name.len / sizeof(uint32_t), lo = 0, hi = n;
	size_t span;
	const char *s;
	uint32_t i, end;

	/* the last fence name not after the key */
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (cmp_key(key, len, nm->fence.p + name[mid]) < 0)
			hi = mid;
		else
			lo = mid + 1;
	}
	if (lo == 0)
		return SEO_ENOTFOUND;
	i = (uint32_t)(lo - 1) * FENCE_EVERY;
	end = b->base - i > FENCE_EVERY ? i + FENCE_EVERY : b->base;
	span = (lo < n ? at[lo] : nm->str.len) - at[lo - 1];
	if (!nm->pread) {
		s = graph__marr_at(&nm->str, at[lo - 1], span);
	} else if (pread(nm->str.fd, nm->blk, span, (off_t)at[lo - 1]) ==
		   (ssize_t)span) {
		s = nm->blk;
	} else {
		log_error("cannot read domrev.str: %s", strerror(errno));
		return SEO_EIO;
	}
	for (; i < end; i++, s += strlen(s) + 1) {
		int c = cmp_key(key, len, s);

		if (c <= 0) {
			*id = i;
			return c ? SEO_ENOTFOUND : 0;
		}
	}
	return SEO_ENOTFOUND;
}

/* Keeps every FENCE_EVERY-th name in memory, charged as a dictionary. */
static int fence_add(graph__builder *b, const char *rev, size_t len)
{
	graph__names *nm = b->names;
	size_t before = nm->fence.cap + nm->fence_name.cap + nm->fence_at.cap;
	uint32_t where = (uint32_t)nm->fence.len;
	int rc;

	if (nm->fence.len + len + 1 > UINT32_MAX)
		return SEO_ETOOBIG;
	if ((rc = graph__buf_put(&nm->fence_name, &where, sizeof(where))) ||
	    (rc = graph__buf_put(&nm->fence_at, &nm->rev.bytes,
				 sizeof(nm->rev.bytes))) ||
	    (rc = graph__buf_put(&nm->fence, rev, len)) ||
	    (rc = graph__buf_put(&nm->fence, "", 1)))
		return rc;
	before = nm->fence.cap + nm->fence_name.cap + nm->fence_at.cap - before;
	nm->fence_charged += before;
	return before ? graph__dict_grew(b, before) : 0;
}

static int names_stream(graph__builder *b, const char *rev, size_t len)
{
	graph__names *nm = b->names;
	char fwd[GRAPH_DOMAIN_MAX + 1];
	int rc;

	if (nm->state == NAMES_OPEN) {
		if ((rc = graph__w_open(&nm->rev, b->dir, "domrev.str")) ||
		    (rc = graph__w_open(&nm->rev_off, b->dir, "domrev.off")) ||
		    (rc = graph__w_open(&nm->fwd, b->dir, "domfwd.str")) ||
		    (rc = graph__w_open(&nm->fwd_off, b->dir, "domfwd.off")))
			return rc;
		nm->state = NAMES_STREAM;
	}
	if (b->base % FENCE_EVERY == 0 && (rc = fence_add(b, rev, len)))
		return rc;
	graph_reverse_labels(rev, len, fwd);
	if ((rc = graph__w_put(&nm->rev_off, &nm->rev.bytes,
			       sizeof(uint64_t))) ||
	    (rc = graph__w_put(&nm->rev, rev, len)) ||
	    (rc = graph__w_put(&nm->rev, "", 1)) ||
	    (rc = graph__w_put(&nm->fwd_off, &nm->fwd.bytes,
			       sizeof(uint64_t))) ||
	    (rc = graph__w_put(&nm->fwd, fwd, len + 1)))
		return rc;
	memcpy(nm->last, rev, len);
	nm->last[len] = '\0';
	return 0;
}

/*
 * The vertices are read: their names are mapped. Lookups read them at
 * random, so the mapping serves them only when it can stay resident
 * whole within an eighth of the budget; else each lookup reads its block
 * of names (from the page cache) rather than fault pages in and out.
 */
int graph__names_seal(graph__builder *b)
{
	graph__names *nm = b->names;
	size_t whole;
	int rc;

	if (nm->state != NAMES_STREAM)
		return 0;
	nm->state = NAMES_SORTED;
	if ((rc = graph__w_close(&nm->rev)) ||
	    (rc = graph__w_close(&nm->rev_off)) ||
	    (rc = graph__w_close(&nm->fwd)) ||
	    (rc = graph__w_close(&nm->fwd_off)) ||
	    (rc = graph__b_map(b, &nm->off, "domrev.off", b->mem.cap / 32)) ||
	    (rc = graph__b_map(b, &nm->str, "domrev.str", b->mem.cap / 8)))
		return rc;
	whole = graph__marr_fit(nm->str.len);
	if (whole <= nm->str.max_share && (rc = graph__mem_make_room(b, whole)))
		return rc;
	graph__marr_reserve(&nm->str, whole);
	nm->pread = nm->str.share < whole;
	if (nm->pread)
		graph__marr_shrink(&nm->str);
	return 0;
}

/* Gives back what the fence holds. */
void graph__fence_free(graph__builder *b)
{
	graph__names *nm = b->names;

	b->dict_charged -= nm->fence_charged;
	b->mem.used -= nm->fence_charged;
	nm->fence_charged = 0;
	free(nm->fence.p);
	free(nm->fence_name.p);
	free(nm->fence_at.p);
	memset(&nm->fence, 0, sizeof(nm->fence));
	memset(&nm->fence_name, 0, sizeof(nm->fence_name));
	memset(&nm->fence_at, 0, sizeof(nm->fence_at));
}

/* The vertices file is not in byte order after all: every name so far
 * goes to the hash table, where it gets the id it has, and the files go
 * (they are written whole at the end). */
static int names_to_dict(graph__builder *b)
{
	graph__names *nm = b->names;
	static const char *const files[] = { "domrev.str", "domrev.off",
					     "domfwd.str", "domfwd.off" };
	char path[8400];
	int rc = graph__names_seal(b);

	for (uint32_t i = 0; !rc && i < b->base; i++) {
		const char *r = graph__dom_rev(b, i);
		uint32_t id;

		rc = graph__b_intern(b, &b->doms, r, strlen(r), &id);
	}
	if (rc)
		return rc;
	b->base = 0;
	nm->state = NAMES_DICT;
	graph__fence_free(b);
	graph__marr_close(&nm->off);
	graph__marr_close(&nm->str);
	for (size_t i = 0; i < sizeof(files) / sizeof(files[0]); i++) {
		snprintf(path, sizeof(path), "%s/%s", b->dir, files[i]);
		unlink(path);
	}
	return 0;
}

void graph__names_free(graph__builder *b)
{
	graph__names *nm = b->names;

	if (!nm)
		return;
	if (nm->rev.f)
		fclose(nm->rev.f);
	if (nm->rev_off.f)
		fclose(nm->rev_off.f);
	if (nm->fwd.f)
		fclose(nm->fwd.f);
	if (nm->fwd_off.f)
		fclose(nm->fwd_off.f);
	graph__marr_close(&nm->off);
	graph__marr_close(&nm->str);
	graph__fence_free(b);
	free(nm);
	b->names = NULL;
}

int graph__b_vertex(graph__builder *b, const char *rev, size_t len,
		    uint32_t *id)
{
	graph__names *nm = b->names;
	int rc;

	if (nm->state == NAMES_OPEN ||
	    (nm->state == NAMES_STREAM && cmp_key(rev, len, nm->last) > 0)) {
		rc = names_stream(b, rev, len);
		if (!rc)
			rc = new_domain(b, b->base);
		if (!rc)
			*id = b->base++;
		return rc;
	}
	if (nm->state == NAMES_STREAM) {
		log_info("the vertices file is not in byte order at \"%s\": "
			 "domain names are kept in memory", rev);
		rc = names_to_dict(b);
		if (rc)
			return rc;
	}
	return graph__b_domain_rev(b, rev, len, id);
}

int graph__b_domain_rev(graph__builder *b, const char *rev, size_t len,
			uint32_t *id)
{
	graph__names *nm = b->names;
	uint32_t before = b->doms.n, did;
	int rc;

	if (nm->state == NAMES_STREAM && (rc = graph__names_seal(b)))
		return rc;
	if (nm->state == NAMES_OPEN)
		nm->state = NAMES_DICT;
	if (b->base > 0 && names_find(b, rev, len, id) == 0)
		return 0;
	rc = graph__b_intern(b, &b->doms, rev, len, &did);
	if (rc)
		return rc;
	*id = b->base + did;
	return b->doms.n == before ? 0 : new_domain(b, *id);
}

int graph__b_domain(graph__builder *b, const char *domain, uint32_t *id)
{
	char rev[GRAPH_DOMAIN_MAX + 1];
	size_t len = strlen(domain);

	if (len > GRAPH_DOMAIN_MAX)
		return SEO_EINVAL;
	graph_reverse_labels(domain, len, rev);
	return graph__b_domain_rev(b, rev, len, id);
}

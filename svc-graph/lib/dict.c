/*
 * dict.c: string interning for the ingest (domains, URLs, anchors and
 * small strings): ids in first-seen order, open addressing on a 64-bit
 * FNV-1a hash.
 */
#include <stdlib.h>
#include <string.h>

#include <seo/errors.h>

#include "internal.h"

static uint64_t hash(const char *s, size_t len)
{
	uint64_t h = 1469598103934665603ULL;

	for (size_t i = 0; i < len; i++) {
		h ^= (unsigned char)s[i];
		h *= 1099511628211ULL;
	}
	return h;
}

static int matches(const graph__dict *d, uint32_t id, const char *s,
		   size_t len)
{
	const char *t = graph__dict_str(d, id);

	return strncmp(t, s, len) == 0 && t[len] == '\0';
}

static int grow(graph__dict *d)
{
	uint32_t nslots = d->nslots ? d->nslots * 2 : 1024;
	uint32_t *slots = malloc((size_t)nslots * sizeof(*slots));

	if (!slots)
		return SEO_ENOMEM;
	memset(slots, 0xff, (size_t)nslots * sizeof(*slots));
	for (uint32_t id = 0; id < d->n; id++) {
		const char *t = graph__dict_str(d, id);
		uint32_t i = (uint32_t)hash(t, strlen(t)) & (nslots - 1);

		while (slots[i] != GRAPH__NONE)
			i = (i + 1) & (nslots - 1);
		slots[i] = id;
	}
	free(d->slots);
	d->slots = slots;
	d->nslots = nslots;
	return 0;
}

int graph__dict_find(const graph__dict *d, const char *s, size_t len,
		     uint32_t *id)
{
	uint32_t i;

	if (!d->nslots)
		return SEO_ENOTFOUND;
	i = (uint32_t)hash(s, len) & (d->nslots - 1);
	while (d->slots[i] != GRAPH__NONE) {
		if (matches(d, d->slots[i], s, len)) {
			*id = d->slots[i];
			return 0;
		}
		i = (i + 1) & (d->nslots - 1);
	}
	return SEO_ENOTFOUND;
}

int graph__dict_intern(graph__dict *d, const char *s, size_t len,
		       uint32_t *id)
{
	uint32_t i;
	int rc;

	if (graph__dict_find(d, s, len, id) == 0)
		return 0;
	if (d->n >= GRAPH__NONE - 1)
		return SEO_ETOOBIG;
	/* keep the table at most half full */
	if ((uint64_t)(d->n + 1) * 2 > d->nslots) {
		rc = grow(d);
		if (rc)
			return rc;
	}
	if (d->n == d->ocap) {
		uint32_t cap = d->ocap ? d->ocap * 2 : 1024;
		uint64_t *off = realloc(d->off, (size_t)cap * sizeof(*off));

		if (!off)
			return SEO_ENOMEM;
		d->off = off;
		d->ocap = cap;
	}
	d->off[d->n] = d->blob.len;
	rc = graph__buf_put(&d->blob, s, len);
	if (!rc)
		rc = graph__buf_put(&d->blob, "", 1);
	if (rc)
		return rc;
	i = (uint32_t)hash(s, len) & (d->nslots - 1);
	while (d->slots[i] != GRAPH__NONE)
		i = (i + 1) & (d->nslots - 1);
	d->slots[i] = d->n;
	*id = d->n++;
	return 0;
}

size_t graph__dict_bytes(const graph__dict *d)
{
	return d->blob.cap + (size_t)d->ocap * sizeof(*d->off) +
	       (size_t)d->nslots * sizeof(*d->slots);
}

void graph__dict_freeze(graph__dict *d)
{
	free(d->slots);
	d->slots = NULL;
	d->nslots = 0;
}

void graph__dict_free(graph__dict *d)
{
	free(d->blob.p);
	free(d->off);
	free(d->slots);
	memset(d, 0, sizeof(*d));
}

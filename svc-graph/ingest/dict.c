/*
 * dict.c: string interning for the ingest (domains, URLs, anchors and
 * small strings): ids in first-seen order, open addressing on a 64-bit
 * FNV-1a hash; and the dictionaries of URLs and anchors that spill sorted
 * runs to disk when the budget is short, their final ids given by a merge.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <seo/errors.h>
#include <seo/log.h>

#include "ingest.h"

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

/* ---- dictionaries that spill ---- */

/* Past this many runs on disk they are merged into one: a run is an open
 * file and a read buffer. */
#define SD_MAX_RUNS 32
#define SD_RUN_BUF ((size_t)64 << 10)

/* A sorted generation: on disk (f) or, while merging, the one in memory
 * (perm: cur's ids in string order). */
struct graph__srun {
	FILE *f;
	char *buf;         /* the current string of a run on disk */
	size_t cap;
	const uint32_t *perm;
	uint32_t i, n;
	const char *str;   /* the current string, NULL when drained */
	uint32_t tmp;      /* its temporary id */
};

static void charge(graph__sdict *d, size_t bytes)
{
	d->charged += bytes;
	d->pool->used += bytes;
}

static void uncharge(graph__sdict *d, size_t bytes)
{
	d->charged -= bytes;
	d->pool->used -= bytes;
}

int graph__sdict_init(graph__sdict *d, const char *tmp_dir, graph__mem *pool)
{
	memset(d, 0, sizeof(*d));
	d->pool = pool;
	graph__marr_init(&d->map);
	if ((size_t)snprintf(d->tmp_dir, sizeof(d->tmp_dir), "%s", tmp_dir) >=
	    sizeof(d->tmp_dir))
		return SEO_EINVAL;
	return 0;
}

int graph__sdict_intern(graph__sdict *d, const char *s, size_t len,
			uint32_t *tmp)
{
	size_t before = graph__dict_bytes(&d->cur), after;
	uint32_t id;
	int rc;

	if (d->merging)
		return SEO_EINVAL;
	if ((uint64_t)d->base + d->cur.n >= GRAPH__NONE - 1)
		return SEO_ETOOBIG;
	rc = graph__dict_intern(&d->cur, s, len, &id);
	if (rc)
		return rc;
	after = graph__dict_bytes(&d->cur);
	if (after > before)
		charge(d, after - before);
	*tmp = d->base + id;
	return 0;
}

size_t graph__sdict_held(const graph__sdict *d)
{
	return d->merging ? 0 : graph__dict_bytes(&d->cur);
}

uint32_t graph__sdict_tmp_ids(const graph__sdict *d)
{
	return d->base + d->cur.n;
}

static int cmp_str_id(const void *pa, const void *pb, void *ctx)
{
	const graph__dict *d = ctx;

	return strcmp(graph__dict_str(d, *(const uint32_t *)pa),
		      graph__dict_str(d, *(const uint32_t *)pb));
}

/* cur's ids in string order, once its hash table is gone (the order takes
 * less than the table gave back). */
static int sort_cur(graph__sdict *d, uint32_t **perm)
{
	size_t before = graph__dict_bytes(&d->cur);

	graph__dict_freeze(&d->cur);
	uncharge(d, before - graph__dict_bytes(&d->cur));
	*perm = malloc(((size_t)d->cur.n + 1) * sizeof(**perm));
	if (!*perm)
		return SEO_ENOMEM;
	for (uint32_t i = 0; i < d->cur.n; i++)
		(*perm)[i] = i;
	qsort_r(*perm, d->cur.n, sizeof(**perm), cmp_str_id, &d->cur);
	return 0;
}

/* A run holds (temporary id, length, bytes) per string, ascending. */
static int run_put(FILE *f, uint32_t tmp, const char *s)
{
	uint32_t h[2] = { tmp, (uint32_t)strlen(s) };

	if (fwrite(h, sizeof(h), 1, f) != 1 ||
	    (h[1] > 0 && fwrite(s, h[1], 1, f) != 1))
		return SEO_EIO;
	return 0;
}

/* A new run on disk, ready for writing, charged its read buffer. */
static int run_new(graph__sdict *d, FILE **f)
{
	int fd, rc = graph__tmp_fd(d->tmp_dir, "dictionary run", &fd);

	if (rc)
		return rc;
	*f = fdopen(fd, "w+b");
	if (!*f) {
		close(fd);
		return SEO_ENOMEM;
	}
	setvbuf(*f, NULL, _IOFBF, SD_RUN_BUF);
	charge(d, SD_RUN_BUF);
	return 0;
}

static int run_add(graph__sdict *d, FILE *f)
{
	struct graph__srun *r = realloc(d->runs,
					(d->n_runs + 2) * sizeof(*r));

	if (!r)
		return SEO_ENOMEM;
	d->runs = r;
	memset(&r[d->n_runs], 0, sizeof(*r));
	r[d->n_runs++].f = f;
	d->spilled++;
	return 0;
}

static void run_close(graph__sdict *d, struct graph__srun *r)
{
	if (r->f) {
		fclose(r->f);
		uncharge(d, SD_RUN_BUF);
	}
	free(r->buf);
	memset(r, 0, sizeof(*r));
}

/* Loads the next string of run i, str NULL at its end: from its file,
 * or for the run in memory from cur. */
static int advance(graph__sdict *d, size_t i)
{
	struct graph__srun *r = &d->runs[i];
	uint32_t h[2];

	r->str = NULL;
	if (!r->f) {
		if (r->i < r->n) {
			r->str = graph__dict_str(&d->cur, r->perm[r->i]);
			r->tmp = d->base + r->perm[r->i++];
		}
		return 0;
	}
	if (fread(h, sizeof(h), 1, r->f) != 1)
		return ferror(r->f) ? SEO_EIO : 0;
	if ((size_t)h[1] + 1 > r->cap) {
		char *p = realloc(r->buf, (size_t)h[1] + 1);

		if (!p)
			return SEO_ENOMEM;
		r->buf = p;
		r->cap = (size_t)h[1] + 1;
	}
	if (h[1] > 0 && fread(r->buf, h[1], 1, r->f) != 1)
		return SEO_EIO;
	r->buf[h[1]] = '\0';
	r->str = r->buf;
	r->tmp = h[0];
	return 0;
}

/* Ties go to the earlier run: the merge is deterministic. */
static int heap_less(const void *ctx, size_t a, size_t b)
{
	const graph__sdict *d = ctx;
	int c = strcmp(d->runs[a].str, d->runs[b].str);

	return c < 0 || (c == 0 && a < b);
}

static void sift_down(graph__sdict *d, size_t i)
{
	graph__sift_down(d->heap, d->heap_len, i, heap_less, d);
}

/* Starts merging runs[0..k): each from its start. */
static int merge_start(graph__sdict *d, size_t k)
{
	int rc;

	free(d->heap);
	d->heap = malloc((k + 1) * sizeof(*d->heap));
	if (!d->heap)
		return SEO_ENOMEM;
	d->heap_len = 0;
	d->popped = SIZE_MAX;
	for (size_t i = 0; i < k; i++) {
		if (d->runs[i].f && (fflush(d->runs[i].f) != 0 ||
				     fseek(d->runs[i].f, 0, SEEK_SET) != 0))
			return SEO_EIO;
		rc = advance(d, i);
		if (rc)
			return rc;
		if (d->runs[i].str)
			d->heap[d->heap_len++] = i;
	}
	for (size_t i = d->heap_len; i-- > 0;)
		sift_down(d, i);
	return 0;
}

/* 1 with the smallest string left (valid until the next call), 0 at the
 * end. The run it came from moves on at the next call. */
static int merge_next(graph__sdict *d, const char **s, uint32_t *tmp)
{
	struct graph__srun *r;
	int rc;

	if (d->popped != SIZE_MAX) {
		rc = advance(d, d->popped);
		if (rc)
			return rc;
		if (!d->runs[d->popped].str)
			d->heap[0] = d->heap[--d->heap_len];
		sift_down(d, 0);
		d->popped = SIZE_MAX;
	}
	if (d->heap_len == 0)
		return 0;
	d->popped = d->heap[0];
	r = &d->runs[d->popped];
	*s = r->str;
	*tmp = r->tmp;
	return 1;
}

/* Merges every run on disk into one. */
static int compact(graph__sdict *d)
{
	FILE *f = NULL;
	const char *s = NULL;
	uint32_t tmp = 0;
	int rc;

	if ((rc = run_new(d, &f)) || (rc = merge_start(d, d->n_runs)))
		goto out;
	while ((rc = merge_next(d, &s, &tmp)) == 1)
		if ((rc = run_put(f, tmp, s)))
			goto out;
	if (rc < 0)
		goto out;
	for (size_t i = 0; i < d->n_runs; i++)
		run_close(d, &d->runs[i]);
	d->n_runs = 0;
	rc = run_add(d, f);
	if (!rc)
		f = NULL;
out:
	if (f) {
		fclose(f);
		uncharge(d, SD_RUN_BUF);
	}
	return rc;
}

int graph__sdict_spill(graph__sdict *d)
{
	uint32_t *perm = NULL;
	FILE *f = NULL;
	int rc;

	if (d->merging || d->cur.n == 0)
		return 0;
	if ((rc = sort_cur(d, &perm)) || (rc = run_new(d, &f)))
		goto out;
	for (uint32_t i = 0; i < d->cur.n; i++) {
		rc = run_put(f, d->base + perm[i],
			     graph__dict_str(&d->cur, perm[i]));
		if (rc) {
			log_error("cannot write dictionary run: %s",
				  strerror(errno));
			goto out;
		}
	}
	if ((rc = run_add(d, f)))
		goto out;
	f = NULL;
	d->base += d->cur.n;
	uncharge(d, graph__dict_bytes(&d->cur));
	graph__dict_free(&d->cur);
	if (d->n_runs >= SD_MAX_RUNS)
		rc = compact(d);
out:
	if (f) {
		fclose(f);
		uncharge(d, SD_RUN_BUF);
	}
	free(perm);
	return rc;
}

int graph__sdict_merge(graph__sdict *d)
{
	struct graph__srun *r;
	int rc;

	if (d->merging)
		return SEO_EINVAL;
	d->merging = 1;
	rc = sort_cur(d, &d->perm);
	if (rc)
		return rc;
	r = realloc(d->runs, (d->n_runs + 1) * sizeof(*r));
	if (!r)
		return SEO_ENOMEM;
	d->runs = r;
	memset(&r[d->n_runs], 0, sizeof(*r));
	r[d->n_runs].perm = d->perm;
	r[d->n_runs].n = d->cur.n;
	return merge_start(d, d->n_runs + 1);
}

int graph__sdict_next(graph__sdict *d, const char **s, uint32_t *tmp,
		      uint32_t *id, int *fresh)
{
	size_t len;
	int rc;

	if (!d->merging)
		return SEO_EINVAL;
	rc = merge_next(d, s, tmp);
	if (rc != 1)
		return rc;
	*fresh = d->n == 0 || strcmp(*s, d->prev) != 0;
	if (*fresh) {
		len = strlen(*s) + 1;
		if (len > d->prev_cap) {
			char *p = realloc(d->prev, len);

			if (!p)
				return SEO_ENOMEM;
			d->prev = p;
			d->prev_cap = len;
		}
		memcpy(d->prev, *s, len);
		d->n++;
	}
	*id = d->n - 1;
	return 1;
}

void graph__sdict_end(graph__sdict *d)
{
	for (size_t i = 0; i < d->n_runs; i++)
		run_close(d, &d->runs[i]);
	d->n_runs = 0;
	free(d->runs);
	d->runs = NULL;
	free(d->heap);
	d->heap = NULL;
	free(d->perm);
	d->perm = NULL;
	free(d->prev);
	d->prev = NULL;
	d->prev_cap = 0;
	uncharge(d, graph__dict_bytes(&d->cur));
	graph__dict_free(&d->cur);
}

void graph__sdict_free(graph__sdict *d)
{
	if (!d->pool)
		return;
	graph__sdict_end(d);
	graph__marr_close(&d->map);
	d->pool->used -= d->charged;
	d->charged = 0;
}

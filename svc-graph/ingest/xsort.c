/*
 * xsort.c: external merge sort of fixed-size records.
 *
 * Records gather in one buffer, which doubles up to the sort's own limit
 * while the ingest's budget has room for it and for the scratch space of
 * sorting it; a full buffer is sorted and written as a run to an unlinked
 * temporary file. finish() sorts what is left; next() then merges the
 * runs and the buffer through a binary heap, so memory stays at the
 * buffer plus one read buffer per run.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <seo/errors.h>
#include <seo/log.h>

#include "ingest.h"

#define RUN_BUF ((size_t)256 << 10)
#define MIN_RUN_BUF ((size_t)16 << 10)
/* Runs on disk at most: past this many, the smallest COMPACT_RUNS are
 * merged into one (a run is an open file and a read buffer). */
#define MAX_RUNS 128
#define COMPACT_RUNS 64
/* The first buffer, taken whatever the budget says: a sort must hold some
 * records to write a run at all. */
#define FIRST_RECS 4096u

typedef struct run {
	int fd;
	uint64_t bytes;  /* written */
	char *buf;
	size_t len, pos;
	const char *cur; /* current record or NULL when drained */
} run;

struct graph__xsort {
	size_t recsize;
	graph__cmp_fn cmp;
	graph__mem *pool;
	size_t charged;  /* bytes taken from the pool */
	char *mem;
	size_t cap_recs, n_recs, mem_pos;
	char tmp_dir[4096];
	run *runs;
	size_t n_runs;
	size_t run_buf;   /* read buffer of each run while merging */
	size_t *heap;     /* indices into runs; runs[n_runs] is the buffer */
	size_t heap_len;
	uint64_t total;
	uint64_t written; /* runs written, merged ones included */
	char *out;       /* the record handed out by next() */
	int finished;
};

int graph__xsort_new(size_t recsize, graph__cmp_fn cmp, size_t mem_bytes,
		     const char *tmp_dir, graph__mem *pool,
		     graph__xsort **out)
{
	graph__xsort *s = calloc(1, sizeof(*s));

	if (!s)
		return SEO_ENOMEM;
	s->recsize = recsize;
	s->cmp = cmp;
	s->pool = pool;
	s->cap_recs = mem_bytes / recsize;
	if (s->cap_recs < FIRST_RECS)
		s->cap_recs = FIRST_RECS;
	snprintf(s->tmp_dir, sizeof(s->tmp_dir), "%s", tmp_dir);
	*out = s;
	return 0;
}

int graph__cmp_pair(const void *pa, const void *pb)
{
	const graph__edge *a = pa, *b = pb;

	if (a->a != b->a)
		return a->a < b->a ? -1 : 1;
	return a->b < b->b ? -1 : a->b > b->b;
}

/* LSD radix sort of (a, b) pairs as 64-bit keys, 16 bits a pass: the
 * domain graph's sorts are most of an ingest, and a comparison sort
 * through a function pointer is several times slower. */
static int radix_pairs(graph__edge *v, size_t n)
{
	uint64_t *k = (uint64_t *)v, *tmp = malloc(n * sizeof(uint64_t));
	size_t *cnt = malloc(65536 * sizeof(size_t));
	int rc = 0;

	if (!tmp || !cnt) {
		rc = SEO_ENOMEM;
		goto out;
	}
	for (size_t i = 0; i < n; i++) {
		graph__edge e = v[i];

		k[i] = (uint64_t)e.a << 32 | e.b;
	}
	for (unsigned shift = 0; shift < 64; shift += 16) {
		size_t sum = 0;

		memset(cnt, 0, 65536 * sizeof(size_t));
		for (size_t i = 0; i < n; i++)
			cnt[(k[i] >> shift) & 0xffff]++;
		/* all keys share this digit: the pass would change nothing */
		if (n == 0 || cnt[(k[0] >> shift) & 0xffff] == n)
			continue;
		for (size_t d = 0; d < 65536; d++) {
			size_t c = cnt[d];

			cnt[d] = sum;
			sum += c;
		}
		for (size_t i = 0; i < n; i++)
			tmp[cnt[(k[i] >> shift) & 0xffff]++] = k[i];
		memcpy(k, tmp, n * sizeof(uint64_t));
	}
	for (size_t i = 0; i < n; i++) {
		uint64_t x = k[i];

		v[i].a = (uint32_t)(x >> 32);
		v[i].b = (uint32_t)x;
	}
out:
	free(tmp);
	free(cnt);
	return rc;
}

static int sort_buffer(graph__xsort *s)
{
	if (!s->cmp)
		return 0;
	if (s->cmp == graph__cmp_pair)
		return radix_pairs((graph__edge *)s->mem, s->n_recs);
	qsort(s->mem, s->n_recs, s->recsize, s->cmp);
	return 0;
}

static int write_all(int fd, const char *p, size_t n)
{
	while (n > 0) {
		ssize_t w = write(fd, p, n);

		if (w < 0) {
			if (errno == EINTR)
				continue;
			return SEO_EIO;
		}
		p += w;
		n -= (size_t)w;
	}
	return 0;
}

static int add_run(graph__xsort *s, int fd, uint64_t bytes)
{
	run *runs = realloc(s->runs, (s->n_runs + 2) * sizeof(*runs));

	if (!runs)
		return SEO_ENOMEM;
	s->runs = runs;
	memset(&s->runs[s->n_runs], 0, sizeof(run));
	s->runs[s->n_runs].fd = fd;
	s->runs[s->n_runs++].bytes = bytes;
	s->written++;
	return 0;
}

static int compact(graph__xsort *s);

static int spill(graph__xsort *s)
{
	int fd, rc;

	rc = sort_buffer(s);
	if (!rc)
		rc = graph__tmp_fd(s->tmp_dir, "sort run", &fd);
	if (rc)
		return rc;
	rc = write_all(fd, s->mem, s->n_recs * s->recsize);
	if (rc)
		log_error("cannot write sort run: %s", strerror(errno));
	if (!rc)
		rc = add_run(s, fd, (uint64_t)s->n_recs * s->recsize);
	if (rc) {
		close(fd);
		return rc;
	}
	s->n_recs = 0;
	return s->n_runs < MAX_RUNS ? 0 : compact(s);
}

static void charge(graph__xsort *s, size_t bytes)
{
	s->charged += bytes;
	if (s->pool)
		s->pool->used += bytes;
}

static void uncharge(graph__xsort *s, size_t bytes)
{
	s->charged -= bytes;
	if (s->pool)
		s->pool->used -= bytes;
}

/* Makes room for one more record: a bigger buffer when the sort's limit
 * and the pool allow it (twice its size: the sorts need as much scratch),
 * else the buffer written out as a run. Up to a sixteenth of its limit
 * the buffer grows whatever the pool says, so that runs are never tiny. */
static int make_room(graph__xsort *s)
{
	size_t cap = s->mem_pos ? s->mem_pos * 2 : FIRST_RECS;
	size_t more;
	char *p;

	if (cap > s->cap_recs)
		cap = s->cap_recs;
	more = 2 * (cap - s->mem_pos) * s->recsize;
	if (cap == s->mem_pos ||
	    (s->mem_pos >= s->cap_recs / 16 && s->pool &&
	     graph__mem_free(s->pool) < more))
		return spill(s);
	p = realloc(s->mem, cap * s->recsize);
	if (!p)
		return SEO_ENOMEM;
	s->mem = p;
	s->mem_pos = cap;
	charge(s, more);
	return 0;
}

int graph__xsort_add(graph__xsort *s, const void *rec)
{
	if (s->n_recs == s->mem_pos) {
		int rc = make_room(s);

		if (rc)
			return rc;
	}
	memcpy(s->mem + s->n_recs * s->recsize, rec, s->recsize);
	s->n_recs++;
	s->total++;
	return 0;
}

int graph__xsort_release(graph__xsort *s)
{
	int rc;

	if (s->finished || !s->mem)
		return 0;
	if (s->n_recs > 0 && (rc = spill(s)))
		return rc;
	free(s->mem);
	s->mem = NULL;
	s->mem_pos = 0;
	uncharge(s, s->charged);
	return 0;
}

size_t graph__xsort_held(const graph__xsort *s)
{
	return s->finished || !s->mem ? 0 : s->charged;
}

/* Loads the next record of run i (the in-memory buffer when i == n_runs). */
static int advance(graph__xsort *s, size_t i)
{
	run *r = &s->runs[i];

	if (i == s->n_runs) {
		r->cur = r->pos < s->n_recs ? s->mem + r->pos * s->recsize :
					      NULL;
		r->pos++;
		return 0;
	}
	if (r->pos + s->recsize > r->len) {
		size_t keep = r->len - r->pos;
		ssize_t got;

		memmove(r->buf, r->buf + r->pos, keep);
		r->len = keep;
		r->pos = 0;
		do {
			got = read(r->fd, r->buf + r->len, s->run_buf - r->len);
		} while (got < 0 && errno == EINTR);
		if (got < 0)
			return SEO_EIO;
		r->len += (size_t)got;
		if (r->len < s->recsize) {
			r->cur = NULL;
			return 0;
		}
	}
	r->cur = r->buf + r->pos;
	r->pos += s->recsize;
	return 0;
}

static int heap_less(const void *ctx, size_t a, size_t b)
{
	const graph__xsort *s = ctx;
	int c = s->cmp ? s->cmp(s->runs[a].cur, s->runs[b].cur) : 0;

	/* ties by run index keep the merge stable and deterministic */
	return c < 0 || (c == 0 && a < b);
}

void graph__sift_down(size_t *heap, size_t len, size_t i,
		      int (*less)(const void *ctx, size_t a, size_t b),
		      const void *ctx)
{
	for (;;) {
		size_t l = 2 * i + 1, r = l + 1, m = i, t;

		if (l < len && less(ctx, heap[l], heap[m]))
			m = l;
		if (r < len && less(ctx, heap[r], heap[m]))
			m = r;
		if (m == i)
			return;
		t = heap[i];
		heap[i] = heap[m];
		heap[m] = t;
		i = m;
	}
}

/* Sets the merge up over the first `n` runs on disk, and the buffer when
 * `with_buffer`, each run with a read buffer of what the pool has left
 * for them. */
static int merge_start(graph__xsort *s, size_t n, int with_buffer)
{
	int rc;

	s->run_buf = RUN_BUF;
	if (s->pool && n > 0 && graph__mem_free(s->pool) / n < RUN_BUF)
		s->run_buf = graph__mem_free(s->pool) / n;
	if (s->run_buf < MIN_RUN_BUF)
		s->run_buf = MIN_RUN_BUF;
	s->run_buf -= s->run_buf % s->recsize;
	s->heap_len = 0;
	free(s->heap);
	s->heap = calloc(s->n_runs + 1, sizeof(size_t));
	if (!s->heap)
		return SEO_ENOMEM;
	for (size_t i = 0; i < n; i++) {
		run *r = &s->runs[i];

		r->len = r->pos = 0;
		if (lseek(r->fd, 0, SEEK_SET) < 0)
			return SEO_EIO;
		r->buf = malloc(s->run_buf);
		if (!r->buf)
			return SEO_ENOMEM;
		charge(s, s->run_buf);
		if ((rc = advance(s, i)))
			return rc;
		if (r->cur)
			s->heap[s->heap_len++] = i;
	}
	if (with_buffer) {
		memset(&s->runs[s->n_runs], 0, sizeof(run));
		s->runs[s->n_runs].fd = -1;
		advance(s, s->n_runs);
		if (s->runs[s->n_runs].cur)
			s->heap[s->heap_len++] = s->n_runs;
	}
	for (size_t i = s->heap_len; i-- > 0;)
		graph__sift_down(s->heap, s->heap_len, i, heap_less, s);
	return 0;
}

/* The next record of the merge into s->out: 1, 0 at the end, or SEO_EIO. */
static int merge_next(graph__xsort *s)
{
	size_t top;
	int rc;

	if (s->heap_len == 0)
		return 0;
	top = s->heap[0];
	/* copied out: advancing may refill the run's buffer under it */
	memcpy(s->out, s->runs[top].cur, s->recsize);
	rc = advance(s, top);
	if (rc)
		return rc;
	if (!s->runs[top].cur)
		s->heap[0] = s->heap[--s->heap_len];
	if (s->heap_len)
		graph__sift_down(s->heap, s->heap_len, 0, heap_less, s);
	return 1;
}

static int cmp_run_bytes(const void *pa, const void *pb)
{
	const run *a = pa, *b = pb;

	return (a->bytes > b->bytes) - (a->bytes < b->bytes);
}

/*
 * Merges the COMPACT_RUNS smallest runs on disk into one: runs stay few
 * (open files, read buffers) however small the buffer and large the
 * input, and merging the smallest keeps the rewriting to a few passes.
 */
static int compact(graph__xsort *s)
{
	size_t n = COMPACT_RUNS, out_len = 0;
	uint64_t bytes = 0;
	char *out_buf = malloc(RUN_BUF);
	int fd = -1, rc;

	if (!out_buf || (!s->out && !(s->out = malloc(s->recsize)))) {
		rc = SEO_ENOMEM;
		goto out;
	}
	qsort(s->runs, s->n_runs, sizeof(run), cmp_run_bytes);
	if ((rc = graph__tmp_fd(s->tmp_dir, "sort run", &fd)) ||
	    (rc = merge_start(s, n, 0)))
		goto out;
	while ((rc = merge_next(s)) == 1) {
		if (out_len + s->recsize > RUN_BUF) {
			if ((rc = write_all(fd, out_buf, out_len)))
				goto out;
			out_len = 0;
		}
		memcpy(out_buf + out_len, s->out, s->recsize);
		out_len += s->recsize;
		bytes += s->recsize;
	}
	if (rc < 0 || (rc = write_all(fd, out_buf, out_len)))
		goto out;
	for (size_t i = 0; i < n; i++) {
		close(s->runs[i].fd);
		free(s->runs[i].buf);
		uncharge(s, s->run_buf);
	}
	memmove(s->runs, s->runs + n, (s->n_runs - n) * sizeof(run));
	s->n_runs -= n;
	rc = add_run(s, fd, bytes);
	if (!rc)
		fd = -1;
out:
	if (rc)
		log_error("cannot merge sort runs: %s", seo_strerror(rc));
	if (fd >= 0)
		close(fd);
	free(out_buf);
	return rc;
}

int graph__xsort_finish(graph__xsort *s)
{
	int rc;

	if (s->n_recs > 0 && (rc = sort_buffer(s)))
		return rc;
	/* sorted for the last time: the scratch is given back */
	uncharge(s, s->mem_pos * s->recsize);
	if (!s->runs) {
		s->runs = calloc(1, sizeof(run));
		if (!s->runs)
			return SEO_ENOMEM;
	}
	s->out = s->out ? s->out : malloc(s->recsize);
	if (!s->out)
		return SEO_ENOMEM;
	rc = merge_start(s, s->n_runs, 1);
	if (rc)
		return rc;
	s->finished = 1;
	return 0;
}

int graph__xsort_next(graph__xsort *s, const void **rec)
{
	int rc;

	if (!s->finished)
		return 0;
	rc = merge_next(s);
	if (rc == 1)
		*rec = s->out;
	return rc;
}

uint64_t graph__xsort_count(const graph__xsort *s)
{
	return s->total;
}

uint64_t graph__xsort_runs(const graph__xsort *s)
{
	return s->written;
}

void graph__xsort_free(graph__xsort *s)
{
	if (!s)
		return;
	for (size_t i = 0; i < s->n_runs; i++) {
		close(s->runs[i].fd);
		free(s->runs[i].buf);
	}
	free(s->runs);
	free(s->heap);
	free(s->out);
	free(s->mem);
	uncharge(s, s->charged);
	free(s);
}

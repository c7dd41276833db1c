/*
 * marr.c: file-backed arrays whose resident pages are bounded
 * (graph__marr, ingest.h).
 */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <seo/errors.h>
#include <seo/log.h>

#include "ingest.h"

/* File-backed arrays grow by half, at least this much. */
#define MARR_STEP ((size_t)1 << 20)
/* The share a file-backed array takes whatever the pool says. */
#define MARR_MIN_SHARE ((size_t)4 << GRAPH__BLOCK_SHIFT)

void graph__marr_init(graph__marr *m)
{
	memset(m, 0, sizeof(*m));
	m->fd = -1;
}

/* Words of the bitmap of blocks of `mapped` bytes, with a spare block
 * for accesses that read a little past the end (a name at the last
 * offset). */
static size_t marr_words(size_t mapped)
{
	return ((mapped >> GRAPH__BLOCK_SHIFT) + 2 + 63) / 64;
}

size_t graph__marr_fit(size_t len)
{
	/* a partial last block, and the spare one */
	return ((len >> GRAPH__BLOCK_SHIFT) + 2) << GRAPH__BLOCK_SHIFT;
}

static int marr_blocks(graph__marr *m, size_t mapped)
{
	size_t had = m->seen ? marr_words(m->mapped) : 0;
	size_t words = marr_words(mapped);
	uint64_t *seen;

	if (words <= had)
		return 0;
	seen = realloc(m->seen, words * sizeof(*seen));
	if (!seen)
		return SEO_ENOMEM;
	memset(seen + had, 0, (words - had) * sizeof(*seen));
	m->seen = seen;
	return 0;
}

int graph__marr_create(graph__marr *m, const char *dir, const char *name,
		       graph__mem *pool, size_t max_share)
{
	char path[4200];

	graph__marr_init(m);
	m->pool = pool;
	m->max_share = max_share;
	if (marr_blocks(m, 0))
		return SEO_ENOMEM;
	if (name) {
		snprintf(path, sizeof(path), "%s/%s", dir, name);
		m->fd = open(path, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC,
			     0644);
	} else {
		snprintf(path, sizeof(path), "%s/seo-ingest-array-XXXXXX", dir);
		m->fd = mkostemp(path, O_CLOEXEC);
		/* unlinked at once: nothing is left behind, whatever happens */
		if (m->fd >= 0)
			unlink(path);
	}
	if (m->fd < 0) {
		log_error("cannot create \"%s\": %s", path, strerror(errno));
		return SEO_EIO;
	}
	return 0;
}

int graph__marr_open(graph__marr *m, const char *path, graph__mem *pool,
		     size_t max_share)
{
	struct stat st;
	void *p;

	graph__marr_init(m);
	m->pool = pool;
	m->max_share = max_share;
	m->fd = open(path, O_RDONLY | O_CLOEXEC);
	if (m->fd < 0 || fstat(m->fd, &st) != 0) {
		log_error("cannot open \"%s\": %s", path, strerror(errno));
		return SEO_EIO;
	}
	if (marr_blocks(m, (size_t)st.st_size))
		return SEO_ENOMEM;
	m->len = m->mapped = (size_t)st.st_size;
	if (m->len == 0)
		return 0;
	p = mmap(NULL, m->len, PROT_READ, MAP_SHARED, m->fd, 0);
	if (p == MAP_FAILED) {
		log_error("cannot map \"%s\": %s", path, strerror(errno));
		return SEO_EIO;
	}
	m->p = p;
	return 0;
}

int graph__marr_resize(graph__marr *m, size_t len)
{
	size_t page = (size_t)sysconf(_SC_PAGESIZE);
	size_t want = m->mapped + m->mapped / 2;
	void *p;

	if (len <= m->mapped) {
		m->len = len;
		return 0;
	}
	if (want < m->mapped + MARR_STEP)
		want = m->mapped + MARR_STEP;
	if (want < len)
		want = len;
	want = (want + page - 1) & ~(page - 1);
	if (marr_blocks(m, want))
		return SEO_ENOMEM;
	if (ftruncate(m->fd, (off_t)want) != 0) {
		log_error("cannot grow a file-backed array to %zu bytes: %s",
			  want, strerror(errno));
		return SEO_EIO;
	}
	p = m->p ? mremap(m->p, m->mapped, want, MREMAP_MAYMOVE) :
		   mmap(NULL, want, PROT_READ | PROT_WRITE, MAP_SHARED, m->fd,
			0);
	if (p == MAP_FAILED) {
		log_error("cannot map a file-backed array of %zu bytes: %s",
			  want, strerror(errno));
		return SEO_EIO;
	}
	m->p = p;
	m->mapped = want;
	m->len = len;
	return 0;
}

void graph__marr_reserve(graph__marr *m, size_t bytes)
{
	size_t room = m->max_share > m->share ? m->max_share - m->share : 0;

	if (bytes > room)
		bytes = room;
	if (m->pool && bytes > graph__mem_free(m->pool))
		bytes = graph__mem_free(m->pool);
	m->share += bytes;
	if (m->pool)
		m->pool->used += bytes;
}

static void marr_drop(graph__marr *m)
{
	/* for a shared file mapping this only unmaps: the data stays in
	 * the page cache and the file */
	if (m->p)
		madvise(m->p, m->mapped, MADV_DONTNEED);
	if (m->seen)
		memset(m->seen, 0, marr_words(m->mapped) * sizeof(*m->seen));
	m->touched = 0;
}

void graph__marr_shrink(graph__marr *m)
{
	marr_drop(m);
	if (m->pool)
		m->pool->used -= m->share;
	m->share = 0;
}

void graph__marr_mark(graph__marr *m, size_t blk)
{
	size_t size = (size_t)1 << GRAPH__BLOCK_SHIFT;

	if (m->touched + size > m->share) {
		/* a few blocks whatever the pool says: an access may span
		 * more than one; a scan in order gains nothing from more */
		if (m->share < MARR_MIN_SHARE ||
		    (blk != m->last_blk + 1 &&
		     m->share + size <= m->max_share &&
		     (!m->pool || graph__mem_free(m->pool) >= size))) {
			m->share += size;
			if (m->pool)
				m->pool->used += size;
		} else {
			marr_drop(m);
		}
	}
	m->seen[blk >> 6] |= (uint64_t)1 << (blk & 63);
	m->touched += size;
	m->last_blk = blk;
}

int graph__marr_sync(graph__marr *m)
{
	if (m->p && msync(m->p, m->mapped, MS_SYNC) != 0)
		goto fail;
	if (ftruncate(m->fd, (off_t)m->len) != 0 || fsync(m->fd) != 0)
		goto fail;
	return 0;
fail:
	log_error("cannot write a file-backed array: %s", strerror(errno));
	return SEO_EIO;
}

void graph__marr_close(graph__marr *m)
{
	if (m->p)
		munmap(m->p, m->mapped);
	if (m->fd >= 0)
		close(m->fd);
	if (m->pool)
		m->pool->used -= m->share;
	free(m->seen);
	graph__marr_init(m);
}

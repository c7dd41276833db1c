/*
 * io.c: growable buffers, file-backed arrays, streaming input (plain or
 * gzip), whole-file output and directory removal for the ingest.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <openssl/evp.h>

#include <seo/errors.h>
#include <seo/log.h>

#include "internal.h"

#define READ_CHUNK (1u << 20)
/* A longer line is not a line of any of our formats. */
#define LINE_MAX_BYTES (256u << 20)
/* Past this, buffers grow by a quarter rather than double: what they
 * reserve counts against the ingest's budget. */
#define BUF_DOUBLE_MAX ((size_t)64 << 20)
/* File-backed arrays grow by half, at least this much. */
#define MARR_STEP ((size_t)1 << 20)
/* The share a file-backed array takes whatever the pool says. */
#define MARR_MIN_SHARE ((size_t)4 << GRAPH__BLOCK_SHIFT)

int graph__buf_reserve(graph__buf *b, size_t total)
{
	size_t cap;
	char *p;

	if (total <= b->cap)
		return 0;
	cap = b->cap ? b->cap : 4096;
	while (cap < total)
		cap += cap < BUF_DOUBLE_MAX ? cap : cap / 4;
	p = realloc(b->p, cap);
	if (!p)
		return SEO_ENOMEM;
	b->p = p;
	b->cap = cap;
	return 0;
}

int graph__buf_put(graph__buf *b, const void *data, size_t n)
{
	int rc = graph__buf_reserve(b, b->len + n);

	if (rc)
		return rc;
	memcpy(b->p + b->len, data, n);
	b->len += n;
	return 0;
}

/* ---- file-backed arrays ---- */

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

int graph__reader_open(graph__reader *r, const char *path)
{
	struct stat st;
	int fd;

	memset(r, 0, sizeof(*r));
	r->path = path;
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return errno == ENOENT ? SEO_ENOTFOUND : SEO_EIO;
	if (fstat(fd, &st) == 0)
		r->size = (uint64_t)st.st_size;
	/* gzdopen reads plain files as they are and gzip members back to
	 * back, which is how WAT and CDX files are made */
	r->gz = gzdopen(fd, "rb");
	if (!r->gz) {
		close(fd);
		return SEO_ENOMEM;
	}
	gzbuffer(r->gz, 256 * 1024);
	r->sha = EVP_MD_CTX_new();
	if (!r->sha || EVP_DigestInit_ex(r->sha, EVP_sha256(), NULL) != 1) {
		graph__reader_close(r, NULL);
		return SEO_ENOMEM;
	}
	return 0;
}

/* Appends at least one more chunk to the buffer; 0 at end of input. */
static int refill(graph__reader *r)
{
	int got;

	if (r->eof)
		return 0;
	if (r->pos > 0) {
		memmove(r->buf, r->buf + r->pos, r->len - r->pos);
		r->len -= r->pos;
		r->pos = 0;
	}
	if (r->cap - r->len < READ_CHUNK + 1) {
		size_t cap = r->cap ? r->cap * 2 : 2 * READ_CHUNK;
		char *p;

		if (cap > LINE_MAX_BYTES + 2 * READ_CHUNK)
			return SEO_ETOOBIG;
		p = realloc(r->buf, cap);
		if (!p)
			return SEO_ENOMEM;
		r->buf = p;
		r->cap = cap;
	}
	got = gzread(r->gz, r->buf + r->len, READ_CHUNK);
	if (got < 0) {
		int zerr;

		log_error("cannot read \"%s\": %s", r->path,
			  gzerror(r->gz, &zerr));
		return SEO_EIO;
	}
	if (got == 0) {
		r->eof = 1;
		return 0;
	}
	EVP_DigestUpdate(r->sha, r->buf + r->len, (size_t)got);
	r->len += (size_t)got;
	return 1;
}

int graph__reader_line(graph__reader *r, char **line, size_t *len)
{
	size_t scanned = 0;

	for (;;) {
		char *start = r->buf + r->pos;
		size_t avail = r->len - r->pos;
		char *nl = avail > scanned ?
			memchr(start + scanned, '\n', avail - scanned) : NULL;
		int rc;

		if (nl || (r->eof && avail > 0)) {
			size_t n = nl ? (size_t)(nl - start) : avail;

			r->pos += nl ? n + 1 : n;
			if (n > 0 && start[n - 1] == '\r')
				n--;
			start[n] = '\0';
			r->line++;
			*line = start;
			*len = n;
			return 1;
		}
		if (r->eof)
			return 0;
		scanned = avail;
		rc = refill(r);
		if (rc < 0)
			return rc == SEO_ETOOBIG ? SEO_EIO : rc;
		/* refill() moved the data to the buffer's start */
	}
}

int graph__reader_bytes(graph__reader *r, size_t n, char **data)
{
	while (r->len - r->pos < n) {
		int rc = refill(r);

		if (rc < 0)
			return rc == SEO_ETOOBIG ? SEO_EIO : rc;
		if (rc == 0)
			return 0;
	}
	*data = r->buf + r->pos;
	for (size_t i = 0; i < n; i++)
		if (r->buf[r->pos + i] == '\n')
			r->line++;
	r->pos += n;
	return 1;
}

uint64_t graph__reader_offset(graph__reader *r)
{
	z_off_t off = gzoffset(r->gz);

	return off < 0 ? 0 : (uint64_t)off;
}

void graph__reader_close(graph__reader *r, char hex[65])
{
	if (hex) {
		unsigned char md[EVP_MAX_MD_SIZE];
		unsigned mdlen = 0;

		hex[0] = '\0';
		if (r->sha && EVP_DigestFinal_ex(r->sha, md, &mdlen) == 1) {
			for (unsigned i = 0; i < mdlen && i < 32; i++)
				sprintf(hex + 2 * i, "%02x", md[i]);
		}
	}
	if (r->sha)
		EVP_MD_CTX_free(r->sha);
	if (r->gz)
		gzclose(r->gz);
	free(r->buf);
	memset(r, 0, sizeof(*r));
}

int graph__write_file(const char *dir, const char *name, const void *data,
		      size_t len)
{
	char path[4096];
	const char *p = data;
	int fd, rc = 0;

	if ((size_t)snprintf(path, sizeof(path), "%s/%s", dir, name) >=
	    sizeof(path))
		return SEO_EINVAL;
	fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (fd < 0) {
		log_error("cannot create \"%s\": %s", path, strerror(errno));
		return SEO_EIO;
	}
	while (len > 0) {
		ssize_t w = write(fd, p, len);

		if (w < 0) {
			if (errno == EINTR)
				continue;
			log_error("cannot write \"%s\": %s", path,
				  strerror(errno));
			rc = SEO_EIO;
			goto out;
		}
		p += w;
		len -= (size_t)w;
	}
	if (fsync(fd) != 0) {
		log_error("cannot sync \"%s\": %s", path, strerror(errno));
		rc = SEO_EIO;
	}
out:
	close(fd);
	return rc;
}

int graph__tmp_fd(const char *dir, const char *what, int *fd)
{
	char path[4200];

	snprintf(path, sizeof(path), "%s/seo-ingest-run-XXXXXX", dir);
	*fd = mkostemp(path, O_CLOEXEC);
	if (*fd < 0) {
		log_error("cannot create %s in \"%s\": %s", what, dir,
			  strerror(errno));
		return SEO_EIO;
	}
	unlink(path);
	return 0;
}

void graph_remove_dir(const char *dir)
{
	DIR *d = opendir(dir);
	struct dirent *e;

	if (!d)
		return;
	while ((e = readdir(d))) {
		char p[8400];
		struct stat st;

		if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0)
			continue;
		snprintf(p, sizeof(p), "%s/%s", dir, e->d_name);
		if (lstat(p, &st) == 0 && S_ISDIR(st.st_mode))
			graph_remove_dir(p);
		else
			unlink(p);
	}
	closedir(d);
	rmdir(dir);
}

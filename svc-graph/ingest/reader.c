/*
 * reader.c: streaming input, plain or gzip (concatenated members), by
 * lines or bytes, hashed as it is read.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <openssl/evp.h>

#include <seo/errors.h>
#include <seo/log.h>

#include "ingest.h"

#define READ_CHUNK (1u << 20)

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

		if (cap > GRAPH__RECORD_MAX + 2 * READ_CHUNK)
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

/* Drops the rest of a line too long to hold, a chunk at a time, up to
 * its end of line or the end of the input. */
static int skip_line(graph__reader *r)
{
	for (;;) {
		char *nl;
		int rc;

		r->pos = r->len;
		rc = refill(r);
		if (rc < 0)
			return rc;
		if (rc == 0)
			break;
		nl = memchr(r->buf, '\n', r->len);
		if (nl) {
			r->pos = (size_t)(nl - r->buf) + 1;
			break;
		}
	}
	r->line++;
	return GRAPH__LINE_TOO_LONG;
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
			r->line++;
			if (n > 0 && start[n - 1] == '\r')
				n--;
			if (n > GRAPH__LINE_MAX)
				return GRAPH__LINE_TOO_LONG;
			start[n] = '\0';
			*line = start;
			*len = n;
			return 1;
		}
		if (r->eof)
			return 0;
		/* longer than any line even if a CR ends it */
		if (avail > GRAPH__LINE_MAX + 1)
			return skip_line(r);
		scanned = avail;
		rc = refill(r);
		if (rc < 0)
			return rc;
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

/*
 * io.c: growable buffers, temporary files and directory removal for the
 * ingest.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <seo/errors.h>
#include <seo/log.h>

#include "ingest.h"

/* Past this, buffers grow by a quarter rather than double: what they
 * reserve counts against the ingest's budget. */
#define BUF_DOUBLE_MAX ((size_t)64 << 20)

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

/*
 * Makes room in the array at *vp (a pointer to any element type, `size`
 * bytes each) for element `n`, doubling *cap from `first`. Returns 0 or
 * SEO_ENOMEM (the array stays as it was).
 */
int graph__grow(void *vp, size_t n, size_t *cap, size_t size, size_t first)
{
	size_t want = *cap ? *cap * 2 : first;
	void *v, *p;

	if (n < *cap)
		return 0;
	memcpy(&v, vp, sizeof(v));
	p = realloc(v, want * size);
	if (!p)
		return SEO_ENOMEM;
	memcpy(vp, &p, sizeof(p));
	*cap = want;
	return 0;
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

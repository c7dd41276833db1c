/*
 * outfile.c: the files of the index as they are written: streamed, an
 * offsets file filled up to each id, the skip entries of long lists.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <seo/errors.h>
#include <seo/log.h>

#include "ingest.h"

/* Creates dir/name, or with `append` continues it (bytes counts from its
 * current size). */
int graph__w_open_mode(graph__wfile *w, const char *dir, const char *name,
		       int append)
{
	struct stat st;

	snprintf(w->path, sizeof(w->path), "%s/%s", dir, name);
	w->bytes = 0;
	w->f = fopen(w->path, append ? "abe" : "wbe");
	if (!w->f || (append && fstat(fileno(w->f), &st) != 0)) {
		log_error("cannot create \"%s\": %s", w->path, strerror(errno));
		if (w->f)
			fclose(w->f);
		w->f = NULL;
		return SEO_EIO;
	}
	if (append)
		w->bytes = (uint64_t)st.st_size;
	setvbuf(w->f, NULL, _IOFBF, 1 << 20);
	return 0;
}

int graph__w_open(graph__wfile *w, const char *dir, const char *name)
{
	return graph__w_open_mode(w, dir, name, 0);
}

int graph__w_failed(const graph__wfile *w)
{
	log_error("cannot write \"%s\": %s", w->path, strerror(errno));
	return SEO_EIO;
}

int graph__w_close(graph__wfile *w)
{
	int rc = 0;

	if (!w->f)
		return 0;
	if (fflush(w->f) != 0 || fsync(fileno(w->f)) != 0) {
		log_error("cannot write \"%s\": %s", w->path, strerror(errno));
		rc = SEO_EIO;
	}
	fclose(w->f);
	w->f = NULL;
	return rc;
}

int graph__off_upto(graph__offw *o, uint64_t id, uint64_t value)
{
	int rc = 0;

	while (!rc && o->next <= id) {
		rc = graph__w_put(&o->w, &value, sizeof(value));
		o->next++;
	}
	return rc;
}

int graph__skip_open(graph__skipw *s, const char *dir, const char *name)
{
	char path[64];
	int rc;

	s->entries = s->first = 0;
	s->key = GRAPH__NONE;
	snprintf(path, sizeof(path), "%s.dir", name);
	rc = graph__w_open(&s->dir, dir, path);
	snprintf(path, sizeof(path), "%s.bin", name);
	return rc ? rc : graph__w_open(&s->bin, dir, path);
}

static int skip_flush(graph__skipw *s)
{
	graph__skipdir d = { s->key, (uint32_t)(s->entries - s->first),
			     s->first };

	if (s->entries == s->first)
		return 0;
	s->first = s->entries;
	return graph__w_put(&s->dir, &d, sizeof(d));
}

/* Appends the next skip entry (`size` bytes) of list `key`. */
int graph__skip_add(graph__skipw *s, uint32_t key, const void *e, size_t size)
{
	int rc = 0;

	if (key != s->key) {
		rc = skip_flush(s);
		s->key = key;
	}
	if (!rc)
		rc = graph__w_put(&s->bin, e, size);
	s->entries++;
	return rc;
}

int graph__skip_close(graph__skipw *s)
{
	int rc = skip_flush(s);

	if (!rc)
		rc = graph__w_close(&s->dir);
	if (!rc)
		rc = graph__w_close(&s->bin);
	graph__w_close(&s->dir);
	graph__w_close(&s->bin);
	return rc;
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

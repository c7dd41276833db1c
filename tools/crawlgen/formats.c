/*
 * formats.c: the crawl files as the public datasets write them: text
 * lists, the web graph's ranks, WARC members of a WAT file.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include <zlib.h>

#include <seo/errors.h>
#include <seo/log.h>

#include "gen.h"

FILE *crawlgen__create(const char *dir, const char *name, seo_arena *a,
		    graph_input *in, graph_input_kind kind, size_t *n)
{
	char *path = seo_arena_printf(a, "%s/%s", dir, name);
	FILE *f = path ? fopen(path, "we") : NULL;

	if (!f) {
		log_error("cannot crawlgen__create \"%s\": %s",
			  path ? path : name,
			  strerror(errno));
		return NULL;
	}
	in[*n].kind = kind;
	in[*n].path = path;
	(*n)++;
	return f;
}

int crawlgen__close_ok(FILE *f)
{
	int bad = ferror(f);

	return fclose(f) != 0 || bad ? SEO_EIO : 0;
}
/* One line of domain-ranks.txt for the domain at position p (0 first) by
 * in-degree: centrality values follow the in-degree, the PageRank position
 * swaps a few neighbours so that the two orders differ. */
void crawlgen__rank_line(FILE *f, uint32_t p, uint32_t indeg, uint32_t n,
		      const char *rev)
{
	fprintf(f, "%u\t%.6E\t%u\t%.12f\t%s\t%u\n", p + 1, 1e5 * indeg,
		p + 1 + (p % 3 == 1) - (p % 3 == 2),
		(double)indeg / (10.0 * n), rev, 1 + indeg / 4);
}
/* Appends one WARC record as its own gzip member, as Common Crawl does. */
int crawlgen__warc_member(const char *path, const char *type, const char *uri,
		       const char *date, const char *body)
{
	gzFile gz = gzopen(path, "ab");
	int rc = 0;

	if (!gz)
		return SEO_EIO;
	if (gzprintf(gz,
		     "WARC/1.0\r\nWARC-Type: %s\r\n%s%s%sWARC-Date: %s\r\n"
		     "Content-Type: application/json\r\n"
		     "Content-Length: %zu\r\n\r\n",
		     type, uri ? "WARC-Target-URI: " : "", uri ? uri : "",
		     uri ? "\r\n" : "", date, strlen(body)) <= 0 ||
	    gzputs(gz, body) < 0 || gzputs(gz, "\r\n\r\n") < 0)
		rc = SEO_EIO;
	if (gzclose(gz) != Z_OK)
		rc = SEO_EIO;
	return rc;
}

/* A WAT file in `dir` with its warcinfo record, listed in `in`. */
int crawlgen__wat_create(const char *dir, const char *name, seo_arena *a,
		      graph_input *in, size_t *n, const char **path)
{
	*path = seo_arena_printf(a, "%s/%s", dir, name);
	if (!*path)
		return SEO_ENOMEM;
	in[*n].kind = GRAPH_IN_WAT;
	in[*n].path = *path;
	(*n)++;
	return crawlgen__warc_member(*path, "warcinfo", NULL,
				     "2024-06-30T00:00:00Z",
				     "{\"software\": \"seo-ingest demo\"}");
}

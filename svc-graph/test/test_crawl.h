/*
 * test_crawl.h: writing the crawl files of the graph tests (domain graph
 * text files, CDXJ, WAT records), linked into each (test_crawl.c).
 */
#ifndef TEST_CRAWL_H
#define TEST_CRAWL_H

#include <stdio.h>

/* "dir/name", in one of 16 static buffers used in turn: valid until
 * sixteen more calls. */
const char *tcrawl_path(const char *dir, const char *name);

/* Writes `text` to dir/name, plain or gzip-compressed; returns the path
 * as tcrawl_path() does. */
const char *tcrawl_put(const char *dir, const char *name, const char *text);
const char *tcrawl_put_gz(const char *dir, const char *name,
			  const char *text);

/* A WARC record of `type` around `json`, as the WAT files have them. */
void tcrawl_warc(FILE *f, const char *type, const char *json);

/*
 * A WAT metadata record of a 200 HTML response for `uri` fetched at `date`
 * (ISO 8601). `headers` are extra members of its HTTP headers after
 * Content-Type and `head` extra members of its HTML head after Title, each
 * "" or starting with a comma; `head` NULL leaves the head out. `links`
 * are the items of its Links array.
 */
void tcrawl_response(FILE *f, const char *uri, const char *date,
		     const char *headers, const char *head, const char *links);

#endif

/*
 * test_crawl.c: crawl files for the graph tests (see test_crawl.h).
 */
#include "test_crawl.h"

#include <string.h>

#include <zlib.h>

const char *tcrawl_path(const char *dir, const char *name)
{
	static char bufs[16][4400];
	static int next;
	char *p = bufs[next++ % 16];

	snprintf(p, sizeof(bufs[0]), "%s/%s", dir, name);
	return p;
}

const char *tcrawl_put(const char *dir, const char *name, const char *text)
{
	const char *p = tcrawl_path(dir, name);
	FILE *f = fopen(p, "w");

	if (f != NULL) {
		fputs(text, f);
		fclose(f);
	}
	return p;
}

const char *tcrawl_put_gz(const char *dir, const char *name,
			  const char *text)
{
	const char *p = tcrawl_path(dir, name);
	gzFile gz = gzopen(p, "wb");

	if (gz != NULL) {
		gzputs(gz, text);
		gzclose(gz);
	}
	return p;
}

void tcrawl_warc(FILE *f, const char *type, const char *json)
{
	fprintf(f, "WARC/1.0\r\nWARC-Type: %s\r\nContent-Type: application/json"
		   "\r\nContent-Length: %zu\r\n\r\n%s\r\n\r\n",
		type, strlen(json), json);
}

void tcrawl_response(FILE *f, const char *uri, const char *date,
		     const char *headers, const char *head, const char *links)
{
	char json[8192];

	snprintf(json, sizeof(json),
		 "{\"Envelope\":{\"WARC-Header-Metadata\":{\"WARC-Type\":"
		 "\"response\",\"WARC-Target-URI\":\"%s\",\"WARC-Date\":\"%s\"},"
		 "\"Payload-Metadata\":{\"HTTP-Response-Metadata\":{"
		 "\"Response-Message\":{\"Status\":\"200\"},\"Headers\":{"
		 "\"Content-Type\":\"text/html; charset=UTF-8\"%s},"
		 "\"HTML-Metadata\":{%s%s%s\"Links\":[%s]}}}}}",
		 uri, date, headers, head ? "\"Head\":{\"Title\":\"t\"" : "",
		 head ? head : "", head ? "}," : "", links);
	tcrawl_warc(f, "metadata", json);
}

/*
 * test_rt_sitemap.c: the sitemap parser on hand-written documents (fields,
 * namespaces, gzip, limits, entities, malformed input) and on every file
 * of ../shared/data/sitemaps; the walk as a state machine; and the driver
 * on the fetcher against the sm*.test sites of tests/fakes/site_server.py
 * and, for the time bound, a listener that never answers.
 */
#include "rt.h"

#include "seo/errors.h"
#include "seo/util.h"
#include "test_site.h"

#include <CUnit/Basic.h>
#include <arpa/inet.h>
#include <dirent.h>
#include <event2/event.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>
#include <zlib.h>

static int port;

#define NS "xmlns=\"http://www.sitemaps.org/schemas/sitemap/0.9\""

static int parse(const char *xml, size_t max_urls, seo_arena *a, rt_sitemap_doc *d)
{
	return rt_sitemap_parse(xml, strlen(xml), max_urls, RT_SITEMAP_MAX_LISTED, a, d);
}

/* gzip of `in` on the heap (the caller frees), length in *out_len. */
static char *gz(const char *in, size_t len, size_t *out_len)
{
	z_stream z = {0};
	size_t cap = deflateBound(&z, (uLong)len) + 64;
	char *out = malloc(cap);

	CU_ASSERT_FATAL(out != NULL);
	CU_ASSERT_FATAL(deflateInit2(&z, 1, Z_DEFLATED, 16 + MAX_WBITS, 9,
				     Z_DEFAULT_STRATEGY) == Z_OK);
	z.next_in = (unsigned char *)in;
	z.avail_in = (uInt)len;
	z.next_out = (unsigned char *)out;
	z.avail_out = (uInt)cap;
	CU_ASSERT_FATAL(deflate(&z, Z_FINISH) == Z_STREAM_END);
	*out_len = cap - z.avail_out;
	deflateEnd(&z);
	return out;
}

static void test_urlset(void)
{
	seo_arena *a = seo_arena_new(0);
	rt_sitemap_doc d;

	CU_ASSERT_EQUAL_FATAL(parse(
		"<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
		"<urlset " NS " xmlns:image=\"http://www.google.com/schemas/sitemap-image/1.1\">\n"
		"  <url>\n    <loc>\n  https://example.com/a?x=1&amp;y=2  </loc>\n"
		"    <lastmod>2024-01-02</lastmod><changefreq>daily</changefreq>\n"
		"    <priority>0.80</priority>\n"
		"    <image:image><image:loc>https://example.com/img.png</image:loc></image:image>\n"
		"  </url>\n"
		"  <url><image:image><image:loc>https://example.com/only-image</image:loc></image:image></url>\n"
		"  <url><loc><![CDATA[https://example.com/b]]></loc><lastmod/></url>\n"
		"  <url/>\n"
		"  <url><loc>https://example.com/c</loc><loc>https://example.com/second</loc></url>\n"
		"</urlset>", 100, a, &d), 0);
	CU_ASSERT_EQUAL(d.kind, RT_SITEMAP_URLSET);
	CU_ASSERT_EQUAL_FATAL(d.n_urls, 3);
	CU_ASSERT_STRING_EQUAL(d.urls[0].loc, "https://example.com/a?x=1&y=2");
	CU_ASSERT_STRING_EQUAL(d.urls[0].lastmod, "2024-01-02");
	CU_ASSERT_STRING_EQUAL(d.urls[0].changefreq, "daily");
	CU_ASSERT_STRING_EQUAL(d.urls[0].priority, "0.80");
	CU_ASSERT_STRING_EQUAL(d.urls[1].loc, "https://example.com/b");
	CU_ASSERT_STRING_EQUAL(d.urls[1].lastmod, "");
	CU_ASSERT_PTR_NULL(d.urls[1].changefreq);
	CU_ASSERT_PTR_NULL(d.urls[1].priority);
	CU_ASSERT_STRING_EQUAL(d.urls[2].loc, "https://example.com/c");
	CU_ASSERT_EQUAL(d.truncated, 0);
	CU_ASSERT_PTR_NULL(d.error);

	/* a prefixed namespace, and none at all */
	CU_ASSERT_EQUAL_FATAL(parse(
		"<sm:urlset xmlns:sm=\"http://www.sitemaps.org/schemas/sitemap/0.9\">"
		"<sm:url><sm:loc>https://example.com/p</sm:loc></sm:url></sm:urlset>",
		100, a, &d), 0);
	CU_ASSERT_EQUAL_FATAL(d.n_urls, 1);
	CU_ASSERT_STRING_EQUAL(d.urls[0].loc, "https://example.com/p");
	CU_ASSERT_EQUAL_FATAL(parse("<urlset><url><loc>https://example.com/n</loc></url></urlset>",
				    100, a, &d), 0);
	CU_ASSERT_EQUAL(d.n_urls, 1);
	seo_arena_free(a);
}

static void test_index_and_limits(void)
{
	seo_arena *a = seo_arena_new(0);
	rt_sitemap_doc d;
	const char *abc = "<sitemapindex><sitemap><loc>a</loc></sitemap><sitemap><loc>b</loc>"
		"</sitemap><sitemap><loc>c</loc></sitemap></sitemapindex>";
	const char *three = "<urlset " NS "><url><loc>https://e.com/1</loc></url>"
		"<url><loc>https://e.com/2</loc></url><url><loc>https://e.com/3</loc></url></urlset>";

	CU_ASSERT_EQUAL_FATAL(parse(
		"<sitemapindex " NS "><sitemap><loc>https://e.com/s1.xml</loc>"
		"<lastmod>2024-01-01</lastmod></sitemap><sitemap><loc> /s2.xml.gz </loc></sitemap>"
		"<sitemap></sitemap><sitemap><loc>https://e.com/s3.xml</loc></sitemap></sitemapindex>",
		100, a, &d), 0);
	CU_ASSERT_EQUAL(d.kind, RT_SITEMAP_INDEX);
	CU_ASSERT_EQUAL_FATAL(d.n_children, 3);
	CU_ASSERT_STRING_EQUAL(d.children[1], "/s2.xml.gz");
	CU_ASSERT_EQUAL(d.children_total, 3);
	CU_ASSERT_EQUAL(d.n_urls, 0);
	/* children beyond max_children are counted, not kept */
	CU_ASSERT_EQUAL_FATAL(rt_sitemap_parse(abc, strlen(abc), 100, 2, a, &d), 0);
	CU_ASSERT_EQUAL(d.n_children, 2);
	CU_ASSERT_EQUAL(d.children_total, 3);

	/* the URL limit: truncated only when another entry follows */
	CU_ASSERT_EQUAL_FATAL(parse(three, 2, a, &d), 0);
	CU_ASSERT_EQUAL(d.n_urls, 2);
	CU_ASSERT_EQUAL(d.truncated, 1);
	CU_ASSERT_EQUAL_FATAL(parse(three, 3, a, &d), 0);
	CU_ASSERT_EQUAL(d.n_urls, 3);
	CU_ASSERT_EQUAL(d.truncated, 0);
	CU_ASSERT_EQUAL_FATAL(parse(three, 0, a, &d), 0);
	CU_ASSERT_EQUAL(d.n_urls, 0);
	CU_ASSERT_EQUAL(d.truncated, 1);
	seo_arena_free(a);
}

static void test_gzip(void)
{
	seo_arena *a = seo_arena_new(0);
	const char *xml = "<urlset " NS "><url><loc>https://e.com/gz</loc></url></urlset>";
	size_t n, n2;
	char *z = gz(xml, strlen(xml), &n), *two;
	rt_sitemap_doc d;

	CU_ASSERT_EQUAL_FATAL(rt_sitemap_parse(z, n, 10, 10, a, &d), 0);
	CU_ASSERT_EQUAL_FATAL(d.n_urls, 1);
	CU_ASSERT_STRING_EQUAL(d.urls[0].loc, "https://e.com/gz");
	/* a cut gzip stream keeps what was read before the cut, or is no
	 * sitemap when nothing was */
	CU_ASSERT_EQUAL(rt_sitemap_parse(z, n / 2, 10, 10, a, &d), SEO_EINVAL);
	/* two members, one document split across them */
	free(z);
	z = gz("<urlset><url><loc>x1</loc></url>", 32, &n);
	two = gz("<url><loc>x2</loc></url></urlset>", 33, &n2);
	z = realloc(z, n + n2);
	CU_ASSERT_FATAL(z != NULL);
	memcpy(z + n, two, n2);
	CU_ASSERT_EQUAL_FATAL(rt_sitemap_parse(z, n + n2, 10, 10, a, &d), 0);
	CU_ASSERT_EQUAL(d.n_urls, 2);
	CU_ASSERT_PTR_NULL(d.error);
	free(two);
	free(z);
	seo_arena_free(a);
}

/* Fed in pieces of any size, as a fetch hands them over (gzip magic,
 * members and tags split anywhere), a document reads as it does whole. */
static void test_pieces(void)
{
	const char *xml = "<urlset " NS "><url><loc>https://e.com/a</loc>"
			  "<lastmod>2024-01-01</lastmod></url>"
			  "<url><loc> https://e.com/b </loc></url></urlset>";
	size_t n;
	char *z = gz(xml, strlen(xml), &n);
	const struct { const char *data; size_t len; } docs[] = {{xml, strlen(xml)}, {z, n}};

	for (size_t k = 0; k < 2; k++)
		for (size_t piece = 1; piece <= 13; piece += 3) {
			seo_arena *a = seo_arena_new(0);
			rt_sitemap_parser *p = NULL;
			rt_sitemap_doc d;

			CU_ASSERT_EQUAL_FATAL(rt_sitemap_parser_new(10, 10, RT_SITEMAP_MAX_XML, a, &p), 0);
			for (size_t off = 0; off < docs[k].len; off += piece) {
				size_t len = docs[k].len - off < piece ? docs[k].len - off : piece;

				CU_ASSERT_EQUAL(rt_sitemap_parser_feed(p, docs[k].data + off, len), 0);
			}
			CU_ASSERT_EQUAL_FATAL(rt_sitemap_parser_end(p, &d), 0);
			CU_ASSERT_EQUAL(d.kind, RT_SITEMAP_URLSET);
			CU_ASSERT_EQUAL_FATAL(d.n_urls, 2);
			CU_ASSERT_STRING_EQUAL(d.urls[0].lastmod, "2024-01-01");
			CU_ASSERT_STRING_EQUAL(d.urls[1].loc, "https://e.com/b");
			CU_ASSERT_PTR_NULL(d.error);
			CU_ASSERT_EQUAL(d.xml_bytes, strlen(xml));
			seo_arena_free(a);
		}
	free(z);
}

/* The URL limit ends the reading: the feed says so, and what follows need
 * not be fetched. */
static void test_feed_stops(void)
{
	seo_arena *a = seo_arena_new(0);
	const char *xml = "<urlset><url><loc>x1</loc></url><url><loc>x2</loc></url>";
	rt_sitemap_parser *p = NULL;
	rt_sitemap_doc d;

	CU_ASSERT_EQUAL_FATAL(rt_sitemap_parser_new(1, 10, RT_SITEMAP_MAX_XML, a, &p), 0);
	CU_ASSERT_EQUAL(rt_sitemap_parser_feed(p, xml, strlen(xml)), 1);
	CU_ASSERT_EQUAL_FATAL(rt_sitemap_parser_end(p, &d), 0);
	CU_ASSERT_EQUAL(d.n_urls, 1);
	CU_ASSERT_EQUAL(d.truncated, 1);
	rt_sitemap_parser_free(NULL);
	seo_arena_free(a);
}

static void test_size_bound(void)
{
	seo_arena *a = seo_arena_new(0);
	size_t len = RT_SITEMAP_MAX_XML + (1 << 20), n, off;
	char *xml = malloc(len + 1), *z;
	const char *head = "<urlset><url><loc>https://e.com/first</loc></url>";
	rt_sitemap_doc d;

	CU_ASSERT_FATAL(xml != NULL);
	off = (size_t)sprintf(xml, "%s", head);
	/* comments, each a small node, so that only our bound can stop it */
	while (off + 1024 < len) {
		memcpy(xml + off, "<!--", 4);
		memset(xml + off + 4, 'x', 1013);
		memcpy(xml + off + 1017, "-->\n", 4);
		off += 1021;
	}
	z = gz(xml, off, &n);
	free(xml);
	/* a gzip bomb: read up to the bound, not beyond */
	CU_ASSERT_EQUAL_FATAL(rt_sitemap_parse(z, n, 10, 10, a, &d), 0);
	CU_ASSERT_EQUAL(d.n_urls, 1);
	CU_ASSERT_EQUAL(d.truncated, 1);
	CU_ASSERT_PTR_NOT_NULL(d.error);
	free(z);
	seo_arena_free(a);
}

static void test_entities(void)
{
	seo_arena *a = seo_arena_new(0);
	rt_sitemap_doc d;
	int rc;

	/* an external entity is never read */
	rc = parse("<?xml version=\"1.0\"?>\n"
		   "<!DOCTYPE urlset [<!ENTITY xxe SYSTEM \"file:///etc/passwd\">]>\n"
		   "<urlset><url><loc>https://e.com/&xxe;</loc></url></urlset>", 10, a, &d);
	CU_ASSERT_EQUAL(rc, 0);
	if (rc == 0 && d.n_urls > 0)
		CU_ASSERT_PTR_NULL(strstr(d.urls[0].loc, "root:"));
	/* nor an external DTD, which would need the network */
	rc = parse("<!DOCTYPE urlset SYSTEM \"http://127.0.0.1:1/x.dtd\">"
		   "<urlset><url><loc>https://e.com/d</loc></url></urlset>", 10, a, &d);
	CU_ASSERT_EQUAL(rc, 0);
	CU_ASSERT_EQUAL(d.n_urls, 1);
	/* a billion laughs is not expanded */
	rc = parse("<?xml version=\"1.0\"?><!DOCTYPE urlset [\n"
		   "<!ENTITY a \"aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa\">\n"
		   "<!ENTITY b \"&a;&a;&a;&a;&a;&a;&a;&a;&a;&a;&a;&a;&a;&a;&a;&a;\">\n"
		   "<!ENTITY c \"&b;&b;&b;&b;&b;&b;&b;&b;&b;&b;&b;&b;&b;&b;&b;&b;\">\n"
		   "<!ENTITY d \"&c;&c;&c;&c;&c;&c;&c;&c;&c;&c;&c;&c;&c;&c;&c;&c;\">\n"
		   "<!ENTITY e \"&d;&d;&d;&d;&d;&d;&d;&d;&d;&d;&d;&d;&d;&d;&d;&d;\">\n"
		   "<!ENTITY f \"&e;&e;&e;&e;&e;&e;&e;&e;&e;&e;&e;&e;&e;&e;&e;&e;\">\n"
		   "<!ENTITY g \"&f;&f;&f;&f;&f;&f;&f;&f;&f;&f;&f;&f;&f;&f;&f;&f;\">\n"
		   "]><urlset><url><loc>https://e.com/&g;</loc></url></urlset>", 10, a, &d);
	CU_ASSERT_EQUAL(rc, 0);
	if (rc == 0 && d.n_urls > 0)
		CU_ASSERT(strlen(d.urls[0].loc) < 1000);
	seo_arena_free(a);
}

static void test_malformed(void)
{
	seo_arena *a = seo_arena_new(0);
	rt_sitemap_doc d;

	CU_ASSERT_EQUAL(parse("", 10, a, &d), SEO_EINVAL);
	CU_ASSERT_PTR_NOT_NULL(d.error);
	CU_ASSERT_EQUAL(parse("just text", 10, a, &d), SEO_EINVAL);
	CU_ASSERT_EQUAL(parse("<!doctype html><html><body>hi</body></html>", 10, a, &d), SEO_EINVAL);
	CU_ASSERT_EQUAL(parse("<rss><channel></channel></rss>", 10, a, &d), SEO_EINVAL);
	CU_ASSERT_STRING_EQUAL(d.error, "root element is not urlset or sitemapindex");
	/* a document cut short keeps the entries read before the breakage,
	 * but for the last few hundred bytes the reader takes at once */
	{
		char *x = seo_arena_strdup(a, "<urlset>");

		for (int i = 0; i < 50; i++)
			x = seo_arena_printf(a, "%s<url><loc>https://e.com/%d</loc></url>", x, i);
		x = seo_arena_printf(a, "%s<url><loc>https://e.com/cut", x);
		CU_ASSERT_EQUAL_FATAL(parse(x, 100, a, &d), 0);
		CU_ASSERT(d.n_urls >= 30 && d.n_urls <= 50);
		CU_ASSERT_PTR_NOT_NULL(d.error);
		CU_ASSERT_EQUAL(d.truncated, 0);
		x[strlen(x) - 5] = '\0';
		x = seo_arena_printf(a, "%s</url><url><loc>oops</url>", x);
		CU_ASSERT_EQUAL_FATAL(parse(x, 100, a, &d), 0);
		CU_ASSERT(d.n_urls >= 30 && d.n_urls <= 50);
		CU_ASSERT_PTR_NOT_NULL(d.error);
	}
	seo_arena_free(a);
}

static void test_real_files(void)
{
	static const struct { const char *file; int kind; size_t urls; } want[] = {
		{"advertools/nytimes-news-sitemap.xml", RT_SITEMAP_URLSET, 6},
		{"advertools/washingtonpost-video-sitemap.xml", RT_SITEMAP_URLSET, 6},
		{"crawler-commons/hebdenbridgetimes-articles-sitemap.xml", RT_SITEMAP_URLSET, 74},
		{"crawler-commons/shinpaideshou-news-sitemap.xml", RT_SITEMAP_URLSET, 3},
		{"stormcrawler/tripadvisor.sitemap.index.xml", RT_SITEMAP_INDEX, 4},
		{"stormcrawler/tripadvisor.sitemap.xml.gz", RT_SITEMAP_URLSET, 1000},
		{"trafilatura/www.sitemaps.org-sitemap.xml", RT_SITEMAP_URLSET, 84},
		{"trafilatura/www.sitemaps.org-sitemap.xml.gz", RT_SITEMAP_URLSET, 84},
	};
	const char *src = getenv("SEO_SOURCE_DIR");
	int files = 0;

	if (src == NULL) {
		fprintf(stderr, "\nSEO_SOURCE_DIR unset: real files skipped\n");
		return;
	}
	for (size_t i = 0; i < sizeof(want) / sizeof(want[0]); i++) {
		char path[4096];
		FILE *f;
		long size;
		char *buf;
		size_t len;
		seo_arena *a;
		rt_sitemap_doc d;

		snprintf(path, sizeof(path), "%s/../shared/data/sitemaps/%s", src, want[i].file);
		if ((f = fopen(path, "rb")) == NULL)
			continue;
		fseek(f, 0, SEEK_END);
		size = ftell(f);
		rewind(f);
		buf = malloc((size_t)size + 1);
		CU_ASSERT_FATAL(buf != NULL);
		len = fread(buf, 1, (size_t)size, f);
		fclose(f);
		a = seo_arena_new(0);
		CU_ASSERT_EQUAL_FATAL(rt_sitemap_parse(buf, len, 1000, RT_SITEMAP_MAX_LISTED, a, &d), 0);
		CU_ASSERT_EQUAL(d.kind, want[i].kind);
		CU_ASSERT_EQUAL(d.kind == RT_SITEMAP_INDEX ? d.children_total : d.n_urls,
				want[i].urls);
		CU_ASSERT_PTR_NULL(d.error);
		/* 50000 entries, stopped at the limit */
		CU_ASSERT_EQUAL(d.truncated, want[i].urls == 1000);
		for (size_t k = 0; k < d.n_urls; k++)
			CU_ASSERT(strncmp(d.urls[k].loc, "http", 4) == 0 &&
				  strchr(d.urls[k].loc, ' ') == NULL);
		for (size_t k = 0; k < d.n_children; k++)
			CU_ASSERT(strncmp(d.children[k], "http", 4) == 0);
		seo_arena_free(a);
		free(buf);
		files++;
	}
	/* any other file there parses without crashing */
	for (const char *const *dir = (const char *const[]){"advertools", "crawler-commons",
		     "stormcrawler", "trafilatura", NULL}; *dir; dir++) {
		char path[4096];
		DIR *dh;
		struct dirent *de;

		snprintf(path, sizeof(path), "%s/../shared/data/sitemaps/%s", src, *dir);
		if ((dh = opendir(path)) == NULL)
			continue;
		while ((de = readdir(dh)) != NULL) {
			char file[4400];
			FILE *f;
			static char buf[1 << 22];
			size_t len;
			seo_arena *a = seo_arena_new(0);
			rt_sitemap_doc d;

			snprintf(file, sizeof(file), "%s/%s", path, de->d_name);
			if (de->d_name[0] != '.' && (f = fopen(file, "rb")) != NULL) {
				len = fread(buf, 1, sizeof(buf), f);
				fclose(f);
				rt_sitemap_parse(buf, len, 1000, RT_SITEMAP_MAX_LISTED, a, &d);
			}
			seo_arena_free(a);
		}
		closedir(dh);
	}
	fprintf(stderr, "\n%d real sitemaps checked\n", files);
}

/* ---- the walk, fed by hand ---- */

/* Feeds `body` (NULL: a failed fetch) for the URL the walk asks for,
 * checking it is `want`. */
static void feed(rt_sitemap_walk *w, const char *want, const char *body)
{
	const char *url = rt_sitemap_walk_next(w);

	CU_ASSERT_PTR_NOT_NULL_FATAL(url);
	if (strcmp(url, want) != 0)
		fprintf(stderr, "\nwalk asked for %s, expected %s", url, want);
	CU_ASSERT_STRING_EQUAL(url, want);
	CU_ASSERT_EQUAL(rt_sitemap_walk_feed(w, body, body ? strlen(body) : 0), 0);
}

static json_t *result(rt_sitemap_walk *w)
{
	json_t *o = NULL;

	CU_ASSERT_EQUAL_FATAL(rt_sitemap_walk_result(w, &o), 0);
	return o;
}

static const char *str(json_t *o, const char *k)
{
	return json_string_value(json_object_get(o, k));
}

static long num(json_t *o, const char *k)
{
	return (long)json_integer_value(json_object_get(o, k));
}

static void test_walk_order(void)
{
	seo_arena *a = seo_arena_new(0);
	rt_robots r;
	rt_sitemap_walk *w;
	const char *txt = "Sitemap: https://e.com/idx.xml\nSitemap: https://e.com/b.xml\n";
	json_t *o, *d;

	CU_ASSERT_EQUAL_FATAL(rt_robots_parse(txt, strlen(txt), a, &r), 0);
	CU_ASSERT_EQUAL_FATAL(rt_sitemap_walk_new("https://e.com", &r, 100, a, &w), 0);
	/* breadth-first: both top documents, then the children */
	feed(w, "https://e.com/idx.xml",
	     "<sitemapindex><sitemap><loc>https://e.com/c1.xml</loc></sitemap>"
	     "<sitemap><loc>/bad.xml</loc></sitemap><sitemap><loc>https://e.com/nest.xml</loc></sitemap>"
	     "<sitemap><loc>https://e.com/b.xml</loc></sitemap></sitemapindex>");
	feed(w, "https://e.com/b.xml",
	     "<urlset><url><loc>https://e.com/b1</loc><lastmod>2024-05-01</lastmod></url></urlset>");
	feed(w, "https://e.com/c1.xml",
	     "<urlset><url><loc>https://e.com/c1a</loc><priority>1.0</priority></url></urlset>");
	feed(w, "https://e.com/bad.xml", NULL);
	feed(w, "https://e.com/nest.xml",
	     "<sitemapindex><sitemap><loc>https://e.com/deep.xml</loc></sitemap></sitemapindex>");
	feed(w, "https://e.com/deep.xml",
	     "<sitemapindex><sitemap><loc>https://e.com/deeper.xml</loc></sitemap></sitemapindex>");
	/* a third level is listed, not read; /sitemap.xml is not tried */
	CU_ASSERT_PTR_NULL(rt_sitemap_walk_next(w));
	o = result(w);
	d = json_object_get(o, "data");
	CU_ASSERT_EQUAL_FATAL(json_array_size(d), 2);
	CU_ASSERT_STRING_EQUAL(str(json_array_get(d, 0), "url"), "https://e.com/b1");
	CU_ASSERT_STRING_EQUAL(str(json_array_get(d, 0), "lastmod"), "2024-05-01");
	CU_ASSERT_PTR_NULL(json_object_get(json_array_get(d, 0), "priority"));
	CU_ASSERT_PTR_NULL(json_object_get(json_array_get(d, 0), "changefreq"));
	CU_ASSERT_STRING_EQUAL(str(json_array_get(d, 1), "priority"), "1.0");
	CU_ASSERT_EQUAL(num(o, "total"), 2);
	CU_ASSERT_STRING_EQUAL(str(o, "sitemap_url"), "https://e.com/idx.xml");
	CU_ASSERT_STRING_EQUAL(str(o, "sitemap_type"), "sitemap_index");
	CU_ASSERT_STRING_EQUAL(str(o, "source"), "sitemap");
	CU_ASSERT_EQUAL(json_array_size(json_object_get(o, "child_sitemaps")), 6);
	CU_ASSERT_EQUAL(num(o, "child_sitemaps_total"), 6);
	CU_ASSERT_EQUAL(json_array_size(json_object_get(o, "child_sitemaps_fetched")), 3);
	CU_ASSERT_STRING_EQUAL(json_string_value(json_array_get(
		json_object_get(o, "child_sitemaps_fetched"), 0)), "https://e.com/c1.xml");
	CU_ASSERT(json_is_true(json_object_get(o, "truncated")));
	json_decref(o);
	seo_arena_free(a);
}

static void test_walk_fallbacks(void)
{
	seo_arena *a = seo_arena_new(0);
	rt_robots r;
	rt_sitemap_walk *w;
	const char *txt = "Sitemap: https://e.com/gone.xml\n";
	json_t *o;

	/* a declared sitemap that fails: /sitemap.xml, then /sitemap_index.xml */
	CU_ASSERT_EQUAL_FATAL(rt_robots_parse(txt, strlen(txt), a, &r), 0);
	CU_ASSERT_EQUAL_FATAL(rt_sitemap_walk_new("https://e.com/", &r, 100, a, &w), 0);
	feed(w, "https://e.com/gone.xml", NULL);
	feed(w, "https://e.com/sitemap.xml", "<html>not found</html>");
	feed(w, "https://e.com/sitemap_index.xml",
	     "<urlset><url><loc>https://e.com/x</loc></url></urlset>");
	CU_ASSERT_PTR_NULL(rt_sitemap_walk_next(w));
	o = result(w);
	CU_ASSERT_STRING_EQUAL(str(o, "sitemap_url"), "https://e.com/sitemap_index.xml");
	CU_ASSERT_STRING_EQUAL(str(o, "sitemap_type"), "sitemap");
	CU_ASSERT_EQUAL(num(o, "total"), 1);
	CU_ASSERT(json_is_false(json_object_get(o, "truncated")));
	json_decref(o);

	/* nothing anywhere */
	CU_ASSERT_EQUAL_FATAL(rt_sitemap_walk_new("http://e.com", NULL, 100, a, &w), 0);
	feed(w, "http://e.com/sitemap.xml", NULL);
	feed(w, "http://e.com/sitemap_index.xml", NULL);
	CU_ASSERT_PTR_NULL(rt_sitemap_walk_next(w));
	o = result(w);
	CU_ASSERT_STRING_EQUAL(str(o, "source"), "none");
	CU_ASSERT_STRING_EQUAL(str(o, "sitemap_type"), "none");
	CU_ASSERT(json_is_null(json_object_get(o, "sitemap_url")));
	CU_ASSERT_EQUAL(json_array_size(json_object_get(o, "data")), 0);
	CU_ASSERT_EQUAL(num(o, "child_sitemaps_total"), 0);
	CU_ASSERT(json_is_false(json_object_get(o, "truncated")));
	json_decref(o);

	/* a declared /sitemap.xml that fails is not asked twice */
	txt = "Sitemap: https://e.com/sitemap.xml\n";
	CU_ASSERT_EQUAL_FATAL(rt_robots_parse(txt, strlen(txt), a, &r), 0);
	CU_ASSERT_EQUAL_FATAL(rt_sitemap_walk_new("https://e.com", &r, 100, a, &w), 0);
	feed(w, "https://e.com/sitemap.xml", NULL);
	feed(w, "https://e.com/sitemap_index.xml", NULL);
	CU_ASSERT_PTR_NULL(rt_sitemap_walk_next(w));
	CU_ASSERT_EQUAL(rt_sitemap_walk_feed(w, NULL, 0), SEO_EINVAL);
	seo_arena_free(a);
}

static void test_walk_bounds(void)
{
	seo_arena *a = seo_arena_new(0);
	rt_sitemap_walk *w;
	char *idx = seo_arena_strdup(a, "<sitemapindex>");
	const char *one = "<urlset><url><loc>https://e.com/u</loc></url></urlset>";
	json_t *o;
	int fed = 0;

	for (int i = 0; i < 250; i++)
		idx = seo_arena_printf(a, "%s<sitemap><loc>https://e.com/s%d.xml</loc></sitemap>", idx, i);
	idx = seo_arena_printf(a, "%s</sitemapindex>", idx);

	/* 16 documents at most; 200 children listed of 250 */
	CU_ASSERT_EQUAL_FATAL(rt_sitemap_walk_new("https://e.com", NULL, 1000, a, &w), 0);
	feed(w, "https://e.com/sitemap.xml", idx);
	for (; rt_sitemap_walk_next(w) != NULL; fed++)
		CU_ASSERT_EQUAL(rt_sitemap_walk_feed(w, one, strlen(one)), 0);
	CU_ASSERT_EQUAL(fed, RT_SITEMAP_MAX_DOCS - 1);
	o = result(w);
	CU_ASSERT_EQUAL(num(o, "total"), RT_SITEMAP_MAX_DOCS - 1);
	CU_ASSERT_EQUAL(json_array_size(json_object_get(o, "child_sitemaps")), RT_SITEMAP_MAX_LISTED);
	CU_ASSERT_EQUAL(num(o, "child_sitemaps_total"), 250);
	CU_ASSERT_EQUAL(json_array_size(json_object_get(o, "child_sitemaps_fetched")),
			RT_SITEMAP_MAX_DOCS - 1);
	CU_ASSERT(json_is_true(json_object_get(o, "truncated")));
	json_decref(o);

	/* the URL limit stops the walk, inside a document or between two */
	CU_ASSERT_EQUAL_FATAL(rt_sitemap_walk_new("https://e.com", NULL, 3, a, &w), 0);
	feed(w, "https://e.com/sitemap.xml",
	     "<sitemapindex><sitemap><loc>/a.xml</loc></sitemap><sitemap><loc>/b.xml</loc></sitemap>"
	     "<sitemap><loc>/c.xml</loc></sitemap></sitemapindex>");
	feed(w, "https://e.com/a.xml", "<urlset><url><loc>1</loc></url><url><loc>2</loc></url></urlset>");
	feed(w, "https://e.com/b.xml", "<urlset><url><loc>3</loc></url><url><loc>4</loc></url></urlset>");
	CU_ASSERT_PTR_NULL(rt_sitemap_walk_next(w));
	o = result(w);
	CU_ASSERT_EQUAL(num(o, "total"), 3);
	CU_ASSERT(json_is_true(json_object_get(o, "truncated")));
	json_decref(o);

	/* the time bound */
	CU_ASSERT_EQUAL_FATAL(rt_sitemap_walk_new("https://e.com", NULL, 10, a, &w), 0);
	CU_ASSERT_PTR_NOT_NULL(rt_sitemap_walk_next(w));
	rt_sitemap_walk_expire(w);
	CU_ASSERT_PTR_NULL(rt_sitemap_walk_next(w));
	o = result(w);
	CU_ASSERT(json_is_true(json_object_get(o, "truncated")));
	CU_ASSERT_STRING_EQUAL(str(o, "source"), "none");
	json_decref(o);
	seo_arena_free(a);
}

/* ---- the driver, against the fake sites ---- */

typedef struct run {
	int rc, calls;
	json_t *res;
	struct event_base *base;
} run;

static void on_done(int rc, json_t *res, void *ud)
{
	run *r = ud;

	r->rc = rc;
	r->res = res;
	r->calls++;
	event_base_loopbreak(r->base);
}

/* A fetch configuration of `allow` nets and `connect_to` entries, kept
 * until the next call. */
static const seo_fetch_config *fetch_config(const char *allow, const char *connect_to)
{
	static seo_fetch_config cfg;

	seo_fetch_config_clear(&cfg);
	CU_ASSERT_EQUAL(seo_fetch_parse_allow_nets(allow, &cfg.allow_nets, &cfg.n_allow_nets), 0);
	CU_ASSERT_EQUAL(seo_fetch_parse_connect_to(connect_to, &cfg.connect_to,
						   &cfg.n_connect_to), 0);
	return &cfg;
}

/* Runs the walk of `origin` within `walk_ms` on a fresh fetcher whose
 * every host:80 is 127.0.0.1:`to_port`; the result in *r. */
static void walk_site_on(const char *origin, size_t limit, long walk_ms, int to_port,
			 run *r)
{
	seo_arena *a = seo_arena_new(0);
	seo_fetcher *f = NULL;
	char ct[64];

	snprintf(ct, sizeof(ct), ":80:127.0.0.1:%d", to_port);
	memset(r, 0, sizeof(*r));
	r->base = event_base_new();
	CU_ASSERT_FATAL(r->base != NULL);
	CU_ASSERT_EQUAL_FATAL(seo_fetcher_new(r->base, fetch_config("127.0.0.0/8", ct), &f), 0);
	CU_ASSERT_EQUAL_FATAL(rt_sitemap_fetch(f, origin, limit, walk_ms, a, on_done, r), 0);
	event_base_dispatch(r->base);
	CU_ASSERT_EQUAL(r->calls, 1);
	seo_fetcher_free(f);
	event_base_free(r->base);
	seo_arena_free(a);
}

static void walk_site(const char *origin, size_t limit, run *r)
{
	walk_site_on(origin, limit, 0, port, r);
}

static void test_driver(void)
{
	run r;
	json_t *d;

	walk_site("http://sm1.test", 100, &r);
	CU_ASSERT_EQUAL_FATAL(r.rc, 0);
	CU_ASSERT_STRING_EQUAL(str(r.res, "sitemap_url"), "http://sm1.test/index.xml");
	d = json_object_get(r.res, "data");
	CU_ASSERT_EQUAL_FATAL(json_array_size(d), 4);
	/* b.xml.gz (top level) before the children; then the nested one */
	CU_ASSERT_STRING_EQUAL(str(json_array_get(d, 0), "url"), "http://sm1.test/b");
	CU_ASSERT_STRING_EQUAL(str(json_array_get(d, 1), "url"), "http://sm1.test/1");
	CU_ASSERT_STRING_EQUAL(str(json_array_get(d, 3), "url"), "http://sm1.test/3");
	CU_ASSERT_STRING_EQUAL(str(json_array_get(d, 3), "priority"), "0.5");
	CU_ASSERT_EQUAL(num(r.res, "child_sitemaps_total"), 4);
	CU_ASSERT_EQUAL(json_array_size(json_object_get(r.res, "child_sitemaps_fetched")), 3);
	CU_ASSERT(json_is_false(json_object_get(r.res, "truncated")));
	json_decref(r.res);

	walk_site("http://sm1.test", 2, &r);
	CU_ASSERT_EQUAL_FATAL(r.rc, 0);
	CU_ASSERT_EQUAL(num(r.res, "total"), 2);
	CU_ASSERT(json_is_true(json_object_get(r.res, "truncated")));
	json_decref(r.res);

	walk_site("http://sm2.test", 100, &r);
	CU_ASSERT_EQUAL_FATAL(r.rc, 0);
	CU_ASSERT_STRING_EQUAL(str(r.res, "sitemap_url"), "http://sm2.test/sitemap_index.xml");
	CU_ASSERT_EQUAL(num(r.res, "total"), 1);
	json_decref(r.res);

	walk_site("http://sm3.test", 100, &r);
	CU_ASSERT_EQUAL_FATAL(r.rc, 0);
	CU_ASSERT_STRING_EQUAL(str(r.res, "source"), "none");
	json_decref(r.res);

	/* a private address is refused before anything is read */
	{
		seo_arena *a = seo_arena_new(0);
		seo_fetcher *f = NULL;

		memset(&r, 0, sizeof(r));
		r.base = event_base_new();
		CU_ASSERT_EQUAL_FATAL(seo_fetcher_new(r.base, fetch_config("", ""), &f), 0);
		CU_ASSERT_EQUAL_FATAL(rt_sitemap_fetch(f, "http://127.0.0.1", 10, 0, a, on_done, &r), 0);
		event_base_dispatch(r.base);
		CU_ASSERT_EQUAL(r.rc, SEO_EDENIED);
		CU_ASSERT_PTR_NULL(r.res);
		seo_fetcher_free(f);
		event_base_free(r.base);
		seo_arena_free(a);
	}
}

/* A caller with less time than the walk's 12 s: against a server that
 * takes connections and never answers, the walk ends when the caller's
 * time is up, truncated, and not later. */
static void test_driver_deadline(void)
{
	struct sockaddr_in sin = {.sin_family = AF_INET};
	socklen_t len = sizeof(sin);
	int hole = socket(AF_INET, SOCK_STREAM, 0);
	int64_t t0;
	long took;
	run r;

	CU_ASSERT_FATAL(hole >= 0);
	sin.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	CU_ASSERT_FATAL(bind(hole, (struct sockaddr *)&sin, sizeof(sin)) == 0);
	CU_ASSERT_FATAL(listen(hole, 16) == 0);
	CU_ASSERT_FATAL(getsockname(hole, (struct sockaddr *)&sin, &len) == 0);
	t0 = seo_mono_ms();
	walk_site_on("http://hole.test", 100, 400, ntohs(sin.sin_port), &r);
	took = (long)(seo_mono_ms() - t0);
	close(hole);
	CU_ASSERT_EQUAL_FATAL(r.rc, 0);
	CU_ASSERT(took >= 390);
	/* the bound, plus what a busy machine adds to an event loop */
	CU_ASSERT(took < 1400);
	CU_ASSERT(json_is_true(json_object_get(r.res, "truncated")));
	CU_ASSERT_STRING_EQUAL(str(r.res, "source"), "none");
	json_decref(r.res);
}

int main(void)
{
	CU_pSuite s;
	unsigned failed;

	if (CU_initialize_registry() != CUE_SUCCESS)
		return 1;
	s = CU_add_suite("rt_sitemap", NULL, NULL);
	CU_add_test(s, "urlset fields and namespaces", test_urlset);
	CU_add_test(s, "index and limits", test_index_and_limits);
	CU_add_test(s, "fed in pieces of any size", test_pieces);
	CU_add_test(s, "the feed says when reading is over", test_feed_stops);
	CU_add_test(s, "gzip", test_gzip);
	CU_add_test(s, "size bound", test_size_bound);
	CU_add_test(s, "entities are not expanded", test_entities);
	CU_add_test(s, "malformed documents", test_malformed);
	CU_add_test(s, "real sitemaps", test_real_files);
	CU_add_test(s, "walk order and nesting", test_walk_order);
	CU_add_test(s, "walk discovery fallbacks", test_walk_fallbacks);
	CU_add_test(s, "walk bounds", test_walk_bounds);
	if (test_site_start(&port) == 0) {
		s = CU_add_suite("rt_sitemap_driver", NULL, test_site_stop);
		CU_add_test(s, "driver against local sites", test_driver);
		CU_add_test(s, "driver within the caller's deadline", test_driver_deadline);
	} else {
		fprintf(stderr, "site_server.py did not start\n");
		test_site_stop();
		CU_cleanup_registry();
		return 1;
	}
	CU_basic_set_mode(CU_BRM_NORMAL);
	CU_basic_run_tests();
	failed = CU_get_number_of_failures();
	CU_cleanup_registry();
	return failed ? 1 : 0;
}

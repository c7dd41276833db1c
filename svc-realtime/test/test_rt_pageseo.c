/*
 * test_rt_pageseo.c: the page SEO audit on hand-written pages, one rule
 * and boundary at a time, from several threads at once (the parsers are
 * pooled), and on every saved real page of ../shared/data/pages (skipped
 * when absent): no crash, sane output.
 */
#include "rt.h"

#include <CUnit/Basic.h>
#include <dirent.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

static json_t *audit_h(const char *html, const seo_header *h, size_t nh)
{
	rt_page p = {"https://www.example.com/a/page?x=1",
		     "https://www.example.com/a/page?x=1", 200, 12, html,
		     strlen(html), h, nh};
	json_t *out = NULL;

	CU_ASSERT_EQUAL_FATAL(rt_page_seo(&p, &out), 0);
	return out;
}

static json_t *audit(const char *html)
{
	return audit_h(html, NULL, 0);
}

static json_t *get(json_t *o, const char *path)
{
	char buf[128], *save, *k;

	snprintf(buf, sizeof(buf), "%s", path);
	for (k = strtok_r(buf, ".", &save); k && o; k = strtok_r(NULL, ".", &save))
		o = json_object_get(o, k);
	return o;
}

static long geti(json_t *o, const char *path)
{
	return (long)json_integer_value(get(o, path));
}

static const char *gets_(json_t *o, const char *path)
{
	return json_string_value(get(o, path));
}

/* A page whose <title> is `n` characters (multi-byte ones count once). */
static json_t *title_page(int n, const char *ch)
{
	char html[1024] = "<title>  ";

	for (int i = 0; i < n; i++)
		strcat(html, ch);
	strcat(html, "\n</title>");
	return audit(html);
}

static void test_title(void)
{
	static const struct { int n; int optimal; } cases[] = {
		{29, 0}, {30, 1}, {45, 1}, {60, 1}, {61, 0}, {1, 0},
	};
	json_t *o;

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		o = title_page(cases[i].n, "a");
		CU_ASSERT_EQUAL(geti(o, "title.length"), cases[i].n);
		CU_ASSERT_EQUAL(json_is_true(get(o, "title.optimal")), cases[i].optimal);
		json_decref(o);
	}
	o = title_page(30, "\xc3\xa9");
	CU_ASSERT_EQUAL(geti(o, "title.length"), 30);
	CU_ASSERT(json_is_true(get(o, "title.optimal")));
	json_decref(o);
	o = audit("<title> a \n\t b </title><svg><title>not this</title></svg>");
	CU_ASSERT_STRING_EQUAL(gets_(o, "title.text"), "a b");
	CU_ASSERT_EQUAL(geti(o, "title.length"), 3);
	json_decref(o);
	o = audit("<p>no title</p>");
	CU_ASSERT(json_is_null(get(o, "title.text")));
	CU_ASSERT_EQUAL(geti(o, "title.length"), 0);
	CU_ASSERT(json_is_false(get(o, "title.optimal")));
	json_decref(o);
}

static void test_description(void)
{
	static const struct { int n; int optimal; } cases[] = {
		{119, 0}, {120, 1}, {160, 1}, {161, 0},
	};
	char html[512];

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		json_t *o;

		snprintf(html, sizeof(html), "<meta name=Description content=\"%*s\">",
			 cases[i].n, "d");
		memset(strchr(html, '"') + 1, 'd', (size_t)cases[i].n);
		o = audit(html);
		CU_ASSERT_EQUAL(geti(o, "description.length"), cases[i].n);
		CU_ASSERT_EQUAL(json_is_true(get(o, "description.optimal")), cases[i].optimal);
		json_decref(o);
	}
	json_t *o = audit("<p>x");
	CU_ASSERT(json_is_null(get(o, "description.text")));
	CU_ASSERT(json_is_false(get(o, "description.optimal")));
	json_decref(o);
}

static void test_canonical(void)
{
	json_t *o = audit("<link rel=canonical href=\"/a/page?x=1\">");

	CU_ASSERT_STRING_EQUAL(gets_(o, "canonical.url"), "https://www.example.com/a/page?x=1");
	CU_ASSERT(json_is_true(get(o, "canonical.self_referential")));
	json_decref(o);
	o = audit("<link rel=\"Canonical\" href=\"https://example.com/a/page\">");
	CU_ASSERT(json_is_false(get(o, "canonical.self_referential")));
	json_decref(o);
	o = audit("<base href=\"https://www.example.com/a/\"><link rel=canonical href=\"page?x=1\">");
	CU_ASSERT(json_is_true(get(o, "canonical.self_referential")));
	json_decref(o);
	o = audit("<p>");
	CU_ASSERT(json_is_null(get(o, "canonical.url")));
	CU_ASSERT(json_is_false(get(o, "canonical.self_referential")));
	json_decref(o);
}

static void test_robots(void)
{
	seo_header h[] = {{"x-robots-tag", "nofollow"}, {"x-robots-tag", "otherbot: noindex"}};
	json_t *o = audit("<p>");

	CU_ASSERT(json_is_true(get(o, "robots.index")));
	CU_ASSERT(json_is_true(get(o, "robots.follow")));
	CU_ASSERT_STRING_EQUAL(gets_(o, "robots.raw"), "");
	json_decref(o);
	o = audit("<meta name=ROBOTS content=\"NoIndex, follow\">");
	CU_ASSERT(json_is_false(get(o, "robots.index")));
	CU_ASSERT(json_is_true(get(o, "robots.follow")));
	CU_ASSERT_STRING_EQUAL(gets_(o, "robots.raw"), "NoIndex, follow");
	json_decref(o);
	o = audit("<meta name=robots content=none>");
	CU_ASSERT(json_is_false(get(o, "robots.index")));
	CU_ASSERT(json_is_false(get(o, "robots.follow")));
	json_decref(o);
	o = audit_h("<meta name=robots content=index>", h, 2);
	CU_ASSERT(json_is_true(get(o, "robots.index")));
	CU_ASSERT(json_is_false(get(o, "robots.follow")));
	CU_ASSERT_STRING_EQUAL(gets_(o, "robots.raw"), "index, nofollow");
	json_decref(o);
}

static void test_head_fields(void)
{
	seo_header cl[] = {{"content-language", "de-DE, en"}};
	json_t *o = audit(
		"<html lang=\"en-GB\"><head>"
		"<meta name=viewport content=\"width=device-width, initial-scale=1\">"
		"<link rel=alternate hreflang=de href=\"/de/\">"
		"<link rel=alternate hreflang=x-default href=\"https://www.example.com/\">"
		"<meta property=og:title content=OT><meta property=og:description content=OD>"
		"<meta property=og:image content=/i.png><meta property=og:type content=article>"
		"<meta property=og:url content=https://www.example.com/>"
		"<meta name=twitter:card content=summary><meta name=twitter:title content=TT>"
		"<link rel=\"shortcut icon\" href=\"/fav.ico\">"
		"<script type=\"application/ld+json\">{\"@type\":\"Article\"}</script>"
		"<script type=\"application/ld+json\">[{\"@type\":\"A\"},{\"@type\":\"B\"}]</script>"
		"<script type=\"application/ld+json\">{broken</script>"
		"</head></html>");

	CU_ASSERT_STRING_EQUAL(gets_(o, "viewport"), "width=device-width, initial-scale=1");
	CU_ASSERT_STRING_EQUAL(gets_(o, "language.tag"), "en-GB");
	CU_ASSERT_STRING_EQUAL(gets_(o, "language.primary"), "en");
	CU_ASSERT_STRING_EQUAL(gets_(o, "language.source"), "html_lang");
	CU_ASSERT_EQUAL(json_array_size(get(o, "hreflang")), 2);
	CU_ASSERT_STRING_EQUAL(json_string_value(json_object_get(json_array_get(get(o, "hreflang"), 0), "url")),
			       "https://www.example.com/de/");
	CU_ASSERT_STRING_EQUAL(json_string_value(json_object_get(json_array_get(get(o, "hreflang"), 1), "lang")),
			       "x-default");
	CU_ASSERT_STRING_EQUAL(gets_(o, "og.title"), "OT");
	CU_ASSERT_STRING_EQUAL(gets_(o, "og.description"), "OD");
	CU_ASSERT_STRING_EQUAL(gets_(o, "og.image"), "/i.png");
	CU_ASSERT_STRING_EQUAL(gets_(o, "og.type"), "article");
	CU_ASSERT_STRING_EQUAL(gets_(o, "og.url"), "https://www.example.com/");
	CU_ASSERT_STRING_EQUAL(gets_(o, "twitter.card"), "summary");
	CU_ASSERT_STRING_EQUAL(gets_(o, "twitter.title"), "TT");
	CU_ASSERT_STRING_EQUAL(gets_(o, "favicon"), "https://www.example.com/fav.ico");
	CU_ASSERT_EQUAL(json_array_size(get(o, "json_ld")), 3);
	json_decref(o);

	o = audit_h("<p>", cl, 1);
	CU_ASSERT_STRING_EQUAL(gets_(o, "language.tag"), "de-DE");
	CU_ASSERT_STRING_EQUAL(gets_(o, "language.primary"), "de");
	CU_ASSERT_STRING_EQUAL(gets_(o, "language.source"), "content_language_header");
	CU_ASSERT_STRING_EQUAL(gets_(o, "viewport"), "");
	CU_ASSERT_STRING_EQUAL(gets_(o, "favicon"), "");
	CU_ASSERT_STRING_EQUAL(gets_(o, "og.title"), "");
	json_decref(o);
	o = audit("<meta http-equiv=Content-Language content=fr>");
	CU_ASSERT_STRING_EQUAL(gets_(o, "language.source"), "meta_content_language");
	json_decref(o);
	o = audit("<p>");
	CU_ASSERT_STRING_EQUAL(gets_(o, "language.source"), "none");
	CU_ASSERT_STRING_EQUAL(gets_(o, "language.tag"), "");
	json_decref(o);
	/* a long tag is cut between characters (found by fuzz_pageseo) */
	o = audit("<html lang=\"de-DE\xe2\x82\xac\xe2\x82\xac\xe2\x82\xac\xe2\x82\xac"
		  "\xe2\x82\xac\xe2\x82\xac\xe2\x82\xac\xe2\x82\xac\xe2\x82\xac\xe2\x82\xac"
		  "\xe2\x82\xac\xe2\x82\xac\xe2\x82\xac\xe2\x82\xac\xe2\x82\xac\xe2\x82\xac"
		  "\xe2\x82\xac\xe2\x82\xac\xe2\x82\xac\xe2\x82\xac\xe2\x82\xac\xe2\x82\xac\">");
	CU_ASSERT_EQUAL(strlen(gets_(o, "language.tag")), 5 + 3 * 19);
	CU_ASSERT_STRING_EQUAL(gets_(o, "language.primary"), "de");
	json_decref(o);
}

static void test_body_fields(void)
{
	json_t *o = audit(
		"<head><title>Not counted</title><style>p{x:y}</style></head><body>"
		"<h1> Main <b>heading</b></h1><h1>Second</h1><h2>Sub</h2><h3>a</h3><h3>b</h3>"
		"<p>one two, th<b>ree</b> - caf\xc3\xa9</p><script>var no = words;</script>"
		"<noscript>hidden words</noscript><div>four</div><span>five</span>"
		"<img src=a.png alt=\"\"><img src=b.png><img src=c.png alt=x><svg><image/></svg>"
		"<a href=/x>in</a><a href=\"page2\">in</a><a href=\"#top\">in</a>"
		"<a href=\"https://example.com/\">in</a><a href=\"//www.example.com:8443/\">in</a>"
		"<a href=\"https://other.org/\">out</a><a href=\"HTTP://Sub.Example.com/\">out</a>"
		"<a href=\"mailto:a@b\">no</a><a href=\"javascript:void(0)\">no</a><a>no</a>"
		"</body>");

	CU_ASSERT_EQUAL(json_array_size(get(o, "headings.h1")), 2);
	CU_ASSERT_STRING_EQUAL(json_string_value(json_array_get(get(o, "headings.h1"), 0)), "Main heading");
	CU_ASSERT_STRING_EQUAL(json_string_value(json_array_get(get(o, "headings.h2"), 0)), "Sub");
	CU_ASSERT_EQUAL(geti(o, "headings.h3_count"), 2);
	CU_ASSERT_EQUAL(geti(o, "images.total"), 3);
	CU_ASSERT_EQUAL(geti(o, "images.missing_alt"), 1);
	CU_ASSERT_EQUAL(geti(o, "links.internal"), 5);
	CU_ASSERT_EQUAL(geti(o, "links.external"), 2);
	/* Main heading Second Sub a b one two three café four five, and
	 * the adjacent links render as one run "ininin...nono" */
	CU_ASSERT_EQUAL(geti(o, "word_count"), 13);
	CU_ASSERT_EQUAL(geti(o, "status_code"), 200);
	CU_ASSERT_EQUAL(geti(o, "response_time_ms"), 12);
	CU_ASSERT_STRING_EQUAL(gets_(o, "final_url"), "https://www.example.com/a/page?x=1");
	json_decref(o);
	o = audit("");
	CU_ASSERT_EQUAL(geti(o, "word_count"), 0);
	json_decref(o);
}

/* A page on an IDN host: links to its host in Unicode, any case, are
 * internal (they compare in punycode), and resolve to punycode. */
static void test_idn_links(void)
{
	rt_page p = {"https://b\xc3\xbc" "cher.example/", "https://xn--bcher-kva.example/", 200, 1,
		     NULL, 0, NULL, 0};
	const char *html =
		"<link rel=alternate hreflang=de href=\"https://B\xc3\x9c" "CHER.example/de\">"
		"<a href=\"https://b\xc3\xbc" "cher.example/x\">in</a>"
		"<a href=\"//www.B\xc3\x9c" "CHER.example./\">in</a>"
		"<a href=\"https://xn--bcher-kva.example/y\">in</a>"
		"<a href=\"https://b\xc3\xa4" "cher.example/\">out</a>"
		"<a href=\"https://\xe2\x98\x83.example/\">out</a>";
	json_t *o = NULL;

	p.html = html;
	p.html_len = strlen(html);
	CU_ASSERT_EQUAL_FATAL(rt_page_seo(&p, &o), 0);
	CU_ASSERT_EQUAL(geti(o, "links.internal"), 3);
	CU_ASSERT_EQUAL(geti(o, "links.external"), 2);
	CU_ASSERT_STRING_EQUAL(gets_(json_array_get(get(o, "hreflang"), 0), "url"),
			       "https://xn--bcher-kva.example/de");
	CU_ASSERT_STRING_EQUAL(gets_(o, "url"), "https://b\xc3\xbc" "cher.example/");
	json_decref(o);
}

/* Attributes and NUL bytes as HTML5 reads them: a valueless attribute is
 * present, a repeated one keeps its first value; a NUL is U+FFFD in a
 * title and dropped from body text, never the end of either. */
static void test_parser_details(void)
{
	static const char html[] = "<title>a\0b</title><meta name=description content=first "
				   "content=second><img src=a.png alt><img src=b.png ALT=x alt>"
				   "<p>one\0 two three</p>";
	rt_page p = {"https://example.com/", "https://example.com/", 200, 1, html,
		     sizeof(html) - 1, NULL, 0};
	json_t *o = NULL;

	CU_ASSERT_EQUAL_FATAL(rt_page_seo(&p, &o), 0);
	CU_ASSERT_STRING_EQUAL(gets_(o, "title.text"), "a\xef\xbf\xbd" "b");
	CU_ASSERT_EQUAL(geti(o, "word_count"), 3);
	CU_ASSERT_STRING_EQUAL(gets_(o, "description.text"), "first");
	CU_ASSERT_EQUAL(geti(o, "images.total"), 2);
	CU_ASSERT_EQUAL(geti(o, "images.missing_alt"), 0);
	json_decref(o);
}

/* Pages of the threads below: each is checked by its title and word
 * count, so that a parser shared by two threads, or a tree left with a
 * previous page in it, shows. */
static const struct {
	const char *html, *title;
	long words;
} thread_pages[] = {
	{"<html lang=fr><head><title>first page</title><base href=/x/></head>"
	 "<body><p>one two three</p></body></html>", "first page", 3},
	{"<p>no title here at all</p>", NULL, 5},
	{"<title>third</title><table><tr>fostered words<td>cell</table>", "third", 3},
};

#define THREADS 4
#define THREAD_RUNS 60

typedef struct worker {
	int id;
	long bad; /* runs that went wrong */
} worker;

static void *audit_thread(void *arg)
{
	worker *w = arg;

	for (int i = 0; i < THREAD_RUNS; i++) {
		size_t k = (size_t)(i + w->id) % 3;
		const char *html = thread_pages[k].html;
		rt_page p = {"https://example.com/", "https://example.com/", 200, 1, html,
			     strlen(html), NULL, 0};
		json_t *o = NULL;
		const char *t;

		if (rt_page_seo(&p, &o) != 0) {
			w->bad++;
			continue;
		}
		t = gets_(o, "title.text");
		if (geti(o, "word_count") != thread_pages[k].words ||
		    (thread_pages[k].title ? t == NULL || strcmp(t, thread_pages[k].title) != 0
					   : t != NULL))
			w->bad++;
		json_decref(o);
	}
	return NULL;
}

/* A page above the size whose parser is kept (1 MiB): destroyed after,
 * then audited again on a new one. */
static void *big_thread(void *arg)
{
	static const char word[] = "<p>word</p>";
	size_t n = (1536 * 1024) / (sizeof(word) - 1);
	char *html = malloc(n * (sizeof(word) - 1) + 1);
	worker *w = arg;

	if (html == NULL) {
		w->bad++;
		return NULL;
	}
	for (size_t i = 0; i < n; i++)
		memcpy(html + i * (sizeof(word) - 1), word, sizeof(word));
	for (int r = 0; r < 2; r++) {
		rt_page p = {"https://example.com/", "https://example.com/", 200, 1, html,
			     n * (sizeof(word) - 1), NULL, 0};
		json_t *o = NULL;

		if (rt_page_seo(&p, &o) != 0 || geti(o, "word_count") != (long)n)
			w->bad++;
		json_decref(o);
	}
	free(html);
	return NULL;
}

static void test_threads(void)
{
	pthread_t th[THREADS + 1];
	worker w[THREADS + 1];

	for (int i = 0; i <= THREADS; i++) {
		w[i] = (worker){i, 0};
		CU_ASSERT_EQUAL_FATAL(pthread_create(&th[i], NULL,
						     i < THREADS ? audit_thread : big_thread, &w[i]), 0);
	}
	for (int i = 0; i <= THREADS; i++) {
		pthread_join(th[i], NULL);
		CU_ASSERT_EQUAL(w[i].bad, 0);
	}
}

/* Every saved real page: the audit succeeds and its JSON is complete. */
static void test_real_pages(void)
{
	const char *src = getenv("SEO_SOURCE_DIR");
	static const char *const dirs[] = {"readability", "trafilatura", "extruct"};
	char path[4096];
	int pages = 0;

	if (src == NULL) {
		fprintf(stderr, "\nSEO_SOURCE_DIR unset: real pages skipped\n");
		return;
	}
	for (size_t d = 0; d < sizeof(dirs) / sizeof(dirs[0]); d++) {
		DIR *dir;
		struct dirent *de;

		snprintf(path, sizeof(path), "%s/../shared/data/pages/%s", src, dirs[d]);
		dir = opendir(path);
		if (dir == NULL)
			continue;
		while ((de = readdir(dir)) != NULL) {
			char file[4600];
			seo_arena *a = seo_arena_new(0);
			FILE *f;
			struct stat st;
			char *raw, *html;
			size_t len;
			json_t *o = NULL;
			rt_page p = {"https://page.test/", "https://page.test/", 200, 1, NULL, 0, NULL, 0};

			if (strstr(de->d_name, ".htm") == NULL) {
				seo_arena_free(a);
				continue;
			}
			snprintf(file, sizeof(file), "%s/%s", path, de->d_name);
			f = fopen(file, "rb");
			if (f == NULL || fstat(fileno(f), &st) != 0) {
				if (f)
					fclose(f);
				seo_arena_free(a);
				continue;
			}
			raw = malloc((size_t)st.st_size + 1);
			CU_ASSERT_FATAL(raw != NULL);
			len = fread(raw, 1, (size_t)st.st_size, f);
			fclose(f);
			CU_ASSERT_EQUAL(seo_to_utf8(raw, len, seo_charset_detect(raw, len, NULL, a),
						   a, &html, &p.html_len), 0);
			p.html = html;
			CU_ASSERT_EQUAL(rt_page_seo(&p, &o), 0);
			CU_ASSERT(json_is_object(get(o, "title")));
			CU_ASSERT(geti(o, "word_count") >= 0);
			CU_ASSERT(geti(o, "images.missing_alt") <= geti(o, "images.total"));
			CU_ASSERT(json_is_array(get(o, "json_ld")));
			/* the whole object serialises: every string is UTF-8 */
			char *dump = json_dumps(o, 0);

			CU_ASSERT_PTR_NOT_NULL(dump);
			free(dump);
			json_decref(o);
			free(raw);
			seo_arena_free(a);
			pages++;
		}
		closedir(dir);
	}
	if (pages == 0)
		fprintf(stderr, "\nno saved pages found: real pages skipped\n");
	else
		fprintf(stderr, "\n%d real pages audited\n", pages);
}

int main(void)
{
	CU_pSuite s;
	unsigned failed;

	if (CU_initialize_registry() != CUE_SUCCESS)
		return 1;
	s = CU_add_suite("rt_pageseo", NULL, NULL);
	CU_add_test(s, "title length and optimal range", test_title);
	CU_add_test(s, "description length and optimal range", test_description);
	CU_add_test(s, "canonical and self-reference", test_canonical);
	CU_add_test(s, "robots meta and X-Robots-Tag", test_robots);
	CU_add_test(s, "head fields", test_head_fields);
	CU_add_test(s, "body fields", test_body_fields);
	CU_add_test(s, "links of an IDN host", test_idn_links);
	CU_add_test(s, "attributes and NUL bytes as MyHTML reads them", test_parser_details);
	CU_add_test(s, "audits from several threads, a page above 1 MiB", test_threads);
	CU_add_test(s, "real saved pages", test_real_pages);
	CU_basic_set_mode(CU_BRM_NORMAL);
	CU_basic_run_tests();
	failed = CU_get_number_of_failures();
	CU_cleanup_registry();
	return failed ? 1 : 0;
}

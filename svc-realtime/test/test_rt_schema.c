/*
 * test_rt_schema.c: schema-markup extraction on hand-written pages, one
 * rule at a time, and on every saved real page of ../shared/data/pages
 * (skipped when absent): block counts as the pages' MANIFEST.tsv records
 * them, the same answer as when the page is surely parsed (the no-parse
 * shortcut hides nothing), no crash, sane output.
 */
#include "rt.h"

#include <CUnit/Basic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static json_t *run(const char *html)
{
	rt_page p = {"https://example.com/", "https://example.com/", 200, 7, html,
		     strlen(html), NULL, 0};
	json_t *out = NULL;

	CU_ASSERT_EQUAL_FATAL(rt_schema_markup(&p, &out), 0);
	return out;
}

static long geti(json_t *o, const char *k)
{
	return (long)json_integer_value(json_object_get(o, k));
}

static json_t *entity(json_t *o, size_t i)
{
	return json_array_get(json_object_get(o, "data"), i);
}

/* An array of strings as "A,B". */
static const char *join(json_t *arr, char *buf, size_t cap)
{
	size_t i;
	json_t *v;

	buf[0] = '\0';
	json_array_foreach(arr, i, v)
		snprintf(buf + strlen(buf), cap - strlen(buf), "%s%s", i ? "," : "",
			 json_string_value(v));
	return buf;
}

static void test_none(void)
{
	json_t *o = run("<html><head><script>var a = 1;</script>"
			"<script type=\"application/json\">{\"@type\":\"X\"}</script></head></html>");

	CU_ASSERT_EQUAL(json_array_size(json_object_get(o, "data")), 0);
	CU_ASSERT(json_is_false(json_object_get(o, "has_schema_markup")));
	CU_ASSERT_EQUAL(geti(o, "block_count"), 0);
	CU_ASSERT_EQUAL(geti(o, "valid_block_count"), 0);
	CU_ASSERT_EQUAL(geti(o, "invalid_block_count"), 0);
	CU_ASSERT_EQUAL(json_array_size(json_object_get(o, "types")), 0);
	CU_ASSERT_EQUAL(json_array_size(json_object_get(o, "invalid_blocks")), 0);
	CU_ASSERT_STRING_EQUAL(json_string_value(json_object_get(o, "final_url")),
			       "https://example.com/");
	CU_ASSERT_EQUAL(geti(o, "status_code"), 200);
	CU_ASSERT_EQUAL(geti(o, "response_time_ms"), 7);
	json_decref(o);
}

static void test_object_and_array(void)
{
	char buf[128];
	json_t *o = run(
		"<script type=\"application/ld+json\">{\"@context\":\"https://schema.org\","
		"\"@type\":\"Organization\",\"@id\":\"#org\",\"name\":\"Acme\"}</script>"
		"<body><script type=\"application/ld+json\">[{\"@type\":[\"Product\",7,\"Thing\"]},"
		"42,{\"name\":\"untyped\",\"@id\":5}]</script></body>");
	json_t *e;

	CU_ASSERT_EQUAL(geti(o, "block_count"), 2);
	CU_ASSERT_EQUAL(geti(o, "valid_block_count"), 2);
	CU_ASSERT_EQUAL_FATAL(json_array_size(json_object_get(o, "data")), 3);
	e = entity(o, 0);
	CU_ASSERT_STRING_EQUAL(join(json_object_get(e, "type"), buf, sizeof(buf)), "Organization");
	CU_ASSERT_STRING_EQUAL(json_string_value(json_object_get(e, "id")), "#org");
	CU_ASSERT_EQUAL(geti(e, "block_index"), 0);
	CU_ASSERT_STRING_EQUAL(json_string_value(json_object_get(e, "source")), "top_level");
	CU_ASSERT_STRING_EQUAL(json_string_value(json_object_get(
		json_object_get(e, "properties"), "name")), "Acme");
	CU_ASSERT_PTR_NOT_NULL(json_object_get(json_object_get(e, "properties"), "@context"));
	e = entity(o, 1);
	/* non-string members of @type are dropped */
	CU_ASSERT_STRING_EQUAL(join(json_object_get(e, "type"), buf, sizeof(buf)), "Product,Thing");
	CU_ASSERT(json_is_null(json_object_get(e, "id")));
	CU_ASSERT_EQUAL(geti(e, "block_index"), 1);
	CU_ASSERT_STRING_EQUAL(json_string_value(json_object_get(e, "source")), "top_level");
	e = entity(o, 2);
	/* no @type: an empty array; a non-string @id: null */
	CU_ASSERT(json_is_array(json_object_get(e, "type")));
	CU_ASSERT_EQUAL(json_array_size(json_object_get(e, "type")), 0);
	CU_ASSERT(json_is_null(json_object_get(e, "id")));
	CU_ASSERT(json_is_true(json_object_get(o, "has_schema_markup")));
	CU_ASSERT_STRING_EQUAL(join(json_object_get(o, "types"), buf, sizeof(buf)), "Organization,Product,Thing");
	json_decref(o);
}

static void test_graph(void)
{
	char buf[128];
	json_t *o = run(
		"<script type=\"application/ld+json\">{\"@context\":\"https://schema.org\",\"@graph\":["
		"{\"@type\":\"WebSite\",\"@id\":\"https://example.com/#website\"},"
		"\"not an object\","
		"{\"@type\":\"WebPage\",\"@graph\":[{\"@type\":\"Hidden\"}]}]}</script>"
		"<script type=\"application/ld+json\">{\"@type\":\"Article\",\"@graph\":{\"@type\":\"Person\"}}</script>"
		"<script type=\"application/ld+json\">{\"@graph\":\"junk\",\"name\":\"x\"}</script>");
	json_t *e;

	CU_ASSERT_EQUAL_FATAL(json_array_size(json_object_get(o, "data")), 5);
	/* the bare @graph wrapper is no entity; its objects are */
	e = entity(o, 0);
	CU_ASSERT_STRING_EQUAL(join(json_object_get(e, "type"), buf, sizeof(buf)), "WebSite");
	CU_ASSERT_STRING_EQUAL(json_string_value(json_object_get(e, "source")), "graph");
	CU_ASSERT_STRING_EQUAL(json_string_value(json_object_get(e, "id")),
			       "https://example.com/#website");
	CU_ASSERT_EQUAL(geti(e, "block_index"), 0);
	/* one level only: the nested @graph stays in the item's properties */
	e = entity(o, 1);
	CU_ASSERT_STRING_EQUAL(join(json_object_get(e, "type"), buf, sizeof(buf)), "WebPage");
	CU_ASSERT(json_is_array(json_object_get(json_object_get(e, "properties"), "@graph")));
	/* a typed object holding @graph is an entity, and so is its graph */
	e = entity(o, 2);
	CU_ASSERT_STRING_EQUAL(join(json_object_get(e, "type"), buf, sizeof(buf)), "Article");
	CU_ASSERT_STRING_EQUAL(json_string_value(json_object_get(e, "source")), "top_level");
	e = entity(o, 3);
	CU_ASSERT_STRING_EQUAL(join(json_object_get(e, "type"), buf, sizeof(buf)), "Person");
	CU_ASSERT_STRING_EQUAL(json_string_value(json_object_get(e, "source")), "graph");
	CU_ASSERT_EQUAL(geti(e, "block_index"), 1);
	/* an @graph that is no array or object does not make a wrapper */
	e = entity(o, 4);
	CU_ASSERT_EQUAL(geti(e, "block_index"), 2);
	CU_ASSERT_STRING_EQUAL(json_string_value(json_object_get(e, "source")), "top_level");
	CU_ASSERT_STRING_EQUAL(join(json_object_get(o, "types"), buf, sizeof(buf)), "Article,Person,WebPage,WebSite");
	json_decref(o);
}

static void test_invalid(void)
{
	json_t *o = run(
		"<script type=\"application/ld+json\">{\"@type\":\"A\"}</script>"
		"<script type=\"application/ld+json\">{\"@type\":\"B\",\n  \"name\": oops}</script>"
		"<script type=\"application/ld+json\">   </script>"
		"<script type=\"application/ld+json\">\"just a string\"</script>"
		"<script type=\"application/ld+json\">{\"@type\":\"C\"}</script>");
	json_t *inv = json_object_get(o, "invalid_blocks"), *b;

	CU_ASSERT_EQUAL(geti(o, "block_count"), 5);
	CU_ASSERT_EQUAL(geti(o, "valid_block_count"), 3);
	CU_ASSERT_EQUAL(geti(o, "invalid_block_count"), 2);
	CU_ASSERT_EQUAL_FATAL(json_array_size(inv), 2);
	b = json_array_get(inv, 0);
	CU_ASSERT_EQUAL(geti(b, "index"), 1);
	CU_ASSERT_PTR_NOT_NULL(strstr(json_string_value(json_object_get(b, "error")), "oops"));
	CU_ASSERT_EQUAL(geti(b, "line"), 2);
	CU_ASSERT(geti(b, "column") > 0);
	CU_ASSERT(geti(b, "position") > 0);
	CU_ASSERT_EQUAL(geti(json_array_get(inv, 1), "index"), 2);
	/* a JSON string is a valid block without entities */
	CU_ASSERT_EQUAL(json_array_size(json_object_get(o, "data")), 2);
	CU_ASSERT_EQUAL(geti(entity(o, 1), "block_index"), 4);
	json_decref(o);

	/* jansson's message quotes half of the U+00B4 after the bad escape:
	 * the block is still listed, its error valid UTF-8 (found by
	 * fuzz_schema) */
	o = run("<script type=\"application/ld+json\">{\"a\\\xc2\xb4\": 1}</script>");
	inv = json_object_get(o, "invalid_blocks");
	CU_ASSERT_EQUAL_FATAL(json_array_size(inv), 1);
	CU_ASSERT_PTR_NOT_NULL(json_string_value(json_object_get(json_array_get(inv, 0), "error")));
	json_decref(o);
}

static void test_type_attribute(void)
{
	json_t *o = run(
		"<script type=\"Application/LD+JSON; charset=utf-8\">{\"@type\":\"A\"}</script>"
		"<script type=\" application/ld+json \">{\"@type\":\"B\"}</script>"
		"<script type=\"application/ld+jsonx\">{\"@type\":\"C\"}</script>"
		"<script>{\"@type\":\"D\"}</script>");

	CU_ASSERT_EQUAL(geti(o, "block_count"), 2);
	CU_ASSERT_EQUAL(json_array_size(json_object_get(o, "types")), 2);
	json_decref(o);
}

static void test_wrappers(void)
{
	char buf[64];
	json_t *o = run(
		"<script type=\"application/ld+json\"><!--\n{\"@type\":\"A\"}\n--></script>"
		"<script type=\"application/ld+json\">//<![CDATA[\n{\"@type\":\"B\"}\n//]]></script>"
		"<script type=\"application/ld+json\">/*<![CDATA[*/{\"@type\":\"C\"}/*]]>*/</script>"
		"<script type=\"application/ld+json\"><![CDATA[{\"@type\":\"D\"}]]></script>"
		"<script type=\"application/ld+json\"><!--\n{\"@type\":\"E\" x}\n--></script>");
	json_t *b;

	CU_ASSERT_EQUAL(geti(o, "valid_block_count"), 4);
	CU_ASSERT_STRING_EQUAL(join(json_object_get(o, "types"), buf, sizeof(buf)), "A,B,C,D");
	/* the error still points into the page's text: line 2 after "<!--" */
	b = json_array_get(json_object_get(o, "invalid_blocks"), 0);
	CU_ASSERT_EQUAL(geti(b, "index"), 4);
	CU_ASSERT_EQUAL(geti(b, "line"), 2);
	json_decref(o);
}

/* A page without the letters of "ld+json" is not parsed: these spell the
 * type with character references, which only a parse decodes, and must
 * still be read; a page that merely names the type is parsed for nothing
 * and answers the same. */
static void test_no_parse_shortcut(void)
{
	static const char *const types[] = {
		"application/LD+JSON", "application/ld&#43;json", "application/ld&#x2B;json",
		"application/ld&plus;json", "application/&#108;d+json", "application/l&#x64;&#43;json",
		"application/ld+&#0106;son", "application/ld+jso&#110", "APPLICATION/LD&#43;JSON",
	};
	char page[512];

	for (size_t i = 0; i < sizeof(types) / sizeof(types[0]); i++) {
		json_t *o;

		snprintf(page, sizeof(page), "<p>x</p><script type=\"%s\">{\"@type\":\"A\"}</script>",
			 types[i]);
		o = run(page);
		if (geti(o, "block_count") != 1)
			fprintf(stderr, "\n%s: not read\n", types[i]);
		CU_ASSERT_EQUAL(geti(o, "block_count"), 1);
		CU_ASSERT_EQUAL(json_array_size(json_object_get(o, "data")), 1);
		json_decref(o);
	}
	{
		json_t *o = run("<p>ld+json &#8217; &amp; &#x1F600;</p><script type=\"application/json\">"
				"{\"@type\":\"A\"}</script>");

		CU_ASSERT_EQUAL(geti(o, "block_count"), 0);
		CU_ASSERT(json_is_false(json_object_get(o, "has_schema_markup")));
		json_decref(o);
	}
}

/* rt_schema_markup() of `p` with a comment naming the type put before the
 * page: a comment there changes no element, so the answer must be the
 * same, only with the page surely parsed. */
static json_t *run_parsed(const rt_page *p)
{
	static const char lead[] = "<!-- ld+json -->";
	size_t n = sizeof(lead) - 1 + p->html_len;
	char *html = malloc(n + 1);
	rt_page q = *p;
	json_t *o = NULL;

	CU_ASSERT_FATAL(html != NULL);
	memcpy(html, lead, sizeof(lead) - 1);
	memcpy(html + sizeof(lead) - 1, p->html, p->html_len + 1);
	q.html = html;
	q.html_len = n;
	CU_ASSERT_EQUAL(rt_schema_markup(&q, &o), 0);
	free(html);
	return o;
}

/* Reads MANIFEST.tsv of `dir` and checks each page's block count, and that
 * the answer is the one of a page surely parsed. */
static int check_dir(const char *dir)
{
	char path[4096], line[8192];
	FILE *m;
	int pages = 0;

	if ((size_t)snprintf(path, sizeof(path), "%s/MANIFEST.tsv", dir) >= sizeof(path))
		return 0;
	m = fopen(path, "r");
	if (m == NULL)
		return 0;
	while (fgets(line, sizeof(line), m) != NULL) {
		char *rest = line, *name = strsep(&rest, "\t"), *f;
		long want = -1;
		FILE *in;
		long size;
		char *raw, *html;
		size_t len;
		seo_arena *a;
		json_t *o = NULL;
		rt_page p = {"https://page.test/", "https://page.test/", 200, 1, NULL, 0, NULL, 0};

		/* strsep, unlike strtok, keeps empty columns */
		for (int col = 1; (f = strsep(&rest, "\t")) != NULL; col++)
			if (col == 4)
				want = strtol(f, NULL, 10);
		if (name == NULL || strcmp(name, "file") == 0)
			continue;
		if ((size_t)snprintf(path, sizeof(path), "%s/%s", dir, name) >= sizeof(path) ||
		    (in = fopen(path, "rb")) == NULL)
			continue;
		fseek(in, 0, SEEK_END);
		size = ftell(in);
		rewind(in);
		raw = malloc((size_t)size + 1);
		CU_ASSERT_FATAL(raw != NULL);
		len = fread(raw, 1, (size_t)size, in);
		fclose(in);
		a = seo_arena_new(0);
		CU_ASSERT_EQUAL(seo_to_utf8(raw, len, seo_charset_detect(raw, len, NULL, a), a,
					   &html, &p.html_len), 0);
		p.html = html;
		CU_ASSERT_EQUAL_FATAL(rt_schema_markup(&p, &o), 0);
		if (geti(o, "block_count") != want)
			fprintf(stderr, "\n%s: %ld blocks, manifest says %ld", name,
				geti(o, "block_count"), want);
		CU_ASSERT_EQUAL(geti(o, "block_count"), want);
		CU_ASSERT_EQUAL(geti(o, "valid_block_count") + geti(o, "invalid_block_count"),
				geti(o, "block_count"));
		CU_ASSERT_EQUAL(json_is_true(json_object_get(o, "has_schema_markup")),
				json_array_size(json_object_get(o, "data")) > 0);
		json_t *parsed = run_parsed(&p);

		if (!json_equal(o, parsed))
			fprintf(stderr, "\n%s: another answer once surely parsed", name);
		CU_ASSERT(json_equal(o, parsed));
		json_decref(parsed);
		char *dump = json_dumps(o, 0);

		CU_ASSERT_PTR_NOT_NULL(dump);
		free(dump);
		json_decref(o);
		seo_arena_free(a);
		free(raw);
		pages++;
	}
	fclose(m);
	return pages;
}

static void test_real_pages(void)
{
	const char *src = getenv("SEO_SOURCE_DIR");
	static const char *const dirs[] = {"readability", "trafilatura", "extruct"};
	char dir[4096];
	int pages = 0;

	if (src == NULL) {
		fprintf(stderr, "\nSEO_SOURCE_DIR unset: real pages skipped\n");
		return;
	}
	for (size_t d = 0; d < sizeof(dirs) / sizeof(dirs[0]); d++) {
		snprintf(dir, sizeof(dir), "%s/../shared/data/pages/%s", src, dirs[d]);
		pages += check_dir(dir);
	}
	fprintf(stderr, "\n%d real pages read\n", pages);
}

int main(void)
{
	CU_pSuite s;
	unsigned failed;

	if (CU_initialize_registry() != CUE_SUCCESS)
		return 1;
	s = CU_add_suite("rt_schema", NULL, NULL);
	CU_add_test(s, "page without JSON-LD", test_none);
	CU_add_test(s, "objects and arrays", test_object_and_array);
	CU_add_test(s, "@graph flattening", test_graph);
	CU_add_test(s, "invalid and non-object blocks", test_invalid);
	CU_add_test(s, "type attribute", test_type_attribute);
	CU_add_test(s, "comment and CDATA wrappers", test_wrappers);
	CU_add_test(s, "pages that cannot hold JSON-LD are not parsed", test_no_parse_shortcut);
	CU_add_test(s, "real saved pages", test_real_pages);
	CU_basic_set_mode(CU_BRM_NORMAL);
	CU_basic_run_tests();
	failed = CU_get_number_of_failures();
	CU_cleanup_registry();
	return failed ? 1 : 0;
}

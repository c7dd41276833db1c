/*
 * fuzz_schema.c: JSON-LD extraction. An input starting with '<' is a
 * whole page; anything else is the text of one ld+json script block, so
 * that mutations reach the flattening of entities rather than the HTML
 * around them. It must always answer, with an object, and a whole page
 * must answer the same once a comment naming the type, which changes no
 * element, makes its parse certain: skipping the parse of a page that
 * cannot hold JSON-LD hides nothing.
 */
#include "fuzz.h"

static const char open_tag[] = "<html><head><script type=\"application/ld+json\">";
static const char close_tag[] = "</script></head><body><p>x</p></body></html>";

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	seo_arena *a = seo_arena_new(0);
	rt_page page;
	json_t *out = NULL;
	uint8_t *doc = NULL;
	char *text;

	FUZZ_CHECK(a != NULL);
	if (size > 0 && data[0] == '<') {
		page = fuzz_page(data, size, a);
	} else {
		size_t n = sizeof(open_tag) - 1 + size + sizeof(close_tag) - 1;

		doc = malloc(n);
		FUZZ_CHECK(doc != NULL);
		memcpy(doc, open_tag, sizeof(open_tag) - 1);
		if (size > 0)
			memcpy(doc + sizeof(open_tag) - 1, data, size);
		memcpy(doc + sizeof(open_tag) - 1 + size, close_tag, sizeof(close_tag) - 1);
		page = fuzz_page(doc, n, a);
	}
	FUZZ_CHECK(rt_schema_markup(&page, &out) == 0);
	FUZZ_CHECK(json_is_object(out));
	if (doc == NULL) {
		static const char lead[] = "<!-- ld+json -->";
		char *html = seo_arena_alloc(a, sizeof(lead) + page.html_len);
		rt_page parsed = page;
		json_t *again = NULL;

		FUZZ_CHECK(html != NULL);
		memcpy(html, lead, sizeof(lead) - 1);
		memcpy(html + sizeof(lead) - 1, page.html, page.html_len + 1);
		parsed.html = html;
		parsed.html_len = sizeof(lead) - 1 + page.html_len;
		FUZZ_CHECK(rt_schema_markup(&parsed, &again) == 0);
		FUZZ_CHECK(json_equal(out, again));
		json_decref(again);
	}
	text = json_dumps(out, JSON_COMPACT);
	FUZZ_CHECK(text != NULL);
	free(text);
	json_decref(out);
	free(doc);
	seo_arena_free(a);
	return 0;
}

/*
 * fuzz_pageseo.c: the page-seo analyser on arbitrary bytes as the body of
 * a fetched page (charset detection and conversion first, as the fetcher
 * does). It must always answer, with an object.
 */
#include "fuzz.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	seo_arena *a = seo_arena_new(0);
	rt_page page;
	json_t *out = NULL;
	char *text;

	FUZZ_CHECK(a != NULL);
	page = fuzz_page(data, size, a);
	FUZZ_CHECK(rt_page_seo(&page, &out) == 0);
	FUZZ_CHECK(json_is_object(out));
	/* every string in it must serialise (valid UTF-8 all the way) */
	text = json_dumps(out, JSON_COMPACT);
	FUZZ_CHECK(text != NULL);
	free(text);
	json_decref(out);
	seo_arena_free(a);
	return 0;
}

/*
 * fuzz_robots.c: the robots.txt parser, then the matcher for a few
 * crawlers on fixed paths and on the file's own first patterns (which
 * drives the '*' and '$' matching), and the site-health facts.
 */
#include "fuzz.h"

#include "seo/errors.h"

#define PATTERNS_AS_PATHS 8

static const char *const agents[] = {
	"Googlebot", "*", "Mozilla/5.0 (compatible; Bingbot/2.0; +http://www.bing.com/bingbot.htm)",
};
static const char *const paths[] = {
	"/", "/index.html", "/a/b/c?d=e&f=%2F", "/%E2%82%AC/x$y", "/*",
};

static void ask(const rt_robots *r, const char *path)
{
	for (size_t i = 0; i < sizeof(agents) / sizeof(agents[0]); i++) {
		int allowed = -1;

		FUZZ_CHECK(rt_robots_allowed(r, agents[i], path, &allowed) == 0);
		FUZZ_CHECK(allowed == 0 || allowed == 1);
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	seo_arena *a = seo_arena_new(0);
	rt_robots r;
	json_t *facts = NULL;
	size_t asked = 0;

	FUZZ_CHECK(a != NULL);
	FUZZ_CHECK(rt_robots_parse((const char *)data, size, a, &r) == 0);
	FUZZ_CHECK(r.truncated == (size > RT_ROBOTS_MAX_BYTES));
	for (size_t i = 0; i < sizeof(paths) / sizeof(paths[0]); i++)
		ask(&r, paths[i]);
	for (size_t g = 0; g < r.n_groups; g++) {
		FUZZ_CHECK(r.groups[g].n_agents > 0);
		for (size_t k = 0; k < r.groups[g].n_rules; k++) {
			const char *pat = r.groups[g].rules[k].pattern;

			FUZZ_CHECK(pat != NULL && pat[0] != '\0');
			if (asked++ < PATTERNS_AS_PATHS)
				ask(&r, pat);
		}
	}
	for (size_t i = 0; i < r.n_sitemaps; i++)
		FUZZ_CHECK(strncmp(r.sitemaps[i], "http", 4) == 0);
	FUZZ_CHECK(rt_robots_facts(&r, &facts) == 0);
	FUZZ_CHECK(json_is_object(facts));
	json_decref(facts);
	seo_arena_free(a);
	return 0;
}

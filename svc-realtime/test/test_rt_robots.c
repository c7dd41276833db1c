/*
 * test_rt_robots.c: the robots.txt parser, Google's matcher and the site
 * health facts on hand-written files, then every file of
 * ../shared/data/robots (skipped when absent): no crash, sane facts.
 */
#include "rt.h"

#include <CUnit/Basic.h>
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static seo_arena *arena;

static rt_robots parse(const char *txt)
{
	rt_robots r;

	CU_ASSERT_EQUAL_FATAL(rt_robots_parse(txt, strlen(txt), arena, &r), 0);
	return r;
}

static int allowed(const rt_robots *r, const char *agent, const char *path)
{
	int ok = -1;

	CU_ASSERT_EQUAL_FATAL(rt_robots_allowed(r, agent, path, &ok), 0);
	return ok;
}

static int fact(const rt_robots *r, const char *name)
{
	json_t *o = NULL;
	int v;

	CU_ASSERT_EQUAL_FATAL(rt_robots_facts(r, &o), 0);
	v = json_is_true(json_object_get(o, name));
	json_decref(o);
	return v;
}

static void test_groups(void)
{
	rt_robots r = parse(
		"\xef\xbb\xbfUser-agent: a\r\n"
		"USER-AGENT: B/2.1 (+http://b.test)\r\n"
		"crawl-delay: 2.5\r\n"
		"Disallow: /x # a comment\r\n"
		"Crawl-delay: 9\r\n"
		"user-agent: c\r"
		"allow: /\r"
		"# User-agent: d\n"
		"   useragent  :   e   \n"
		"disalow /typo\n"
		"Disallow /two tokens\n"
		"Crawl-delay: soon\n"
		"Unknown: x\n");

	CU_ASSERT_EQUAL_FATAL(r.n_groups, 3);
	CU_ASSERT_EQUAL_FATAL(r.groups[0].n_agents, 2);
	CU_ASSERT_STRING_EQUAL(r.groups[0].agents[0], "a");
	CU_ASSERT_STRING_EQUAL(r.groups[0].agents[1], "B");
	CU_ASSERT_EQUAL_FATAL(r.groups[0].n_rules, 1);
	CU_ASSERT_STRING_EQUAL(r.groups[0].rules[0].pattern, "/x");
	CU_ASSERT_EQUAL(r.groups[0].rules[0].allow, 0);
	CU_ASSERT_DOUBLE_EQUAL(r.groups[0].crawl_delay, 2.5, 1e-9);
	CU_ASSERT_STRING_EQUAL(r.groups[1].agents[0], "c");
	CU_ASSERT_EQUAL(r.groups[1].rules[0].allow, 1);
	CU_ASSERT_STRING_EQUAL(r.groups[2].agents[0], "e");
	CU_ASSERT_EQUAL_FATAL(r.groups[2].n_rules, 1);
	CU_ASSERT_STRING_EQUAL(r.groups[2].rules[0].pattern, "/typo");
	CU_ASSERT(r.groups[2].crawl_delay < 0);
	CU_ASSERT_EQUAL(r.truncated, 0);

	/* rules before any user-agent and empty patterns are ignored */
	r = parse("Disallow: /\nUser-agent: *\nDisallow:\n");
	CU_ASSERT_EQUAL_FATAL(r.n_groups, 1);
	CU_ASSERT_EQUAL(r.groups[0].n_rules, 0);
	CU_ASSERT_EQUAL(allowed(&r, "bot", "/"), 1);

	r = parse("");
	CU_ASSERT_EQUAL(r.n_groups, 0);
	CU_ASSERT_EQUAL(r.n_sitemaps, 0);
	CU_ASSERT_EQUAL(allowed(&r, "bot", "/anything"), 1);
}

static void test_sitemaps(void)
{
	rt_robots r = parse(
		"Sitemap: https://Example.com/s1.xml\n"
		"User-agent: *\n"
		"Sitemap:   http://example.com:80/s2.xml.gz  # second\n"
		"Disallow: /private\n"
		"sitemap: /relative.xml\n"
		"Site-map: ftp://example.com/s.xml\n"
		"SITEMAP: https://cdn.example.net/s3.xml\n");

	CU_ASSERT_EQUAL_FATAL(r.n_sitemaps, 3);
	CU_ASSERT_STRING_EQUAL(r.sitemaps[0], "https://example.com/s1.xml");
	CU_ASSERT_STRING_EQUAL(r.sitemaps[1], "http://example.com/s2.xml.gz");
	CU_ASSERT_STRING_EQUAL(r.sitemaps[2], "https://cdn.example.net/s3.xml");
	/* sitemap lines do not split the group */
	CU_ASSERT_EQUAL(r.n_groups, 1);
	CU_ASSERT(fact(&r, "sitemap_declared"));
}

static void test_matcher(void)
{
	rt_robots r = parse(
		"User-agent: *\n"
		"Disallow: /shop\n"
		"Allow: /shop/public\n"
		"Disallow: /*.pdf$\n"
		"Disallow: /tmp*/cache\n"
		"Allow: /page\n"
		"Disallow: /page\n"
		"Disallow: /a$b\n"
		"Disallow: /caf\xc3\xa9\n"
		"Disallow: /*?sort=\n"
		"\n"
		"User-agent: Googlebot\n"
		"Disallow: /only-google\n"
		"User-agent: googlebot-news\n"
		"Disallow: /news-only\n"
		"User-agent: googlebot\n"
		"Disallow: /also-google\n");

	CU_ASSERT_EQUAL(allowed(&r, "bot", "/"), 1);
	CU_ASSERT_EQUAL(allowed(&r, "bot", "/shop"), 0);
	CU_ASSERT_EQUAL(allowed(&r, "bot", "/shopping"), 0);
	/* longest match wins */
	CU_ASSERT_EQUAL(allowed(&r, "bot", "/shop/public/x"), 1);
	CU_ASSERT_EQUAL(allowed(&r, "bot", "/shop/private"), 0);
	/* $ anchors, * spans */
	CU_ASSERT_EQUAL(allowed(&r, "bot", "/docs/a.pdf"), 0);
	CU_ASSERT_EQUAL(allowed(&r, "bot", "/docs/a.pdf?x=1"), 1);
	CU_ASSERT_EQUAL(allowed(&r, "bot", "/tmp/cache"), 0);
	CU_ASSERT_EQUAL(allowed(&r, "bot", "/tmp123/x/cache/y"), 0);
	CU_ASSERT_EQUAL(allowed(&r, "bot", "/tmp123/x/cach"), 1);
	CU_ASSERT_EQUAL(allowed(&r, "bot", "/list?sort=asc"), 0);
	/* equal length: allow wins, whatever the order */
	CU_ASSERT_EQUAL(allowed(&r, "bot", "/page"), 1);
	/* '$' inside a pattern is a plain character */
	CU_ASSERT_EQUAL(allowed(&r, "bot", "/a$b/c"), 0);
	CU_ASSERT_EQUAL(allowed(&r, "bot", "/ab"), 1);
	/* non-ASCII in patterns and paths compare percent-encoded */
	CU_ASSERT_EQUAL(allowed(&r, "bot", "/caf%c3%a9/menu"), 0);
	CU_ASSERT_EQUAL(allowed(&r, "bot", "/caf\xc3\xa9"), 0);
	CU_ASSERT_EQUAL(allowed(&r, "bot", ""), 1);

	/* a crawler named by groups uses them, combined, and not "*" */
	CU_ASSERT_EQUAL(allowed(&r, "Googlebot/2.1 (+http://www.google.com/bot.html)", "/shop"), 1);
	CU_ASSERT_EQUAL(allowed(&r, "GOOGLEBOT", "/only-google"), 0);
	CU_ASSERT_EQUAL(allowed(&r, "googlebot", "/also-google"), 0);
	CU_ASSERT_EQUAL(allowed(&r, "googlebot", "/news-only"), 1);
	CU_ASSERT_EQUAL(allowed(&r, "Googlebot-News", "/news-only"), 0);
	CU_ASSERT_EQUAL(allowed(&r, "Googlebot-News", "/only-google"), 1);
	CU_ASSERT_EQUAL(allowed(&r, "*", "/only-google"), 1);
	CU_ASSERT_EQUAL(allowed(&r, "*", "/shop"), 0);

	/* wildcards that need backtracking */
	r = parse("User-agent: *\nDisallow: /*a*b$\nDisallow: /x**y\n");
	CU_ASSERT_EQUAL(allowed(&r, "bot", "/zzazzb"), 0);
	CU_ASSERT_EQUAL(allowed(&r, "bot", "/zzazzbc"), 1);
	CU_ASSERT_EQUAL(allowed(&r, "bot", "/aab"), 0);
	CU_ASSERT_EQUAL(allowed(&r, "bot", "/xy"), 0);
	CU_ASSERT_EQUAL(allowed(&r, "bot", "/x"), 1);
}

static void test_facts(void)
{
	rt_robots r;

	CU_ASSERT_FALSE(fact(NULL, "present"));
	CU_ASSERT_FALSE(fact(NULL, "disallow_all"));
	CU_ASSERT_FALSE(fact(NULL, "sitemap_declared"));

	r = parse("User-agent: *\nDisallow: /\n");
	CU_ASSERT(fact(&r, "present"));
	CU_ASSERT(fact(&r, "disallow_all"));
	CU_ASSERT_FALSE(fact(&r, "sitemap_declared"));
	r = parse("User-agent: bot\nAllow: /\n\nUser-agent: *\nDisallow: /*\n");
	CU_ASSERT(fact(&r, "disallow_all"));
	r = parse("User-agent: *\nDisallow: *\n");
	CU_ASSERT(fact(&r, "disallow_all"));
	/* an Allow re-opens */
	r = parse("User-agent: *\nDisallow: /\nAllow: /public\n");
	CU_ASSERT_FALSE(fact(&r, "disallow_all"));
	/* "/$" is the homepage only */
	r = parse("User-agent: *\nDisallow: /$\n");
	CU_ASSERT_FALSE(fact(&r, "disallow_all"));
	/* only one named crawler is shut out */
	r = parse("User-agent: badbot\nDisallow: /\n");
	CU_ASSERT_FALSE(fact(&r, "disallow_all"));
	CU_ASSERT(fact(&r, "present"));
}

static void test_oversize(void)
{
	size_t n = RT_ROBOTS_MAX_BYTES + 4096, len = 0;
	char *txt = malloc(n + 64);
	rt_robots r;

	CU_ASSERT_FATAL(txt != NULL);
	len += (size_t)sprintf(txt, "User-agent: *\nDisallow: /a\n");
	while (len < RT_ROBOTS_MAX_BYTES - 3)
		txt[len++] = '#';
	/* a line cut by the limit is dropped whole */
	len += (size_t)sprintf(txt + len, "\nDisallow: /bbbbbbbbb\n");
	len += (size_t)sprintf(txt + len, "Disallow: /c\n");
	CU_ASSERT_EQUAL_FATAL(rt_robots_parse(txt, len, arena, &r), 0);
	CU_ASSERT_EQUAL(r.truncated, 1);
	CU_ASSERT_EQUAL(allowed(&r, "bot", "/a"), 0);
	CU_ASSERT_EQUAL(allowed(&r, "bot", "/b"), 1);
	CU_ASSERT_EQUAL(allowed(&r, "bot", "/c"), 1);
	free(txt);
}

static void test_real_files(void)
{
	const char *src = getenv("SEO_SOURCE_DIR");
	static const char *const dirs[] = {"crawler-commons", "robotstxt-parser-benchmark"};
	int files = 0, with_sitemaps = 0, blocked = 0;

	if (src == NULL) {
		fprintf(stderr, "\nSEO_SOURCE_DIR unset: real files skipped\n");
		return;
	}
	for (size_t d = 0; d < sizeof(dirs) / sizeof(dirs[0]); d++) {
		char path[4096];
		DIR *dir;
		struct dirent *de;

		snprintf(path, sizeof(path), "%s/../shared/data/robots/%s", src, dirs[d]);
		if ((dir = opendir(path)) == NULL)
			continue;
		while ((de = readdir(dir)) != NULL) {
			char file[4600];
			seo_arena *a;
			FILE *f;
			char *buf;
			long size;
			size_t len;
			rt_robots r;
			json_t *facts = NULL;
			int ok;

			if (de->d_name[0] == '.')
				continue;
			snprintf(file, sizeof(file), "%s/%s", path, de->d_name);
			if ((f = fopen(file, "rb")) == NULL)
				continue;
			fseek(f, 0, SEEK_END);
			size = ftell(f);
			rewind(f);
			buf = malloc((size_t)size + 1);
			CU_ASSERT_FATAL(buf != NULL);
			len = fread(buf, 1, (size_t)size, f);
			fclose(f);
			a = seo_arena_new(0);
			CU_ASSERT_EQUAL_FATAL(rt_robots_parse(buf, len, a, &r), 0);
			CU_ASSERT_EQUAL(r.truncated, len > RT_ROBOTS_MAX_BYTES);
			for (size_t g = 0; g < r.n_groups; g++) {
				CU_ASSERT(r.groups[g].n_agents >= 1);
				for (size_t i = 0; i < r.groups[g].n_rules; i++)
					CU_ASSERT(r.groups[g].rules[i].pattern[0] != '\0');
			}
			for (size_t i = 0; i < r.n_sitemaps; i++)
				CU_ASSERT(strncmp(r.sitemaps[i], "http", 4) == 0);
			CU_ASSERT_EQUAL(rt_robots_allowed(&r, "Googlebot", "/", &ok), 0);
			CU_ASSERT_EQUAL(rt_robots_allowed(&r, "*", "/some/page.html?q=1", &ok), 0);
			CU_ASSERT_EQUAL(rt_robots_facts(&r, &facts), 0);
			CU_ASSERT(json_is_true(json_object_get(facts, "present")));
			/* shut out, the homepage is refused to any crawler */
			if (json_is_true(json_object_get(facts, "disallow_all"))) {
				CU_ASSERT_EQUAL(rt_robots_allowed(&r, "*", "/", &ok), 0);
				CU_ASSERT_EQUAL(ok, 0);
				blocked++;
			}
			with_sitemaps += r.n_sitemaps > 0;
			json_decref(facts);
			seo_arena_free(a);
			free(buf);
			files++;
		}
		closedir(dir);
	}
	fprintf(stderr, "\n%d robots.txt files read, %d declare sitemaps, %d disallow all\n",
		files, with_sitemaps, blocked);
}

static void test_known_file(void)
{
	const char *src = getenv("SEO_SOURCE_DIR");
	char file[4096];
	FILE *f;
	char buf[8192];
	size_t len;
	rt_robots r;

	if (src == NULL)
		return;
	snprintf(file, sizeof(file),
		 "%s/../shared/data/robots/crawler-commons/twitter.com.txt", src);
	if ((f = fopen(file, "rb")) == NULL)
		return;
	len = fread(buf, 1, sizeof(buf), f);
	fclose(f);
	CU_ASSERT_EQUAL_FATAL(rt_robots_parse(buf, len, arena, &r), 0);
	CU_ASSERT_EQUAL(allowed(&r, "Googlebot", "/search?q=x"), 0);
	CU_ASSERT_EQUAL(allowed(&r, "Googlebot", "/jack"), 1);
	CU_ASSERT_EQUAL(allowed(&r, "Googlebot", "/jack/with_friends"), 0);
	CU_ASSERT_FALSE(fact(&r, "disallow_all"));
	/* "# Crawl-delay: 10" is a comment; Slurp's "Crawl-delay: 1" is not */
	CU_ASSERT(r.groups[0].crawl_delay < 0);
	CU_ASSERT_DOUBLE_EQUAL(r.groups[1].crawl_delay, 1, 1e-9);
}

int main(void)
{
	CU_pSuite s;
	unsigned failed;

	if (CU_initialize_registry() != CUE_SUCCESS)
		return 1;
	arena = seo_arena_new(0);
	s = CU_add_suite("rt_robots", NULL, NULL);
	CU_add_test(s, "groups, keys and line endings", test_groups);
	CU_add_test(s, "sitemap lines", test_sitemaps);
	CU_add_test(s, "longest-match matcher", test_matcher);
	CU_add_test(s, "site-health facts", test_facts);
	CU_add_test(s, "oversize input", test_oversize);
	CU_add_test(s, "a known real file", test_known_file);
	CU_add_test(s, "every real file", test_real_files);
	CU_basic_set_mode(CU_BRM_NORMAL);
	CU_basic_run_tests();
	failed = CU_get_number_of_failures();
	CU_cleanup_registry();
	seo_arena_free(arena);
	return failed ? 1 : 0;
}

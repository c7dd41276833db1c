/*
 * test_tech.c: the fingerprint engine (seo/tech.h) on hand-written rules
 * and pages, one kind of input and one confidence rule at a time; the
 * project's rule file, with a case for each rule corrected against the npm
 * reference; and every saved real page of ../shared/data/pages
 * (skipped when absent): no crash, the meta generators the manifests list
 * detected, and the time per page.
 */
#include "seo/tech.h"

#include <CUnit/Basic.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include "seo/errors.h"

static const char *const rules_json =
	"{\"categories\": {\"1\": \"cms\"},"
	" \"technologies\": {"
	"  \"HdrCdn\": {\"category\": \"cdn\", \"headers\": {\"Server\": \"^hdrcdn$\", \"x-hdr-id\": \"\"}},"
	"  \"Weak\": {\"category\": \"hosting\", \"headers\": {\"via\": \"weakvia\\\\;confidence:90\"}},"
	"  \"Cook\": {\"category\": \"ecommerce\", \"cookies\": {\"cook_session\": \"\"}},"
	"  \"Gen\": {\"cats\": [1], \"meta\": {\"generator\": \"^GenCMS ?([\\\\d.]+)?\\\\;version:\\\\1\"},"
	"           \"implies\": [\"Lang\", \"Maybe\\\\;confidence:50\"]},"
	"  \"Lang\": {\"category\": \"framework\", \"implies\": \"Runtime\"},"
	"  \"Runtime\": {\"category\": \"framework\"},"
	"  \"Maybe\": {\"category\": \"analytics\"},"
	"  \"Scr\": {\"category\": \"analytics\", \"scriptSrc\": [\"cdn\\\\.scr\\\\.example/v([\\\\d]+)/\\\\;version:\\\\1\"]},"
	"  \"Strong\": {\"category\": \"support\", \"html\": [\"<div id=\\\"strong-widget\\\"\"]},"
	"  \"Generic\": {\"category\": \"crm\", \"html\": [\"class=\\\"generic-\\\\;confidence:50\"]},"
	"  \"Optional\": {\"category\": \"payments\", \"html\": [\"colou?r-scheme-pay\", \"x(abc)?yz-pay\"]},"
	"  \"Alt\": {\"category\": \"ab_testing\", \"html\": [\"(?:alpha|beta)-split\"]},"
	"  \"Hex\": {\"category\": \"cdn\", \"html\": [\"hex\\\\x2dtech\\\\x{2d}cdn\"]},"
	"  \"Hidden\": {\"cats\": [42], \"html\": [\"hidden-tech\"], \"implies\": [\"Shown\"]},"
	"  \"Shown\": {\"category\": \"email_marketing\"},"
	"  \"Unused\": {\"category\": \"cms\", \"icon\": \"x.png\", \"website\": \"https://x\", \"js\": {\"x\": \"\"}}"
	" }}";

static seo_tech_rules *rules(void)
{
	seo_tech_rules *r = NULL;
	char err[256];

	CU_ASSERT_EQUAL_FATAL(seo_tech_rules_parse(rules_json, strlen(rules_json), &r,
						   err, sizeof(err)), 0);
	return r;
}

/* The match named `name` in the last detection, or NULL. */
static seo_tech_match *found;
static size_t n_found;

static const seo_tech_match *match(const char *name)
{
	for (size_t i = 0; i < n_found; i++)
		if (strcmp(found[i].name, name) == 0)
			return &found[i];
	return NULL;
}

static void detect(const seo_tech_rules *r, const seo_tech_input *in,
		   seo_arena *a)
{
	CU_ASSERT_EQUAL_FATAL(seo_tech_detect(r, in, a, &found, &n_found), 0);
}

static int level(const char *name)
{
	const seo_tech_match *m = match(name);
	return m ? m->confidence : 0;
}

static void test_parse(void)
{
	seo_tech_rules *r = rules();

	CU_ASSERT_EQUAL(seo_tech_rules_count(r), 16);
	seo_tech_rules_free(r);
	seo_tech_rules_free(NULL);
}

static void test_headers_cookies_meta(void)
{
	seo_tech_rules *r = rules();
	seo_arena *a = seo_arena_new(0);
	seo_tech_kv hdr[] = {{"server", "HdrCdn"}, {"Via", "1.1 weakvia"}};
	seo_tech_kv cookies[] = {{"cook_session", "abc"}};
	seo_tech_kv meta[] = {{"viewport", "x"}, {"Generator", "GenCMS 4.2.1"}};
	seo_tech_input in = {hdr, 2, cookies, 1, meta, 2, NULL, 0, NULL, 0};

	detect(r, &in, a);
	CU_ASSERT_EQUAL(level("HdrCdn"), SEO_TECH_DEFINITE);
	CU_ASSERT_STRING_EQUAL(match("HdrCdn")->category, "cdn");
	CU_ASSERT_EQUAL(level("Weak"), SEO_TECH_HIGH);
	CU_ASSERT_EQUAL(level("Cook"), SEO_TECH_DEFINITE);
	CU_ASSERT_EQUAL(level("Gen"), SEO_TECH_DEFINITE);
	CU_ASSERT_STRING_EQUAL(match("Gen")->category, "cms");
	CU_ASSERT_STRING_EQUAL(match("Gen")->version, "4.2.1");
	/* strongest first, then by name */
	CU_ASSERT_STRING_EQUAL(found[0].name, "Cook");
	CU_ASSERT_EQUAL(found[n_found - 1].confidence, SEO_TECH_MEDIUM);
	/* a header present with any value; a value that does not match */
	hdr[0] = (seo_tech_kv){"X-Hdr-Id", "1"};
	hdr[1] = (seo_tech_kv){"via", "other"};
	meta[1].value = "Other 1.0";
	detect(r, &(seo_tech_input){hdr, 2, NULL, 0, meta, 2, NULL, 0, NULL, 0}, a);
	CU_ASSERT_EQUAL(level("HdrCdn"), SEO_TECH_DEFINITE);
	CU_ASSERT_EQUAL(level("Weak"), 0);
	CU_ASSERT_EQUAL(level("Gen"), 0);
	CU_ASSERT_EQUAL(n_found, 1);
	seo_arena_free(a);
	seo_tech_rules_free(r);
}

static void test_implies(void)
{
	seo_tech_rules *r = rules();
	seo_arena *a = seo_arena_new(0);
	seo_tech_kv meta[] = {{"generator", "GenCMS"}};
	const char *html = "<p>hidden-tech</p>";

	detect(r, &(seo_tech_input){NULL, 0, NULL, 0, meta, 1, NULL, 0, NULL, 0}, a);
	CU_ASSERT_EQUAL(level("Lang"), SEO_TECH_DEFINITE);
	CU_ASSERT_EQUAL(level("Runtime"), SEO_TECH_DEFINITE); /* through Lang */
	CU_ASSERT_EQUAL(level("Maybe"), SEO_TECH_MEDIUM);
	CU_ASSERT_PTR_NULL(match("Gen")->version);
	/* an unreported technology still implies */
	detect(r, &(seo_tech_input){.html = html, .html_len = strlen(html)}, a);
	CU_ASSERT_PTR_NULL(match("Hidden"));
	CU_ASSERT_EQUAL(level("Shown"), SEO_TECH_HIGH);
	CU_ASSERT_EQUAL(n_found, 1);
	seo_arena_free(a);
	seo_tech_rules_free(r);
}

static void test_scripts_and_html(void)
{
	seo_tech_rules *r = rules();
	seo_arena *a = seo_arena_new(0);
	const char *scripts[] = {"/local.js", "https://CDN.scr.example/v3/x.js"};
	const char *html =
		"<html><DIV ID=\"strong-widget\"></div><span class=\"generic-x\">"
		"color-scheme-pay xyz-pay beta-split</span></html>";

	detect(r, &(seo_tech_input){.scripts = scripts, .n_scripts = 2,
				    .html = html, .html_len = strlen(html)}, a);
	CU_ASSERT_EQUAL(level("Scr"), SEO_TECH_HIGH);
	CU_ASSERT_STRING_EQUAL(match("Scr")->version, "3");
	CU_ASSERT_EQUAL(level("Strong"), SEO_TECH_HIGH);
	CU_ASSERT_EQUAL(level("Generic"), SEO_TECH_MEDIUM);
	CU_ASSERT_EQUAL(level("Alt"), SEO_TECH_HIGH);
	CU_ASSERT_EQUAL(level("Optional"), SEO_TECH_HIGH);
	CU_ASSERT_EQUAL(level("Hex"), 0);
	/* escapes by code: the prefilter must not read their digits as text */
	html = "<p>HEX-TECH-CDN</p>";
	detect(r, &(seo_tech_input){.html = html, .html_len = strlen(html)}, a);
	CU_ASSERT_EQUAL(level("Hex"), SEO_TECH_HIGH);
	/* each optional spelling alone: the prefilter must not demand the
	 * optional characters */
	html = "x xyz-pay";
	detect(r, &(seo_tech_input){.html = html, .html_len = strlen(html)}, a);
	CU_ASSERT_EQUAL(level("Optional"), SEO_TECH_HIGH);
	html = "colour-scheme-pay";
	detect(r, &(seo_tech_input){.html = html, .html_len = strlen(html)}, a);
	CU_ASSERT_EQUAL(level("Optional"), SEO_TECH_HIGH);
	/* only the first SEO_TECH_HTML_MAX bytes are searched */
	{
		size_t big = SEO_TECH_HTML_MAX + 100;
		char *buf = malloc(big + 1);
		CU_ASSERT_FATAL(buf != NULL);
		memset(buf, ' ', big);
		memcpy(buf + big - 20, "beta-split", 10);
		buf[big] = '\0';
		detect(r, &(seo_tech_input){.html = buf, .html_len = big}, a);
		CU_ASSERT_EQUAL(n_found, 0);
		free(buf);
	}
	seo_arena_free(a);
	seo_tech_rules_free(r);
}

static void test_input_from_page(void)
{
	seo_arena *a = seo_arena_new(0);
	seo_tech_kv hdr[] = {{"set-cookie", "sid=1; Path=/; HttpOnly"},
			     {"content-type", "text/html"},
			     {"Set-Cookie", "flag"},
			     {"set-cookie", "b=two"}};
	const char *html =
		"<!doctype html><head><META NAME=generator CONTENT='Gen 1'>"
		"<meta property=\"og:type\" content=\"website\"/>"
		"<meta charset=utf-8><!-- <script src=\"/commented.js\"></script> -->"
		"<script>var s = '<script src=\"/inline.js\">';</script>"
		"<script async SRC=\"https://cdn.example/a.js\"></script>"
		"<scripts src=\"/not-a-script.js\"><script src=/bare.js >";
	seo_tech_input in;

	CU_ASSERT_EQUAL_FATAL(seo_tech_input_from_page(hdr, 4, html, strlen(html), a, &in), 0);
	CU_ASSERT_EQUAL(in.n_headers, 4);
	CU_ASSERT_EQUAL_FATAL(in.n_cookies, 2);
	CU_ASSERT_STRING_EQUAL(in.cookies[0].name, "sid");
	CU_ASSERT_STRING_EQUAL(in.cookies[0].value, "1");
	CU_ASSERT_STRING_EQUAL(in.cookies[1].value, "two");
	CU_ASSERT_EQUAL_FATAL(in.n_meta, 2);
	CU_ASSERT_STRING_EQUAL(in.meta[0].name, "generator");
	CU_ASSERT_STRING_EQUAL(in.meta[0].value, "Gen 1");
	CU_ASSERT_STRING_EQUAL(in.meta[1].name, "og:type");
	CU_ASSERT_EQUAL_FATAL(in.n_scripts, 2);
	CU_ASSERT_STRING_EQUAL(in.scripts[0], "https://cdn.example/a.js");
	CU_ASSERT_STRING_EQUAL(in.scripts[1], "/bare.js");
	CU_ASSERT_EQUAL(seo_tech_input_from_page(NULL, 0, "", 0, a, &in), 0);
	CU_ASSERT_EQUAL(in.n_meta + in.n_scripts + in.n_cookies, 0);
	/* tags past the HTML the patterns search are still read */
	{
		static const char tail[] = "<script src=\"/late.js\"></script>";
		size_t big = SEO_TECH_HTML_MAX + 100;
		char *buf = malloc(big + sizeof(tail));
		CU_ASSERT_FATAL(buf != NULL);
		memset(buf, ' ', big);
		memcpy(buf + big, tail, sizeof(tail));
		CU_ASSERT_EQUAL(seo_tech_input_from_page(NULL, 0, buf, strlen(buf), a, &in), 0);
		CU_ASSERT_EQUAL_FATAL(in.n_scripts, 1);
		CU_ASSERT_STRING_EQUAL(in.scripts[0], "/late.js");
		free(buf);
	}
	seo_arena_free(a);
}

static void test_malformed(void)
{
	static const struct {
		const char *json, *why;
	} cases[] = {
		{"{\"technologies\": {", "line"},
		{"[]", "technologies"},
		{"{\"technologies\": {\"A\": {\"html\": [\"x\"]}}}", "A: no category"},
		{"{\"technologies\": {\"A\": {\"category\": \"blog\"}}}", "A: unknown category"},
		{"{\"technologies\": {\"A\": {\"category\": \"cms\", \"html\": [\"(unclosed\"]}}}",
		 "A: html pattern"},
		{"{\"technologies\": {\"A\": {\"category\": \"cms\", \"html\": [1]}}}",
		 "A: html holds a non-string"},
		{"{\"technologies\": {\"A\": {\"category\": \"cms\", \"headers\": [\"x\"]}}}",
		 "A: headers is not an object"},
		{"{\"technologies\": {\"A\": {\"category\": \"cms\", \"implies\": [\"B\"]}}}",
		 "A: implies unknown \"B\""},
		{"{\"technologies\": {\"A\": 3}}", "A: not an object"},
	};
	char err[256];

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		seo_tech_rules *r = (void *)1;
		CU_ASSERT_EQUAL(seo_tech_rules_parse(cases[i].json, strlen(cases[i].json),
						     &r, err, sizeof(err)), SEO_EINVAL);
		CU_ASSERT_PTR_NULL(r);
		if (strstr(err, cases[i].why) == NULL)
			fprintf(stderr, "\ncase %zu: \"%s\" lacks \"%s\"\n", i, err,
				cases[i].why);
		CU_ASSERT_PTR_NOT_NULL(strstr(err, cases[i].why));
	}
	CU_ASSERT_EQUAL(seo_tech_rules_load("/nonexistent/rules.json", &(seo_tech_rules *){NULL},
					    err, sizeof(err)), SEO_EIO);
	CU_ASSERT_PTR_NOT_NULL(strstr(err, "/nonexistent/rules.json"));
}

/* ---- the project's rule file ------------------------------------------- */

static seo_tech_rules *project;

static char *slurp(const char *path, size_t *len)
{
	FILE *f = fopen(path, "rb");
	struct stat st;
	char *buf = NULL;

	if (f != NULL && fstat(fileno(f), &st) == 0 &&
	    (buf = malloc((size_t)st.st_size + 1)) != NULL) {
		*len = fread(buf, 1, (size_t)st.st_size, f);
		buf[*len] = '\0';
	}
	if (f != NULL)
		fclose(f);
	return buf;
}

static void test_project_rules(void)
{
	static const char *const cats[] = {
		"framework", "cms", "ecommerce", "analytics", "cdn", "hosting",
		"email_marketing", "ab_testing", "payments", "crm", "support"};
	static const char *const slugs[] = {
		"Wix", "WordPress", "Squarespace", "Webflow", "Framer", "Tilda",
		"Weebly", "Strikingly", "Bubble", "Softr", "Carrd",
		"GoDaddy Website Builder", "Contentful", "Sanity", "Shopify",
		"BigCommerce", "Kajabi", "Thinkific", "PayPal"};
	char path[4096], err[512];
	json_t *root, *techs, *def;
	const char *name;
	size_t per_cat[sizeof(cats) / sizeof(cats[0])] = {0};

	CU_ASSERT_EQUAL_FATAL(seo_tech_rules_path(path, sizeof(path)), 0);
	CU_ASSERT_EQUAL(seo_tech_rules_load(path, &project, err, sizeof(err)), 0);
	if (project == NULL)
		fprintf(stderr, "\n%s: %s\n", path, err);
	CU_ASSERT_FATAL(project != NULL);
	CU_ASSERT(seo_tech_rules_count(project) >= 150);
	root = json_load_file(path, 0, NULL);
	techs = json_object_get(root, "technologies");
	json_object_foreach(techs, name, def) {
		const char *c = json_string_value(json_object_get(def, "category"));
		for (size_t i = 0; c != NULL && i < sizeof(cats) / sizeof(cats[0]); i++)
			per_cat[i] += strcmp(c, cats[i]) == 0;
	}
	for (size_t i = 0; i < sizeof(cats) / sizeof(cats[0]); i++) {
		fprintf(stderr, "%s%s %zu", i ? ", " : "\n", cats[i], per_cat[i]);
		CU_ASSERT(per_cat[i] >= 5);
	}
	fprintf(stderr, "\n");
	for (size_t i = 0; i < sizeof(slugs) / sizeof(slugs[0]); i++)
		CU_ASSERT_PTR_NOT_NULL(json_object_get(techs, slugs[i]));
	json_decref(root);
}

/* A typical page of a few platforms, through the project's rules. */
static void test_project_page(void)
{
	seo_arena *a = seo_arena_new(0);
	seo_tech_kv hdr[] = {{"server", "cloudflare"}, {"cf-ray", "8a1-AMS"},
			     {"x-powered-by", "PHP/8.2.1"},
			     {"link", "<https://s.test/wp-json/>; rel=\"https://api.w.org/\""}};
	const char *html =
		"<html><head><meta name=\"generator\" content=\"WordPress 6.4.2\">"
		"<link rel=stylesheet href=\"/wp-content/themes/x/style.css\">"
		"<script src=\"https://www.googletagmanager.com/gtag/js?id=G-1\"></script>"
		"<script src=\"https://js.stripe.com/v3/\"></script>"
		"<script>(function(){var s=document.createElement('script');"
		"s.src='https://widget.intercom.io/widget/abc';})();</script>"
		"</head><body class=\"generic\"></body></html>";
	seo_tech_input in;

	CU_ASSERT_FATAL(project != NULL);
	CU_ASSERT_EQUAL_FATAL(seo_tech_input_from_page(hdr, 4, html, strlen(html), a, &in), 0);
	detect(project, &in, a);
	CU_ASSERT_EQUAL(level("WordPress"), SEO_TECH_DEFINITE);
	CU_ASSERT_STRING_EQUAL(match("WordPress")->version, "6.4.2");
	CU_ASSERT_EQUAL(level("PHP"), SEO_TECH_DEFINITE);
	CU_ASSERT_STRING_EQUAL(match("PHP")->version, "8.2.1");
	CU_ASSERT_EQUAL(level("Cloudflare"), SEO_TECH_DEFINITE);
	CU_ASSERT_EQUAL(level("Google Analytics"), SEO_TECH_HIGH);
	CU_ASSERT_EQUAL(level("Stripe"), SEO_TECH_HIGH);
	CU_ASSERT_EQUAL(level("Intercom"), SEO_TECH_HIGH);
	CU_ASSERT_EQUAL(level("Shopify"), 0);
	seo_arena_free(a);
}

/*
 * Rules corrected against the npm reference (docs/benchmarks.md, realtime):
 * a page fragment, a technology and the level it must get (0: absent),
 * with the version when one is expected.
 */
static const struct {
	const char *html, *tech;
	int level;
	const char *version;
} fixed[] = {
	/* WordPress: another site's uploads are no evidence; own theme assets
	 * and Jetpack's image CDN are */
	{"<div style=\"background:url(https://other.test/wp-content/uploads/a.png)\">",
	 "WordPress", 0, NULL},
	{"<img src=\"https://s.test/wp-content/themes/t/logo.png\">", "WordPress",
	 SEO_TECH_HIGH, NULL},
	{"<link itemprop=image href=\"https://i0.wp.com/s.test/a.jpg\">", "WordPress",
	 SEO_TECH_MEDIUM, NULL},
	/* Drupal: a link to another Drupal site's files is not; theme assets are */
	{"<a href=\"https://other.gov/sites/default/files/plan.pdf\">plan</a>", "Drupal", 0, NULL},
	{"<link rel=stylesheet href=\"/sites/all/themes/t/style.css\">", "Drupal",
	 SEO_TECH_HIGH, NULL},
	/* jQuery: fingerprinted builds, and plugins, which need it */
	{"<script src=\"/static/js/jquery.min.f9c7afd05729.js\"></script>", "jQuery",
	 SEO_TECH_HIGH, NULL},
	{"<script src=\"/js/jquery-3.5.1.min.dc5e7f18c8.js\"></script>", "jQuery",
	 SEO_TECH_HIGH, "3.5.1"},
	{"<script src=\"/js/jquery.magnific-popup.min.js\"></script>", "jQuery",
	 SEO_TECH_MEDIUM, NULL},
	{"<script src=\"/js/app.js\"></script>", "jQuery", 0, NULL},
	{"<script src=\"/js/jquery-ui-1.8.18_cycle.custom.min.js\"></script>", "jQuery UI",
	 SEO_TECH_HIGH, "1.8.18"},
	{"<script src=\"/js/vendor/bootstrap.min.c5b5b2fa19bd.js\"></script>", "Bootstrap",
	 SEO_TECH_HIGH, NULL},
	/* comScore's other host; Facebook's pixel without script */
	{"<script src=\"http://b.scorecardresearch.com/beacon.js\"></script>", "comScore",
	 SEO_TECH_HIGH, NULL},
	{"<noscript><img src=\"https://www.facebook.com/tr?id=1&ev=PageView\"></noscript>",
	 "Facebook Pixel", SEO_TECH_HIGH, NULL},
	/* the payment icons of a Shopify theme */
	{"<svg aria-labelledby=\"pi-apple_pay\"></svg>", "Apple Pay", SEO_TECH_HIGH, NULL},
	{"<svg aria-labelledby=\"pi-google_pay\"></svg>", "Google Pay", SEO_TECH_HIGH, NULL},
	{"<svg aria-labelledby=\"pi-paypal\"></svg>", "PayPal", SEO_TECH_HIGH, NULL},
	{"<svg aria-labelledby=\"pi-shopify_pay\"></svg>", "Shop Pay", SEO_TECH_HIGH, NULL},
	{"<svg aria-labelledby=\"pi-shopify_pay\"></svg>", "Shopify", SEO_TECH_HIGH, NULL},
	{"<link rel=\"preconnect\" href=\"//cdn.jsdelivr.net\">", "jsDelivr", SEO_TECH_HIGH, NULL},
	{"<style>.chip{--tw-bg-opacity: 1}</style>", "Tailwind CSS", SEO_TECH_HIGH, NULL},
	/* a library a loader script inserts, also JSON-escaped */
	{"<script>s.src='https://ajax.googleapis.com/ajax/libs/webfont/1/webfont.js'</script>",
	 "Google Hosted Libraries", SEO_TECH_HIGH, NULL},
	{"<script>var c={\"wf\":\"https:\\/\\/ajax.googleapis.com\\/ajax\\/libs\\/x.js\"}</script>",
	 "Google Hosted Libraries", SEO_TECH_HIGH, NULL},
	/* a privacy policy on force.com is no Salesforce on the page */
	{"<a href=\"http://cbsi.force.com/CBSi/privacy\">Privacy</a>", "Salesforce", 0, NULL},
	/* Adobe's tag manager and its predecessor */
	{"<script src=\"//assets.adobedtm.com/71dc/satelliteLib-1771.js\"></script>",
	 "Adobe Dynamic Tag Management", SEO_TECH_HIGH, NULL},
	{"<script src=\"//assets.adobedtm.com/71dc/satelliteLib-1771.js\"></script>",
	 "Adobe Experience Platform Launch", 0, NULL},
	{"<script src=\"//assets.adobedtm.com/launch-EN0368.min.js\"></script>",
	 "Adobe Experience Platform Launch", SEO_TECH_HIGH, NULL},
	/* PHP: the site's own .php URLs, not another site's */
	{"<a href=\"/rss/aktuell.php\">RSS</a>", "PHP", SEO_TECH_MEDIUM, NULL},
	{"<a href=\"../../teil1/teil1.php\">1</a>", "PHP", SEO_TECH_MEDIUM, NULL},
	{"<a href=\"https://www.facebook.com/sharer/sharer.php?u=x\">share</a>", "PHP", 0, NULL},
	{"<a data-nav=\"13-nav:http://puzzles.test/index.php\">P</a>", "PHP", 0, NULL},
	/* CMSs whose generator the reference knew and we did not */
	{"<meta name=\"generator\" content=\"Koken 0.22.24\">", "Koken", SEO_TECH_DEFINITE,
	 "0.22.24"},
	{"<meta name=\"generator\" content=\"Koken 0.22.24\">", "PHP", SEO_TECH_DEFINITE, NULL},
	{"<meta name=\"generator\" content=\"eZ Platform powered by Netgen\">", "Ibexa DXP",
	 SEO_TECH_DEFINITE, NULL},
	{"<meta name=\"generator\" content=\"eZ Platform powered by Netgen\">", "Symfony",
	 SEO_TECH_DEFINITE, NULL},
};

static void test_project_fixed_rules(void)
{
	CU_ASSERT_FATAL(project != NULL);
	for (size_t i = 0; i < sizeof(fixed) / sizeof(fixed[0]); i++) {
		seo_arena *a = seo_arena_new(0);
		seo_tech_input in;
		const seo_tech_match *m;

		CU_ASSERT_EQUAL_FATAL(seo_tech_input_from_page(NULL, 0, fixed[i].html,
							       strlen(fixed[i].html), a, &in), 0);
		detect(project, &in, a);
		m = match(fixed[i].tech);
		if (level(fixed[i].tech) != fixed[i].level)
			fprintf(stderr, "\ncase %zu: %s at level %d, not %d\n", i, fixed[i].tech,
				level(fixed[i].tech), fixed[i].level);
		CU_ASSERT_EQUAL(level(fixed[i].tech), fixed[i].level);
		if (fixed[i].version != NULL) {
			CU_ASSERT_PTR_NOT_NULL(m != NULL ? m->version : NULL);
			if (m != NULL && m->version != NULL)
				CU_ASSERT_STRING_EQUAL(m->version, fixed[i].version);
		}
		seo_arena_free(a);
	}
}

/* ---- the saved real pages ---------------------------------------------- */

/* Meta generator prefixes of the manifests and what they must give. */
static const struct {
	const char *prefix, *tech;
} expect_gen[] = {
	{"WordPress", "WordPress"}, {"Drupal", "Drupal"}, {"Joomla", "Joomla"},
	{"MediaWiki", "MediaWiki"}, {"Ghost", "Ghost"},	  {"Hugo", "Hugo"},
	{"Jekyll", "Jekyll"},	    {"Gatsby", "Gatsby"}, {"Webflow", "Webflow"},
	{"blogger", "Blogger"},	    {"Plone", "Plone"},	  {"SPIP", "SPIP"},
	{"Elementor", "Elementor"}, {"Divi", "Divi"},	  {"XOOPS", "XOOPS"},
};

static int by_double(const void *x, const void *y)
{
	double a = *(const double *)x, b = *(const double *)y;
	return (a > b) - (a < b);
}

static double now_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

static void test_real_pages(void)
{
	const char *src = getenv("SEO_SOURCE_DIR");
	static const char *const dirs[] = {"readability", "trafilatura", "extruct"};
	double times[512];
	size_t pages = 0, checked = 0;
	char path[4096];

	CU_ASSERT_FATAL(project != NULL);
	if (src == NULL) {
		fprintf(stderr, "\nSEO_SOURCE_DIR unset: real pages skipped\n");
		return;
	}
	for (size_t d = 0; d < sizeof(dirs) / sizeof(dirs[0]); d++) {
		char *manifest, *line, *save;
		size_t mlen;

		snprintf(path, sizeof(path), "%s/../shared/data/pages/%s/MANIFEST.tsv",
			 src, dirs[d]);
		if ((manifest = slurp(path, &mlen)) == NULL)
			continue;
		/* columns: file bytes url lang jsonld graph hreflang imgs generator ... */
		for (line = strtok_r(manifest, "\n", &save); line;
		     line = strtok_r(NULL, "\n", &save)) {
			char *col[10] = {0}, *p = line, file[4600], *html;
			size_t n = 0, len;
			seo_arena *a;
			seo_tech_input in;
			double t0;

			while (n < 10 && p != NULL) {
				col[n++] = p;
				if ((p = strchr(p, '\t')) != NULL)
					*p++ = '\0';
			}
			if (n < 9 || strstr(col[0], ".htm") == NULL)
				continue;
			snprintf(file, sizeof(file), "%s/../shared/data/pages/%s/%s", src,
				 dirs[d], col[0]);
			if ((html = slurp(file, &len)) == NULL)
				continue;
			a = seo_arena_new(0);
			t0 = now_ms();
			CU_ASSERT_EQUAL(seo_tech_input_from_page(NULL, 0, html, len, a, &in), 0);
			detect(project, &in, a);
			if (pages < sizeof(times) / sizeof(times[0]))
				times[pages] = now_ms() - t0;
			pages++;
			for (size_t i = 0; i < n_found; i++)
				CU_ASSERT(found[i].confidence >= SEO_TECH_MEDIUM &&
					  found[i].confidence <= SEO_TECH_DEFINITE);
			for (size_t g = 0; g < sizeof(expect_gen) / sizeof(expect_gen[0]); g++) {
				if (strncmp(col[8], expect_gen[g].prefix,
					    strlen(expect_gen[g].prefix)) != 0)
					continue;
				checked++;
				if (match(expect_gen[g].tech) == NULL)
					fprintf(stderr, "\n%s: generator \"%s\" but no %s\n",
						col[0], col[8], expect_gen[g].tech);
				CU_ASSERT_PTR_NOT_NULL(match(expect_gen[g].tech));
			}
			seo_arena_free(a);
			free(html);
		}
		free(manifest);
	}
	if (pages == 0) {
		fprintf(stderr, "\nno saved pages found: real pages skipped\n");
		return;
	}
	CU_ASSERT(checked > 10);
	{
		size_t n = pages < 512 ? pages : 512;
		qsort(times, n, sizeof(times[0]), by_double);
		fprintf(stderr, "\n%zu real pages, %zu generators checked; detection p50 %.3f ms, p99 %.3f ms\n",
			pages, checked, times[n / 2], times[(n * 99) / 100]);
	}
}

int main(void)
{
	CU_pSuite s;
	unsigned failed;

	if (CU_initialize_registry() != CUE_SUCCESS)
		return 1;
	s = CU_add_suite("tech", NULL, NULL);
	CU_add_test(s, "rule parsing", test_parse);
	CU_add_test(s, "headers, cookies, meta: definite; suffixes", test_headers_cookies_meta);
	CU_add_test(s, "implies", test_implies);
	CU_add_test(s, "script sources and HTML: high, medium, prefilter", test_scripts_and_html);
	CU_add_test(s, "input from a page", test_input_from_page);
	CU_add_test(s, "malformed rule files", test_malformed);
	CU_add_test(s, "the project's rule file", test_project_rules);
	CU_add_test(s, "a page through the project's rules", test_project_page);
	CU_add_test(s, "rules corrected against the npm reference", test_project_fixed_rules);
	CU_add_test(s, "every saved real page", test_real_pages);
	CU_basic_set_mode(CU_BRM_VERBOSE);
	CU_basic_run_tests();
	failed = CU_get_number_of_failures();
	seo_tech_rules_free(project);
	CU_cleanup_registry();
	return failed != 0;
}

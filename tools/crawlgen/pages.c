/*
 * pages.c: the synthetic domains' names and the WAT records of their
 * pages: links with anchors of every kind and the signals of the
 * platforms they are built on.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <seo/errors.h>

#include "gen.h"

static const char *const w1[] = {
	"alpha", "blue", "cedar", "delta", "ember", "fable", "gamma", "harbor",
	"iris", "jade", "kite", "lumen", "maple", "nova", "opal", "pixel",
	"quill", "river", "solar", "tidal", "umber", "vivid", "willow", "xenon",
	"yonder", "zephyr", "amber", "brisk", "coral", "dune",
};
static const char *const w2[] = {
	"labs", "media", "news", "shop", "works", "press", "cloud", "guide",
	"forum", "hub", "studio", "review", "bank", "travel", "foods", "tech",
	"games", "books", "health", "sports",
};
static const char *const tlds[] = { "com", "org", "net", "de", "co.uk",
				    "io", "fr" };
static const char *const generic[] = { "click here", "read more",
				       "website", "here" };

/* The name of synthetic domain i: unique for every i. */
void crawlgen__demo_name(uint32_t i, char *out, size_t outlen)
{
	uint32_t a = i % 30, b = (i / 30) % 20, k = i / 600;

	if (k)
		snprintf(out, outlen, "%s%s%u.%s", w1[a], w2[b], k,
			 tlds[(i * 7 + k) % 7]);
	else
		snprintf(out, outlen, "%s%s.%s", w1[a], w2[b],
			 tlds[(i * 7) % 7]);
}
/*
 * How a page built on each platform shows it in a WAT record, as real
 * pages do: response headers, a meta generator, a script and a preloaded
 * asset (a path is on the page's own host). Shares of the crawled domains
 * (per mille) follow the platforms' shares of the web, so counts are
 * skewed; the rest show none.
 */
static const struct demo_platform {
	unsigned share;
	const char *headers;   /* extra members of Headers, or "" */
	const char *generator; /* or NULL */
	const char *script;    /* or NULL */
	const char *preload;   /* or NULL */
} demo_platforms[] = {
	{ 380, "", "WordPress 6.5.2",
	  "/wp-includes/js/jquery/jquery.min.js?ver=3.7.1", NULL },
	{ 60, ",\"X-ShopId\":\"5813\",\"Powered-By\":\"Shopify\"", NULL,
	  "https://cdn.shopify.com/s/files/1/0581/t/4/assets/theme.js", NULL },
	{ 40, ",\"X-Wix-Request-Id\":\"1718.0123\"", "Wix.com Website Builder",
	  "https://static.parastorage.com/services/thunderbolt/main.js", NULL },
	{ 30, ",\"Server\":\"Squarespace\"", NULL,
	  "https://static1.squarespace.com/static/vta/scripts/site-bundle.js",
	  NULL },
	{ 15, "", "Webflow", "https://assets.website-files.com/js/webflow.4f9c2.js",
	  NULL },
	{ 12, "", "Starfield Technologies; GoDaddy Website Builder 8.0.0000",
	  "https://img1.wsimg.com/blobby/go/gpub/main.js", NULL },
	{ 8, "", "Framer 94b0e2c",
	  "https://framerusercontent.com/sites/3Xv/script_main.js", NULL },
	{ 8, "", NULL, "https://cdn2.editmysite.com/js/site/main.js", NULL },
	{ 6, "", "Tilda", "https://static.tildacdn.com/js/tilda-scripts-3.0.min.js",
	  NULL },
	{ 6, ",\"Set-Cookie\":\"SHOP_SESSION_TOKEN=a1b2c3; path=/; HttpOnly\"",
	  NULL, "https://cdn11.bigcommerce.com/s-abc123/stencil/theme.js", NULL },
	{ 4, "", NULL, "https://static-assets.strikinglycdn.com/webpack/site.js",
	  NULL },
	{ 4, "", NULL, "https://carrd.co/assets/widgets.js", NULL },
	{ 4, "", NULL, NULL, "https://images.ctfassets.net/space1/hero.jpg" },
	{ 3, "", NULL, NULL,
	  "https://cdn.sanity.io/images/abc123/production/hero.png" },
	{ 3, "", NULL, "https://meta-q.cdn.bubble.io/f1700/run.js", NULL },
	{ 2, "", NULL, "https://assets.softr-files.com/assets/js/softr.js", NULL },
	{ 3, "", NULL,
	  "https://kajabi-storefronts-production.kajabi-cdn.com/themes/main.js",
	  NULL },
	{ 3, "", NULL, "https://assets.thinkific.com/assets/site.js", NULL },
	{ 10, "", NULL, "https://www.paypal.com/sdk/js?client-id=demo", NULL },
};

/* The PayPal row, which also shows on the first page of some domains on
 * another platform (a shop's checkout button). */
#define DEMO_PAYPAL (sizeof(demo_platforms) / sizeof(demo_platforms[0]) - 1)
#define DEMO_PAYPAL_ALSO 8 /* percent */

/* splitmix64's finaliser: the platform of a domain comes from its name
 * index, not from the crawl's random stream, which stays as it was. */
static uint64_t mix(uint64_t z)
{
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	return z ^ (z >> 31);
}

/* JSON array items of one page's head, each with a leading comma. */
typedef struct signals {
	char hdr[256], metas[256], scripts[512], links[256];
} signals;

static void append(char *buf, size_t size, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static void append(char *buf, size_t size, const char *fmt, ...)
{
	size_t n = strlen(buf);
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(buf + n, size - n, fmt, ap);
	va_end(ap);
}

/* Adds one platform's signals for domain `name`. */
static void platform_signals(const struct demo_platform *dp,
			     const char *name, signals *sg)
{
	append(sg->hdr, sizeof(sg->hdr), "%s", dp->headers);
	if (dp->generator)
		append(sg->metas, sizeof(sg->metas),
		       ",{\"name\":\"generator\",\"content\":\"%s\"}",
		       dp->generator);
	if (dp->script)
		append(sg->scripts, sizeof(sg->scripts),
		       ",{\"path\":\"SCRIPT@/src\",\"url\":\"%s%s%s\"}",
		       dp->script[0] == '/' ? "https://www." : "",
		       dp->script[0] == '/' ? name : "", dp->script);
	if (dp->preload)
		append(sg->links, sizeof(sg->links),
		       ",{\"path\":\"LINK@/href\",\"rel\":\"preload\","
		       "\"url\":\"%s\"}", dp->preload);
}

/* The WAT signals of page p of domain number i, named `name`: the extra
 * members of Headers into `hdr`, those of Head into `head`. */
static void page_signals(uint32_t i, const char *name, uint32_t p,
			 char *hdr, size_t hlen, char *head, size_t len)
{
	uint64_t h = mix(i + 0x5eedULL);
	unsigned pm = (unsigned)(h % 1000), sum = 0;
	signals sg = { "", "", "", "" };
	size_t k;

	hdr[0] = head[0] = '\0';
	for (k = 0; k < DEMO_PAYPAL + 1; k++) {
		sum += demo_platforms[k].share;
		if (pm < sum)
			break;
	}
	if (k > DEMO_PAYPAL)
		return;
	platform_signals(&demo_platforms[k], name, &sg);
	/* a shop's checkout button, on its first page only */
	if (k != DEMO_PAYPAL && p == 0 && (h >> 32) % 100 < DEMO_PAYPAL_ALSO)
		platform_signals(&demo_platforms[DEMO_PAYPAL], name, &sg);
	snprintf(hdr, hlen, "%s", sg.hdr);
	if (sg.metas[0])
		append(head, len, ",\"Metas\":[%s]", sg.metas + 1);
	if (sg.scripts[0])
		append(head, len, ",\"Scripts\":[%s]", sg.scripts + 1);
	if (sg.links[0])
		append(head, len, ",\"Link\":[%s]", sg.links + 1);
}

/* Appends `s` and keeps the body NUL-terminated. */
static int body_add(crawlgen__body *b, const char *s)
{
	size_t n = strlen(s);
	char *p = b->p;

	if (b->len + n >= b->cap) {
		b->cap = 2 * (b->len + n + 1);
		p = realloc(b->p, b->cap);
		if (!p)
			return SEO_ENOMEM;
		b->p = p;
	}
	memcpy(p + b->len, s, n + 1);
	b->len += n;
	return 0;
}

/* Starts the metadata record of page p of domain number i, `name`, in
 * `body`: sets its URI and capture date (in the crawl's two months). */
int crawlgen__wat_page_begin(crawlgen__body *body, uint32_t i, const char *name,
			  uint32_t p, char uri[160], char date[32], rng *r)
{
	char line[3072], hdr[256], head[1024];
	int y;
	unsigned mo, da;

	snprintf(uri, 160, "https://www.%s/page/%u", name, p);
	page_signals(i, name, p, hdr, sizeof(hdr), head, sizeof(head));
	graph_civil_from_days(19860 + (int32_t)(next(r) % 60), &y, &mo, &da);
	snprintf(date, 32, "%04d-%02u-%02uT%02u:%02u:00Z", y, mo, da,
		 (unsigned)(next(r) % 24), (unsigned)(next(r) % 60));
	body->len = 0;
	snprintf(line, sizeof(line),
		 "{\"Envelope\":{\"WARC-Header-Metadata\":{"
		 "\"WARC-Type\":\"response\",\"WARC-Target-URI\":"
		 "\"%s\",\"WARC-Date\":\"%s\"},\"Payload-Metadata\":"
		 "{\"HTTP-Response-Metadata\":{\"Response-Message\":"
		 "{\"Status\":\"200\"},\"Headers\":{\"Content-Type\":"
		 "\"text/html; charset=utf-8\"%s},\"HTML-Metadata\":"
		 "{\"Head\":{\"Title\":\"%s\"%s},\"Links\":["
		 "{\"path\":\"A@/href\",\"url\":\"/about\",\"text\":"
		 "\"About\"}",
		 uri, date, hdr, name, head);
	return body_add(body, line);
}

/* Appends link number k of the page, to domain `target`: anchors branded,
 * generic, naked or partial, some images and nofollows. */
int crawlgen__wat_link(crawlgen__body *body, const char *target, uint32_t k,
		       rng *r)
{
	uint32_t kind = (uint32_t)(next(r) % 10);
	char anchor[96], line[1024];
	size_t ll = strcspn(target, ".");

	if (kind < 3)
		snprintf(anchor, sizeof(anchor), "%.*s", (int)ll, target);
	else if (kind < 5)
		snprintf(anchor, sizeof(anchor), "%s", generic[next(r) % 4]);
	else if (kind < 6)
		snprintf(anchor, sizeof(anchor), "https://%s/", target);
	else
		snprintf(anchor, sizeof(anchor), "best %s tips",
			 w2[next(r) % 20]);
	if (kind == 9)
		snprintf(line, sizeof(line),
			 ",{\"path\":\"IMG@/src\",\"url\":"
			 "\"https://cdn.%s/img/%u.png\",\"alt\":\"%s\"}",
			 target, k, anchor);
	else
		snprintf(line, sizeof(line),
			 ",{\"path\":\"A@/href\",\"url\":"
			 "\"https://%s%s/%s?a=1&amp;b=%u\",\"text\":\"%s\"%s}",
			 kind % 2 ? "www." : "", target, k % 3 ? "post" : "",
			 k % 5, anchor,
			 kind == 7 ? ",\"rel\":\"nofollow\"" : "");
	return body_add(body, line);
}

int crawlgen__wat_page_end(crawlgen__body *body, const char *path,
			   const char *uri,
			const char *date)
{
	int rc = body_add(body, "]}}}}}");

	return rc ? rc : crawlgen__warc_member(path, "metadata", uri, date,
					       body->p);
}

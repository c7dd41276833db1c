/*
 * rt.h: the pure libraries of svc-realtime: robots.txt, sitemaps, the page
 * and site analysers and the PageSpeed mapping, over the shared fetcher
 * (seo/fetch.h).
 *
 * Nothing here talks gRPC; the service wraps these calls. All functions
 * returning int return 0 or a negative SEO_E* code (seo/errors.h).
 */
#ifndef RT_H
#define RT_H

#include <stddef.h>
#include <stdint.h>

#include <jansson.h>

#include "seo/arena.h"
#include "seo/charset.h"
#include "seo/fetch.h"
#include "seo/tech.h"

/* ---- robots.txt ---------------------------------------------------------- */

/* Bytes of a robots.txt that are read, as Google does; the rest is
 * ignored. */
#define RT_ROBOTS_MAX_BYTES (500 * 1024)

typedef struct rt_robots_rule {
	int allow;           /* 1: Allow, 0: Disallow */
	const char *pattern; /* non-empty; non-ASCII bytes and spaces escaped,
				escapes in upper case */
} rt_robots_rule;

typedef struct rt_robots_group {
	const char **agents; /* product tokens ("Googlebot", "*") */
	size_t n_agents;
	rt_robots_rule *rules; /* in file order */
	size_t n_rules;
	double crawl_delay; /* seconds, the group's first valid one; < 0: none */
} rt_robots_group;

typedef struct rt_robots {
	rt_robots_group *groups;
	size_t n_groups;
	const char **sitemaps; /* absolute http(s) Sitemap lines, canonical,
				  in file order */
	size_t n_sitemaps;
	int truncated; /* input beyond RT_ROBOTS_MAX_BYTES was ignored */
} rt_robots;

/*
 * Parses a robots.txt body (any bytes; BOM, CRLF, comments, typos of keys
 * tolerated; see lib/robots.c for the rules) into `out`, everything
 * allocated on `a`. Returns 0 or SEO_ENOMEM: there is no malformed
 * robots.txt, only lines that are ignored.
 */
int rt_robots_parse(const char *txt, size_t len, seo_arena *a, rt_robots *out);

/*
 * Sets *allowed to 1 when crawler `agent` (a product token, or a full
 * User-Agent whose token is used; "*" for any crawler) may fetch `path`
 * ("/dir/page?query"), by Google's rules: the groups naming the token
 * combined, else those of "*"; the longest matching pattern wins, Allow
 * on a tie; '*' matches any run, a final '$' anchors the end; no match
 * allows. Returns 0 or SEO_ENOMEM.
 */
int rt_robots_allowed(const rt_robots *r, const char *agent, const char *path,
		      int *allowed);

/*
 * The robots_txt object of site health: {present, disallow_all,
 * sitemap_declared}. `r` is NULL when there is no robots.txt. disallow_all
 * is true when the "*" groups have a Disallow matching every path ("/",
 * "*", or "/" then stars) and no Allow at all. Sets *out to a new object
 * (json_decref()). Returns 0 or SEO_ENOMEM.
 */
int rt_robots_facts(const rt_robots *r, json_t **out);

/* ---- sitemaps ------------------------------------------------------------ */

/* Decompressed XML bytes read of one sitemap (the protocol's 50 MB). */
#define RT_SITEMAP_MAX_XML ((size_t)50 * 1024 * 1024)

enum rt_sitemap_kind {
	RT_SITEMAP_URLSET = 1,
	RT_SITEMAP_INDEX = 2,
};

/* One <url>; strings trimmed, NULL when the element is absent. */
typedef struct rt_sitemap_entry {
	const char *loc; /* never NULL or empty */
	const char *lastmod, *changefreq, *priority;
} rt_sitemap_entry;

typedef struct rt_sitemap_doc {
	int kind;                /* enum rt_sitemap_kind */
	rt_sitemap_entry *urls;  /* urlset: the first max_urls entries */
	size_t n_urls;
	const char **children;   /* index: the first max_children <loc>s */
	size_t n_children;
	size_t children_total;   /* index: every <sitemap> with a <loc> */
	int truncated;           /* a bound stopped the reading: the URL
				    limit or RT_SITEMAP_MAX_XML */
	const char *error;       /* why reading stopped on an error (the size
				    bound or malformed XML), or NULL */
	size_t xml_bytes;        /* XML read (after gzip) */
} rt_sitemap_doc;

/*
 * Reads one sitemap document from `body` (XML, or gzip detected by its
 * magic bytes), streaming, into `out`, everything on `a`. Reading stops
 * after max_urls <url> entries (truncated is set when another follows).
 * Entries read before an XML error or the RT_SITEMAP_MAX_XML bound are
 * kept, with error set (and truncated, for the bound). Never reads the
 * network or files and never expands entities. Returns 0; SEO_EINVAL when
 * it is no sitemap (not XML, another root element; out->error says why);
 * SEO_ENOMEM.
 */
int rt_sitemap_parse(const char *body, size_t len, size_t max_urls,
		     size_t max_children, seo_arena *a, rt_sitemap_doc *out);

/*
 * The same, fed as the bytes arrive: rt_sitemap_parser_new() starts a
 * document whose entries and strings go on `a` (max_urls and max_children
 * as above; at most `max_xml` bytes of XML, after gzip, are read: more
 * sets truncated and error). rt_sitemap_parser_feed() hands it the next
 * bytes: 0 to go on, 1 when the reading is over (a limit, a bound or an
 * error: the rest need not be fetched), SEO_ENOMEM. rt_sitemap_parser_end()
 * ends the document into *out and frees the parser; it returns as
 * rt_sitemap_parse() does. rt_sitemap_parser_free() frees a parser that is
 * not ended (NULL allowed). The parser holds a few buffers, never the
 * document.
 */
typedef struct rt_sitemap_parser rt_sitemap_parser;

int rt_sitemap_parser_new(size_t max_urls, size_t max_children, size_t max_xml,
			  seo_arena *a, rt_sitemap_parser **out);
int rt_sitemap_parser_feed(rt_sitemap_parser *p, const char *data, size_t len);
int rt_sitemap_parser_end(rt_sitemap_parser *p, rt_sitemap_doc *out);
void rt_sitemap_parser_free(rt_sitemap_parser *p);

/* Bounds of the sitemap walk (the spec's Limits). */
#define RT_SITEMAP_MAX_DOCS 16
#define RT_SITEMAP_WALK_MS 12000
#define RT_SITEMAP_MAX_LISTED 200
/* Bytes of the walk (docs/decisions.md, "The sitemap walk bounded in
 * bytes"): each document is received up to RT_SITEMAP_DOC_BYTES, the walk
 * up to RT_SITEMAP_WALK_BYTES in all (robots.txt aside), and at most
 * RT_SITEMAP_WALK_XML bytes of XML (after gzip) are parsed in all. Any
 * host's documents count alike. */
#define RT_SITEMAP_DOC_BYTES ((size_t)4 * 1024 * 1024)
#define RT_SITEMAP_WALK_BYTES ((size_t)16 * 1024 * 1024)
#define RT_SITEMAP_WALK_XML ((size_t)64 * 1024 * 1024)

/*
 * The sitemap endpoint's walk, as a state machine without I/O: the caller
 * fetches each URL that rt_sitemap_walk_next() names and hands the body to
 * rt_sitemap_walk_feed(). Discovery: every Sitemap line of `robots` (NULL
 * when there is none), then /sitemap.xml, then /sitemap_index.xml, each
 * fallback only when nothing before it was readable; indexes breadth-first
 * with one nested level; at most RT_SITEMAP_MAX_DOCS documents and `limit`
 * URLs. Everything lives on `a`.
 */
typedef struct rt_sitemap_walk rt_sitemap_walk;

/* `origin` is the site ("https://example.com"). Returns 0, SEO_EINVAL
 * (origin is no valid URL) or SEO_ENOMEM. */
int rt_sitemap_walk_new(const char *origin, const rt_robots *robots,
			size_t limit, seo_arena *a, rt_sitemap_walk **out);

/* How many more URLs the walk takes: the max_urls of the next document. */
size_t rt_sitemap_walk_room(const rt_sitemap_walk *w);

/*
 * Hands the walk the document it named, parsed by the caller (a streaming
 * rt_sitemap_parser): `d` and `parsed` as rt_sitemap_parser_end() gave
 * them, or `d` NULL when the document could not be fetched. Returns as
 * rt_sitemap_walk_feed() does.
 */
int rt_sitemap_walk_take(rt_sitemap_walk *w, const rt_sitemap_doc *d, int parsed);

/* The next document to fetch (canonical URL on the walk's arena), or NULL
 * when the walk is over. One document at a time: NULL as well until the
 * previous one was fed. */
const char *rt_sitemap_walk_next(rt_sitemap_walk *w);

/* The body of the document last named (raw bytes, gzip allowed), or NULL
 * when it could not be fetched (any error or a non-2xx status); a failed
 * or unreadable document is skipped. Returns 0, SEO_EINVAL (nothing was
 * asked) or SEO_ENOMEM. */
int rt_sitemap_walk_feed(rt_sitemap_walk *w, const char *body, size_t len);

/* The time bound passed: the walk ends, truncated when anything was
 * left. */
void rt_sitemap_walk_expire(rt_sitemap_walk *w);

/* The sitemap response of the spec (all but credits_used). Sets *out to a
 * new object (json_decref()). Returns 0 or SEO_ENOMEM. */
int rt_sitemap_walk_result(const rt_sitemap_walk *w, json_t **out);

/*
 * Called once when a sitemap fetch ends: rc 0 with the response in
 * `result` (the callback owns it), SEO_EINVAL (invalid_url), SEO_EDENIED
 * (private_ip: robots.txt could not be asked) or SEO_ENOMEM. Never called
 * from inside rt_sitemap_fetch().
 */
typedef void (*rt_sitemap_done_fn)(int rc, json_t *result, void *ud);

/*
 * Runs the walk for site `origin` ("https://example.com") on fetcher `f`:
 * /robots.txt first (5 s at most), then the documents one after another,
 * all within `walk_ms` (at most RT_SITEMAP_WALK_MS, which 0 means: the
 * caller passes less when its own deadline is nearer); when it runs out,
 * the fetch in flight is cut and the walk ends truncated. Each response is
 * freed once read; the walk lives on `a`, which must outlive the callback
 * (and may be freed in it). Returns 0 (done will be called), SEO_EINVAL or
 * SEO_ENOMEM (it will not).
 */
int rt_sitemap_fetch(seo_fetcher *f, const char *origin, size_t limit,
		     long walk_ms, seo_arena *a, rt_sitemap_done_fn done,
		     void *ud);

/* ---- analysers ----------------------------------------------------------- */

/*
 * The page SEO audit object of the spec, from a fetched page. `html` is
 * UTF-8 (seo_fetch_result.body); `headers` supplies X-Robots-Tag and
 * Content-Language (NULL allowed). Returns 0 and sets *out to a new
 * object the caller releases with json_decref(), or SEO_ENOMEM.
 */
typedef struct rt_page {
	const char *url;        /* as requested */
	const char *final_url;  /* after redirects; base of relative links */
	long status;
	long response_time_ms;
	const char *html;
	size_t html_len;
	const seo_header *headers;
	size_t n_headers;
} rt_page;

int rt_page_seo(const rt_page *page, json_t **out);

/*
 * The schema-markup response of the spec (all but credits_used): every
 * <script type="application/ld+json"> block of `page`, flattened into
 * entities; malformed blocks are listed in invalid_blocks as {index,
 * error, line, column, position} with jansson's message. Pure: no
 * network. Returns 0 and sets *out to a new object the caller releases
 * with json_decref(), or SEO_ENOMEM.
 */
int rt_schema_markup(const rt_page *page, json_t **out);

/*
 * The site health object of the spec from its probes, all fetched with
 * redirects followed (each within 5 s): the homepage over https, its
 * /robots.txt and /sitemap.xml (the three `checks`, in that order), the
 * homepage over plain http (https.enforced: it ends on https) and the
 * www host's homepage (www_redirect: it ends on `apex`). Security
 * headers and HSTS are read from the https homepage's last response;
 * hsts is a Strict-Transport-Security header with a max-age above 0.
 * Everything temporary goes on `a`. Sets *out to a new object
 * (json_decref()). Returns 0 or SEO_ENOMEM.
 */
typedef struct rt_site_probes {
	const seo_fetch_result *home, *robots, *sitemap; /* https://domain/... */
	const seo_fetch_result *http; /* http://domain/ */
	const seo_fetch_result *www;  /* https://www.<apex>/ */
} rt_site_probes;

int rt_site_health(const char *domain, const char *apex,
		   const rt_site_probes *p, seo_arena *a, json_t **out);

/*
 * The tech stack object of the spec from the fetched homepage `res` of
 * `domain`: the technologies `rules` find in its headers, cookies, meta
 * tags, script sources and HTML (strongest first), its Server and
 * X-Powered-By headers and meta generator (null when absent), and the
 * fetch's response time. Everything temporary goes on `a`. Sets *out to a
 * new object (json_decref()). Returns 0 or SEO_ENOMEM.
 */
int rt_tech_stack(const char *domain, const seo_fetch_result *res,
		  const seo_tech_rules *rules, seo_arena *a, json_t **out);

/* ---- page performance (PageSpeed Insights) ------------------------------ */

/* An upstream run at most (PageSpeed runs take 10 to 60 s). */
#define RT_PSI_TIMEOUT_MS 60000

/* "desktop" for "desktop", "mobile" for anything else, NULL included
 * (static). */
const char *rt_psi_strategy(const char *given);

/*
 * The Page performance object of the spec, all but cached_at, from a
 * PageSpeed Insights v5 runPagespeed answer `root` (parsed; NULL when
 * the answer was no JSON): {url, the three
 * category scores (0..1 to integers 0..100; a category not returned is
 * 0), core_web_vitals (the lab audits' numericValue, null when absent:
 * largest-contentful-paint, cumulative-layout-shift,
 * interaction-to-next-paint, first-contentful-paint, server-response-time
 * for ttfb), crux_data (loadingExperience has field metrics), strategy}.
 * Sets *out to a new object (json_decref()). Returns 0; SEO_EINVAL when
 * the answer is no successful run (not JSON, no lighthouseResult, a
 * runtimeError), with *why set (static); SEO_ENOMEM.
 */
int rt_psi_map(const json_t *root, const char *url, const char *strategy,
	       json_t **out, const char **why);

/*
 * Runs PageSpeed Insights on `url` (blocking, seo/provider.h): GET
 * <base>/pagespeedonline/v5/runPagespeed with url, strategy, the
 * performance, accessibility and seo categories and, when `key` is not
 * empty, key; within `timeout_ms` (at most RT_PSI_TIMEOUT_MS); never
 * retried, since each run is a counted attempt. The caller has checked
 * `url` by the address policy. The answer
 * is mapped by rt_psi_map() into *out. Returns 0; SEO_EUPSTREAM when the
 * upstream failed (unreachable, too slow, an HTTP error, a body that is no
 * run), with `why` (why_len bytes) saying how in a few words fit for the
 * caller (an HTTP error's body is only logged); SEO_ENOMEM.
 */
int rt_psi_run(const char *base, const char *key, const char *url,
	       const char *strategy, long timeout_ms, json_t **out, char *why,
	       size_t why_len);

/*
 * The UTC day of `now_ms` as "YYYY-MM-DD" into `day`, and the whole
 * seconds from `now_ms` to the next UTC midnight (at least 1) into
 * *to_midnight_s: the daily quotas' day and their retry_after.
 */
void rt_utc_day(int64_t now_ms, char day[11], int64_t *to_midnight_s);

/* `ms` (Unix milliseconds) as ISO 8601 UTC to the second,
 * "2024-05-10T10:00:00Z", into `out`. */
void rt_iso8601(int64_t ms, char out[21]);

#endif

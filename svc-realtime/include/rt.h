/*
 * rt.h: the pure libraries of svc-realtime: URL validation and the
 * SSRF-safe address policy, the live fetcher, charset conversion and the
 * page analysers.
 *
 * Nothing here talks gRPC; the service wraps these calls. All functions
 * returning int return 0 or a negative SEO_E* code (seo/errors.h).
 */
#ifndef RT_H
#define RT_H

#include <stddef.h>
#include <stdint.h>
#include <sys/socket.h>

#include <event2/event.h>
#include <jansson.h>

#include "seo/arena.h"
#include "seo/tech.h"

/* ---- URLs ---------------------------------------------------------------- */

enum rt_host_kind {
	RT_HOST_NAME = 0, /* a DNS name, lowercase, no trailing dot */
	RT_HOST_V4 = 1,   /* dotted quad, canonicalised from any inet_aton form */
	RT_HOST_V6 = 2,   /* RFC 5952 text, without brackets */
};

typedef struct rt_url {
	const char *scheme; /* "http" or "https" (static) */
	const char *host;   /* canonical host, see rt_host_kind */
	int host_kind;
	unsigned short port; /* explicit or the scheme's default */
	const char *path;    /* "/..." with the query, percent-encoded */
	const char *href;    /* the canonical URL rebuilt from the parts */
} rt_url;

/*
 * Parses an absolute URL the way the spec's invalid_url rule reads it:
 * http or https only, a host, no userinfo, no fragment, no whitespace or
 * control characters, no percent-encoded host. A non-ASCII host is an IDN
 * and becomes punycode as browsers look it up (seo_domain_to_ascii();
 * one that is no valid IDN is invalid). IPv4 hosts in any spelling
 * inet_aton() accepts (127.1, 0x7f.1, 0177.0.0.1, 2130706433, full-width
 * digits) are canonicalised to a dotted quad, so that the address policy
 * sees what a resolver would. Strings of `out` are allocated on `a`.
 * Returns 0, SEO_EINVAL (invalid_url) or SEO_ENOMEM.
 */
int rt_url_parse(const char *url, seo_arena *a, rt_url *out);

/*
 * Resolves `ref` (a Location value) against `base` (a canonical href) and
 * parses the result with rt_url_parse(). Same returns.
 */
int rt_url_resolve(const char *base, const char *ref, seo_arena *a,
		   rt_url *out);

/* ---- the address policy -------------------------------------------------- */

#define RT_MAX_ALLOW_NETS 32

typedef struct rt_cidr {
	int family; /* AF_INET or AF_INET6 */
	unsigned char addr[16];
	unsigned bits;
} rt_cidr;

/* Networks exempt from the block (SEO_FETCH_ALLOW_NETS); empty by default. */
typedef struct rt_netpolicy {
	size_t n;
	rt_cidr nets[RT_MAX_ALLOW_NETS];
} rt_netpolicy;

/*
 * Parses comma-separated CIDRs ("127.0.0.0/8, ::1/128"; a bare address is
 * a host route) into `out`. Returns 0 or SEO_EINVAL.
 */
int rt_netpolicy_parse(const char *list, rt_netpolicy *out);

/*
 * Returns 1 when a fetch must not connect to `sa`: private, loopback,
 * link-local, CGNAT, "this network", reserved, benchmarking, documentation,
 * multicast, broadcast, IPv4-mapped/compatible/translated IPv6, NAT64 or
 * 6to4 wrapping a blocked IPv4, Teredo, ULA, site-local, anything outside
 * 2000::/3; 0 otherwise or when `policy` (NULL allowed) exempts it.
 */
int rt_addr_blocked(const rt_netpolicy *policy, const struct sockaddr *sa);

/*
 * Resolves `host` with getaddrinfo() (numeric hosts are not looked up) and
 * checks every address it returns: one blocked address refuses the host,
 * since a later lookup could pick it. The first address, with `port`, is
 * stored in *out. Blocking; the fetcher calls it from its resolver
 * threads. Returns 0, SEO_EDENIED (private_ip) or SEO_EIO (no address).
 */
int rt_resolve_checked(const rt_netpolicy *policy, const char *host,
		       unsigned short port, struct sockaddr_storage *out);

/*
 * One SEO_FETCH_CONNECT_TO entry, as curl's --connect-to: requests for
 * host:port go to connect_host:connect_port instead. An empty host or a
 * zero port matches any; an empty connect_host or zero connect_port keeps
 * the original.
 */
typedef struct rt_connect_to {
	char host[256];
	unsigned short port;
	char connect_host[256];
	unsigned short connect_port;
} rt_connect_to;

#define RT_MAX_CONNECT_TO 32

/* Parses the comma-separated list into `out` (at most RT_MAX_CONNECT_TO
 * entries), setting *n. Returns 0 or SEO_EINVAL. */
int rt_connect_to_parse(const char *list, rt_connect_to *out, size_t *n);

/* ---- charsets ------------------------------------------------------------ */

/*
 * Picks the charset of an HTML document the HTML5 way: a byte order mark,
 * then the Content-Type charset parameter (`content_type` may be NULL),
 * then a <meta charset> or http-equiv declaration in the first 1024 bytes,
 * then UTF-8 when the bytes are valid UTF-8, else windows-1252. Labels are
 * normalised (latin1 and us-ascii become windows-1252). Returns a string
 * on `a`, or NULL when out of memory.
 */
const char *rt_charset_detect(const char *body, size_t len,
			      const char *content_type, seo_arena *a);

/*
 * Converts `len` bytes in `charset` to UTF-8 (iconv), dropping a BOM and
 * replacing undecodable bytes with U+FFFD, so that the result is always
 * valid UTF-8. An unknown charset is read as UTF-8. The NUL-terminated
 * result is allocated on `a`. Returns 0 or SEO_ENOMEM.
 */
int rt_to_utf8(const char *in, size_t len, const char *charset, seo_arena *a,
	       char **out, size_t *out_len);

/* ---- the fetcher --------------------------------------------------------- */

/* Why a fetch failed; each maps to the spec's error code. */
enum rt_fetch_error {
	RT_FETCH_OK = 0,
	RT_FETCH_INVALID_URL,   /* 400 invalid_url */
	RT_FETCH_PRIVATE_IP,    /* 400 private_ip */
	RT_FETCH_FAILED,        /* 503 fetch_failed */
	RT_FETCH_TIMEOUT,       /* 503 timeout */
	RT_FETCH_TOO_LARGE,     /* 503 response_too_large */
};

/* The spec's error code of `err` ("fetch_failed"), or NULL for OK. */
const char *rt_fetch_error_code(int err);

typedef struct rt_fetch_opts {
	long timeout_ms;   /* whole fetch, all hops; 0: 10000 */
	size_t max_body;   /* decoded bytes; 0: 5 MiB */
	int max_redirects; /* hops followed; < 0: none, 0: 5 */
	int no_follow;     /* 1: return the first response, even a redirect */
	int raw_body;      /* 1: keep the bytes; 0: text converted to UTF-8 */
} rt_fetch_opts;

typedef struct rt_header {
	const char *name;  /* lowercase */
	const char *value; /* trimmed */
} rt_header;

typedef struct rt_hop {
	const char *url;
	long status;
} rt_hop;

/*
 * A finished fetch. Everything is allocated on the arena given to
 * rt_fetch_start() and lives as long as it.
 */
typedef struct rt_fetch_result {
	int error;              /* enum rt_fetch_error */
	const char *message;    /* why, for logs; "" when OK */
	const char *url;        /* as requested */
	const char *final_url;  /* canonical URL of the last response */
	long status;            /* HTTP status of the last response, 0 if none */
	const rt_header *headers; /* of the last response */
	size_t n_headers;
	const char *body;       /* NUL-terminated; UTF-8 for text unless raw */
	size_t body_len;
	const char *charset;    /* detected source charset of a text body */
	long response_time_ms;  /* start to end, all hops */
	const rt_hop *hops;     /* every response, redirects included */
	size_t n_hops;
} rt_fetch_result;

/* The first value of header `name` (lowercase) in `res`, or NULL. */
const char *rt_fetch_header(const rt_fetch_result *res, const char *name);

typedef struct rt_fetcher rt_fetcher;

/*
 * Called once per fetch, always from the event loop, never from inside
 * rt_fetch_start().
 */
typedef void (*rt_fetch_done_fn)(const rt_fetch_result *res, void *ud);

/*
 * Creates a fetcher on `base` (libcurl multi driven by libevent, with a
 * few resolver threads). It reads SEO_FETCH_CONNECT_TO,
 * SEO_FETCH_ALLOW_NETS and SEO_FETCH_CA_FILE now. Returns 0, SEO_EINVAL
 * (a malformed variable), SEO_EIO or SEO_ENOMEM. Free with
 * rt_fetcher_free().
 */
int rt_fetcher_new(struct event_base *base, rt_fetcher **out);

/*
 * Starts fetching `url` (GET). `opts` may be NULL. The result lives on
 * `a`, which must outlive the callback; the fetcher does not touch `a`
 * once the callback has been called, so the callback may free it. Returns 0 (done will be called) or
 * SEO_ENOMEM (it will not).
 */
int rt_fetch_start(rt_fetcher *f, const char *url, const rt_fetch_opts *opts,
		   seo_arena *a, rt_fetch_done_fn done, void *ud);

/* Number of fetches in flight. */
size_t rt_fetcher_active(const rt_fetcher *f);

/*
 * Frees the fetcher; fetches still in flight end without their callbacks.
 * NULL is allowed.
 */
void rt_fetcher_free(rt_fetcher *f);

/*
 * Blocking convenience for tools and tests: one fetch on its own
 * event_base. The result lives on `a`. Returns 0 (see res->error) or a
 * negative SEO_E* code when the fetcher could not be set up.
 */
int rt_fetch_sync(const char *url, const rt_fetch_opts *opts, seo_arena *a,
		  rt_fetch_result *res);

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
} rt_sitemap_doc;

/*
 * Reads one sitemap document from `body` (XML, or gzip detected by its
 * magic bytes), streaming, into `out`, everything on `a`. Reading stops
 * after max_urls <url> entries (truncated is set when another follows).
 * Entries read before an XML error or the RT_SITEMAP_MAX_XML bound are
 * kept, with error set (and truncated, for the bound); libxml2's reader
 * drops the chunk (a few hundred bytes) where the error is, and with it
 * a small document whole. Never reads the
 * network or files and never expands entities. Returns 0; SEO_EINVAL when
 * it is no sitemap (not XML, another root element; out->error says why);
 * SEO_ENOMEM.
 */
int rt_sitemap_parse(const char *body, size_t len, size_t max_urls,
		     size_t max_children, seo_arena *a, rt_sitemap_doc *out);

/* Bounds of the sitemap walk (the spec's Limits). */
#define RT_SITEMAP_MAX_DOCS 16
#define RT_SITEMAP_WALK_MS 12000
#define RT_SITEMAP_MAX_LISTED 200

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
int rt_sitemap_fetch(rt_fetcher *f, const char *origin, size_t limit,
		     long walk_ms, seo_arena *a, rt_sitemap_done_fn done,
		     void *ud);

/* ---- analysers ----------------------------------------------------------- */

/*
 * The page SEO audit object of the spec, from a fetched page. `html` is
 * UTF-8 (rt_fetch_result.body); `headers` supplies X-Robots-Tag and
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
	const rt_header *headers;
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
	const rt_fetch_result *home, *robots, *sitemap; /* https://domain/... */
	const rt_fetch_result *http; /* http://domain/ */
	const rt_fetch_result *www;  /* https://www.<apex>/ */
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
int rt_tech_stack(const char *domain, const rt_fetch_result *res,
		  const seo_tech_rules *rules, seo_arena *a, json_t **out);

/* ---- page performance (PageSpeed Insights) ------------------------------ */

/* An upstream run at most (PageSpeed runs take 10 to 60 s). */
#define RT_PSI_TIMEOUT_MS 60000

/* "desktop" for "desktop", "mobile" for anything else, NULL included
 * (static). */
const char *rt_psi_strategy(const char *given);

/*
 * The Page performance object of the spec, all but cached_at, from a
 * PageSpeed Insights v5 runPagespeed answer `body`: {url, the three
 * category scores (0..1 to integers 0..100; a category not returned is
 * 0), core_web_vitals (the lab audits' numericValue, null when absent:
 * largest-contentful-paint, cumulative-layout-shift,
 * interaction-to-next-paint, first-contentful-paint, server-response-time
 * for ttfb), crux_data (loadingExperience has field metrics), strategy}.
 * Sets *out to a new object (json_decref()). Returns 0; SEO_EINVAL when
 * the body is no successful run (not JSON, no lighthouseResult, a
 * runtimeError), with *why set (static); SEO_ENOMEM.
 */
int rt_psi_map(const char *body, size_t len, const char *url,
	       const char *strategy, json_t **out, const char **why);

/*
 * Runs PageSpeed Insights on `url` (blocking, libcurl): GET
 * <base>/pagespeedonline/v5/runPagespeed with url, strategy, the
 * performance, accessibility and seo categories and, when `key` is not
 * empty, key; within `timeout_ms` (at most RT_PSI_TIMEOUT_MS). The answer
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

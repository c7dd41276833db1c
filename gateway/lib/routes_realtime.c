/* Routes served by svc-realtime (rows as in routes.c), in the order of the
 * specification's real-time analysis table. */
#include "routes_int.h"

#include "seo/realtime/v1/realtime.pb-c.h"

#define REALTIME(m) "/seo.realtime.v1.Realtime/" m
#define N(a) (sizeof(a) / sizeof((a)[0]))
#define MSG(t) (&seo__realtime__v1__##t##__descriptor)

/* A busy service (its queue full, or the workspace's live analyses all
 * running) says when to come back. */
static const char *const retry_after[] = {"Retry-After", NULL};

/* IndexNow's bound on a URL; the spec gives page analyses none. */
#define URL_MAX_CHARS 2048

static const gw_param_rule url_params[] = {
	{"url", GW_P_REQUIRED | GW_P_URL | GW_P_RANGE | GW_P_USAGE, 1,
	 URL_MAX_CHARS, 0, "invalid_url",
	 "full http(s) URL of the page, without credentials or fragment"},
};

static const gw_param_rule domain_params[] = {
	{"domain", GW_P_REQUIRED | GW_P_DOMAIN | GW_P_USAGE, 0, 0, 0,
	 "invalid_domain", "bare domain of the site, e.g. example.com"},
};

static const gw_param_rule sitemap_params[] = {
	{"domain", GW_P_REQUIRED | GW_P_DOMAIN | GW_P_USAGE, 0, 0, 0,
	 "invalid_domain", "bare domain of the site, e.g. example.com"},
	{"limit", GW_P_DEFAULT | GW_P_RANGE, 1, 1000, 100, NULL,
	 "URLs collected at most"},
};

static const gw_param_rule psi_params[] = {
	{"url", GW_P_REQUIRED | GW_P_URL | GW_P_RANGE | GW_P_USAGE, 1,
	 URL_MAX_CHARS, 0, "invalid_url",
	 "full http(s) URL of a public page, without credentials or fragment"},
	{"strategy", 0, 0, 0, 0, NULL,
	 "desktop, or mobile (the default; any other value is read as mobile)"},
};

static const char *const page_errors[] = {
	"invalid_url", "private_ip", "fetch_failed", "timeout",
	"response_too_large", NULL};
static const char *const site_errors[] = {
	"invalid_domain", "private_ip", NULL};
static const char *const psi_errors[] = {
	"invalid_url", "private_ip", "user_quota_exceeded", "quota_exceeded",
	"psi_unavailable", NULL};
/* A site analysis of one fetched page: the homepage. */
static const char *const homepage_errors[] = {
	"invalid_domain", "private_ip", "fetch_failed", "timeout",
	"response_too_large", NULL};

const gw_route gw__realtime_routes[] = {
	{.method = "GET", .pattern = "/v1/page-seo", .endpoint = "page-seo",
	 .service = GW_SVC_REALTIME, .rpc_path = REALTIME("PageSeo"),
	 .in = {.kind = GW_IN_QUERY, .message = MSG(url_request),
	        .params = url_params, .n_params = N(url_params)},
	 .bill = {.kind = GW_BILL_FIXED, .cost = 3, .envelope = 1},
	 .out = {.message = MSG(page_seo_response), .status = 200,
	         .headers = retry_after},
	 .summary = "SEO audit of one page, fetched live",
	 .errors = page_errors},
	{.method = "GET", .pattern = "/v1/site-health",
	 .endpoint = "site-health",
	 .service = GW_SVC_REALTIME, .rpc_path = REALTIME("SiteHealth"),
	 .in = {.kind = GW_IN_QUERY, .message = MSG(domain_request),
	        .params = domain_params, .n_params = N(domain_params)},
	 .bill = {.kind = GW_BILL_FIXED, .cost = 2, .envelope = 1},
	 .out = {.message = MSG(site_health_response), .status = 200,
	         .headers = retry_after},
	 .summary = "HTTPS, redirects, security headers and robots.txt of a site",
	 .errors = site_errors},
	{.method = "GET", .pattern = "/v1/schema-markup",
	 .endpoint = "schema-markup",
	 .service = GW_SVC_REALTIME, .rpc_path = REALTIME("SchemaMarkup"),
	 .in = {.kind = GW_IN_QUERY, .message = MSG(url_request),
	        .params = url_params, .n_params = N(url_params)},
	 .bill = {.kind = GW_BILL_FIXED, .cost = 2, .envelope = 1},
	 .out = {.message = MSG(schema_markup_response), .status = 200,
	         .headers = retry_after},
	 .summary = "JSON-LD structured data of one page, fetched live",
	 .errors = page_errors},
	{.method = "GET", .pattern = "/v1/sitemap", .endpoint = "sitemap",
	 .service = GW_SVC_REALTIME, .rpc_path = REALTIME("Sitemap"),
	 .in = {.kind = GW_IN_QUERY, .message = MSG(sitemap_request),
	        .params = sitemap_params, .n_params = N(sitemap_params)},
	 .bill = {.kind = GW_BILL_FIXED, .cost = 2, .billed_field = "billed",
	          .envelope = 1, .hide_billed = 1},
	 .out = {.message = MSG(sitemap_response), .status = 200,
	         .headers = retry_after},
	 .summary = "URLs of a site's sitemaps; refunded when none is found",
	 .errors = site_errors},
	{.method = "GET", .pattern = "/v1/tech-stack", .endpoint = "tech-stack",
	 .service = GW_SVC_REALTIME, .rpc_path = REALTIME("TechStack"),
	 .in = {.kind = GW_IN_QUERY, .message = MSG(domain_request),
	        .params = domain_params, .n_params = N(domain_params)},
	 .bill = {.kind = GW_BILL_FIXED, .cost = 2, .envelope = 1},
	 .out = {.message = MSG(tech_stack_response), .status = 200,
	         .headers = retry_after},
	 .summary = "Technologies a site's homepage reveals, fetched live",
	 .errors = homepage_errors},
	/* PageSpeed runs take 10 to 60 s: a deadline beyond the upstream's
	 * minute, for the cache write and the answer. */
	{.method = "GET", .pattern = "/v1/page-performance",
	 .endpoint = "page-performance",
	 .service = GW_SVC_REALTIME, .rpc_path = REALTIME("PagePerformance"),
	 .timeout_ms = 65000,
	 .in = {.kind = GW_IN_QUERY, .message = MSG(page_performance_request),
	        .params = psi_params, .n_params = N(psi_params)},
	 .bill = {.kind = GW_BILL_AFTER, .cost = 3, .envelope = 1},
	 .out = {.message = MSG(page_performance_response), .status = 200,
	         .headers = retry_after},
	 .summary = "Lab performance scores and Core Web Vitals of a page "
		    "(PageSpeed Insights), cached 24 hours for everyone",
	 .errors = psi_errors},
};

const size_t gw__realtime_routes_count = N(gw__realtime_routes);

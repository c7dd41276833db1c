/* Routes served by svc-graph (rows as in routes.c), in the order of the
 * specification's link-graph table, then those it leaves "not shown",
 * then the batch. Paths, envelopes and costs the specification does not
 * give are recorded in docs/decisions.md ("Link graph"). */
#include "routes_int.h"

#include <limits.h>

#include "seo/graph/v1/graph.pb-c.h"

#define GRAPH(m) "/seo.graph.v1.Graph/" m
#define N(a) (sizeof(a) / sizeof((a)[0]))
#define MSG(t) (&seo__graph__v1__##t##__descriptor)

#define DOMAIN_DOC "domain queried, e.g. example.com (scheme, www., path " \
		   "and case are normalised)"
#define DOMAIN_RULE(name, doc) \
	{name, GW_P_REQUIRED | GW_P_DOMAIN | GW_P_USAGE, 0, 0, 0, NULL, doc}
#define LIMIT_RULE(max) \
	{"limit", GW_P_DEFAULT | GW_P_RANGE, 1, max, 100, NULL, "rows per page"}
#define OFFSET_RULE \
	{"offset", GW_P_DEFAULT | GW_P_RANGE, 0, LLONG_MAX, 0, NULL, \
	 "rows skipped"}

static const gw_param_rule domain_params[] = {
	DOMAIN_RULE("domain", DOMAIN_DOC),
};

static const gw_param_rule page_params[] = {
	DOMAIN_RULE("domain", DOMAIN_DOC),
	LIMIT_RULE(1000),
	OFFSET_RULE,
};

static const gw_param_rule similar_params[] = {
	DOMAIN_RULE("domain", DOMAIN_DOC),
	LIMIT_RULE(100),
	OFFSET_RULE,
};

/* score=true: the specification's derived-score surcharge, amount ours
 * (docs/decisions.md). */
#define SCORE_SURCHARGE 1

static const gw_param_rule backlinks_params[] = {
	DOMAIN_RULE("domain", DOMAIN_DOC),
	LIMIT_RULE(1000),
	OFFSET_RULE,
	{"sort", GW_P_DEFAULT, 0, 0, SEO__GRAPH__V1__SORT__SORT_IMPORTANCE,
	 NULL, "importance: one row per referring domain, strongest first; "
	 "recent: every link, newest first"},
	{"from_domain", GW_P_DOMAIN, 0, 0, 0, NULL,
	 "only links from this source domain"},
	{"link_type", 0, 0, 0, 0, NULL, "only links of this type: hyperlink "
	 "or image"},
	{"score", GW_P_DEFAULT, 0, 0, 0, NULL,
	 "adds anchor_type and link_quality to every row, for 1 more credit"},
};

static const gw_param_rule intersect_params[] = {
	DOMAIN_RULE("domain_a", "the domain the rows link to"),
	{"domain_b", GW_P_REQUIRED | GW_P_DOMAIN, 0, 0, 0, NULL,
	 "the domain the rows do not link to"},
	LIMIT_RULE(1000),
	OFFSET_RULE,
};

static const gw_param_rule overlap_params[] = {
	{"domains", GW_P_REQUIRED | GW_P_DOMAIN | GW_P_RANGE, 2, 5, 0, NULL,
	 "2 to 5 domains, comma-separated"},
	LIMIT_RULE(1000),
	OFFSET_RULE,
};

static const gw_param_rule gap_params[] = {
	DOMAIN_RULE("domain", "your domain"),
	{"competitors", GW_P_REQUIRED | GW_P_DOMAIN | GW_P_RANGE, 1, 5, 0,
	 NULL, "1 to 5 competing domains, comma-separated"},
	LIMIT_RULE(1000),
	OFFSET_RULE,
};

/* No domain check here: a malformed domain fails its own entry only. */
static const gw_param_rule batch_params[] = {
	{"domains", GW_P_REQUIRED | GW_P_RANGE, 1, 50, 0, NULL,
	 "1 to 50 domains; 2 credits for each one looked up"},
};

/* platform-domains: a missing platform is refused by the gateway, an
 * unknown one by svc-graph (it has the list); billed after, neither costs. */
static const gw_param_rule platform_params[] = {
	{"platform", GW_P_REQUIRED, 0, 0, 0, "missing_platform",
	 "platform slug or name, any case (wix, wordpress, squarespace, "
	 "webflow, framer, tilda, weebly, strikingly, bubble, softr, carrd, "
	 "godaddy_builder, contentful, sanity, shopify, bigcommerce, kajabi, "
	 "thinkific, paypal)"},
	{"limit", GW_P_DEFAULT | GW_P_RANGE | GW_P_CLAMP, 1, 1000, 100, NULL,
	 "domains returned; above 1000 clamped silently"},
	{"min_da", GW_P_RANGE, 0, 100, 0, NULL, "lowest authority score"},
	{"max_da", GW_P_RANGE, 0, 100, 0, NULL, "highest authority score"},
	{"tld", 0, 0, 0, 0, NULL, "public suffix, e.g. com or co.uk"},
	{"sort", GW_P_DEFAULT, 0, 0,
	 SEO__GRAPH__V1__PLATFORM_SORT__PLATFORM_SORT_DA_DESC, NULL,
	 "da_desc (authority, strongest first), da_asc or domain_asc"},
};

static const char *const domain_errors[] = {"invalid_domain", NULL};
static const char *const platform_errors[] = {"missing_platform",
					      "unknown_platform", NULL};
static const char *const no_errors[] = {NULL};

/* A billed GET on svc-graph: the columns every row but the batch shares. */
#define GET_ROW(path, ep, rpc, req, resp, price, rules, text)               \
	{.method = "GET", .pattern = path, .endpoint = ep,                  \
	 .service = GW_SVC_GRAPH, .rpc_path = GRAPH(rpc),                   \
	 .in = {.kind = GW_IN_QUERY, .message = MSG(req), .params = rules,  \
	        .n_params = N(rules)},                                      \
	 .bill = {.kind = GW_BILL_FIXED, .cost = price, .envelope = 1},     \
	 .out = {.message = MSG(resp), .status = 200},                      \
	 .summary = text, .errors = domain_errors}

const gw_route gw__graph_routes[] = {
	GET_ROW("/v1/referring-domains", "referring-domains",
		"ReferringDomains", domain_page_request,
		referring_domains_response, 2, page_params,
		"Domains linking to a domain, strongest first"),
	GET_ROW("/v1/outbound-links", "outbound-links", "OutboundLinks",
		domain_page_request, outbound_links_response, 2, page_params,
		"Links from a domain to other domains, most frequent first"),
	GET_ROW("/v1/similar-domains", "similar-domains", "SimilarDomains",
		domain_page_request, similar_domains_response, 5,
		similar_params,
		"Domains sharing the most linking domains with a domain"),
	GET_ROW("/v1/site-explorer", "site-explorer", "SiteExplorer",
		domain_request, site_explorer_response, 10, domain_params,
		"Backlinks, authority, top pages and anchor text in one call"),
	GET_ROW("/v1/link-audit", "link-audit", "LinkAudit", domain_request,
		link_audit_response, 8, domain_params,
		"Health, risk flags, link quality and anchor profile of a "
		"domain's backlinks"),
	GET_ROW("/v1/url-index", "url-index", "UrlIndex", domain_page_request,
		url_index_response, 2, page_params,
		"Crawled URLs of a domain with status, type and time"),
	GET_ROW("/v1/status-codes", "status-codes", "StatusCodes",
		domain_request, status_codes_response, 2, domain_params,
		"Crawled captures of a domain per HTTP status"),
	GET_ROW("/v1/link-intersect", "link-intersect", "LinkIntersect",
		link_intersect_request, link_intersect_response, 5,
		intersect_params,
		"Domains linking to domain_a but not to domain_b"),
	{.method = "GET", .pattern = "/v1/backlinks", .endpoint = "backlinks",
	 .service = GW_SVC_GRAPH, .rpc_path = GRAPH("Backlinks"),
	 .in = {.kind = GW_IN_QUERY, .message = MSG(backlinks_request),
	        .params = backlinks_params, .n_params = N(backlinks_params)},
	 .bill = {.kind = GW_BILL_FIXED, .cost = 2, .surcharge_field = "score",
	          .surcharge = SCORE_SURCHARGE, .envelope = 1},
	 .out = {.message = MSG(backlinks_response), .status = 200},
	 .summary = "Links to a domain, by importance or newest first",
	 .errors = domain_errors},
	GET_ROW("/v1/anchor-text", "anchor-text", "AnchorText",
		domain_page_request, anchor_text_response, 2, page_params,
		"Anchor texts of the links to a domain"),
	GET_ROW("/v1/top-pages", "top-pages", "TopPages", domain_page_request,
		top_pages_response, 2, page_params,
		"Pages of a domain with the most referring domains"),
	GET_ROW("/v1/domain-authority", "domain-authority", "DomainAuthority",
		domain_request, domain_authority_response, 1, domain_params,
		"Authority score, registration, popularity and risk flags"),
	GET_ROW("/v1/domain-rank", "domain-rank", "DomainRank",
		domain_request, domain_rank_response, 1, domain_params,
		"Inbound edges and referring domains of a domain"),
	GET_ROW("/v1/crawl-history", "crawl-history", "CrawlHistory",
		domain_request, crawl_history_response, 1, domain_params,
		"When the crawl first and last saw a domain, and its URLs"),
	GET_ROW("/v1/domain-overlap", "domain-overlap", "DomainOverlap",
		domain_overlap_request, domain_overlap_response, 5,
		overlap_params, "Domains linking to every one of 2 to 5 domains"),
	GET_ROW("/v1/link-gap", "link-gap", "LinkGap", link_gap_request,
		link_gap_response, 5, gap_params,
		"Domains linking to your competitors but not to you"),
	{.method = "POST", .pattern = "/v1/batch", .endpoint = "batch",
	 .service = GW_SVC_GRAPH, .rpc_path = GRAPH("Batch"),
	 .in = {.kind = GW_IN_JSON, .message = MSG(batch_request),
	        .params = batch_params, .n_params = N(batch_params)},
	 .bill = {.kind = GW_BILL_PER_ITEM, .cost = 2, .items_field = "domains",
	          .billed_field = "succeeded", .envelope = 1, .hide_billed = 1},
	 .out = {.message = MSG(batch_response), .status = 200},
	 .summary = "Backlinks of up to 50 domains; malformed ones fail "
		    "alone and are not charged",
	 .errors = no_errors},
	{.method = "GET", .pattern = "/v1/platform-trends",
	 .endpoint = "platform-trends",
	 .service = GW_SVC_GRAPH, .rpc_path = GRAPH("PlatformTrends"),
	 .in = {.kind = GW_IN_QUERY, .message = MSG(platform_trends_request)},
	 .bill = {.kind = GW_BILL_FIXED, .cost = 1, .envelope = 1},
	 .out = {.message = MSG(platform_trends_response), .status = 200},
	 .summary = "Crawled domains per supported platform, most used first",
	 .errors = no_errors},
	/* `limit` credits debited, refunded down to the domains returned:
	 * until a debit-after-success mode exists, a balance below the
	 * limit is refused even when fewer domains would come back. */
	{.method = "GET", .pattern = "/v1/platform-domains",
	 .endpoint = "platform-domains",
	 .service = GW_SVC_GRAPH, .rpc_path = GRAPH("PlatformDomains"),
	 .in = {.kind = GW_IN_QUERY, .message = MSG(platform_domains_request),
	        .params = platform_params, .n_params = N(platform_params)},
	 .bill = {.kind = GW_BILL_AFTER, .cost = 1, .billed_field = "returned",
	          .envelope = 1, .hide_billed = 1},
	 .out = {.message = MSG(platform_domains_response), .status = 200},
	 .summary = "Crawled domains on a platform, by authority or name, "
		    "1 credit per domain returned",
	 .errors = platform_errors},
};

const size_t gw__graph_routes_count = N(gw__graph_routes);

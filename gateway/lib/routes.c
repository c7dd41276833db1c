/*
 * The route table. Each row is an endpoint of the public interface; see
 * gw_routes.h for the columns. The gateway's own rows and the account rows
 * are here; each other service keeps its rows in routes_<service>.c, listed
 * in `parts` below. Keep rows in the order the specification lists them:
 * the OpenAPI document follows this order.
 */
#include "gw_routes.h"
#include "routes_int.h"

#include <limits.h>
#include <pthread.h>
#include <stdlib.h>
#include <stdio.h>
#include <string.h>

#include "seo/account/v1/account.pb-c.h"

#define ACCOUNT(m) "/seo.account.v1.Account/" m
#define N(a) (sizeof(a) / sizeof((a)[0]))
#define MSG(t) (&seo__account__v1__##t##__descriptor)
/* How long a change of the price tiers may take to show on GET /v1/pricing
 * (docs/decisions.md, "Answers from the gateway's memory"). */
#define PRICING_CACHE_MS 5000

static const gw_param_rule usage_params[] = {
	{"limit", GW_P_DEFAULT | GW_P_RANGE | GW_P_CLAMP, 1, 200, 50, NULL,
	 "page size; larger values are clamped to 200"},
	{"offset", GW_P_DEFAULT | GW_P_RANGE, 0, LLONG_MAX, 0, NULL,
	 "rows skipped"},
};

static const gw_param_rule checkout_params[] = {
	{"credits", GW_P_REQUIRED | GW_P_RANGE, 100, 100000000, 0,
	 "invalid_credits", "credits to buy, a whole number of at least 100"},
};

static const gw_param_rule create_key_params[] = {
	{"name", 0, 0, 0, 0, NULL, "display name of the key; default Default"},
};

static const gw_param_rule revoke_key_params[] = {
	{"id", GW_P_REQUIRED, 0, 0, 0, "key_not_found",
	 "the key's id (its SHA-256), as listed by GET /v1/keys"},
};

static const char *const me_errors[] = {"user_not_found", NULL};
static const char *const revoke_errors[] = {"key_not_found", NULL};
static const char *const create_key_errors[] = {"key_limit_reached", NULL};
static const char *const checkout_errors[] = {"invalid_credits",
					      "checkout_failed", NULL};
static const char *const webhook_errors[] = {"invalid_signature", NULL};
static const char *const no_errors[] = {NULL};
static const char *const metrics_errors[] = {"invalid_api_key", NULL};

static const gw_route core_routes[] = {
	{.method = "GET", .pattern = "/healthz", .endpoint = "healthz",
	 .service = GW_SVC_NONE,
	 .auth = {.key = GW_KEY_NONE},
	 .quota = GW_QUOTA_NONE,
	 .out = {.status = 200},
	 .summary = "Health of the gateway and every service",
	 .errors = no_errors},
	{.method = "GET", .pattern = "/metrics", .endpoint = "metrics",
	 .service = GW_SVC_NONE,
	 .auth = {.key = GW_KEY_NONE},
	 .quota = GW_QUOTA_NONE,
	 .out = {.status = 200},
	 .summary = "Prometheus metrics (Authorization: Bearer SEO_METRICS_TOKEN)",
	 .errors = metrics_errors},
	{.method = "GET", .pattern = "/v1/openapi.json", .endpoint = "openapi",
	 .service = GW_SVC_NONE,
	 .auth = {.key = GW_KEY_NONE},
	 .quota = GW_QUOTA_NONE,
	 .out = {.status = 200},
	 .summary = "This interface as an OpenAPI 3.1 document",
	 .errors = no_errors},

	/* Account endpoints. */
	{.method = "GET", .pattern = "/v1/me", .endpoint = "me",
	 .service = GW_SVC_ACCOUNT, .rpc_path = ACCOUNT("GetMe"),
	 .in = {.message = MSG(empty)},
	 .out = {.message = MSG(user), .status = 200},
	 .sees_billing = 1,
	 .summary = "The key's user",
	 .errors = me_errors},
	{.method = "GET", .pattern = "/v1/credits", .endpoint = "credits",
	 .service = GW_SVC_ACCOUNT, .rpc_path = ACCOUNT("GetCredits"),
	 .auth = {.roles = GW_ROLES_BALANCE},
	 .in = {.message = MSG(empty)},
	 .out = {.message = MSG(credits), .status = 200, .lease_credits = 1},
	 .sees_billing = 1,
	 .summary = "The workspace's credit balance",
	 .errors = no_errors},
	{.method = "GET", .pattern = "/v1/keys", .endpoint = "keys",
	 .service = GW_SVC_ACCOUNT, .rpc_path = ACCOUNT("ListKeys"),
	 .auth = {.roles = GW_ROLES_STAFF},
	 .in = {.message = MSG(empty)},
	 .out = {.message = MSG(list_keys_response), .status = 200},
	 .summary = "Active API keys, newest first (members: their own)",
	 .errors = no_errors},
	{.method = "POST", .pattern = "/v1/keys", .endpoint = "keys",
	 .service = GW_SVC_ACCOUNT, .rpc_path = ACCOUNT("CreateKey"),
	 .auth = {.roles = GW_ROLES_STAFF},
	 .in = {.kind = GW_IN_JSON, .message = MSG(create_key_request),
	        .params = create_key_params, .n_params = N(create_key_params)},
	 .out = {.message = MSG(created_key), .status = 201},
	 .summary = "Create an API key; the raw key is shown once",
	 .errors = create_key_errors},
	{.method = "DELETE", .pattern = "/v1/keys/:id", .endpoint = "keys",
	 .service = GW_SVC_ACCOUNT, .rpc_path = ACCOUNT("RevokeKey"),
	 .auth = {.roles = GW_ROLES_STAFF},
	 .in = {.message = MSG(revoke_key_request), .params = revoke_key_params,
	        .n_params = N(revoke_key_params)},
	 .out = {.message = MSG(success), .status = 200},
	 .summary = "Revoke an API key, immediately and for good",
	 .errors = revoke_errors},
	{.method = "GET", .pattern = "/v1/usage", .endpoint = "usage",
	 .service = GW_SVC_ACCOUNT, .rpc_path = ACCOUNT("ListUsage"),
	 .auth = {.roles = GW_ROLES_STAFF},
	 .in = {.kind = GW_IN_QUERY, .message = MSG(list_usage_request),
	        .params = usage_params, .n_params = N(usage_params)},
	 .out = {.message = MSG(list_usage_response), .status = 200},
	 .sees_billing = 1,
	 .summary = "Usage rows of the workspace, newest first",
	 .errors = no_errors},
	{.method = "GET", .pattern = "/v1/pricing", .endpoint = "pricing",
	 .service = GW_SVC_ACCOUNT, .rpc_path = ACCOUNT("GetPricing"),
	 .auth = {.key = GW_KEY_NONE},
	 .in = {.message = MSG(empty)},
	 .quota = GW_QUOTA_NONE,
	 .out = {.message = MSG(pricing_response), .status = 200,
	         .cache_ms = PRICING_CACHE_MS},
	 .summary = "Price tiers per credit",
	 .errors = no_errors},
	{.method = "POST", .pattern = "/v1/checkout", .endpoint = "checkout",
	 .service = GW_SVC_ACCOUNT, .rpc_path = ACCOUNT("CreateCheckout"),
	 .auth = {.roles = GW_ROLES_MANAGERS},
	 .in = {.kind = GW_IN_JSON, .message = MSG(checkout_request),
	        .params = checkout_params, .n_params = N(checkout_params)},
	 .out = {.message = MSG(checkout_response), .status = 200},
	 .summary = "Start a payment-provider checkout session for credits",
	 .errors = checkout_errors},
	{.method = "GET", .pattern = "/v1/websites", .endpoint = "websites",
	 .service = GW_SVC_ACCOUNT, .rpc_path = ACCOUNT("ListWebsites"),
	 .in = {.message = MSG(empty)},
	 .out = {.message = MSG(list_websites_response), .status = 200},
	 .summary = "The workspace's websites, ordered by name",
	 .errors = no_errors},
	{.method = "POST", .pattern = "/v1/webhooks/payments",
	 .endpoint = "webhooks/payments",
	 .service = GW_SVC_ACCOUNT, .rpc_path = ACCOUNT("PaymentWebhook"),
	 .auth = {.key = GW_KEY_NONE},
	 .in = {.kind = GW_IN_RAW, .message = MSG(payment_webhook_request)},
	 .quota = GW_QUOTA_NONE,
	 .out = {.message = MSG(payment_webhook_response), .status = 200},
	 .summary = "Payment provider's signed payment-completed event",
	 .errors = webhook_errors},
};

static const size_t core_routes_count = N(core_routes);

static const struct {
	const gw_route *rows;
	const size_t *count;
} parts[] = {
	{core_routes, &core_routes_count},
	{gw__graph_routes, &gw__graph_routes_count},
	{gw__realtime_routes, &gw__realtime_routes_count},
	{gw__proposals_routes, &gw__proposals_routes_count},
	{gw__tasks_routes, &gw__tasks_routes_count},
	{gw__report_routes, &gw__report_routes_count},
	{gw__indexnow_routes, &gw__indexnow_routes_count},
	{gw__example_routes, &gw__example_routes_count},
};

static gw_route *routes;
static size_t n_routes;
static pthread_once_t routes_once = PTHREAD_ONCE_INIT;

/* Joins the parts once; the table then never changes. */
static void routes_join(void)
{
	size_t total = 0, at = 0;

	for (size_t i = 0; i < N(parts); i++)
		total += *parts[i].count;
	routes = malloc(total * sizeof(*routes));
	if (routes == NULL)
		abort();
	for (size_t i = 0; i < N(parts); i++) {
		memcpy(routes + at, parts[i].rows, *parts[i].count * sizeof(*routes));
		at += *parts[i].count;
	}
	n_routes = total;
}

const gw_route *gw_routes(size_t *count)
{
	pthread_once(&routes_once, routes_join);
	*count = n_routes;
	return routes;
}

/*
 * Matches one pattern segment by segment; ":name" binds a non-empty
 * segment. `scratch` receives copies of bound values.
 */
static int pattern_match(const char *pattern, const char *path, char *scratch,
			 gw_kv *params, size_t *n_params)
{
	const char *p = pattern, *s = path;
	size_t n = 0;

	while (*p != '\0' && *s != '\0') {
		if (*p == ':') {
			const char *name = p + 1;
			const char *pend = strchr(name, '/');
			const char *send = strchr(s, '/');
			size_t plen = pend ? (size_t)(pend - name) : strlen(name);
			size_t slen = send ? (size_t)(send - s) : strlen(s);

			if (slen == 0 || n == GW_MAX_PATH_PARAMS)
				return 0;
			/* Names point into the pattern's copy in scratch too,
			 * so that they are NUL-terminated. */
			memcpy(scratch, s, slen);
			scratch[slen] = '\0';
			params[n].value = scratch;
			scratch += slen + 1;
			memcpy(scratch, name, plen);
			scratch[plen] = '\0';
			params[n].name = scratch;
			scratch += plen + 1;
			n++;
			p = name + plen;
			s += slen;
			continue;
		}
		if (*p != *s)
			return 0;
		p++;
		s++;
	}
	if (*p != '\0' || *s != '\0')
		return 0;
	*n_params = n;
	return 1;
}

/* HEAD is a GET without the body: allowed where that GET costs nothing, so
 * that no call is charged for an answer the client never gets. */
static int head_allowed(const gw_route *r)
{
	return strcmp(r->method, "GET") == 0 && r->bill.kind == GW_BILL_FREE;
}

const gw_route *gw_route_match(const char *method, const char *path,
			       char *scratch, gw_kv *params, size_t *n_params,
			       int *path_known)
{
	int head = strcmp(method, "HEAD") == 0;
	size_t n;
	const gw_route *routes = gw_routes(&n);

	*path_known = 0;
	*n_params = 0;
	for (size_t i = 0; i < n; i++) {
		if (!pattern_match(routes[i].pattern, path, scratch, params,
				   n_params))
			continue;
		if (head ? head_allowed(&routes[i]) :
			   strcmp(routes[i].method, method) == 0)
			return &routes[i];
		*path_known = 1;
	}
	*n_params = 0;
	return NULL;
}

/* Appends ", method" (or "method" first) unless `out` names it already. */
static void allow_add(char *out, size_t outlen, const char *method)
{
	size_t len = strlen(out), mlen = strlen(method);

	for (const char *p = out; (p = strstr(p, method)) != NULL; p += mlen)
		if ((p == out || p[-1] == ' ') &&
		    (p[mlen] == ',' || p[mlen] == '\0'))
			return;
	if (len + (len ? 2 : 0) + mlen + 1 > outlen)
		return;
	snprintf(out + len, outlen - len, "%s%s", len ? ", " : "", method);
}

size_t gw_route_allow(const char *path, char *scratch, gw_kv *params,
		      char *out, size_t outlen)
{
	size_t n, np;
	const gw_route *routes = gw_routes(&n);

	if (outlen == 0)
		return 0;
	out[0] = '\0';
	for (size_t i = 0; i < n; i++) {
		if (!pattern_match(routes[i].pattern, path, scratch, params,
				   &np))
			continue;
		allow_add(out, outlen, routes[i].method);
		if (head_allowed(&routes[i]))
			allow_add(out, outlen, "HEAD");
	}
	return strlen(out);
}

unsigned gw_role_bit(const char *role)
{
	static const struct {
		const char *name;
		unsigned bit;
	} roles[] = {
		{"owner", GW_ROLE_OWNER},
		{"admin", GW_ROLE_ADMIN},
		{"member", GW_ROLE_MEMBER},
		{"client", GW_ROLE_CLIENT},
	};
	for (size_t i = 0; i < N(roles); i++)
		if (role != NULL && strcmp(roles[i].name, role) == 0)
			return roles[i].bit;
	return 0;
}

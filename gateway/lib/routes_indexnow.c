/* Routes of svc-agent's IndexNow part (rows as in routes.c), in the order
 * of the specification's IndexNow section. */
#include "routes_int.h"

#include "seo/agent/v1/agent.pb-c.h"

#define AGENT(m) "/seo.agent.v1.Agent/" m
#define N(a) (sizeof(a) / sizeof((a)[0]))
#define MSG(t) (&seo__agent__v1__##t##__descriptor)

static const gw_param_rule key_params[] = {
	{"domain", GW_P_REQUIRED | GW_P_DOMAIN | GW_P_USAGE, 0, 0, 0,
	 "invalid_domain",
	 "host to make a key for (www and apex are different hosts); a URL is "
	 "reduced to its host"},
};

/* The count and each URL are the service's rules (shared with IndexNow
 * proposals): its codes, and refunded like any failure. */
static const gw_param_rule submit_params[] = {
	{"urls", GW_P_REQUIRED, 0, 0, 0, "indexnow_invalid_url",
	 "1 to 1000 absolute public http(s) URLs of one host, default port "
	 "only, without credentials or fragment"},
};

static const int key_statuses[] = {201, 0};
/* An agent-origin call held or queued as a proposal (nothing submitted,
 * the credit refunded). */
static const int submit_statuses[] = {202, 0};
static const char *const agent_origin[] = {"x-service-client", NULL};

static const char *const key_errors[] = {
	"invalid_domain", "indexnow_host_not_a_website", NULL};
static const char *const submit_errors[] = {
	"indexnow_invalid_url", "indexnow_too_many_urls",
	"indexnow_host_mismatch", "indexnow_host_not_a_website",
	"indexnow_key_not_found", "indexnow_key_not_verified",
	"indexnow_invalid_request", "indexnow_key_rejected",
	"indexnow_url_mismatch", "indexnow_rate_limited",
	"indexnow_unavailable", NULL};

const gw_route gw__indexnow_routes[] = {
	{.method = "POST", .pattern = "/v1/indexnow/key",
	 .endpoint = "indexnow/key",
	 .service = GW_SVC_AGENT, .rpc_path = AGENT("CreateIndexNowKey"),
	 .auth = {.roles = GW_ROLES_STAFF},
	 .in = {.kind = GW_IN_QUERY, .message = MSG(index_now_key_request),
	        .params = key_params, .n_params = N(key_params)},
	 .out = {.message = MSG(index_now_key), .status = 200,
	         .statuses = key_statuses},
	 .summary = "The IndexNow key of a host of the workspace's websites: "
		    "201 when made, 200 after (never rotated)",
	 .errors = key_errors},
	/* The key file may take 30 s, then the upstream 15 s. */
	{.method = "POST", .pattern = "/v1/indexnow", .endpoint = "indexnow",
	 .service = GW_SVC_AGENT, .rpc_path = AGENT("SubmitIndexNow"),
	 .timeout_ms = 50000,
	 .auth = {.roles = GW_ROLES_STAFF},
	 .in = {.kind = GW_IN_JSON, .message = MSG(submit_index_now_request),
	        .params = submit_params, .n_params = N(submit_params),
	        .body_code = "indexnow_invalid_url"},
	 .bill = {.kind = GW_BILL_FIXED, .cost = 1, .billed_field = "billed",
	          .envelope = 1, .hide_billed = 1},
	 .forward = {.headers = agent_origin},
	 .out = {.message = MSG(submit_index_now_response), .status = 200,
	         .statuses = submit_statuses},
	 .summary = "Submit URLs of one host to IndexNow (1 credit, refunded "
		    "on failure); agent-origin calls (X-Service-Client: mcp) "
		    "may be held for approval",
	 .errors = submit_errors},
};

const size_t gw__indexnow_routes_count = N(gw__indexnow_routes);

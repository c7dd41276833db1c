/* The routes of svc-example (rows as in routes.c; docs/NEW-SERVICE.md):
 * its greeting, and two rows showing the stages of docs/ARCHITECTURE.md. */
#include "routes_int.h"

#include "seo/example/v1/example.pb-c.h"

#define N(a) (sizeof(a) / sizeof((a)[0]))
#define MSG(t) (&seo__example__v1__##t##__descriptor)

static const gw_param_rule hello_params[] = {
	{"name", 0, 0, 0, 0, NULL, "who to greet; default: the caller's email"},
};

static const gw_param_rule stages_params[] = {
	{"status", 0, 0, 0, 0, NULL,
	 "HTTP status the service asks for: 202 is allowed, others ignored"},
	{"retry_after", 0, 0, 0, 0, NULL, "sent back as Retry-After"},
};

static const gw_param_rule card_params[] = {
	{"name", 0, 0, 0, 0, NULL, "printed on the card"},
};

static const char *const hello_errors[] = {"user_not_found", NULL};
static const char *const no_errors[] = {NULL};

/* What the stages row lets through, each way. */
static const int accepted[] = {202, 0};
static const char *const retry_after[] = {"Retry-After", NULL};
static const char *const service_client[] = {"X-Service-Client", NULL};

const gw_route gw__example_routes[] = {
	{.method = "GET", .pattern = "/v1/example/hello",
	 .endpoint = "example-hello", .service = GW_SVC_EXAMPLE,
	 .rpc_path = "/seo.example.v1.Example/Hello",
	 .in = {.kind = GW_IN_QUERY, .message = MSG(hello_request),
	        .params = hello_params, .n_params = N(hello_params)},
	 .out = {.message = MSG(hello_response), .status = 200},
	 .summary = "A greeting from the example service",
	 .errors = hello_errors},
	{.method = "GET", .pattern = "/v1/example/stages",
	 .endpoint = "example-stages", .service = GW_SVC_EXAMPLE,
	 .rpc_path = "/seo.example.v1.Example/Stages",
	 .auth = {.key = GW_KEY_OPTIONAL},
	 .in = {.kind = GW_IN_QUERY, .message = MSG(stages_request),
	        .params = stages_params, .n_params = N(stages_params)},
	 .quota = GW_QUOTA_IP,
	 .forward = {.headers = service_client},
	 .out = {.message = MSG(stages_response), .status = 200,
	         .statuses = accepted, .headers = retry_after},
	 .summary = "What the route stages carry: forwarded IP and header, "
		    "a chosen status and Retry-After",
	 .errors = no_errors},
	{.method = "GET", .pattern = "/v1/example/card",
	 .endpoint = "example-card", .service = GW_SVC_EXAMPLE,
	 .rpc_path = "/seo.example.v1.Example/Card",
	 .auth = {.key = GW_KEY_NONE},
	 .in = {.kind = GW_IN_QUERY, .message = MSG(card_request),
	        .params = card_params, .n_params = N(card_params)},
	 .quota = GW_QUOTA_NONE,
	 .out = {.kind = GW_OUT_BYTES, .message = MSG(card_response),
	         .status = 200, .body_field = "pdf",
	         .content_type = "application/pdf"},
	 .summary = "A one-page PDF card: an answer of bytes",
	 .errors = no_errors},
};

const size_t gw__example_routes_count = N(gw__example_routes);

/* The route of svc-example (rows as in routes.c; docs/NEW-SERVICE.md). */
#include "routes_int.h"

#include "seo/example/v1/example.pb-c.h"

#define N(a) (sizeof(a) / sizeof((a)[0]))
#define MSG(t) (&seo__example__v1__##t##__descriptor)

static const gw_param_rule hello_params[] = {
	{"name", 0, 0, 0, 0, NULL, "who to greet; default: the caller's email"},
};

static const char *const hello_errors[] = {"user_not_found", NULL};

const gw_route gw__example_routes[] = {
	{.method = "GET", .pattern = "/v1/example/hello",
	 .endpoint = "example-hello", .service = GW_SVC_EXAMPLE,
	 .rpc_path = "/seo.example.v1.Example/Hello",
	 .input = MSG(hello_request), .output = MSG(hello_response),
	 .in = GW_IN_QUERY, .status = 200, .roles = GW_ROLES_ANY,
	 .params = hello_params, .n_params = N(hello_params),
	 .summary = "A greeting from the example service",
	 .errors = hello_errors},
};

const size_t gw__example_routes_count = N(gw__example_routes);

/* The client report of svc-agent (rows as in routes.c; the
 * specification's Client report). */
#include "routes_int.h"

#include "seo/agent/v1/agent.pb-c.h"

#define N(a) (sizeof(a) / sizeof((a)[0]))
#define MSG(t) (&seo__agent__v1__##t##__descriptor)

static const gw_param_rule report_params[] = {
	{"site_id", GW_P_REQUIRED, 0, 0, 0, "invalid_client_report_input",
	 "the website, from GET /v1/websites"},
	{"week_start", 0, 0, 0, 0, NULL,
	 "YYYY-MM-DD, a Monday not in the future; default the current week "
	 "(weeks run Monday 00:00 UTC to the next Monday)"},
};

static const char *const report_errors[] = {"invalid_client_report_input",
					    "site_not_found", NULL};

const gw_route gw__report_routes[] = {
	{.method = "GET", .pattern = "/v1/client-report",
	 .endpoint = "client-report", .service = GW_SVC_AGENT,
	 .rpc_path = "/seo.agent.v1.Agent/GetClientReport",
	 .in = {.kind = GW_IN_QUERY, .message = MSG(client_report_request),
	        .params = report_params, .n_params = N(report_params)},
	 .out = {.message = MSG(client_report_response), .status = 200},
	 .summary = "A website's week for its client: KPIs and client-visible "
		    "events",
	 .errors = report_errors},
};

const size_t gw__report_routes_count = N(gw__report_routes);

/* The routes of proposals (svc-agent; rows as in routes.c): an agent asks,
 * a person decides in the web app (no route approves). */
#include "routes_int.h"

#include "seo/agent/v1/agent.pb-c.h"

#define N(a) (sizeof(a) / sizeof((a)[0]))
#define MSG(t) (&seo__agent__v1__##t##__descriptor)
#define AGENT(m) "/seo.agent.v1.Agent/" m
#define BAD "invalid_proposal_input"

/* A mistyped field is invalid proposal input, as an unknown one is. */
static const gw_param_rule create_params[] = {
	{"kind", GW_P_REQUIRED, 0, 0, 0, BAD,
	 "indexnow_submit or outreach_send"},
	{"site_id", 0, 0, 0, 0, BAD, "the website (GET /v1/websites)"},
	{"note", 0, 0, 0, 0, BAD, "shown to the reviewer; at most 1000 characters kept"},
	{"client_request_id", 0, 0, 0, 0, BAD, "1 to 64 of A-Z a-z 0-9 _ -"},
	{"urls", 0, 0, 0, 0, BAD, "indexnow_submit: 1 to 1000 URLs of one website"},
	{"campaign_name", 0, 0, 0, 0, BAD, "outreach_send: a new or live campaign"},
	{"campaign_id", 0, 0, 0, 0, BAD, "outreach_send: an existing campaign"},
	{"contacts", 0, 0, 0, 0, BAD, "outreach_send: up to 100 contacts"},
};

static const gw_param_rule list_params[] = {
	{"status", 0, 0, 0, 0, BAD, "one status; default all"},
	{"site_id", 0, 0, 0, 0, NULL, "one website's proposals"},
	{"limit", 0, 0, 0, 0, NULL,
	 "1 to 100 (larger: 100; invalid: 25); default 25"},
};

/* 202 awaiting or approved; 200 when an automatic policy ran it. */
static const int ran[] = {200, 0};

static const char *const create_errors[] = {
	"invalid_proposal_input", "site_not_found",
	"indexnow_key_not_found", NULL};
static const char *const list_errors[] = {"invalid_proposal_input",
					  "site_not_found", NULL};
static const char *const get_errors[] = {"proposal_not_found", NULL};

const gw_route gw__proposals_routes[] = {
	{.method = "POST", .pattern = "/v1/proposals", .endpoint = "proposals",
	 .service = GW_SVC_AGENT, .rpc_path = AGENT("CreateProposal"),
	 /* an automatic IndexNow run checks the key file (30 s) and calls
	  * the upstream */
	 .timeout_ms = 50000,
	 .in = {.kind = GW_IN_JSON, .message = MSG(create_proposal_request),
	        .params = create_params, .n_params = N(create_params),
	        .strict = 1, .strict_code = BAD, .body_code = BAD},
	 .out = {.message = MSG(create_proposal_response), .status = 202,
	         .statuses = ran},
	 .summary = "Propose an action for a person to approve",
	 .errors = create_errors},
	{.method = "GET", .pattern = "/v1/proposals", .endpoint = "proposals",
	 .service = GW_SVC_AGENT, .rpc_path = AGENT("ListProposals"),
	 .in = {.kind = GW_IN_QUERY, .message = MSG(list_proposals_request),
	        .params = list_params, .n_params = N(list_params)},
	 .out = {.message = MSG(list_proposals_response), .status = 200},
	 .summary = "The workspace's proposals, newest first",
	 .errors = list_errors},
	{.method = "GET", .pattern = "/v1/proposals/:id", .endpoint = "proposals",
	 .service = GW_SVC_AGENT, .rpc_path = AGENT("GetProposal"),
	 .in = {.message = MSG(get_proposal_request)},
	 .out = {.message = MSG(get_proposal_response), .status = 200},
	 .summary = "One proposal",
	 .errors = get_errors},
};

const size_t gw__proposals_routes_count = N(gw__proposals_routes);

/* Routes of svc-agent's agent tasks and activity notes (rows as in
 * routes.c), in the order of the specification's table. All are free. */
#include "routes_int.h"

#include "seo/agent/v1/agent.pb-c.h"

#define AGENT(m) "/seo.agent.v1.Agent/" m
#define N(a) (sizeof(a) / sizeof((a)[0]))
#define MSG(t) (&seo__agent__v1__##t##__descriptor)

/* Whatever is wrong with a task id, the task is not found. */
#define TASK_ID_RULE \
	{"id", 0, 0, 0, 0, "task_not_found", "the task's id (tsk_...)"}

static const gw_param_rule list_params[] = {
	{"status", 0, 0, 0, 0, NULL,
	 "open (default), claimed, or all (open, claimed and done); any other "
	 "value reads as open"},
	{"site_id", 0, 0, 0, 0, NULL, "only the tasks of this website"},
};

static const gw_param_rule claim_params[] = {TASK_ID_RULE};

static const gw_param_rule complete_params[] = {
	TASK_ID_RULE,
	{"summary", GW_P_REQUIRED, 0, 0, 0, "invalid_task_summary",
	 "what was done: up to 2000 characters kept, control and invisible "
	 "characters removed"},
};

#define ACTIVITY_RULE(name, flags, max, doc) \
	{name, flags, 1, max, 0, "invalid_activity_input", doc}

static const gw_param_rule activity_params[] = {
	ACTIVITY_RULE("summary", GW_P_REQUIRED | GW_P_RANGE, 2000,
		      "what the agent did: up to 2000 characters accepted, the "
		      "first 500 kept, control and invisible characters removed"),
	ACTIVITY_RULE("site_id", 0, 0, "an active website of the workspace"),
	ACTIVITY_RULE("kind_hint", 0, 0, "research, draft or analysis"),
	ACTIVITY_RULE("object_refs", 0, 0,
		      "up to 5 {type: campaign, proposal or task, id}, checked "
		      "and not stored"),
	ACTIVITY_RULE("client_request_id", GW_P_RANGE, 64,
		      "1 to 64 of A-Z a-z 0-9 _ -: a repeat returns the first "
		      "note, duplicate true"),
};

static const char *const list_errors[] = {"site_not_found", NULL};
static const char *const claim_errors[] = {"task_not_found",
					   "task_not_claimable", NULL};
static const char *const complete_errors[] = {
	"invalid_task_summary", "task_not_found", "task_not_claimable", NULL};
static const char *const activity_errors[] = {"invalid_activity_input",
					      "activity_limit_reached", NULL};

const gw_route gw__tasks_routes[] = {
	{.method = "GET", .pattern = "/v1/agent-tasks", .endpoint = "agent-tasks",
	 .service = GW_SVC_AGENT, .rpc_path = AGENT("ListAgentTasks"),
	 .in = {.kind = GW_IN_QUERY, .message = MSG(list_agent_tasks_request),
	        .params = list_params, .n_params = N(list_params)},
	 .out = {.message = MSG(list_agent_tasks_response), .status = 200},
	 .summary = "Unexpired tasks people queued for agents, newest first, "
		    "at most 50",
	 .errors = list_errors},
	{.method = "POST", .pattern = "/v1/agent-tasks/:id/claim",
	 .endpoint = "agent-tasks",
	 .service = GW_SVC_AGENT, .rpc_path = AGENT("ClaimAgentTask"),
	 .in = {.message = MSG(claim_agent_task_request),
	        .params = claim_params, .n_params = N(claim_params)},
	 .out = {.message = MSG(agent_task_response), .status = 200},
	 .summary = "Claim an open task for this key (again: the task)",
	 .errors = claim_errors},
	{.method = "POST", .pattern = "/v1/agent-tasks/:id/complete",
	 .endpoint = "agent-tasks",
	 .service = GW_SVC_AGENT, .rpc_path = AGENT("CompleteAgentTask"),
	 .in = {.kind = GW_IN_JSON, .message = MSG(complete_agent_task_request),
	        .params = complete_params, .n_params = N(complete_params),
	        .body_code = "invalid_task_summary"},
	 .out = {.message = MSG(agent_task_response), .status = 200},
	 .summary = "Complete an open task, or one this key claimed, with a "
		    "summary",
	 .errors = complete_errors},
	{.method = "POST", .pattern = "/v1/activity", .endpoint = "activity",
	 .service = GW_SVC_AGENT, .rpc_path = AGENT("LogActivity"),
	 .in = {.kind = GW_IN_JSON, .message = MSG(log_activity_request),
	        .params = activity_params, .n_params = N(activity_params),
	        .strict = 1, .strict_code = "invalid_activity_input",
	        .body_code = "invalid_activity_input"},
	 .out = {.message = MSG(activity_note), .status = 200},
	 .sees_billing = 1,
	 .summary = "Log what the agent did; the key's unattributed calls of "
		    "the last 24 hours are attached",
	 .errors = activity_errors},
};

const size_t gw__tasks_routes_count = N(gw__tasks_routes);

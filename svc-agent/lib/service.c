/*
 * The service's state and its method table (agent.h).
 */
#include "agent_int.h"
#include "parts.h"
#include "proposals_int.h"

#include <stdlib.h>

#include "seo/agent/v1/agent.pb-c.h"
#include "seo/errors.h"
#include "seo/log.h"

/* Handlers block on the database and on outbound fetches (a key file: up
 * to 30 s), each on its own connection. */
#define POOL_SIZE 16
#define CONNECT_TIMEOUT_S 3
#define WAIT_MS 3000

int agent_svc_new(const char *pg_url, const seo_fetch_config *fetch,
		  agent_svc **out)
{
	char dir[4096];
	seo_pg_pool_opt opt = {
		.url = pg_url,
		.size = POOL_SIZE,
		.connect_timeout_s = CONNECT_TIMEOUT_S,
		.wait_ms = WAIT_MS,
		.migrations = &agent_migrations,
	};
	agent_svc *s = calloc(1, sizeof(*s));
	int rc;

	if (s == NULL)
		return SEO_ENOMEM;
	s->fetch = fetch;
	if (seo_pg_migrations_dir(&agent_migrations, dir, sizeof(dir)) == 0)
		opt.migrations_dir = dir;
	else
		log_warn("svc-agent migrations not found; set %s",
			 seo_pg_migrations_var(&agent_migrations));
	rc = seo_pg_pool_new(&opt, &s->pool);
	if (rc == 0)
		rc = rpc_peer_open(SEO_SVC_AGENT, SEO_SVC_ACCOUNT, &s->account);
	if (rc == 0)
		rc = agent__worker_start(s, pg_url, &s->worker);
	if (rc != 0) {
		agent_svc_free(s);
		return rc;
	}
	*out = s;
	return 0;
}

void agent_svc_free(agent_svc *s)
{
	if (s == NULL)
		return;
	agent__worker_stop(s->worker);
	rpc_peer_free(s->account);
	seo_pg_pool_free(s->pool);
	free(s);
}

int agent_svc_db_check(agent_svc *s)
{
	seo_pg_conn *c;
	int rc = agent__db_get(s, &c);

	if (rc == 0)
		agent__db_put(s, c);
	return rc;
}

#define MSG(t) (&seo__agent__v1__##t##__descriptor)
#define AGENT_PATH "/seo.agent.v1.Agent/"

const rpc_method agent_methods[] = {
	{AGENT_PATH "CreateProposal", MSG(create_proposal_request),
	 MSG(create_proposal_response), agent__rpc_create_proposal},
	{AGENT_PATH "ListProposals", MSG(list_proposals_request),
	 MSG(list_proposals_response), agent__rpc_list_proposals},
	{AGENT_PATH "GetProposal", MSG(get_proposal_request),
	 MSG(get_proposal_response), agent__rpc_get_proposal},
	{AGENT_PATH "ListAgentTasks", MSG(list_agent_tasks_request),
	 MSG(list_agent_tasks_response), agent__rpc_list_agent_tasks},
	{AGENT_PATH "ClaimAgentTask", MSG(claim_agent_task_request),
	 MSG(agent_task_response), agent__rpc_claim_agent_task},
	{AGENT_PATH "CompleteAgentTask", MSG(complete_agent_task_request),
	 MSG(agent_task_response), agent__rpc_complete_agent_task},
	{AGENT_PATH "LogActivity", MSG(log_activity_request),
	 MSG(activity_note), agent__rpc_log_activity},
	{AGENT_PATH "CreateIndexNowKey", MSG(index_now_key_request),
	 MSG(index_now_key), agent__rpc_indexnow_key},
	{AGENT_PATH "SubmitIndexNow", MSG(submit_index_now_request),
	 MSG(submit_index_now_response), agent__rpc_submit_indexnow},
	{AGENT_PATH "GetClientReport", MSG(client_report_request),
	 MSG(client_report_response), agent__rpc_client_report},
};

const size_t agent_n_methods = sizeof(agent_methods) / sizeof(agent_methods[0]);

/*
 * svc-agent: serves seo.agent.v1.Agent on SEO_AGENT_ADDR, sends the mail
 * of its outbox (outreach) and runs its periodic jobs.
 */
#include "agent.h"
#include "agent_store.h"

#include "seo/config.h"
#include "seo/job.h"
#include "seo/log.h"
#include "seo/mail.h"
#include "seo/pg.h"
#include "seo/services.h"

/* Handlers wait on the database, svc-account and outbound fetches (a key
 * file check takes up to 30 s), so there are many threads. */
#define WORKERS 32

/* What the fetched sites see. */
#define USER_AGENT "Mozilla/5.0 (compatible; seo-agent/1.0)"

int main(void)
{
	const seo_service_def *self = seo_service_get(SEO_SVC_AGENT);
	seo_fetch_config fetch;
	agent_svc *svc = NULL;
	seo_mailer *mailer = NULL;
	seo_jobs *jobs = NULL;
	int rc = 1;

	seo_config_init();
	seo_log_init(self->process);
	if (seo_fetch_config_from_env(&fetch) != 0) {
		log_error("out of memory reading the fetch configuration");
		return 1;
	}
	fetch.user_agent = USER_AGENT;
	if (agent_svc_new(seo_pg_url(), &fetch, &svc) != 0) {
		seo_fetch_config_clear(&fetch);
		return 1;
	}
	if (agent_svc_db_check(svc) != 0)
		log_warn("the database does not answer yet; calls fail until it does");
	if (seo_mailer_start(seo_pg_url(), &agent_outbox, &mailer) != 0) {
		log_error("cannot start the mailer");
		goto out;
	}
	if (seo_jobs_start(seo_pg_url(), agent_jobs, agent_n_jobs, &jobs) != 0) {
		log_error("cannot start the job scheduler");
		goto out;
	}
	rc = rpc_service_main(self->process, seo_service_addr(SEO_SVC_AGENT),
			      agent_methods, agent_n_methods, svc, WORKERS, NULL);
out:
	seo_jobs_stop(jobs);
	seo_mailer_stop(mailer);
	agent_svc_free(svc);
	seo_fetch_config_clear(&fetch);
	return rc;
}

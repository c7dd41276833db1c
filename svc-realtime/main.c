/*
 * svc-realtime: serves seo.realtime.v1.Realtime on SEO_REALTIME_ADDR and
 * runs its periodic jobs.
 */
#include "rt_service.h"

#include <stdlib.h>

#include "rt_store.h"
#include "seo/config.h"
#include "seo/errors.h"
#include "seo/fetch_config.h"
#include "seo/job.h"
#include "seo/log.h"
#include "seo/pg.h"

/* Handler threads: each blocks on its own fetches for up to a sitemap
 * walk's 12 s, or on a PageSpeed run for up to a minute, so there are
 * many. */
#define WORKERS 64

/* What the fetched sites see. */
#define USER_AGENT "Mozilla/5.0 (compatible; seo-realtime/1.0)"

int main(void)
{
	seo_fetch_config fetch;
	rt_svc *svc = NULL;
	seo_jobs *jobs = NULL;
	int rc;

	seo_config_init();
	seo_log_init("svc-realtime");
	if (seo_fetch_config_from_env(&fetch) != 0) {
		log_error("out of memory reading the fetch configuration");
		return 1;
	}
	fetch.user_agent = USER_AGENT;
	/* Load the rules before serving: a broken rule file shows at start
	 * (tech-stack then fails alone), and no call waits for the compile. */
	rt_service_tech_rules();
	if (rt_svc_new(seo_pg_url(), &fetch, &svc) != 0) {
		seo_fetch_config_clear(&fetch);
		return 1;
	}
	/* Only page-performance needs the database: without it the others
	 * serve, and page-performance connects on its next call. */
	if (rt_svc_db_check(svc) != 0)
		log_warn("page-performance unavailable until the database answers");
	if (seo_jobs_start(seo_pg_url(), rt_jobs, rt_n_jobs, &jobs) != 0) {
		log_error("cannot start the job scheduler");
		rt_svc_free(svc);
		seo_fetch_config_clear(&fetch);
		return 1;
	}
	rc = rpc_service_main("svc-realtime", seo_config(SEO_CFG_REALTIME_ADDR),
			      rt_rpc_methods, rt_rpc_n_methods, svc, WORKERS,
			      NULL);
	seo_jobs_stop(jobs);
	rt_svc_free(svc);
	seo_fetch_config_clear(&fetch);
	return rc;
}

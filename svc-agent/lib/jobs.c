/*
 * svc-agent's periodic jobs (agent_store.h): a row per job and part; the
 * names are the contract's (`seoctl job run NAME`).
 */
#include "agent_store.h"
#include "parts.h"

#define HOUR (3600LL)
#define DAY (24 * HOUR)

const seo_job agent_jobs[] = {
	{"retention", "svc-agent", DAY, 3 * HOUR + 20 * 60, agent__event_retention},
	/* proposals */
	{"expire", "svc-agent", HOUR, 5 * 60, agent__proposal_expire},
	{"indexnow-retry", "svc-agent", HOUR, 35 * 60, agent__proposal_retry},
	{"retention", "svc-agent", DAY, 3 * HOUR + 30 * 60, agent__proposal_retention},
	/* outreach */
	{"retention", "svc-agent", DAY, 3 * HOUR + 30 * 60, agent__outreach_retention},
	/* tasks */
	{"expire", "svc-agent", HOUR, 5 * 60, agent__task_expire},
	{"retention", "svc-agent", DAY, 3 * HOUR + 25 * 60, agent__task_retention},
	/* Hourly: a week is saved by the first run from the Monday 07:00 UTC
	 * that ends it, and a week whose first event is shared later by the
	 * next hour's. */
	{"freeze", "svc-agent", HOUR, 0, agent__report_freeze},
	{"retention", "svc-agent", DAY, 3 * HOUR + 20 * 60, agent__report_retention},
};

const size_t agent_n_jobs = sizeof(agent_jobs) / sizeof(agent_jobs[0]);

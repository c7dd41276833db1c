/*
 * svc-realtime's periodic jobs (seo/job.h): the rows of its part, run by
 * its scheduler and by `seoctl job run`.
 */
#include "rt_store.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "db.h"
#include "seo/errors.h"

#define DAY_MS (86400 * 1000LL)
/* A cached result older than this is never served again (psi_service.c's
 * CACHE_MS). */
#define CACHE_KEEP_MS DAY_MS
/* Daily counters are kept this many days after theirs, to look back at;
 * only the current day's are read. */
#define COUNTER_KEEP_DAYS 7

/* retention: expired page-performance results, and daily counters older
 * than COUNTER_KEEP_DAYS. */
static int retention(PGconn *pg, int64_t at_ms, int64_t *done, char *err,
		     size_t err_len)
{
	char before[24];
	const char *params[] = {before};
	const seo_pg_counter *counters[] = {&rt_db_user_calls, &rt_db_attempts};
	PGresult *r;
	int64_t n;
	int rc = 0;

	*done = 0;
	snprintf(before, sizeof(before), "%lld", (long long)(at_ms - CACHE_KEEP_MS));
	r = PQexecParams(pg, "DELETE FROM rt_psi_cache WHERE cached_at <= $1::bigint",
			 1, NULL, params, NULL, NULL, 0);
	if (PQresultStatus(r) != PGRES_COMMAND_OK) {
		snprintf(err, err_len, "rt_psi_cache failed: %.*s",
			 (int)strcspn(PQerrorMessage(pg), "\n"), PQerrorMessage(pg));
		rc = SEO_EDB;
	} else {
		*done += strtoll(PQcmdTuples(r), NULL, 10);
	}
	PQclear(r);
	for (size_t i = 0; i < sizeof(counters) / sizeof(counters[0]) && rc == 0; i++) {
		rc = seo_pg_counter_purge(pg, counters[i],
					  at_ms - COUNTER_KEEP_DAYS * DAY_MS, &n,
					  err, err_len);
		*done += n;
	}
	return rc;
}

const seo_job rt_jobs[] = {
	/* daily at 03:10 UTC */
	{"retention", "svc-realtime", 86400, 3 * 3600 + 600, retention},
};

const size_t rt_n_jobs = sizeof(rt_jobs) / sizeof(rt_jobs[0]);

/*
 * One run of a job under its advisory lock (seo/job.h).
 */
#include "seo/job.h"

#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "seo/errors.h"

int64_t seo_job_slot_ms(const seo_job *job, int64_t at_ms)
{
	int64_t period = job->period_s * 1000, since = at_ms - job->offset_s * 1000;
	int64_t k = since / period;

	/* Floor division: instants before the first slot after the epoch. */
	if (since < 0 && since % period != 0)
		k--;
	return job->offset_s * 1000 + k * period;
}

/* The lock key: FNV-1a of "owner/name", as PostgreSQL's bigint. */
static int64_t lock_key(const seo_job *job)
{
	uint64_t h = 14695981039346656037ULL;
	const char *parts[] = {job->owner, "/", job->name};

	for (size_t i = 0; i < sizeof(parts) / sizeof(parts[0]); i++)
		for (const char *p = parts[i]; *p != '\0'; p++) {
			h ^= (unsigned char)*p;
			h *= 1099511628211ULL;
		}
	return (int64_t)h;
}

/* Runs a one-row boolean lock function on `key`; *got is its answer. */
static int lock_call(PGconn *pg, const char *fn, int64_t key, int *got,
		     char *err, size_t err_len)
{
	char sql[64], skey[24];
	const char *params[] = {skey};
	PGresult *r;
	int rc = 0;

	snprintf(sql, sizeof(sql), "SELECT %s($1::bigint)", fn);
	snprintf(skey, sizeof(skey), "%" PRId64, key);
	r = PQexecParams(pg, sql, 1, NULL, params, NULL, NULL, 0);
	if (PQresultStatus(r) != PGRES_TUPLES_OK || PQntuples(r) != 1) {
		snprintf(err, err_len, "%s failed: %.*s", fn,
			 (int)strcspn(PQerrorMessage(pg), "\n"), PQerrorMessage(pg));
		rc = SEO_EDB;
	} else {
		*got = strcmp(PQgetvalue(r, 0, 0), "t") == 0;
	}
	PQclear(r);
	return rc;
}

int seo_job_run(PGconn *pg, const seo_job *job, int64_t at_ms, int64_t *done,
		int *skipped, char *err, size_t err_len)
{
	int64_t key = lock_key(job);
	int got = 0, released, rc;

	*done = 0;
	*skipped = 0;
	/* A session lock, not a transaction's: the job may commit in steps. */
	rc = lock_call(pg, "pg_try_advisory_lock", key, &got, err, err_len);
	if (rc != 0)
		return rc;
	if (!got) {
		*skipped = 1;
		return 0;
	}
	rc = job->run(pg, at_ms, done, err, err_len);
	/* A job that failed inside a transaction must not keep it open. */
	if (PQtransactionStatus(pg) != PQTRANS_IDLE)
		PQclear(PQexec(pg, "ROLLBACK"));
	/* A broken connection took the lock with it. One that cannot give it
	 * back must be closed by the caller, which SEO_EDB tells. */
	if (PQstatus(pg) == CONNECTION_OK) {
		char unlock_err[128];

		if (lock_call(pg, "pg_advisory_unlock", key, &released, unlock_err,
			      sizeof(unlock_err)) != 0 && rc == 0) {
			snprintf(err, err_len, "%s", unlock_err);
			rc = SEO_EDB;
		}
	}
	return rc;
}

/*
 * `seoctl job run`: the periodic jobs of the components, run by hand
 * (seo/job.h). seoctl links each component's job library for this, the
 * price of one operator tool that runs any of them.
 */
#include "seoctl.h"

#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "agent_store.h"
#include "rt_store.h"
#include "seo/clock.h"
#include "seo/errors.h"
#include "seo/job.h"
#include "seo/pg.h"

/* Each component with jobs: its table and the migrations of the tables
 * they work on. A job name of the contract whose issue has not landed
 * has no row here, and is unknown until it does. */
static const struct {
	const seo_job *jobs;
	const size_t *n;
	const seo_pg_set *migrations;
} owners[] = {
	{acct_jobs, &acct_n_jobs, &acct_migrations},
	{rt_jobs, &rt_n_jobs, &rt_migrations},
	{agent_jobs, &agent_n_jobs, &agent_migrations},
};

#define N_OWNERS (sizeof(owners) / sizeof(owners[0]))

static int fail(acct_err *err, int rc, const char *code, const char *what,
		const char *value)
{
	err->code = code;
	snprintf(err->message, sizeof(err->message), "%s \"%s\"", what, value);
	return rc;
}

/* "YYYY-MM-DDTHH:MM:SSZ" into Unix ms. */
static int parse_time(const char *s, int64_t *ms)
{
	struct tm tm;
	const char *end;

	memset(&tm, 0, sizeof(tm));
	end = strptime(s, "%Y-%m-%dT%H:%M:%S", &tm);
	if (end == NULL || strcmp(end, "Z") != 0)
		return SEO_EINVAL;
	*ms = (int64_t)timegm(&tm) * 1000;
	return 0;
}

static int has_row(size_t o, const char *name)
{
	for (size_t i = 0; i < *owners[o].n; i++)
		if (strcmp(owners[o].jobs[i].name, name) == 0)
			return 1;
	return 0;
}

int seoctl_migrate_set(PGconn *db, const seo_pg_set *set, acct_err *err)
{
	char dir[PATH_MAX];
	int applied;

	err->code = "internal_error";
	if (seo_pg_migrations_dir(set, dir, sizeof(dir)) != 0) {
		snprintf(err->message, sizeof(err->message),
			 "%s migrations not found; set %s", set->name,
			 seo_pg_migrations_var(set));
		return SEO_ENOTFOUND;
	}
	return seo_pg_migrate(db, set, dir, &applied, err->message,
			      sizeof(err->message));
}

int seoctl_job_run(PGconn *db, const char *name, const char *at, json_t *out,
		   acct_err *err)
{
	int64_t at_ms, done, total = 0;
	char stamp[32];
	time_t secs;
	struct tm tm;
	int known = 0, skipped, rc = 0;

	if (at != NULL) {
		if (parse_time(at, &at_ms) != 0)
			return fail(err, SEO_EINVAL, "invalid_parameter",
				    "--at must be an ISO 8601 UTC time such as "
				    "2026-12-07T07:00:00Z, not", at);
		seo_clock_set_ms(at_ms);
	}
	/* Whole seconds: the instant printed is the one the jobs saw. */
	at_ms = seo_clock_ms() / 1000 * 1000;
	for (size_t o = 0; o < N_OWNERS; o++)
		known |= has_row(o, name);
	if (!known)
		return fail(err, SEO_ENOTFOUND, "unknown_job", "unknown job", name);
	for (size_t o = 0; o < N_OWNERS && rc == 0; o++) {
		if (!has_row(o, name))
			continue;
		/* the jobs of owner `o` need its tables */
		rc = seoctl_migrate_set(db, owners[o].migrations, err);
		for (size_t i = 0; i < *owners[o].n && rc == 0; i++) {
			const seo_job *job = &owners[o].jobs[i];

			if (strcmp(job->name, name) != 0)
				continue;
			err->code = "internal_error";
			rc = seo_job_run(db, job, at_ms, &done, &skipped,
					 err->message, sizeof(err->message));
			total += done;
		}
	}
	if (rc != 0)
		return rc;
	secs = (time_t)(at_ms / 1000);
	gmtime_r(&secs, &tm);
	strftime(stamp, sizeof(stamp), "%Y-%m-%dT%H:%M:%SZ", &tm);
	if (json_object_set_new(out, "job", json_string(name)) != 0 ||
	    json_object_set_new(out, "at", json_string(stamp)) != 0 ||
	    json_object_set_new(out, "done", json_integer(total)) != 0)
		return SEO_ENOMEM;
	return 0;
}

/*
 * seo/job.h: periodic jobs (library seo_pg).
 *
 * A job is a row of data: the name an operator knows it by (the names of
 * `seoctl job run`), the component that owns the part it does, when it
 * runs, and the function doing it. Each component declares its rows in a
 * static table; one name may have rows in several components (each
 * cleans its own tables for "retention"), and `seoctl job run NAME` runs
 * every row of that name.
 *
 * A run happens on one process at a time across every replica: it holds
 * a PostgreSQL advisory lock keyed by owner and name, and a run that
 * finds the lock held is skipped. Jobs must be idempotent (a run that
 * finds nothing left to do counts 0), so that a replica whose clock is a
 * little late, or a person running one by hand, does no harm.
 *
 * Time comes from seo/clock.h: a run is told the instant it runs for
 * (`at_ms`) and must not read the system clock.
 *
 * Functions return 0 or a negative SEO_E* code; `err` (not NULL) receives
 * a lowercase message on failure, for logs and the operator.
 */
#ifndef SEO_JOB_H
#define SEO_JOB_H

#include <stddef.h>
#include <stdint.h>

#include <libpq-fe.h>

/*
 * The work of one row, as of `at_ms` (Unix milliseconds), on `pg` (idle;
 * left idle). *done counts what it did (rows deleted, items expired...).
 */
typedef int (*seo_job_fn)(PGconn *pg, int64_t at_ms, int64_t *done,
			  char *err, size_t err_len);

typedef struct seo_job {
	const char *name;  /* "retention" */
	const char *owner; /* the component, "svc-<name>" */
	/* Runs at every instant `offset_s` + k * `period_s` seconds after the
	 * Unix epoch (UTC): daily at 03:00 is 86400, 10800; weekly on Monday
	 * at 07:00 is 604800, 4 * 86400 + 7 * 3600 (the epoch is a
	 * Thursday). */
	int64_t period_s;
	int64_t offset_s;
	seo_job_fn run;
} seo_job;

/* The latest instant `job` is scheduled at, at or before `at_ms`. */
int64_t seo_job_slot_ms(const seo_job *job, int64_t at_ms);

/*
 * Runs `job` once as of `at_ms` on `pg` (idle) unless another process is
 * running it: then *skipped is 1 and *done 0. Otherwise *skipped is 0 and
 * *done what the job counted. SEO_EDB when the lock cannot be asked for;
 * else the job's own result.
 */
int seo_job_run(PGconn *pg, const seo_job *job, int64_t at_ms, int64_t *done,
		int *skipped, char *err, size_t err_len);

typedef struct seo_jobs seo_jobs;

/*
 * Starts the scheduler of a process's own jobs: a thread that sleeps
 * until the next scheduled instant of one of the `n` rows of `jobs`
 * (static, not copied) by seo_clock_ms(), runs it for that instant
 * through its own connection to `pg_url` (copied), and logs the outcome.
 * A failed run is tried again a minute later for the same instant. The
 * first run of each row is at its first scheduled instant after the
 * start. *out is the caller's, ended with seo_jobs_stop(). SEO_ENOMEM or
 * SEO_EIO.
 */
int seo_jobs_start(const char *pg_url, const seo_job *jobs, size_t n,
		   seo_jobs **out);

/* Stops the thread (a run in progress finishes first) and frees `s`.
 * NULL is allowed. */
void seo_jobs_stop(seo_jobs *s);

#endif

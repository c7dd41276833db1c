/*
 * The scheduler thread of a process's own jobs (seo/job.h).
 */
#include "seo/job.h"

#include <fcntl.h>
#include <poll.h>
#include <stdint.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "seo/clock.h"
#include "seo/errors.h"
#include "seo/log.h"
#include "seo/pg.h"

/* Longest sleep: a clock set by a test is seen within this. */
#define WAKE_MS 1000
/* A failed run is tried again after this, for the same instant. */
#define RETRY_MS 60000
#define CONNECT_TIMEOUT_S 5

struct seo_jobs {
	const seo_job *jobs;
	size_t n;
	int64_t *due;      /* per row: the instant of its next run */
	int64_t *retry_at; /* per row: not before this (0: no failure) */
	char *pg_url;
	int stop_pipe[2];  /* closing the write end stops the thread */
	pthread_t thread;
};

/* Runs row `i` as of `at`; 0 when it ran or was skipped. */
static int run_due(seo_jobs *s, size_t i, int64_t at, PGconn **pg)
{
	const seo_job *job = &s->jobs[i];
	char err[256];
	int64_t done;
	int skipped, rc;

	if (*pg == NULL &&
	    seo_pg_connect(s->pg_url, CONNECT_TIMEOUT_S, pg, err, sizeof(err)) != 0) {
		log_warn("job %s of %s: %s", job->name, job->owner, err);
		return SEO_EDB;
	}
	rc = seo_job_run(*pg, job, at, &done, &skipped, err, sizeof(err));
	if (rc != 0) {
		log_error("job %s of %s failed: %s", job->name, job->owner, err);
		if (rc == SEO_EDB) {
			PQfinish(*pg);
			*pg = NULL;
		}
		return rc;
	}
	if (skipped)
		log_info("job %s of %s: skipped, another process runs it",
			 job->name, job->owner);
	else
		log_info("job %s of %s: done %lld", job->name, job->owner,
			 (long long)done);
	return 0;
}

/* Sleeps `ms` at most; 1 when the scheduler is being stopped. */
static int nap(seo_jobs *s, int64_t ms)
{
	struct pollfd pfd = {.fd = s->stop_pipe[0], .events = POLLIN};

	if (ms < 0)
		ms = 0;
	return poll(&pfd, 1, (int)(ms < WAKE_MS ? ms : WAKE_MS)) > 0;
}

static void *sched_main(void *arg)
{
	seo_jobs *s = arg;
	PGconn *pg = NULL;
	int64_t now, next, when, at;

	do {
		now = seo_clock_ms();
		next = INT64_MAX;
		for (size_t i = 0; i < s->n; i++) {
			when = s->due[i] > s->retry_at[i] ? s->due[i] : s->retry_at[i];
			if (now >= when) {
				/* Late by several periods: once, for the latest. */
				at = seo_job_slot_ms(&s->jobs[i], now);
				if (run_due(s, i, at, &pg) == 0) {
					s->due[i] = at + s->jobs[i].period_s * 1000;
					s->retry_at[i] = 0;
				} else {
					s->retry_at[i] = now + RETRY_MS;
				}
				when = s->due[i] > s->retry_at[i] ? s->due[i]
								  : s->retry_at[i];
			}
			if (when < next)
				next = when;
		}
	} while (!nap(s, next - seo_clock_ms()));
	PQfinish(pg);
	return NULL;
}

int seo_jobs_start(const char *pg_url, const seo_job *jobs, size_t n,
		   seo_jobs **out)
{
	seo_jobs *s = calloc(1, sizeof(*s));
	int64_t now = seo_clock_ms();
	int rc = SEO_ENOMEM;

	*out = NULL;
	if (s == NULL)
		return SEO_ENOMEM;
	s->stop_pipe[0] = s->stop_pipe[1] = -1;
	s->jobs = jobs;
	s->n = n;
	s->due = calloc(n > 0 ? n : 1, sizeof(*s->due));
	s->retry_at = calloc(n > 0 ? n : 1, sizeof(*s->retry_at));
	s->pg_url = strdup(pg_url);
	if (s->due == NULL || s->retry_at == NULL || s->pg_url == NULL)
		goto out;
	for (size_t i = 0; i < n; i++)
		s->due[i] = seo_job_slot_ms(&jobs[i], now) + jobs[i].period_s * 1000;
	rc = SEO_EIO;
	if (pipe2(s->stop_pipe, O_CLOEXEC) != 0) {
		s->stop_pipe[0] = s->stop_pipe[1] = -1;
		goto out;
	}
	if (pthread_create(&s->thread, NULL, sched_main, s) != 0)
		goto out;
	*out = s;
	return 0;
out:
	if (s->stop_pipe[0] >= 0) {
		close(s->stop_pipe[0]);
		close(s->stop_pipe[1]);
	}
	free(s->due);
	free(s->retry_at);
	free(s->pg_url);
	free(s);
	return rc;
}

void seo_jobs_stop(seo_jobs *s)
{
	if (s == NULL)
		return;
	close(s->stop_pipe[1]);
	pthread_join(s->thread, NULL);
	close(s->stop_pipe[0]);
	free(s->due);
	free(s->retry_at);
	free(s->pg_url);
	free(s);
}

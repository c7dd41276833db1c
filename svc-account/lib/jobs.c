/*
 * svc-account's periodic jobs (seo/job.h): the rows of its part, run by
 * its scheduler and by `seoctl job run`.
 */
#include "acct.h"

#include <stdio.h>

#include "seo/errors.h"
#include "seo/mail.h"

/* Delivered mail is kept this long, for questions about what was sent. */
#define MAIL_KEEP_DAYS 30
#define DAY_MS (86400 * 1000LL)

/* retention: delivered mail older than MAIL_KEEP_DAYS. Unsent mail stays
 * whatever its age: it still has to go. */
static int retention(PGconn *pg, int64_t at_ms, int64_t *done, char *err,
		     size_t err_len)
{
	int rc = seo_mail_purge(pg, &acct_outbox, at_ms - MAIL_KEEP_DAYS * DAY_MS,
				done);

	if (rc != 0)
		snprintf(err, err_len, "could not purge delivered mail");
	return rc;
}

const seo_job acct_jobs[] = {
	/* daily at 03:00 UTC */
	{"retention", "svc-account", 86400, 3 * 3600, retention},
	/* every 5 minutes: a lost debit is returned within grace + 5 min */
	{"reconcile", "svc-account", 300, 0, acct_reconcile},
};

const size_t acct_n_jobs = sizeof(acct_jobs) / sizeof(acct_jobs[0]);

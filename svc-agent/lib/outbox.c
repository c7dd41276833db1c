/*
 * svc-agent's outbox: the table its migrations create (agent_004), drained
 * by the shared mailer (seo/mail.h) its process runs, and its retention.
 */
#include "agent_store.h"
#include "parts.h"

#include <stdio.h>

/* Delivered mail is kept this long, as svc-account keeps its own. */
#define MAIL_KEEP_MS ((int64_t)30 * 86400 * 1000)

const seo_outbox agent_outbox = {"agent_outbox", "agent_outbox"};

int agent__outbox_retention(PGconn *pg, int64_t at_ms, int64_t *done,
			    char *err, size_t err_len)
{
	int rc = seo_mail_purge(pg, &agent_outbox, at_ms - MAIL_KEEP_MS, done);

	if (rc != 0)
		snprintf(err, err_len, "outreach mail retention failed");
	return rc;
}

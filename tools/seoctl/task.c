/*
 * `seoctl task create` and `seoctl task cancel`: a person queueing work
 * for an agent, or withdrawing it, as the web app would (svc-agent's
 * agent_store.h); the website is checked with the acct library.
 */
#include "seoctl.h"

#include <stdio.h>

#include "agent_store.h"
#include "seo/errors.h"

/* agent_store's failure as the command's. */
static int failed(acct_err *err, int rc, const char *code, const char *msg)
{
	err->code = code;
	snprintf(err->message, sizeof(err->message), "%s", msg);
	return rc;
}

int seoctl_task_create(PGconn *db, const char *const *v, json_t *out,
		       acct_err *err)
{
	agent_task_spec spec = {v[0], v[1], NULL, v[2], v[3]};
	char host[ACCT_HOST_LEN], id[AGENT_TASK_ID_LEN], msg[256];
	const char *code;
	int rc = seoctl_migrate_set(db, &agent_migrations, err);

	if (rc == 0)
		rc = acct_website_host(db, spec.workspace_id, spec.site_id, host,
				       err);
	spec.site_host = host;
	if (rc != 0)
		return rc;
	rc = agent_task_create(db, &spec, id, &code, msg, sizeof(msg));
	if (rc != 0)
		return failed(err, rc, code, msg);
	return json_object_set_new(out, "task_id", json_string(id)) == 0
		       ? 0 : SEO_ENOMEM;
}

int seoctl_task_cancel(PGconn *db, const char *const *v, json_t *out,
		       acct_err *err)
{
	char msg[256];
	const char *code;
	int rc = seoctl_migrate_set(db, &agent_migrations, err);

	if (rc != 0)
		return rc;
	rc = agent_task_cancel(db, v[0], &code, msg, sizeof(msg));
	if (rc != 0)
		return failed(err, rc, code, msg);
	if (json_object_set_new(out, "task_id", json_string(v[0])) != 0 ||
	    json_object_set_new(out, "status", json_string("cancelled")) != 0)
		return SEO_ENOMEM;
	return 0;
}

/*
 * `seoctl activity share`: what a team member does in the web app to show
 * an agent note or a task summary to the client (agent_store.h).
 */
#include "seoctl.h"

#include <stdio.h>

#include "agent_store.h"
#include "seo/errors.h"

/* Longer than any verb of the specification's Events and any id. */
#define TEXT_LEN 64

int seoctl_activity_share(PGconn *db, const char *id, json_t *out,
			  acct_err *err)
{
	char act[TEXT_LEN], verb[TEXT_LEN];
	int rc = seoctl_migrate_set(db, &agent_migrations, err);

	if (rc != 0)
		return rc;
	rc = agent_activity_share(db, id, act, sizeof(act), verb, sizeof(verb));
	if (rc == SEO_ENOTFOUND) {
		err->code = "activity_not_found";
		snprintf(err->message, sizeof(err->message),
			 "no activity or done task \"%s\"", id);
	} else if (rc == SEO_EINVAL) {
		err->code = "not_shareable";
		snprintf(err->message, sizeof(err->message),
			 "activity \"%s\" is %s: only agent notes and task "
			 "summaries are shared", id, verb);
	} else if (rc != 0) {
		err->code = "internal_error";
		snprintf(err->message, sizeof(err->message),
			 "the activity could not be shared");
	}
	if (rc != 0)
		return rc;
	if (json_object_set_new(out, "id", json_string(act)) != 0 ||
	    json_object_set_new(out, "verb", json_string(verb)) != 0 ||
	    json_object_set_new(out, "shared", json_true()) != 0)
		return SEO_ENOMEM;
	return 0;
}

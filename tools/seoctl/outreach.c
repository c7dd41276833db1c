/*
 * `seoctl proposal remove-email`: a reviewer's edit of a pending outreach
 * proposal, standing in for the web app's review screen (seoctl.h).
 */
#include "seoctl.h"

#include <stdio.h>

#include "agent_store.h"
#include "seo/errors.h"
#include "seo/util.h"

int seoctl_outreach_remove(PGconn *db, const char *id, const char *email,
			   json_t *out, acct_err *err)
{
	agent_outreach_removal r;
	int rc = seoctl_migrate_set(db, &agent_migrations, err);

	if (rc != 0)
		return rc;
	rc = agent_outreach_remove(db, id, email, seo_now_ms(), &r, err->message,
				   sizeof(err->message));
	if (rc != 0) {
		err->code = rc == SEO_ENOTFOUND ? "proposal_not_found"
			    : rc == SEO_EINVAL  ? "invalid_parameter"
						: "internal_error";
		return rc;
	}
	if (json_object_set_new(out, "proposal_id", json_string(id)) != 0 ||
	    json_object_set_new(out, "status", json_string(r.status)) != 0 ||
	    json_object_set_new(out, "removed", json_integer(r.removed)) != 0 ||
	    json_object_set_new(out, "held", json_integer(r.held)) != 0)
		return SEO_ENOMEM;
	return 0;
}

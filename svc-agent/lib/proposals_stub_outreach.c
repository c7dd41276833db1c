/*
 * The outreach part's hooks (proposals.h) until that part lands with
 * them: an outreach proposal cannot be created yet.
 */
#include "proposals.h"

#include "seo/errors.h"

int agent_outreach_prepare(agent_call *c, PGconn *pg,
			   const Seo__Agent__V1__CreateProposalRequest *req,
			   Seo__Account__V1__Site *const *sites, size_t n_sites,
			   agent_proposal_draft *out, agent_err *err)
{
	(void)c;
	(void)pg;
	(void)req;
	(void)sites;
	(void)n_sites;
	(void)out;
	return agent__err(err, SEO_EIO, "internal_error",
			  "outreach is not built yet");
}

int agent_outreach_run(const agent_proposal_run *r, PGconn *pg,
		       agent_proposal_outcome *out)
{
	(void)r;
	(void)pg;
	out->status = "failed";
	out->result_json = NULL;
	out->retry = 0;
	agent__err(&out->err, 0, "internal_error", "outreach is not built yet");
	return 0;
}

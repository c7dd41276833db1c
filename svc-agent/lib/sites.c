/*
 * The workspace's websites, from svc-account (agent_int.h).
 */
#include "agent_int.h"

#include <string.h>

#include "seo/errors.h"

#define LIST_SITES "/seo.account.v1.Account/ListSites"

int agent__sites(const agent_call *c, Seo__Account__V1__ListSitesResponse **out,
		 rpc_result *res)
{
	Seo__Account__V1__Empty empty = SEO__ACCOUNT__V1__EMPTY__INIT;
	int rc = rpc_peer_call(c->svc->account, c->ctx, LIST_SITES, &empty.base,
			       &seo__account__v1__list_sites_response__descriptor,
			       c->arena, res);

	if (rc == 0)
		*out = (Seo__Account__V1__ListSitesResponse *)res->response;
	return rc;
}

const Seo__Account__V1__Site *agent__site_in(Seo__Account__V1__Site *const *sites,
					    size_t n, const char *site_id)
{
	for (size_t i = 0; i < n; i++)
		if (strcmp(sites[i]->id, site_id) == 0)
			return sites[i];
	return NULL;
}

int agent__site_find(const agent_call *c, const char *site_id,
		     const Seo__Account__V1__Site **out, rpc_result *res)
{
	Seo__Account__V1__ListSitesResponse *list;
	int rc = agent__sites(c, &list, res);

	if (rc != 0)
		return rc;
	*out = agent__site_in(list->sites, list->n_sites, site_id);
	return *out != NULL ? 0 : SEO_ENOTFOUND;
}

/*
 * The workspace's websites, as svc-account knows them (agent_int.h).
 */
#include "agent_int.h"

#include <string.h>

#define LIST_SITES "/seo.account.v1.Account/ListSites"

int agent__sites(agent_call *c, Seo__Account__V1__ListSitesResponse **out)
{
	Seo__Account__V1__Empty req = SEO__ACCOUNT__V1__EMPTY__INIT;
	rpc_result res;

	if (rpc_peer_call(c->svc->account, c->ctx, LIST_SITES, &req.base,
			  &seo__account__v1__list_sites_response__descriptor,
			  c->arena, &res) != 0) {
		rpc_peer_fail(c->ctx, &res);
		return -1;
	}
	*out = (Seo__Account__V1__ListSitesResponse *)res.response;
	return 0;
}

int agent__site_of(agent_call *c, const char *site_id,
		   const Seo__Account__V1__Site **out)
{
	Seo__Account__V1__ListSitesResponse *list;

	*out = NULL;
	if (agent__sites(c, &list) != 0)
		return -1;
	for (size_t i = 0; i < list->n_sites; i++)
		if (strcmp(list->sites[i]->id, site_id) == 0)
			*out = list->sites[i];
	return 0;
}

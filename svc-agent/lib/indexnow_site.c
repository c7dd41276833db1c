/*
 * The website that owns a host: the host itself or a parent domain among
 * the workspace's websites (Account/ListSites) (indexnow.h).
 */
#include "indexnow.h"

#include <string.h>
#include <strings.h>

#include "seo/errors.h"

/* 1 when `host` is `site` or, with `subdomains`, a name under it. */
static int owns(const char *site, const char *host, int subdomains)
{
	size_t sl = strlen(site), hl = strlen(host);

	if (sl == hl)
		return strcasecmp(site, host) == 0;
	return subdomains && sl > 0 && hl > sl + 1 && host[hl - sl - 1] == '.' &&
	       strcasecmp(host + hl - sl, site) == 0;
}

int agent_indexnow_site_of(const agent_call *call, const char *host,
			   int subdomains, agent_site *out, agent_err *err)
{
	Seo__Account__V1__ListSitesResponse *sites;
	const Seo__Account__V1__Site *best = NULL;
	rpc_result res;
	int rc = agent__sites(call, &sites, &res);

	if (rc != 0)
		return agent__err(err, rc, res.code != NULL ? res.code
					   : "service_unavailable",
				  "%s", res.message != NULL && res.message[0]
					? res.message : "the websites cannot be read");
	for (size_t i = 0; i < sites->n_sites; i++) {
		const Seo__Account__V1__Site *s = sites->sites[i];

		if (owns(s->host, host, subdomains) &&
		    (best == NULL || strlen(s->host) > strlen(best->host)))
			best = s;
	}
	if (best == NULL)
		return SEO_ENOTFOUND;
	out->id = best->id;
	out->host = best->host;
	out->indexnow_policy = best->indexnow_policy;
	return 0;
}

/*
 * svc-realtime: serves seo.realtime.v1.Realtime on SEO_REALTIME_ADDR.
 */
#include "rt_service.h"
#include "seo/config.h"

/* Handler threads: each blocks on its own fetches for up to a sitemap
 * walk's 12 s, so there are many. */
#define WORKERS 32

int main(void)
{
	/* Load the rules before serving: a broken rule file shows at start
	 * (tech-stack then fails alone), and no call waits for the compile. */
	rt_service_tech_rules();
	return rpc_service_main("svc-realtime", seo_config(SEO_CFG_REALTIME_ADDR),
				rt_rpc_methods, rt_rpc_n_methods, NULL, WORKERS,
				NULL);
}

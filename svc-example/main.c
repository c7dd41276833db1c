/*
 * svc-example: serves seo.example.v1.Example on SEO_EXAMPLE_ADDR
 * (docs/NEW-SERVICE.md). Its peer is opened first: a peer the registry
 * does not allow stops the process here, before it serves.
 */
#include "example.h"

#include "seo/config.h"
#include "seo/log.h"

/* Hello waits on svc-account, so handlers run on threads. */
#define WORKERS 8

int main(void)
{
	const seo_service_def *self = seo_service_get(SEO_SVC_EXAMPLE);
	ex_service s = {0};
	int rc;

	seo_config_init();
	seo_log_init(self->process);
	if (ex_service_init(&s) != 0)
		return 1;
	rc = rpc_service_main(self->process, seo_service_addr(SEO_SVC_EXAMPLE),
			      ex_methods, ex_n_methods, &s, WORKERS, NULL);
	ex_service_free(&s);
	return rc;
}

/*
 * svc-agent: answers grpc.health.v1.Health/Check (built into every rpc
 * server) until its methods arrive with its issue.
 */
#include "seo/config.h"
#include "seo/rpc.h"

int main(void)
{
	seo_config_init();
	return rpc_service_main("svc-agent", seo_config(SEO_CFG_AGENT_ADDR),
				NULL, 0, NULL, 0, NULL);
}

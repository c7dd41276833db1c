/*
 * svc-realtime: answers grpc.health.v1.Health/Check (built into every rpc
 * server); its methods arrive with its issue, on the library beside it.
 */
#include "seo/config.h"
#include "seo/rpc.h"

int main(void)
{
	return rpc_service_main("svc-realtime", seo_config(SEO_CFG_REALTIME_ADDR),
				NULL, 0, NULL, 0);
}

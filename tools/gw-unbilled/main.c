/*
 * gateway-unbilled: the gateway with every route free, its billing stage
 * cleared before it starts, so that bench/gateway.sh times a billed
 * route beside the same route unbilled on the same stack
 * (docs/benchmarks.md). A bench tool, never deployed: the gateway itself
 * has no way to serve unbilled.
 */
#include "gw.h"
#include "gw_routes.h"

int main(void)
{
	size_t n;
	/* the table is built once in writable memory (routes_join); it is
	 * read-only only to the pipeline */
	gw_route *routes = (gw_route *)gw_routes(&n);

	for (size_t i = 0; i < n; i++)
		routes[i].bill = (gw_bill_stage){ 0 };
	return gw_main();
}

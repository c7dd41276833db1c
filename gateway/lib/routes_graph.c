/* Routes served by svc-graph (rows as in routes.c). */
#include "routes_int.h"

const gw_route gw__graph_routes[] = {
	{.method = NULL},
};

/* The sentinel row above keeps the array non-empty; it is not counted. */
const size_t gw__graph_routes_count = 0;

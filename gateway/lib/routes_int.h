/*
 * Per-service parts of the route table, joined by gw_routes(). Each part
 * is a constant array in routes_<service>.c with its row count.
 */
#ifndef GW_ROUTES_INT_H
#define GW_ROUTES_INT_H

#include <stddef.h>

#include "gw_routes.h"

extern const gw_route gw__graph_routes[];
extern const size_t gw__graph_routes_count;

extern const gw_route gw__realtime_routes[];
extern const size_t gw__realtime_routes_count;

extern const gw_route gw__proposals_routes[];
extern const size_t gw__proposals_routes_count;
extern const gw_route gw__tasks_routes[];
extern const size_t gw__tasks_routes_count;

extern const gw_route gw__indexnow_routes[];
extern const size_t gw__indexnow_routes_count;

extern const gw_route gw__report_routes[];
extern const size_t gw__report_routes_count;

extern const gw_route gw__example_routes[];
extern const size_t gw__example_routes_count;

#endif

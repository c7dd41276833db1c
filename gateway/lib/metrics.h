/*
 * Prometheus counters of the gateway: the route table's stages
 * (seo_route_info), requests by route and status, a latency histogram per
 * route, credits charged and refunded, Authorize calls sent and calls
 * whose rate was counted in the gateway (rate_grant.h). The gateway
 * runs on one loop thread, so nothing here locks.
 */
#ifndef GW_METRICS_H
#define GW_METRICS_H

#include <stddef.h>
#include <stdint.h>

#include "gw_routes.h"

typedef struct gw_metrics gw_metrics;

/* Counters for `n_routes` routes plus one slot for unmatched paths.
 * Returns NULL when out of memory. */
gw_metrics *gw_metrics_new(const gw_route *routes, size_t n_routes);
void gw_metrics_free(gw_metrics *m);

/* `route` is NULL for unmatched paths. */
void gw_metrics_observe(gw_metrics *m, const gw_route *route, int status,
			int64_t latency_us);
void gw_metrics_credits(gw_metrics *m, long long charged, long long refunded);
/* One Authorize call sent. */
void gw_metrics_authorize(gw_metrics *m);
/* One call's rate counted from a token the gateway holds. */
void gw_metrics_rate_local(gw_metrics *m);
/* One Authorize sent only to ask for a key's rate grant ahead (also
 * counted by gw_metrics_authorize()). */
void gw_metrics_rate_ask(gw_metrics *m);

/* Renders the text exposition format into a malloc'd string the caller
 * frees; NULL when out of memory. */
char *gw_metrics_render(const gw_metrics *m, size_t *len);

#endif

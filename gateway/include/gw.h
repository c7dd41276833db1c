/*
 * gw.h: the gateway. It maps /v1 JSON requests to service methods through
 * the route table: authenticates the key, rate-limits and charges credits
 * (one Authorize call to svc-account), calls the service over gRPC,
 * refunds on failure, answers JSON, writes one log line per request and
 * counts metrics. Services never see an API key: they get the caller's
 * workspace, user, key id and role as metadata.
 */
#ifndef GW_H
#define GW_H

#include <event2/event.h>

#include "seo/services.h"

typedef struct gw_gateway gw_gateway;

typedef struct gw_config {
	const char *http_addr;            /* listen address */
	const char *service_addr[SEO__SVC_COUNT]; /* by seo_service */
	const char *tls_cert, *tls_key;   /* NULL/"" for cleartext */
	size_t body_limit;                /* bytes */
	int rpc_timeout_ms;               /* deadline of a service call */
	int request_timeout_ms;           /* GW_LIM_REQUEST_MS; 0: its default */
	int drain_ms;                     /* after gw_gateway_shutdown(), how
					   * long service calls may still run */
	const char *trusted_proxies;      /* CIDRs whose X-Forwarded-For
					   * names the client; NULL/"": none */
	const char *metrics_token;        /* bearer of GET /metrics; NULL/"":
					   * /metrics is refused */
	long long auth_failures_per_min;  /* per client address; 0: off */
} gw_config;

/* Fills `cfg` from the environment (seo/config.h). Strings are owned by
 * the environment or the config table. */
void gw_config_from_env(gw_config *cfg);

/* Creates the gateway on `base` and starts listening. Returns 0, SEO_EIO
 * when the address cannot be bound, SEO_EINVAL for a configuration fault
 * (logged with the variable's name), SEO_ENOMEM. */
int gw_gateway_new(struct event_base *base, const gw_config *cfg,
		   gw_gateway **out);

/* The event_base the gateway runs on. */
struct event_base *gw_gateway_base(gw_gateway *gw);

/*
 * Starts a graceful stop: no new connections, GOAWAY or Connection: close
 * on the open ones. Calls in flight run until their own deadlines, for at
 * most cfg->drain_ms; then the service calls still running are failed, and
 * so refunded through svc-account, whose client stays. The event loop ends
 * once every call is answered (its refund done) and every answer has
 * left, or GW_FLUSH_MS after the drain limit whatever is left. Calling it
 * again does nothing.
 */
void gw_gateway_shutdown(gw_gateway *gw);

/* What the gateway waits for after the drain limit: the refunds of the
 * calls it failed, and their answers. */
#define GW_FLUSH_MS 5000

/* Frees the gateway (after the loop has stopped), in dependency order:
 * the services' clients, whose failed calls are refunded, then
 * svc-account's, then the front end. A call still unanswered then (the
 * loop was stopped early) fails, its refund with it (logged). */
void gw_gateway_free(gw_gateway *gw);

/* The gateway process: reads its configuration from the environment
 * (stopping at a fault, the variable named), serves on one event loop,
 * drains at the first SIGINT or SIGTERM and stops at the second. Returns
 * the exit status: 0 after a drain, 1 when it could not start. */
int gw_main(void);

#endif

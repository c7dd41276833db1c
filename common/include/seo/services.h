/*
 * seo/services.h: the service registry (services.def at the top of the
 * source tree, on the include path of seo_common), as an enum and a table.
 *
 * common/ holds the mechanism; the rows, which name the components, live
 * outside it. Each row gives a service's names, its default address and
 * configuration key, and the peers it may call (docs/ARCHITECTURE.md,
 * "Who calls whom"). The table is static: nothing is allocated or freed.
 */
#ifndef SEO_SERVICES_H
#define SEO_SERVICES_H

#include "seo/config.h"

typedef enum seo_service {
#define SEO_SERVICE(id, name, port, calls, summary) SEO_SVC_##id,
#include "services.def"
#undef SEO_SERVICE
	SEO__SVC_COUNT
} seo_service;

/* The bit of service `id` in a row's `calls` mask. */
#define SEO_CALL(id) (1u << SEO_SVC_##id)

typedef struct seo_service_def {
	const char *name;     /* "account": /healthz key, OpenAPI tag */
	const char *process;  /* "svc-account": binary, log and host name */
	seo_cfg addr_key;     /* SEO_CFG_ACCOUNT_ADDR: listen and call address */
	unsigned port;        /* default port (127.0.0.1:port) */
	unsigned calls;       /* SEO_CALL() bits of the peers it may call */
	const char *summary;  /* one line, for OpenAPI */
} seo_service_def;

/* The row of `svc` (< SEO__SVC_COUNT). */
const seo_service_def *seo_service_get(seo_service svc);

/* Finds a service by name ("account") or process name ("svc-account").
 * Returns 0 and sets *out, or SEO_ENOTFOUND. */
int seo_service_find(const char *name, seo_service *out);

/* The service's address: its SEO_<ID>_ADDR value, else the default. Owned
 * by the environment or the configuration table. */
const char *seo_service_addr(seo_service svc);

/* 1 when the registry lets `from` call `to`, else 0. */
int seo_service_may_call(seo_service from, seo_service to);

#endif

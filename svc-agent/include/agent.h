/*
 * agent.h: svc-agent's service (seo.agent.v1.Agent): proposals, IndexNow,
 * outreach, agent tasks, activity notes and the client report. A library
 * of handlers over PostgreSQL and the svc-account peer, unit-testable
 * without sockets, behind a thin main.c.
 */
#ifndef AGENT_H
#define AGENT_H

#include <stddef.h>

#include "seo/fetch_config.h"
#include "seo/rpc.h"

typedef struct agent_svc agent_svc;

/*
 * The service on the database at `pg_url` (copied; connected lazily, the
 * migrations applied on the first connection) and its peer svc-account,
 * opened now (a refusal stops the process), and the worker running
 * approved proposals started. `fetch` (key-file checks,
 * IndexNow) is the caller's and must outlive the service. *out is freed
 * with agent_svc_free(). Returns 0, SEO_ENOMEM, or the rpc_peer_open()
 * failure (logged).
 */
int agent_svc_new(const char *pg_url, const seo_fetch_config *fetch,
		  agent_svc **out);

/* Frees `s` and its connections; NULL is allowed. */
void agent_svc_free(agent_svc *s);

/* 0 when the database answers and the migrations are applied (logged
 * otherwise): main() reports it, the service serves either way. */
int agent_svc_db_check(agent_svc *s);

/* The methods, for rpc_service_main() with an agent_svc as `service`. */
extern const rpc_method agent_methods[];
extern const size_t agent_n_methods;

#endif

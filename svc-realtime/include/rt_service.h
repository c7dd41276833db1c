/*
 * rt_service.h: svc-realtime's gRPC face (seo.realtime.v1.Realtime) over
 * the libraries of rt.h. Handlers block on their own fetches (and
 * page-performance on PostgreSQL and its upstream), so the server runs
 * them on worker threads.
 */
#ifndef RT_SERVICE_H
#define RT_SERVICE_H

#include <stddef.h>

#include <jansson.h>
#include <protobuf-c/protobuf-c.h>

#include "seo/arena.h"
#include "seo/fetch_config.h"
#include "seo/rpc.h"
#include "seo/tech.h"

/* The method table for rpc_service_main(); the service pointer is an
 * rt_svc (below). */
extern const rpc_method rt_rpc_methods[];
extern const size_t rt_rpc_n_methods;

/*
 * The service's state (psi_service.c): the fetch configuration every
 * analysis fetches with and page-performance checks URLs by (`fetch`,
 * borrowed: it must outlive the service), and what page-performance
 * needs: a pool of database connections to `pg_url` (copied), opened
 * lazily with svc-realtime's migrations (rt_store.h), and
 * the upstream runs in flight; and the live-analysis slots of each
 * workspace (rt_svc_slots()). Nothing connects here, so that the other
 * analyses serve while the database is away. Returns 0 or SEO_ENOMEM.
 * Free with rt_svc_free() once no call runs.
 */
typedef struct rt_svc rt_svc;

int rt_svc_new(const char *pg_url, const seo_fetch_config *fetch, rt_svc **out);
void rt_svc_free(rt_svc *s);

/* The fetch configuration of `s`; NULL (no allow-nets, no connect-to)
 * without a service. */
const seo_fetch_config *rt_svc_fetch(const rt_svc *s);

/*
 * How many live analyses each caller (a workspace) runs at once
 * (slots.c). Thread-safe. rt_slots_new() returns 0 or SEO_ENOMEM; free
 * with rt_slots_free() (NULL allowed) once no call runs.
 * rt_slots_take() takes one of `who`'s `max` slots: 0, SEO_EDENIED when
 * all are taken, SEO_ENOMEM. rt_slots_give() gives back one taken.
 * rt_slots_held() says how many `who` holds.
 */
typedef struct rt_slots rt_slots;

int rt_slots_new(unsigned max, rt_slots **out);
void rt_slots_free(rt_slots *s);
int rt_slots_take(rt_slots *s, const char *who);
void rt_slots_give(rt_slots *s, const char *who);
unsigned rt_slots_held(rt_slots *s, const char *who);

/* The live-analysis slots of `s` (SEO_REALTIME_WORKSPACE_FETCHES per
 * workspace); NULL without a service. */
rt_slots *rt_svc_slots(const rt_svc *s);

/* Connects once and applies the migrations, so that a fresh database is
 * ready before the first call. 0, or why not (logged); page-performance
 * retries on its next call. */
int rt_svc_db_check(rt_svc *s);

/* The PagePerformance handler, for the method table. Without a service
 * pointer it answers service_unavailable after checking its input. */
int rt__page_performance(rpc_ctx *ctx, const ProtobufCMessage *req,
			 ProtobufCMessage **resp);

/*
 * The technology rules of tech-stack (seo/tech.h), loaded on the first
 * call from seo_tech_rules_path() and kept for the process; NULL, with the
 * reason logged, when they cannot be loaded. Thread-safe.
 */
const seo_tech_rules *rt_service_tech_rules(void);

/*
 * Builds a message of `desc` from JSON object `obj` by the shared
 * conversion (seo/pbjson.h), strict: integers only as JSON integers,
 * repeated fields only as arrays, any JSON value for a seo.common.RawJson
 * field (kept as its compact text). null or absent leaves an optional
 * field unset; a required field must be there. The message and everything
 * in it are allocated on `a`. Returns 0 and sets *out; SEO_EINVAL when
 * `obj` does not fit (a member without a field, a value of another type
 * or out of range, a required field missing, two members of a oneof), with
 * *where naming the field or, for an unknown member, the message (static
 * strings of the descriptors); SEO_ENOMEM.
 */
int rt_pb_from_json(const json_t *obj, const ProtobufCMessageDescriptor *desc,
		    seo_arena *a, ProtobufCMessage **out, const char **where);

#endif

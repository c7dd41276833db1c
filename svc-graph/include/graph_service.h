/*
 * graph_service.h: svc-graph's methods (seo.graph.v1.Graph) on the crawl
 * index, and the release being served.
 *
 * A graph_service serves one index at a time, held by reference count:
 * each call takes a reference for as long as it runs, and
 * graph_service_reload() opens a newer release, swaps it in and drops the
 * service's own reference to the old one, which is closed when its last
 * call ends. Responses never point into the index (strings are copied to
 * the call's arena), so a reply may be written after the swap. While no
 * index is loaded every call fails with service_unavailable.
 *
 * Domains are normalised with graph_normalize_domain(); a malformed one
 * fails with invalid_domain, a paging value out of bounds with
 * invalid_parameter (the gateway checks both before charging; a direct
 * gRPC caller gets the same answers).
 */
#ifndef SEO_GRAPH_SERVICE_H
#define SEO_GRAPH_SERVICE_H

#include <stddef.h>

#include <protobuf-c/protobuf-c.h>

#include "seo/arena.h"
#include "seo/rpc.h"

typedef struct graph_service graph_service;

/*
 * Creates the service for the index directory `data_dir` (copied) and
 * loads it when present: a missing or unusable index is logged, not an
 * error (calls then answer service_unavailable until a reload finds one).
 * Returns 0 and sets *out (freed with graph_service_free), SEO_EINVAL for a
 * path too long, SEO_ENOMEM.
 */
int graph_service_new(const char *data_dir, graph_service **out);

/* Frees the service and its index; no call may be running. NULL is
 * allowed. */
void graph_service_free(graph_service *s);

/*
 * Serves the index now at the data directory if it is another one than the
 * one served (its manifest.json is another file: a new directory renamed
 * or symlinked into place). Returns 1 when it switched, 0 when nothing
 * changed (or the same unusable directory was already tried), or a
 * negative code from graph_index_open() (the current index stays). Not to
 * be run concurrently with itself; calls may run meanwhile.
 */
int graph_service_reload(graph_service *s);

/* The gRPC methods; rpc_ctx_service() must be the graph_service. */
extern const rpc_method graph_rpc_methods[];
extern const size_t graph_rpc_n_methods;
/* The methods that run on the loop thread (ended by a NULL path). */
extern const rpc_inline graph_rpc_inline[];

/* Why a call failed: a public code of seo/errors.h and a message. */
typedef struct graph_fail {
	const char *code;
	char message[256];
} graph_fail;

/*
 * Runs method `method` (the rpc name, e.g. "Backlinks") as the RPC would,
 * without a socket: for tests. The response is allocated on `a`. Returns
 * 0, or SEO_EINVAL with *err filled (SEO_ENOTFOUND for an unknown method).
 */
int graph_service_call(graph_service *s, const char *method,
		       const ProtobufCMessage *req, seo_arena *a,
		       ProtobufCMessage **resp, graph_fail *err);

#endif

/*
 * platforms.h: svc-graph's platform methods (platforms.c), called by
 * service.c's method table on the release it holds for the call.
 *
 * Each turns a request into its response on the arena `a`; strings are
 * copied out of the index. Returns 0, or SEO_EINVAL with *err filled
 * (missing_platform, unknown_platform, invalid_parameter, internal_error).
 */
#ifndef GRAPH_PLATFORMS_H
#define GRAPH_PLATFORMS_H

#include <protobuf-c/protobuf-c.h>

#include "graph.h"
#include "graph_service.h"
#include "seo/arena.h"

int graph__platform_trends_call(const graph_index *ix, seo_arena *a,
				const ProtobufCMessage *req,
				ProtobufCMessage **resp, graph_fail *err);

int graph__platform_domains_call(const graph_index *ix, seo_arena *a,
				 const ProtobufCMessage *req,
				 ProtobufCMessage **resp, graph_fail *err);

#endif

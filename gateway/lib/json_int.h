/*
 * json_int.h: helpers shared by the transcoder (json.c), its route check
 * (json_check.c) and the OpenAPI builder (openapi.c). Internal to gw_json.
 */
#ifndef GW_JSON_INT_H
#define GW_JSON_INT_H

#include <stddef.h>

#include <jansson.h>
#include <protobuf-c/protobuf-c.h>

#include "gw_routes.h"
#include "seo/pbjson.h"

/* The rule of `route` for field `name`, or NULL. */
const gw_param_rule *gw__rule(const gw_route *route, const char *name);

/* openapi.c's names for the shared helpers of seo/pbjson.h. */
static inline size_t gw__enum_prefix(const ProtobufCEnumDescriptor *e)
{
	return seo_pbjson_enum_prefix(e);
}

static inline json_t *gw__enum_name(const char *name, size_t prefix)
{
	return seo_pbjson_enum_name(name, prefix);
}

static inline int gw__is_int(ProtobufCType t)
{
	return seo_pbjson_is_int(t);
}

static inline void gw__int_bounds(ProtobufCType t, long long *min,
				  unsigned long long *max)
{
	seo_pbjson_int_bounds(t, min, max);
}

#endif

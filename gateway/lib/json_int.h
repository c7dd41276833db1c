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

#endif

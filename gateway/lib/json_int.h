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

/* Length of the prefix every value name of `e` shares, cut after its last
 * '_' ("ROLE_" for ROLE_OWNER, ROLE_ADMIN, ...). */
size_t gw__enum_prefix(const ProtobufCEnumDescriptor *e);

/* The public name of an enum value: `name` without its first `prefix`
 * bytes, in lowercase, as a new JSON string (caller decrefs); NULL when out
 * of memory. */
json_t *gw__enum_name(const char *name, size_t prefix);

/* The rule of `route` for field `name`, or NULL. */
const gw_param_rule *gw__rule(const gw_route *route, const char *name);

/* 1 for the integer field types (int32 ... fixed64). */
int gw__is_int(ProtobufCType t);

/* Bounds of an integer field type; uint64 and fixed64 reach ULLONG_MAX. */
void gw__int_bounds(ProtobufCType t, long long *min, unsigned long long *max);

/* 1 when s[0..len) is well-formed UTF-8 without NUL bytes. */
int gw__utf8_valid(const char *s, size_t len);

#endif

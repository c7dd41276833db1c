/*
 * gw_json.h: the one generic transcoder between the public JSON interface
 * and protobuf-c messages, driven by message descriptors and the route's
 * parameter rules; and the OpenAPI 3.1 document built from the same.
 *
 * JSON names are the proto field names (snake_case, as the specification
 * shows them). Encoding emits required and repeated fields always, and an
 * unset optional field as null where the specification lets it be null
 * (marked in the .proto, seo/nullable.h), else not at all. int64 fields are JSON
 * integers, double/float numbers, bool booleans, bytes base64, enums their
 * value name in lowercase without the enum-type prefix (ROLE_OWNER ->
 * "owner"), nested messages objects (null when unset), a
 * seo.common.RawJson the JSON value it carries, and a oneof only its member
 * that is set (a one-member oneof is a field left out when unset).
 */
#ifndef GW_JSON_H
#define GW_JSON_H

#include <stddef.h>

#include <jansson.h>
#include <protobuf-c/protobuf-c.h>

#include "gw_routes.h"
#include "seo/arena.h"

typedef struct gw_json_error {
	const char *code;    /* public error code, e.g. "invalid_parameter" */
	int http_status;     /* 400, 413, 415 */
	char message[256];   /* names the field and what was wrong */
} gw_json_error;

/*
 * Builds the request message of `route` from path parameters, the raw
 * query string (without '?', may be "") and the body (JSON object for
 * GW_IN_JSON; raw bytes for GW_IN_RAW together with `signature`, the value
 * of the signature header or NULL). Query values are converted to the
 * field's type ("true"/"false"/"1"/"0" for bool, decimal for integers,
 * comma-separated or repeated parameters for repeated fields). The route's
 * parameter rules are then applied: required, defaults, ranges (400 with
 * the rule's code, or clamp, or fallback). Missing required proto fields
 * are reported as missing parameters.
 *
 * The message and everything in it is allocated on `arena`. Returns 0 and
 * sets *out, or SEO_EINVAL and fills *err.
 * (Also: SEO_ENOMEM with *err saying internal_error, 500, when out of
 * memory, also while parsing the body once main() called seo_json_init(); *out NULL for a route without an input descriptor. A field may
 * come from one of path, body and query only.)
 */
int gw_json_decode_request(const gw_route *route, const gw_kv *path_params,
			   size_t n_path_params, const char *query,
			   const char *body, size_t body_len,
			   const char *signature, seo_arena *arena,
			   ProtobufCMessage **out, gw_json_error *err);

/* An integer member the gateway adds to an answer (credits_used). */
typedef struct gw_json_member {
	const char *name; /* an identifier: written without escapes */
	long long value;
} gw_json_member;

/*
 * Writes the answer of `msg` as compact JSON text, straight from the
 * message: its object without the top-level field named `hide` (NULL:
 * none), then the `n_extra` members of `extra`, whose names no top-level
 * field of msg has (gw_json_route_check() sees to it for an envelope).
 * The text (NUL-terminated, caller free()s it) in *text, its length in
 * *len. Returns 0, or SEO_ENOMEM, also when a RawJson in msg holds text
 * that is not JSON (a bug of the service).
 */
int gw_json_write_answer(const ProtobufCMessage *msg, const char *hide,
			 const gw_json_member *extra, size_t n_extra,
			 char **text, size_t *len);

/*
 * Reads an integer field (or the length of a repeated field) named
 * `field` of `msg`, for per-item billing. Returns 0 and sets *value, or
 * SEO_ENOTFOUND.
 * (Also SEO_ENOTFOUND for a field of another type and for an unset
 * optional one: billing must not read "unset" as 0. uint64 values past
 * LLONG_MAX read as LLONG_MAX.)
 */
int gw_json_field_count(const ProtobufCMessage *msg, const char *field,
			long long *value);

/* Returns 1 when the boolean field `field` of `msg` is present and true,
 * else 0. */
int gw_json_field_true(const ProtobufCMessage *msg, const char *field);

/*
 * Returns the value of the first field rule flagged GW_P_USAGE in the
 * decoded request (the domain or URL queried), allocated on `arena`, or
 * NULL.
 */
const char *gw_json_usage_value(const gw_route *route,
				const ProtobufCMessage *req, seo_arena *arena);

/*
 * Checks one row of a route table against its descriptors, for tests and
 * start-up: every path parameter and rule names a field of the input
 * message of a type it can act on (ranges on numbers, item counts of
 * repeated fields or lengths of strings; defaults and fallbacks on singular
 * numbers, bools and enums, within the type, the range and the enum's
 * values; the usage value on a string field), GW_IN_RAW inputs have a
 * `payload` bytes and a `signature` string field, per-item billing names an
 * integer or repeated field on both sides, and every public code is in the
 * error table. Returns 0, or SEO_EINVAL with the first problem written to
 * why[0..why_len) (NUL-terminated).
 */
int gw_json_route_check(const gw_route *route, char *why, size_t why_len);

/*
 * Builds the OpenAPI 3.1 document for `routes`: every route with its
 * parameters (from the input descriptor and rules), request body, success
 * response schema (from the output descriptor, plus credits_used /
 * credits_remaining for an envelope), error responses (from the route's
 * codes and the generic ones, with the shared Error schema), credit cost
 * (x-credit-cost, x-billing) and the X-API-Key security scheme. Caller
 * json_decref()s *out. Returns 0 or SEO_ENOMEM.
 */
int gw_openapi_build(const gw_route *routes, size_t n_routes,
		     const char *server_url, json_t **out);

#endif

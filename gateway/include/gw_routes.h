/*
 * gw_routes.h: the route table, as data.
 *
 * One row per public endpoint: method, path pattern, the service method it
 * maps to, how its input is decoded, who may call it, what it costs and how
 * it is billed, its rate-limit class and the parameter rules checked before
 * anything is charged. The pipeline, the transcoder and the OpenAPI document
 * all read this table; adding an endpoint is a proto method, a service
 * handler and a row here.
 */
#ifndef GW_ROUTES_H
#define GW_ROUTES_H

#include <stddef.h>

#include <protobuf-c/protobuf-c.h>

#include "seo/services.h"

/* Who answers a route: the gateway itself, or a row of the service
 * registry (seo/services.h) shifted by one. */
typedef enum gw_service {
	GW_SVC_NONE = 0,  /* answered by the gateway itself */
#define SEO_SERVICE(id, name, port, calls, summary) GW_SVC_##id,
#include "services.def"
#undef SEO_SERVICE
	GW__SVC_COUNT
} gw_service;

/* The registry's service of `svc` (not GW_SVC_NONE). */
#define GW_SVC_REGISTRY(svc) ((seo_service)((svc) - 1))

/* How the request message is filled (path parameters always are). */
typedef enum gw_input {
	GW_IN_NONE = 0,   /* no input besides path parameters */
	GW_IN_QUERY,      /* query string parameters -> fields */
	GW_IN_JSON,       /* JSON object body -> fields (query also allowed) */
	GW_IN_RAW,        /* body bytes into the `payload` field, a header into
			   * `signature` (webhooks) */
} gw_input;

typedef enum gw_bill {
	GW_BILL_FREE = 0, /* never charged, no usage row */
	GW_BILL_FIXED,    /* `cost` debited before the work, refunded on failure;
			   * with `billed_field` set, that integer response
			   * field at 0 refunds it in full too (a sitemap
			   * call that found none) */
	GW_BILL_PER_ITEM, /* `cost` x the count in request field `items_field`
			   * debited before, the unbilled part refunded after
			   * (count in response field `billed_field`) */
	GW_BILL_AFTER,    /* authorized at no cost, debited only once the
			   * service succeeded: `cost` x the count in response
			   * field `billed_field` when set, else `cost`;
			   * insufficient_credits then if the balance is
			   * short, nothing charged, the usage row kept at 0;
			   * a failure costs nothing and writes no row */
} gw_bill;

/* Role bits, equal to seo.account.v1.Role values. */
enum {
	GW_ROLE_OWNER = 1,
	GW_ROLE_ADMIN = 2,
	GW_ROLE_MEMBER = 4,
	GW_ROLE_CLIENT = 8,
	GW_ROLES_ANY = 0,
	GW_ROLES_STAFF = GW_ROLE_OWNER | GW_ROLE_ADMIN | GW_ROLE_MEMBER,
	GW_ROLES_MANAGERS = GW_ROLE_OWNER | GW_ROLE_ADMIN,
};

/* Route flags. */
enum {
	GW_R_NO_KEY = 1 << 0,        /* no X-API-Key (pricing, free tools) */
	GW_R_NO_RATE_LIMIT = 1 << 1, /* exempt from the per-key rate */
	GW_R_ENVELOPE = 1 << 2,      /* add credits_used / credits_remaining */
	GW_R_STRICT = 1 << 3,        /* unknown body fields or query
				      * parameters are rejected */
	GW_R_HIDE_BILLED = 1 << 4,   /* billed_field is for billing only and
				      * is left out of the JSON answer */
};

/* Parameter rule flags. */
enum {
	GW_P_REQUIRED = 1 << 0,  /* missing or empty -> error */
	GW_P_CLAMP = 1 << 1,     /* out of range -> clamped silently */
	GW_P_FALLBACK = 1 << 2,  /* invalid or out of range -> default */
	GW_P_RANGE = 1 << 3,     /* min/max apply */
	GW_P_DEFAULT = 1 << 4,   /* `dflt` when absent */
	GW_P_USAGE = 1 << 5,     /* the value is the usage row's domain */
	GW_P_DOMAIN = 1 << 6,    /* a string (or each string of a repeated
				  * field) must look like a domain name:
				  * letters, digits, hyphens, dots, non-ASCII
				  * (IDN), an optional scheme, port and path;
				  * else the rule's code, invalid_domain when
				  * NULL */
	GW_P_URL = 1 << 7,       /* an absolute http(s) URL without userinfo
				  * or fragment (syntax only: where it points
				  * is the service's business); else the
				  * rule's code, invalid_url when NULL */
};

typedef struct gw_param_rule {
	const char *name;        /* request message field */
	unsigned flags;          /* GW_P_* */
	long long min, max;      /* integer bounds with GW_P_RANGE */
	long long dflt;          /* integer default with GW_P_DEFAULT */
	const char *error_code;  /* public code on violation; NULL:
				  * invalid_parameter */
	const char *doc;         /* one line for OpenAPI */
} gw_param_rule;

typedef struct gw_route {
	const char *method;      /* "GET", "POST", "DELETE", "PATCH" */
	const char *pattern;     /* "/v1/keys/:id" */
	const char *endpoint;    /* usage row name, e.g. "keys" */
	gw_service service;
	const char *rpc_path;    /* "/seo.account.v1.Account/RevokeKey" */
	const ProtobufCMessageDescriptor *input;
	const ProtobufCMessageDescriptor *output;
	gw_input in;
	int status;              /* HTTP status on success (200, 201) */
	unsigned roles;          /* GW_ROLE_* mask; GW_ROLES_ANY = any key */
	gw_bill bill;
	long long cost;          /* credits per call or per item */
	const char *items_field; /* GW_BILL_PER_ITEM: request field (array or
				  * integer) giving the most items charged */
	const char *billed_field; /* GW_BILL_PER_ITEM: response field counting
				   * items actually billed; GW_BILL_FIXED
				   * (optional): 0 there refunds the call;
				   * GW_BILL_AFTER (optional): items debited */
	const char *surcharge_field; /* GW_BILL_FIXED (optional): a request
				      * boolean that, true, adds `surcharge`
				      * credits to the call (backlinks'
				      * score enrichment) */
	long long surcharge;
	unsigned flags;          /* GW_R_* */
	const char *strict_code; /* code for unknown fields with GW_R_STRICT */
	const gw_param_rule *params;
	size_t n_params;
	int timeout_ms;          /* the service call's deadline when longer than
				  * SEO_RPC_TIMEOUT_MS; 0: that one */
	const char *summary;     /* OpenAPI summary */
	const char *const *errors; /* public codes this route may answer,
				    * NULL-terminated; the generic ones
				    * (invalid_api_key, rate_limited, ...) are
				    * added from the flags */
} gw_route;

/* The table. *count is set to the number of rows. */
const gw_route *gw_routes(size_t *count);

/* A path parameter bound by matching, e.g. {"id", "abc"}. */
typedef struct gw_kv {
	const char *name;
	const char *value;
} gw_kv;

#define GW_MAX_PATH_PARAMS 4

/* Bytes of scratch gw_route_match() needs beyond strlen(path) + 1. */
#define GW_ROUTE_SCRATCH_EXTRA 128

/*
 * Finds the route for `method` and `path` (HEAD matches GET rows). Returns
 * the row and fills `params` with up to GW_MAX_PATH_PARAMS entries whose
 * names and values are copied into `scratch`, which must hold
 * strlen(path) + 1 + GW_ROUTE_SCRATCH_EXTRA bytes.
 * Returns NULL and sets *path_known to 1 when the path exists under
 * another method (405), 0 when it does not exist at all (404).
 */
const gw_route *gw_route_match(const char *method, const char *path,
			       char *scratch, gw_kv *params, size_t *n_params,
			       int *path_known);

/* The role bit for "owner", "admin", "member", "client"; 0 when unknown. */
unsigned gw_role_bit(const char *role);

#endif

/*
 * gw_routes.h: the route table, as data.
 *
 * One row per public endpoint: method, path pattern and the service method
 * it maps to, then its stages in the order a request meets them:
 * authentication (key required, optional or none; roles), input (how the
 * request message is decoded and the parameter rules checked before
 * anything is charged), billing, quota class, what is forwarded to the
 * service (client IP, request headers) and output (JSON or bytes, the
 * statuses and headers the service may choose). The pipeline, the
 * transcoder, the metrics and the OpenAPI document all read this table;
 * adding an endpoint is a proto method, a service handler and a row here.
 * Zero is the common case of every stage: key required, any role, no
 * input, free, per-key rate, nothing forwarded, JSON.
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

/* What the answer's body is. */
typedef enum gw_output {
	GW_OUT_JSON = 0,  /* the response message as a JSON object */
	GW_OUT_BYTES,     /* the bytes field `body_field` of the response
			   * message, as `content_type` (a PDF, say) */
} gw_output;

/* Whether a call needs an API key. */
typedef enum gw_key {
	GW_KEY_REQUIRED = 0, /* X-API-Key needed: 401 without */
	GW_KEY_OPTIONAL,     /* without one the call goes on anonymous (no
			      * identity metadata); with one it must be
			      * valid (401 otherwise) and the call is the
			      * key's (free tools with a signed-in tier) */
	GW_KEY_NONE,         /* never read (pricing, webhooks, built-ins) */
} gw_key;

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

/* Which limit a call counts against. */
typedef enum gw_quota {
	GW_QUOTA_KEY = 0, /* the per-key rate limit (SEO_RATE_LIMIT_PER_MIN) */
	GW_QUOTA_IP,      /* the service's per-IP quota: the client IP is
			   * forwarded, no per-key rate */
	GW_QUOTA_NONE,    /* no limit */
} gw_quota;

/* Role bits, equal to seo.account.v1.Role values. */
enum {
	GW_ROLE_OWNER = 1,
	GW_ROLE_ADMIN = 2,
	GW_ROLE_MEMBER = 4,
	GW_ROLE_CLIENT = 8,
	GW_ROLES_ANY = 0,
	GW_ROLES_STAFF = GW_ROLE_OWNER | GW_ROLE_ADMIN | GW_ROLE_MEMBER,
	GW_ROLES_MANAGERS = GW_ROLE_OWNER | GW_ROLE_ADMIN,
	/* who may read the workspace's balance: GET /v1/credits, and
	 * credits_remaining on billed answers (docs/decisions.md) */
	GW_ROLES_BALANCE = GW_ROLES_STAFF,
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

/* Stage 1, authentication: who may call. */
typedef struct gw_auth_stage {
	gw_key key;
	unsigned roles;          /* GW_ROLE_* mask; GW_ROLES_ANY = any key */
} gw_auth_stage;

/* Stage 2, input: how the request message is built and checked. */
typedef struct gw_in_stage {
	gw_input kind;
	const ProtobufCMessageDescriptor *message;
	const gw_param_rule *params;
	size_t n_params;
	unsigned char strict;    /* unknown body fields or query parameters
				  * are refused */
	const char *strict_code; /* their code; NULL: invalid_parameter */
	const char *body_code;   /* GW_IN_JSON: the code of a body that is no
				  * JSON object; NULL: invalid_json */
} gw_in_stage;

/* Stage 3, billing: what a call costs and how it is charged. */
typedef struct gw_bill_stage {
	gw_bill kind;
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
	unsigned char envelope;  /* add credits_used / credits_remaining */
	unsigned char hide_billed; /* billed_field is for billing only and is
				    * left out of the JSON answer */
} gw_bill_stage;

/* Headers of a route's forwarding or output stage: at most this many. */
#define GW_ROUTE_MAX_HEADERS 8

/* Stage 4, forwarding: what of the request the service sees besides its
 * message (the caller's identity always travels). */
typedef struct gw_forward_stage {
	unsigned char client_ip; /* `seo-client-ip`: the socket's peer, or
				  * from X-Forwarded-For when the peer is in
				  * SEO_TRUSTED_PROXIES (always with
				  * GW_QUOTA_IP) */
	const char *const *headers; /* request headers sent as metadata under
				     * their lowercase names, NULL-ended */
} gw_forward_stage;

/* Stage 5, output: the answer. A service chooses among `statuses` and sets
 * `headers` through its response metadata (seo/rpc.h); anything else it
 * sends is ignored. */
typedef struct gw_out_stage {
	gw_output kind;
	const ProtobufCMessageDescriptor *message;
	int status;              /* HTTP status on success (200, 201) */
	const int *statuses;     /* other success statuses the service may
				  * choose, 0-ended; NULL: none */
	const char *const *headers; /* response headers the service may set
				     * (Retry-After), NULL-ended */
	const char *body_field;  /* GW_OUT_BYTES: the bytes field */
	const char *content_type; /* GW_OUT_BYTES: e.g. application/pdf */
	int cache_ms;            /* > 0: the answer is the same for everyone
				  * and changes rarely; the gateway answers
				  * from memory for this long after the
				  * service last answered (a free GET
				  * without key or input: answer_cache.h) */
	unsigned char lease_credits; /* the answer is a Credits message the
				      * gateway gives itself while the
				      * workspace holds a lease here
				      * (lease.h) */
} gw_out_stage;

typedef struct gw_route {
	const char *method;      /* "GET", "POST", "DELETE", "PATCH" */
	const char *pattern;     /* "/v1/keys/:id" */
	const char *endpoint;    /* usage row name, e.g. "keys" */
	gw_service service;
	const char *rpc_path;    /* "/seo.account.v1.Account/RevokeKey" */
	int timeout_ms;          /* the service call's deadline when longer than
				  * SEO_RPC_TIMEOUT_MS; 0: that one */
	gw_auth_stage auth;
	gw_in_stage in;
	gw_bill_stage bill;
	gw_quota quota;
	gw_forward_stage forward;
	gw_out_stage out;
	unsigned char sees_billing; /* the service reads the workspace's
				     * usage rows or balance: calls debited
				     * from a lease here are reported first
				     * (lease.h), so it sees every call
				     * answered before */
	const char *summary;     /* OpenAPI summary */
	const char *const *errors; /* public codes this route may answer,
				    * NULL-terminated; the generic ones
				    * (invalid_api_key, rate_limited, ...) are
				    * added from the stages */
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
 * Finds the route for `method` and `path` (HEAD matches a GET row that is
 * free, GW_BILL_FREE: a billed one would charge for a body never sent, so
 * HEAD there is 405). Returns
 * the row and fills `params` with up to GW_MAX_PATH_PARAMS entries whose
 * names and values are copied into `scratch`, which must hold
 * strlen(path) + 1 + GW_ROUTE_SCRATCH_EXTRA bytes.
 * Returns NULL and sets *path_known to 1 when the path exists under
 * another method (405), 0 when it does not exist at all (404).
 */
const gw_route *gw_route_match(const char *method, const char *path,
			       char *scratch, gw_kv *params, size_t *n_params,
			       int *path_known);

/*
 * Writes the methods `path` answers to into `out` (`outlen` bytes with the
 * NUL), as the Allow header of a 405 lists them: "GET, HEAD", "POST", in
 * table order, HEAD after a free GET. `scratch` and `params` as for
 * gw_route_match(). Returns the length; 0 ("") when no route has the path.
 */
size_t gw_route_allow(const char *path, char *scratch, gw_kv *params,
		      char *out, size_t outlen);

/* Public names of the stages' kinds, as OpenAPI (x-billing) and the
 * metrics (seo_route_info) show them: "free", "fixed", "per_item",
 * "after_success"; "required", "optional", "none"; "key", "ip", "none";
 * "json", "bytes". Static strings; "" for a value out of range. */
const char *gw_bill_name(gw_bill kind);
const char *gw_key_name(gw_key key);
const char *gw_quota_name(gw_quota quota);
const char *gw_output_name(gw_output kind);

/* The role bit for "owner", "admin", "member", "client"; 0 when unknown. */
unsigned gw_role_bit(const char *role);

#endif

/*
 * test_gw_json: the transcoder (query, JSON body, raw body and path
 * decoding with rules; encoding of every field type), the route check and
 * the OpenAPI document, on route rows of its own.
 *
 * With SEO_OPENAPI_OUT set, the OpenAPI document of these rows is written
 * there (for linting).
 */
#include <CUnit/Basic.h>
#include <limits.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gw_json.h"
#include "seo/account/v1/account.pb-c.h"
#include "seo/common/raw_json.pb-c.h"
#include "seo/errors.h"
#include "seo/graph/v1/graph.pb-c.h"
#include "seo/realtime/v1/realtime.pb-c.h"
#include "test_gw_json.pb-c.h"

/* ---- route rows ---------------------------------------------------------- */

static const gw_param_rule usage_rules[] = {
	{"limit", GW_P_RANGE | GW_P_CLAMP | GW_P_DEFAULT, 1, 200, 50, NULL,
	 "Rows per page."},
	{"offset", GW_P_RANGE | GW_P_DEFAULT, 0, LLONG_MAX, 0, NULL,
	 "Rows to skip."},
};

static const gw_param_rule checkout_rules[] = {
	{"credits", GW_P_REQUIRED | GW_P_RANGE, 100, LLONG_MAX, 0,
	 "invalid_credits", "Credits to buy, at least 100."},
};

static const gw_param_rule webhook_rules[] = {
	{"signature", GW_P_REQUIRED, 0, 0, 0, "invalid_signature", NULL},
};

static const gw_param_rule types_rules[] = {
	{"i32", GW_P_RANGE, -5, 5, 0, NULL, NULL},
	{"u32", GW_P_RANGE | GW_P_FALLBACK | GW_P_DEFAULT, 1, 10, 3, NULL, NULL},
	{"dbl", GW_P_RANGE | GW_P_CLAMP, 0, 100, 0, NULL, NULL},
	{"sort", GW_P_DEFAULT | GW_P_FALLBACK, 0, 0, 1, NULL, "Row order."},
	{"tags", GW_P_RANGE, 1, 3, 0, "invalid_domain", NULL},
	{"str", GW_P_RANGE | GW_P_USAGE, 2, 4, 0, NULL, NULL},
	{"flag", GW_P_DEFAULT, 0, 0, 1, NULL, NULL},
	{"raw", GW_P_RANGE, 0, 3, 0, NULL, NULL},
};

static const gw_param_rule list_usage_rules[] = {
	{"tags", GW_P_USAGE, 0, 0, 0, NULL, NULL},
};

static const char *const checkout_errors[] = {"checkout_failed", NULL};
static const char *const revoke_errors[] = {"key_not_found", NULL};
static const char *const me_errors[] = {"user_not_found", NULL};

enum {
	R_USAGE,
	R_CHECKOUT,
	R_CREATE_KEY,
	R_REVOKE,
	R_WEBHOOK,
	R_PRICING,
	R_ME,
	R_TYPES_Q,
	R_TYPES_J,
	R_REQUIRED,
	R_STRICT_Q,
	R_NODE,
	N_ROUTES
};

#define ACCT(m) (&seo__account__v1__##m##__descriptor)
#define TEST(m) (&seo__test__v1__##m##__descriptor)

static const gw_route routes[N_ROUTES] = {
	[R_USAGE] = {.method = "GET", .pattern = "/v1/usage",
		.endpoint = "usage",
		.service = GW_SVC_ACCOUNT,
		.rpc_path = "/seo.account.v1.Account/ListUsage",
		.auth = {.roles = GW_ROLES_STAFF},
		.in = {.kind = GW_IN_QUERY, .message = ACCT(list_usage_request),
		       .params = usage_rules, .n_params = 2},
		.out = {.message = ACCT(list_usage_response), .status = 200},
		.summary = "List usage rows"},
	[R_CHECKOUT] = {.method = "POST", .pattern = "/v1/checkout",
		.endpoint = "checkout",
		.service = GW_SVC_ACCOUNT,
		.rpc_path = "/seo.account.v1.Account/CreateCheckout",
		.auth = {.roles = GW_ROLES_MANAGERS},
		.in = {.kind = GW_IN_JSON, .message = ACCT(checkout_request),
		       .params = checkout_rules, .n_params = 1},
		.out = {.message = ACCT(checkout_response), .status = 200},
		.summary = "Start a checkout",
		.errors = checkout_errors},
	[R_CREATE_KEY] = {.method = "POST", .pattern = "/v1/keys",
		.endpoint = "keys",
		.service = GW_SVC_ACCOUNT,
		.rpc_path = "/seo.account.v1.Account/CreateKey",
		.auth = {.roles = GW_ROLES_STAFF},
		.in = {.kind = GW_IN_JSON, .message = ACCT(create_key_request)},
		.out = {.message = ACCT(created_key), .status = 201},
		.summary = "Create an API key"},
	[R_REVOKE] = {.method = "DELETE", .pattern = "/v1/keys/:id",
		.endpoint = "keys",
		.service = GW_SVC_ACCOUNT,
		.rpc_path = "/seo.account.v1.Account/RevokeKey",
		.auth = {.roles = GW_ROLES_STAFF},
		.in = {.message = ACCT(revoke_key_request)},
		.out = {.message = ACCT(success), .status = 200},
		.summary = "Revoke an API key",
		.errors = revoke_errors},
	[R_WEBHOOK] = {.method = "POST", .pattern = "/v1/payments/webhook",
		.endpoint = "webhook",
		.service = GW_SVC_ACCOUNT,
		.rpc_path = "/seo.account.v1.Account/PaymentWebhook",
		.auth = {.key = GW_KEY_NONE},
		.in = {.kind = GW_IN_RAW,
		       .message = ACCT(payment_webhook_request),
		       .params = webhook_rules, .n_params = 1},
		.quota = GW_QUOTA_NONE,
		.out = {.message = ACCT(payment_webhook_response),
		        .status = 200},
		.summary = "Payment provider events"},
	[R_PRICING] = {.method = "GET", .pattern = "/v1/pricing",
		.endpoint = "pricing",
		.service = GW_SVC_ACCOUNT,
		.rpc_path = "/seo.account.v1.Account/GetPricing",
		.auth = {.key = GW_KEY_NONE},
		.in = {.message = ACCT(empty)},
		.out = {.message = ACCT(pricing_response), .status = 200},
		.summary = "Credit price tiers"},
	[R_ME] = {.method = "GET", .pattern = "/v1/me", .endpoint = "me",
		.service = GW_SVC_ACCOUNT,
		.rpc_path = "/seo.account.v1.Account/GetMe",
		.in = {.message = ACCT(empty)},
		.out = {.message = ACCT(user), .status = 200},
		.summary = "The key's user",
		.errors = me_errors},
	[R_TYPES_Q] = {.method = "GET", .pattern = "/v1/test/types",
		.endpoint = "types",
		.service = GW_SVC_GRAPH, .rpc_path = "/seo.test.v1.Test/Types",
		.in = {.kind = GW_IN_QUERY, .message = TEST(all_types),
		       .params = types_rules,
		       .n_params = sizeof(types_rules) / sizeof(types_rules[0])},
		.bill = {.kind = GW_BILL_FIXED, .cost = 2},
		.out = {.message = TEST(all_types), .status = 200},
		.summary = "Every type by query"},
	[R_TYPES_J] = {.method = "POST", .pattern = "/v1/test/types",
		.endpoint = "types",
		.service = GW_SVC_REALTIME,
		.rpc_path = "/seo.test.v1.Test/Types",
		.in = {.kind = GW_IN_JSON, .message = TEST(all_types),
		       .params = types_rules,
		       .n_params = sizeof(types_rules) / sizeof(types_rules[0]),
		       .strict = 1, .strict_code = "invalid_proposal_input"},
		.bill = {.kind = GW_BILL_PER_ITEM, .cost = 1,
		         .items_field = "nums", .billed_field = "nums",
		         .envelope = 1},
		.out = {.message = TEST(all_types), .status = 200},
		.summary = "Every type by body"},
	[R_REQUIRED] = {.method = "POST", .pattern = "/v1/test/required",
		.endpoint = "required",
		.service = GW_SVC_AGENT,
		.rpc_path = "/seo.test.v1.Test/Required",
		.in = {.kind = GW_IN_JSON, .message = TEST(required)},
		.out = {.message = TEST(required), .status = 200},
		.summary = "Required fields"},
	[R_STRICT_Q] = {.method = "GET", .pattern = "/v1/test/strict",
		.endpoint = "strict",
		.service = GW_SVC_RANKS, .rpc_path = "/seo.test.v1.Test/Strict",
		.in = {.kind = GW_IN_QUERY, .message = ACCT(list_usage_request),
		       .params = usage_rules, .n_params = 2, .strict = 1},
		.out = {.message = ACCT(list_usage_response), .status = 200},
		.summary = "Strict query"},
	[R_NODE] = {.method = "PATCH", .pattern = "/v1/test/nodes/:name",
		.endpoint = "nodes",
		.service = GW_SVC_AGENT, .rpc_path = "/seo.test.v1.Test/Node",
		.in = {.kind = GW_IN_JSON, .message = TEST(node)},
		.out = {.message = TEST(node), .status = 200},
		.summary = "Path and body"},
};

/* ---- helpers ------------------------------------------------------------- */

static seo_arena *arena;
static gw_json_error err;

static int setup(void)
{
	arena = seo_arena_new(0);
	return arena == NULL;
}

static int teardown(void)
{
	seo_arena_free(arena);
	return 0;
}

static int decode(int route, const gw_kv *pp, size_t npp, const char *query,
		  const char *body, const char *sig, ProtobufCMessage **out)
{
	memset(&err, 0, sizeof(err));
	return gw_json_decode_request(&routes[route], pp, npp, query, body,
				      body != NULL ? strlen(body) : 0, sig,
				      arena, out, &err);
}

/* Decodes and expects success, a message that passes protobuf-c's check. */
static void *ok(int route, const char *query, const char *body)
{
	ProtobufCMessage *m = NULL;
	int rc = decode(route, NULL, 0, query, body, NULL, &m);

	CU_ASSERT_EQUAL(rc, 0);
	if (rc != 0)
		fprintf(stderr, "\n  unexpected error %s: %s (query %s, body %s)\n",
			err.code, err.message, query ? query : "-",
			body ? body : "-");
	CU_ASSERT_PTR_NOT_NULL_FATAL(m);
	CU_ASSERT_TRUE(protobuf_c_message_check(m));
	return m;
}

static void fails(int route, const char *query, const char *body,
		  const char *code, const char *message)
{
	ProtobufCMessage *m = NULL;
	int rc = decode(route, NULL, 0, query, body, NULL, &m);

	CU_ASSERT_EQUAL(rc, SEO_EINVAL);
	CU_ASSERT_PTR_NULL(m);
	CU_ASSERT_EQUAL(err.http_status, 400);
	CU_ASSERT_STRING_EQUAL(err.code, code);
	CU_ASSERT_STRING_EQUAL(err.message, message);
	if (rc != SEO_EINVAL || strcmp(err.code, code) != 0 ||
	    strcmp(err.message, message) != 0)
		fprintf(stderr, "\n  query %s body %s: got %d %s \"%s\", want %s \"%s\"\n",
			query ? query : "-", body ? body : "-", rc,
			rc ? err.code : "-", rc ? err.message : "-", code, message);
}

/* Like fails(), for messages that quote the JSON parser. */
static void fails_prefix(int route, const char *body, const char *code,
			 const char *prefix)
{
	ProtobufCMessage *m = NULL;

	CU_ASSERT_EQUAL(decode(route, NULL, 0, "", body, NULL, &m), SEO_EINVAL);
	CU_ASSERT_STRING_EQUAL(err.code, code);
	CU_ASSERT_EQUAL(strncmp(err.message, prefix, strlen(prefix)), 0);
	if (strncmp(err.message, prefix, strlen(prefix)) != 0)
		fprintf(stderr, "\n  got \"%s\" want \"%s...\"\n", err.message,
			prefix);
}

static char *dump(const json_t *j)
{
	return json_dumps(j, JSON_COMPACT | JSON_ENCODE_ANY);
}

static void json_is(const json_t *j, const char *want)
{
	char *got = j != NULL ? dump(j) : NULL;

	CU_ASSERT_PTR_NOT_NULL(got);
	if (got != NULL) {
		CU_ASSERT_STRING_EQUAL(got, want);
		if (strcmp(got, want) != 0)
			fprintf(stderr, "\n  got  %s\n  want %s\n", got, want);
	}
	free(got);
}

/* The answer text of msg, loaded back as a tree for the checks; NULL when
 * it could not be written. */
static json_t *encode(const void *msg)
{
	char *text;
	size_t len;
	json_t *j;

	if (gw_json_write_answer(msg, NULL, NULL, 0, &text, &len) != 0)
		return NULL;
	j = json_loadb(text, len, 0, NULL);
	CU_ASSERT_PTR_NOT_NULL(j);
	free(text);
	return j;
}

static void encodes_as(const void *msg, const char *want)
{
	char *got = NULL;
	size_t len;

	CU_ASSERT_EQUAL(gw_json_write_answer(msg, NULL, NULL, 0, &got, &len), 0);
	if (got == NULL)
		return;
	CU_ASSERT_EQUAL(len, strlen(got));
	CU_ASSERT_STRING_EQUAL(got, want);
	if (strcmp(got, want) != 0)
		fprintf(stderr, "\n  got  %s\n  want %s\n", got, want);
	free(got);
}

/* ---- query decoding ------------------------------------------------------ */

static void test_query_defaults_and_clamp(void)
{
	Seo__Account__V1__ListUsageRequest *r;

	r = ok(R_USAGE, "", NULL);
	CU_ASSERT(r->has_limit && r->limit == 50 && r->has_offset && r->offset == 0);
	r = ok(R_USAGE, NULL, NULL);
	CU_ASSERT(r->has_limit && r->limit == 50);
	r = ok(R_USAGE, "limit=10&offset=5", NULL);
	CU_ASSERT(r->limit == 10 && r->offset == 5);
	r = ok(R_USAGE, "limit=1000", NULL);
	CU_ASSERT_EQUAL(r->limit, 200);
	r = ok(R_USAGE, "limit=0", NULL);
	CU_ASSERT_EQUAL(r->limit, 1);
	r = ok(R_USAGE, "limit=-99999999999999999999999", NULL);
	CU_ASSERT_EQUAL(r->limit, 1);
	r = ok(R_USAGE, "limit=99999999999999999999999", NULL);
	CU_ASSERT_EQUAL(r->limit, 200);
	/* Empty values are absent; unknown names and empty pairs ignored. */
	r = ok(R_USAGE, "limit=&offset&&foo=bar&=x", NULL);
	CU_ASSERT(r->limit == 50 && r->offset == 0);
	r = ok(R_USAGE, "limit=%31%30&offset=0007", NULL);
	CU_ASSERT(r->limit == 10 && r->offset == 7);
	r = ok(R_USAGE, "limit=-0", NULL);
	CU_ASSERT_EQUAL(r->limit, 1);
	fails(R_USAGE, "limit=abc", NULL, "invalid_parameter",
	      "limit must be an integer");
	fails(R_USAGE, "limit=1.5", NULL, "invalid_parameter",
	      "limit must be an integer");
	fails(R_USAGE, "limit=+5", NULL, "invalid_parameter",
	      "limit must be an integer");
	fails(R_USAGE, "limit=%205", NULL, "invalid_parameter",
	      "limit must be an integer");
	fails(R_USAGE, "limit=-", NULL, "invalid_parameter",
	      "limit must be an integer");
	fails(R_USAGE, "offset=-1", NULL, "invalid_parameter",
	      "offset must be at least 0");
	fails(R_USAGE, "offset=99999999999999999999", NULL, "invalid_parameter",
	      "offset is out of range");
	fails(R_USAGE, "offset=-99999999999999999999", NULL, "invalid_parameter",
	      "offset must be at least 0");
	fails(R_USAGE, "limit=1&limit=2", NULL, "invalid_parameter",
	      "duplicate parameter: limit");
	fails(R_USAGE, "limit=%zz", NULL, "invalid_parameter",
	      "invalid percent-encoding in parameter: limit");
	fails(R_USAGE, "limit=1%2", NULL, "invalid_parameter",
	      "invalid percent-encoding in parameter: limit");
	fails(R_USAGE, "limit=1%", NULL, "invalid_parameter",
	      "invalid percent-encoding in parameter: limit");
}

static void test_query_strict(void)
{
	Seo__Account__V1__ListUsageRequest *r;
	gw_route none = routes[R_REVOKE];
	gw_kv id = {"id", "k1"};
	ProtobufCMessage *m;

	r = ok(R_STRICT_Q, "limit=5", NULL);
	CU_ASSERT_EQUAL(r->limit, 5);
	fails(R_STRICT_Q, "limit=5&foo=1", NULL, "invalid_parameter",
	      "unknown parameter: foo");
	fails(R_STRICT_Q, "f%20o+o", NULL, "invalid_parameter",
	      "unknown parameter: f o o");
	fails(R_STRICT_Q, "%FF=1", NULL, "invalid_parameter", "unknown parameter");
	fails(R_STRICT_Q, "%zz=1", NULL, "invalid_parameter", "unknown parameter");
	/* Non-strict: an undecodable name is just unknown. */
	ok(R_USAGE, "%zz=1&%FF=2", NULL);

	/* No query input: every parameter is unknown, refused when strict. */
	none.in.strict = 1;
	none.in.strict_code = "invalid_proposal_input";
	CU_ASSERT_EQUAL(gw_json_decode_request(&none, &id, 1, "id=x", NULL, 0,
					       NULL, arena, &m, &err),
			SEO_EINVAL);
	CU_ASSERT_STRING_EQUAL(err.code, "invalid_proposal_input");
	CU_ASSERT_STRING_EQUAL(err.message, "unknown parameter: id");
	CU_ASSERT_EQUAL(gw_json_decode_request(&routes[R_REVOKE], &id, 1, "id=x",
					       NULL, 0, NULL, arena, &m, &err),
			0);
	CU_ASSERT_STRING_EQUAL(((Seo__Account__V1__RevokeKeyRequest *)m)->id, "k1");
}

static void test_query_types(void)
{
	Seo__Test__V1__AllTypes *t;

	/* Defaults: u32 3, flag true, sort importance; nothing else set. */
	t = ok(R_TYPES_Q, "", NULL);
	CU_ASSERT(t->has_u32 && t->u32 == 3);
	CU_ASSERT(t->has_flag && t->flag == 1);
	CU_ASSERT(t->has_sort && t->sort == SEO__TEST__V1__SORT__SORT_IMPORTANCE);
	CU_ASSERT(!t->has_i32 && !t->has_dbl && t->str == NULL && !t->has_raw);
	CU_ASSERT(t->n_tags == 0 && t->tags == NULL);
	CU_ASSERT_EQUAL(t->pick_case, SEO__TEST__V1__ALL_TYPES__PICK__NOT_SET);

	t = ok(R_TYPES_Q,
	       "i32=-5&s32=-2147483648&sf32=2147483647&i64=-9223372036854775808"
	       "&s64=9223372036854775807&sf64=-1&u32=10&f32=4294967295"
	       "&u64=18446744073709551615&f64=0&flt=0.1&dbl=2.5e1&flag=0"
	       "&sort=recent&str=h%C3%A9&raw=aGk%3D&pick_id=7",
	       NULL);
	CU_ASSERT(t->has_i32 && t->i32 == -5);
	CU_ASSERT(t->has_s32 && t->s32 == INT32_MIN);
	CU_ASSERT(t->has_sf32 && t->sf32 == INT32_MAX);
	CU_ASSERT(t->has_i64 && t->i64 == INT64_MIN);
	CU_ASSERT(t->has_s64 && t->s64 == INT64_MAX);
	CU_ASSERT(t->has_sf64 && t->sf64 == -1);
	CU_ASSERT(t->has_u32 && t->u32 == 10);
	CU_ASSERT(t->has_f32 && t->f32 == UINT32_MAX);
	CU_ASSERT(t->has_u64 && t->u64 == UINT64_MAX);
	CU_ASSERT(t->has_f64 && t->f64 == 0);
	CU_ASSERT(t->has_flt && t->flt == 0.1f);
	CU_ASSERT(t->has_dbl && t->dbl == 25.0);
	CU_ASSERT(t->has_flag && t->flag == 0);
	CU_ASSERT(t->has_sort && t->sort == SEO__TEST__V1__SORT__SORT_RECENT);
	CU_ASSERT_STRING_EQUAL(t->str, "h\xc3\xa9");
	CU_ASSERT(t->has_raw && t->raw.len == 2 && memcmp(t->raw.data, "hi", 2) == 0);
	CU_ASSERT(t->pick_case == SEO__TEST__V1__ALL_TYPES__PICK_PICK_ID &&
		  t->pick_id == 7);

	/* Bools: true/false/1/0 only. */
	t = ok(R_TYPES_Q, "flag=true", NULL);
	CU_ASSERT(t->flag == 1);
	t = ok(R_TYPES_Q, "flag=false", NULL);
	CU_ASSERT(t->flag == 0);
	t = ok(R_TYPES_Q, "flag=1", NULL);
	CU_ASSERT(t->flag == 1);
	fails(R_TYPES_Q, "flag=yes", NULL, "invalid_parameter",
	      "flag must be true or false");
	fails(R_TYPES_Q, "flag=TRUE", NULL, "invalid_parameter",
	      "flag must be true or false");

	/* Range without clamp or fallback: the range message. */
	fails(R_TYPES_Q, "i32=6", NULL, "invalid_parameter",
	      "i32 must be between -5 and 5");
	fails(R_TYPES_Q, "i32=-99999999999999999999", NULL, "invalid_parameter",
	      "i32 must be between -5 and 5");
	/* Type bounds without a rule. */
	fails(R_TYPES_Q, "s32=2147483648", NULL, "invalid_parameter",
	      "s32 is out of range");
	fails(R_TYPES_Q, "sf32=-2147483649", NULL, "invalid_parameter",
	      "sf32 is out of range");
	fails(R_TYPES_Q, "i64=9223372036854775808", NULL, "invalid_parameter",
	      "i64 is out of range");
	fails(R_TYPES_Q, "u64=18446744073709551616", NULL, "invalid_parameter",
	      "u64 is out of range");
	fails(R_TYPES_Q, "u64=-1", NULL, "invalid_parameter", "u64 is out of range");
	fails(R_TYPES_Q, "f32=4294967296", NULL, "invalid_parameter",
	      "f32 is out of range");
	t = ok(R_TYPES_Q, "u64=-0", NULL);
	CU_ASSERT(t->has_u64 && t->u64 == 0);

	/* Fallback: invalid or out of range -> the default. */
	t = ok(R_TYPES_Q, "u32=0", NULL);
	CU_ASSERT(t->has_u32 && t->u32 == 3);
	t = ok(R_TYPES_Q, "u32=11", NULL);
	CU_ASSERT_EQUAL(t->u32, 3);
	t = ok(R_TYPES_Q, "u32=x", NULL);
	CU_ASSERT_EQUAL(t->u32, 3);
	t = ok(R_TYPES_Q, "u32=-1", NULL);
	CU_ASSERT_EQUAL(t->u32, 3);
	t = ok(R_TYPES_Q, "u32=99999999999999999999999", NULL);
	CU_ASSERT_EQUAL(t->u32, 3);
	t = ok(R_TYPES_Q, "sort=RECENT", NULL);
	CU_ASSERT_EQUAL(t->sort, SEO__TEST__V1__SORT__SORT_IMPORTANCE);
	t = ok(R_TYPES_Q, "sort=sort_recent", NULL);
	CU_ASSERT_EQUAL(t->sort, SEO__TEST__V1__SORT__SORT_IMPORTANCE);
	t = ok(R_TYPES_Q, "sort=unspecified", NULL);
	CU_ASSERT(t->has_sort && t->sort == SEO__TEST__V1__SORT__SORT_UNSPECIFIED);

	/* Doubles: plain decimal only; clamp to the range. */
	t = ok(R_TYPES_Q, "dbl=1e3", NULL);
	CU_ASSERT_EQUAL(t->dbl, 100.0);
	t = ok(R_TYPES_Q, "dbl=-0.5", NULL);
	CU_ASSERT_EQUAL(t->dbl, 0.0);
	t = ok(R_TYPES_Q, "dbl=1e999", NULL);
	CU_ASSERT_EQUAL(t->dbl, 100.0);
	t = ok(R_TYPES_Q, "dbl=.5", NULL);
	CU_ASSERT_EQUAL(t->dbl, 0.5);
	fails(R_TYPES_Q, "dbl=nan", NULL, "invalid_parameter",
	      "dbl must be a number");
	fails(R_TYPES_Q, "dbl=inf", NULL, "invalid_parameter",
	      "dbl must be a number");
	fails(R_TYPES_Q, "dbl=0x10", NULL, "invalid_parameter",
	      "dbl must be a number");
	fails(R_TYPES_Q, "dbl=+1+", NULL, "invalid_parameter",
	      "dbl must be a number");
	fails(R_TYPES_Q, "dbl=1e", NULL, "invalid_parameter",
	      "dbl must be a number");
	fails(R_TYPES_Q, "dbl=1%002", NULL, "invalid_parameter",
	      "dbl must be a number");
	fails(R_TYPES_Q, "flt=1e39", NULL, "invalid_parameter",
	      "flt is out of range");
	fails(R_TYPES_Q, "flt=1e999", NULL, "invalid_parameter",
	      "flt is out of range");

	/* Enums without a rule. */
	t = ok(R_TYPES_Q, "sorts=importance,recent&sorts=unspecified", NULL);
	CU_ASSERT(t->n_sorts == 3 && t->sorts[0] == 1 && t->sorts[1] == 2 &&
		  t->sorts[2] == 0);
	fails(R_TYPES_Q, "sorts=importance,bad", NULL, "invalid_parameter",
	      "sorts must be one of: unspecified, importance, recent");

	/* Repeated: commas and repeated keys; %2C stays in an item; empty
	 * items skipped; '+' is a space. */
	t = ok(R_TYPES_Q, "tags=a,b&tags=c", NULL);
	CU_ASSERT(t->n_tags == 3 && strcmp(t->tags[0], "a") == 0 &&
		  strcmp(t->tags[1], "b") == 0 && strcmp(t->tags[2], "c") == 0);
	t = ok(R_TYPES_Q, "tags=a%2Cb,,+x+,", NULL);
	CU_ASSERT(t->n_tags == 2 && strcmp(t->tags[0], "a,b") == 0 &&
		  strcmp(t->tags[1], " x ") == 0);
	t = ok(R_TYPES_Q, "nums=1,-2,3&reals=1.5,2&flags=1,false&blobs=aGk=,",
	       NULL);
	CU_ASSERT(t->n_nums == 3 && t->nums[0] == 1 && t->nums[1] == -2 &&
		  t->nums[2] == 3);
	CU_ASSERT(t->n_reals == 2 && t->reals[0] == 1.5 && t->reals[1] == 2.0);
	CU_ASSERT(t->n_flags == 2 && t->flags[0] == 1 && t->flags[1] == 0);
	CU_ASSERT(t->n_blobs == 1 && t->blobs[0].len == 2);
	/* Items past the count rule carry the rule's code. */
	fails(R_TYPES_Q, "tags=a,b,c,d", NULL, "invalid_domain",
	      "tags must have between 1 and 3 items");
	fails(R_TYPES_Q, "tags=a&tags=b&tags=c&tags=d", NULL, "invalid_domain",
	      "tags must have between 1 and 3 items");
	fails(R_TYPES_Q, "tags=%FF", NULL, "invalid_domain",
	      "tags must be valid utf-8");
	fails(R_TYPES_Q, "tags=a,%zz", NULL, "invalid_domain",
	      "invalid percent-encoding in parameter: tags");
	fails(R_TYPES_Q, "nums=1,x", NULL, "invalid_parameter",
	      "nums must be an integer");

	/* Strings: UTF-8 checked, NUL refused, length rule in characters. */
	t = ok(R_TYPES_Q, "str=%E2%82%AC%F0%9F%98%80", NULL);
	CU_ASSERT_STRING_EQUAL(t->str, "\xe2\x82\xac\xf0\x9f\x98\x80");
	fails(R_TYPES_Q, "str=%FF%FF", NULL, "invalid_parameter",
	      "str must be valid utf-8");
	fails(R_TYPES_Q, "str=a%00b", NULL, "invalid_parameter",
	      "str must be valid utf-8");
	fails(R_TYPES_Q, "str=%C0%80", NULL, "invalid_parameter",
	      "str must be valid utf-8");
	fails(R_TYPES_Q, "str=%ED%A0%80x", NULL, "invalid_parameter",
	      "str must be valid utf-8");
	fails(R_TYPES_Q, "str=%F4%90%80%80", NULL, "invalid_parameter",
	      "str must be valid utf-8");
	fails(R_TYPES_Q, "str=%E2%82", NULL, "invalid_parameter",
	      "str must be valid utf-8");
	fails(R_TYPES_Q, "str=%C3%28", NULL, "invalid_parameter",
	      "str must be valid utf-8");
	fails(R_TYPES_Q, "str=a", NULL, "invalid_parameter",
	      "str must be between 2 and 4 characters long");
	fails(R_TYPES_Q, "str=abcde", NULL, "invalid_parameter",
	      "str must be between 2 and 4 characters long");

	/* Bytes: padded standard base64, length rule in bytes. */
	t = ok(R_TYPES_Q, "raw=%2F%2B8%3D", NULL);
	CU_ASSERT(t->raw.len == 2 && t->raw.data[0] == 0xff && t->raw.data[1] == 0xef);
	fails(R_TYPES_Q, "raw=abc", NULL, "invalid_parameter",
	      "raw must be a base64 string");
	fails(R_TYPES_Q, "raw=ab*d", NULL, "invalid_parameter",
	      "raw must be a base64 string");
	fails(R_TYPES_Q, "raw=a===", NULL, "invalid_parameter",
	      "raw must be a base64 string");
	fails(R_TYPES_Q, "raw=aGVsbG8%3D", NULL, "invalid_parameter",
	      "raw must be between 0 and 3 bytes long");

	/* A oneof takes one member. */
	fails(R_TYPES_Q, "pick_name=x&pick_id=1", NULL, "invalid_parameter",
	      "pick_id cannot be given together with pick_name");
	/* Message fields cannot come from a query: ignored like unknowns. */
	t = ok(R_TYPES_Q, "inner=1&items=2", NULL);
	CU_ASSERT(t->inner == NULL && t->n_items == 0);
}

/* ---- JSON bodies ---------------------------------------------------------- */

static void test_json_checkout(void)
{
	Seo__Account__V1__CheckoutRequest *c;

	c = ok(R_CHECKOUT, "", "{\"credits\": 100}");
	CU_ASSERT_EQUAL(c->credits, 100);
	c = ok(R_CHECKOUT, "", "{\"credits\": 1e3, \"unknown\": [1]}");
	CU_ASSERT_EQUAL(c->credits, 1000);
	c = ok(R_CHECKOUT, "", "{\"credits\": 250.0}");
	CU_ASSERT_EQUAL(c->credits, 250);
	/* Query parameters apply to JSON routes too. */
	c = ok(R_CHECKOUT, "credits=200", "");
	CU_ASSERT_EQUAL(c->credits, 200);
	c = ok(R_CHECKOUT, "credits=300", NULL);
	CU_ASSERT_EQUAL(c->credits, 300);

	fails(R_CHECKOUT, "", "{\"credits\": 99}", "invalid_credits",
	      "credits must be at least 100");
	fails(R_CHECKOUT, "", "{\"credits\": -5}", "invalid_credits",
	      "credits must be at least 100");
	fails(R_CHECKOUT, "", "{\"credits\": \"abc\"}", "invalid_credits",
	      "credits must be an integer");
	fails(R_CHECKOUT, "", "{\"credits\": \"500\"}", "invalid_credits",
	      "credits must be an integer");
	fails(R_CHECKOUT, "", "{\"credits\": 100.5}", "invalid_credits",
	      "credits must be an integer");
	fails(R_CHECKOUT, "", "{\"credits\": true}", "invalid_credits",
	      "credits must be an integer");
	fails(R_CHECKOUT, "", "{\"credits\": [100]}", "invalid_credits",
	      "credits must be an integer");
	fails(R_CHECKOUT, "", "{\"credits\": 1e300}", "invalid_credits",
	      "credits is out of range");
	fails(R_CHECKOUT, "", "{}", "invalid_credits", "missing parameter: credits");
	fails(R_CHECKOUT, "", "", "invalid_credits", "missing parameter: credits");
	fails(R_CHECKOUT, "", "{\"credits\": null}", "invalid_credits",
	      "missing parameter: credits");
	fails(R_CHECKOUT, "credits=abc", "", "invalid_credits",
	      "credits must be an integer");
	fails(R_CHECKOUT, "credits=200", "{\"credits\": 300}", "invalid_credits",
	      "duplicate parameter: credits");
	fails(R_CHECKOUT, "", "[1]", "invalid_json", "body must be a json object");
	fails_prefix(R_CHECKOUT, "\"x\"", "invalid_json",
		     "body is not valid json (line 1, column ");
	fails_prefix(R_CHECKOUT, "{\"credits\": 100", "invalid_json",
		     "body is not valid json (line 1, column ");
	fails_prefix(R_CHECKOUT, "{\"credits\": 100,\n \"credits\": 200}",
		     "invalid_json", "body is not valid json (line 2, column ");
	fails_prefix(R_CHECKOUT, "{\"credits\": 100}x", "invalid_json",
		     "body is not valid json (line 1, column ");
	fails_prefix(R_CHECKOUT, "{\"a\": \"\\u0000\"}", "invalid_json",
		     "body is not valid json (line 1, column ");
	fails_prefix(R_CHECKOUT, "{\"credits\": 99999999999999999999}",
		     "invalid_json", "body is not valid json (line 1, column ");
	fails_prefix(R_CHECKOUT, "{\"a\": \"\xff\"}", "invalid_json",
		     "body is not valid json (line 1, column ");
	CU_ASSERT_EQUAL(err.http_status, 400);
}

/* A route naming the code of a body that is not a JSON object. */
static void test_json_body_code(void)
{
	gw_route r = routes[R_CHECKOUT];
	ProtobufCMessage *m;
	static const char *const bodies[] = {"[1]", "\"x\"", "{\"credits\": 1"};

	r.in.body_code = "invalid_activity_input";
	for (size_t i = 0; i < sizeof(bodies) / sizeof(bodies[0]); i++) {
		CU_ASSERT_EQUAL(gw_json_decode_request(&r, NULL, 0, "", bodies[i],
						       strlen(bodies[i]), NULL,
						       arena, &m, &err),
				SEO_EINVAL);
		CU_ASSERT_STRING_EQUAL(err.code, "invalid_activity_input");
		CU_ASSERT_EQUAL(err.http_status, 400);
	}
	/* Other faults keep their codes. */
	CU_ASSERT_EQUAL(gw_json_decode_request(&r, NULL, 0, "", "{}", 2, NULL,
					       arena, &m, &err),
			SEO_EINVAL);
	CU_ASSERT_STRING_EQUAL(err.code, "invalid_credits");
}

static void test_json_types(void)
{
	Seo__Test__V1__AllTypes *t;
	Seo__Test__V1__Required *q;
	Seo__Account__V1__CreateKeyRequest *k;
	gw_kv name = {"name", "p%2Fq+r"};
	ProtobufCMessage *m;

	k = ok(R_CREATE_KEY, "", "{\"name\": \"ci\"}");
	CU_ASSERT_STRING_EQUAL(k->name, "ci");
	k = ok(R_CREATE_KEY, "", "");
	CU_ASSERT_PTR_NULL(k->name);
	k = ok(R_CREATE_KEY, "", "{\"name\": null, \"other\": 1}");
	CU_ASSERT_PTR_NULL(k->name);
	fails(R_CREATE_KEY, "", "{\"name\": 5}", "invalid_parameter",
	      "name must be a string");

	t = ok(R_TYPES_J, "",
	       "{\"i32\": -5, \"s32\": 2.0, \"u64\": 9223372036854775807,"
	       " \"flt\": 0.5, \"dbl\": 5, \"flag\": false, \"sort\": \"recent\","
	       " \"str\": \"h\\u00e9\", \"raw\": \"aGk=\","
	       " \"inner\": {\"n\": 4, \"label\": \"in\"},"
	       " \"nums\": [1, 2], \"tags\": [\"a\"],"
	       " \"items\": [{\"n\": 1}, {\"n\": 2, \"label\": null}],"
	       " \"sorts\": [\"recent\"], \"reals\": [1, 2.5],"
	       " \"flags\": [true], \"blobs\": [\"\", \"/w==\"],"
	       " \"pick_name\": \"pn\","
	       " \"node\": {\"name\": \"a\", \"child\": {\"name\": \"b\"}}}");
	CU_ASSERT(t->has_i32 && t->i32 == -5 && t->has_s32 && t->s32 == 2);
	CU_ASSERT(t->has_u64 && t->u64 == INT64_MAX);
	CU_ASSERT(t->has_flt && t->flt == 0.5f && t->has_dbl && t->dbl == 5.0);
	CU_ASSERT(t->has_flag && t->flag == 0);
	CU_ASSERT(t->has_sort && t->sort == SEO__TEST__V1__SORT__SORT_RECENT);
	CU_ASSERT_STRING_EQUAL(t->str, "h\xc3\xa9");
	CU_ASSERT(t->has_raw && t->raw.len == 2);
	CU_ASSERT(t->inner != NULL && t->inner->n == 4 &&
		  strcmp(t->inner->label, "in") == 0);
	CU_ASSERT(t->n_nums == 2 && t->nums[1] == 2);
	CU_ASSERT(t->n_items == 2 && t->items[1]->n == 2 &&
		  t->items[1]->label == NULL);
	CU_ASSERT(t->n_sorts == 1 && t->sorts[0] == 2);
	CU_ASSERT(t->n_reals == 2 && t->reals[0] == 1.0 && t->reals[1] == 2.5);
	CU_ASSERT(t->n_blobs == 2 && t->blobs[0].len == 0 && t->blobs[1].len == 1 &&
		  t->blobs[1].data[0] == 0xff);
	CU_ASSERT(t->pick_case == SEO__TEST__V1__ALL_TYPES__PICK_PICK_NAME &&
		  strcmp(t->pick_name, "pn") == 0);
	CU_ASSERT(t->node != NULL && strcmp(t->node->child->name, "b") == 0 &&
		  t->node->child->child == NULL);
	/* The rules' defaults still apply. */
	CU_ASSERT(t->has_u32 && t->u32 == 3);

	/* Rules on JSON values. */
	t = ok(R_TYPES_J, "", "{\"u32\": \"x\", \"dbl\": 1000, \"sort\": 7}");
	CU_ASSERT(t->u32 == 3 && t->dbl == 100.0 && t->sort == 1);
	t = ok(R_TYPES_J, "", "{\"u32\": 11, \"dbl\": -3, \"sort\": \"RECENT\"}");
	CU_ASSERT(t->u32 == 3 && t->dbl == 0.0 && t->sort == 1);
	t = ok(R_TYPES_J, "", "{\"u32\": 4.0, \"s32\": -0.0}");
	CU_ASSERT(t->u32 == 4 && t->has_s32 && t->s32 == 0);
	fails(R_TYPES_J, "", "{\"i32\": 6}", "invalid_parameter",
	      "i32 must be between -5 and 5");
	fails(R_TYPES_J, "", "{\"i32\": -1e300}", "invalid_parameter",
	      "i32 must be between -5 and 5");
	fails(R_TYPES_J, "", "{\"i32\": 2.5}", "invalid_parameter",
	      "i32 must be an integer");
	fails(R_TYPES_J, "", "{\"s32\": 2147483648}", "invalid_parameter",
	      "s32 is out of range");
	fails(R_TYPES_J, "", "{\"u64\": -1}", "invalid_parameter",
	      "u64 is out of range");
	fails(R_TYPES_J, "", "{\"u64\": 1.8446744073709552e19}",
	      "invalid_parameter", "u64 is out of range");
	fails(R_TYPES_J, "", "{\"flt\": 1e300}", "invalid_parameter",
	      "flt is out of range");
	fails(R_TYPES_J, "", "{\"dbl\": \"1\"}", "invalid_parameter",
	      "dbl must be a number");
	fails(R_TYPES_J, "", "{\"flag\": \"true\"}", "invalid_parameter",
	      "flag must be true or false");
	fails(R_TYPES_J, "", "{\"flag\": 1}", "invalid_parameter",
	      "flag must be true or false");
	fails(R_TYPES_J, "", "{\"sorts\": [2]}", "invalid_parameter",
	      "sorts[0] must be one of: unspecified, importance, recent");
	fails(R_TYPES_J, "", "{\"str\": \"a\"}", "invalid_parameter",
	      "str must be between 2 and 4 characters long");
	fails(R_TYPES_J, "", "{\"raw\": \"!!!!\"}", "invalid_parameter",
	      "raw must be a base64 string");
	fails(R_TYPES_J, "", "{\"raw\": 5}", "invalid_parameter",
	      "raw must be a base64 string");
	fails(R_TYPES_J, "", "{\"inner\": 5}", "invalid_parameter",
	      "inner must be an object");
	fails(R_TYPES_J, "", "{\"inner\": {}}", "invalid_parameter",
	      "missing parameter: inner.n");
	fails(R_TYPES_J, "", "{\"inner\": {\"n\": \"x\"}}", "invalid_parameter",
	      "inner.n must be an integer");
	fails(R_TYPES_J, "", "{\"items\": [{\"n\": 1}, {\"label\": \"x\"}]}",
	      "invalid_parameter", "missing parameter: items[1].n");
	fails(R_TYPES_J, "", "{\"items\": [null]}", "invalid_parameter",
	      "items[0] must be an object");
	fails(R_TYPES_J, "", "{\"node\": {\"name\": \"a\", \"child\": {\"name\": 1}}}",
	      "invalid_parameter", "node.child.name must be a string");
	fails(R_TYPES_J, "", "{\"nums\": [1, \"a\"]}", "invalid_parameter",
	      "nums[1] must be an integer");
	fails(R_TYPES_J, "", "{\"nums\": 5}", "invalid_parameter",
	      "nums must be an array");
	/* Elements and the count rule carry the rule's code. */
	fails(R_TYPES_J, "", "{\"tags\": [\"a\", null]}", "invalid_domain",
	      "tags[1] must be a string");
	fails(R_TYPES_J, "", "{\"tags\": \"a\"}", "invalid_domain",
	      "tags must be an array");
	fails(R_TYPES_J, "", "{\"tags\": []}", "invalid_domain",
	      "tags must have between 1 and 3 items");
	fails(R_TYPES_J, "", "{\"tags\": [\"a\",\"b\",\"c\",\"d\"]}",
	      "invalid_domain", "tags must have between 1 and 3 items");
	/* Strict routes refuse unknown fields, nested ones too, and unknown
	 * query parameters, with the route's code. */
	fails(R_TYPES_J, "", "{\"bogus\": 1}", "invalid_proposal_input",
	      "unknown field: bogus");
	fails(R_TYPES_J, "", "{\"bogus\": null}", "invalid_proposal_input",
	      "unknown field: bogus");
	fails(R_TYPES_J, "", "{\"inner\": {\"n\": 1, \"zzz\": 2}}",
	      "invalid_proposal_input", "unknown field: inner.zzz");
	fails(R_TYPES_J, "", "{\"items\": [{\"n\": 1, \"\\u00e9\": 2}]}",
	      "invalid_proposal_input", "unknown field: items[0].\xc3\xa9");
	fails(R_TYPES_J, "x=1", "{}", "invalid_proposal_input",
	      "unknown parameter: x");
	fails(R_TYPES_J, "", "{\"pick_name\": \"a\", \"pick_id\": 1}",
	      "invalid_parameter", "pick_id cannot be given together with pick_name");

	/* "Always" fields (a [default] in the .proto), nested ones named by
	 * their path; a message field may be left out. */
	fails(R_REQUIRED, "", "{}", "invalid_parameter", "missing parameter: domain");
	q = ok(R_REQUIRED, "", "{\"domain\": \"d\", \"count\": 1, \"sort\": \"recent\"}");
	CU_ASSERT(q->inner == NULL);
	fails(R_REQUIRED, "", "{\"domain\": \"d\", \"count\": 1, \"sort\": \"recent\","
	      " \"inner\": {}}", "invalid_parameter", "missing parameter: inner.n");
	q = ok(R_REQUIRED, "", "{\"domain\": \"\", \"count\": 0, \"sort\": \"unspecified\","
	       " \"inner\": {\"n\": 0}}");
	CU_ASSERT(q->domain != NULL && q->domain[0] == '\0' && q->inner->n == 0);

	/* Path parameters fill fields of the same name, percent-decoded;
	 * the body may not repeat them. */
	memset(&err, 0, sizeof(err));
	CU_ASSERT_EQUAL(gw_json_decode_request(&routes[R_NODE], &name, 1, "",
					       "{\"child\": {\"name\": \"c\"}}",
					       strlen("{\"child\": {\"name\": \"c\"}}"),
					       NULL, arena, &m, &err),
			0);
	CU_ASSERT_STRING_EQUAL(((Seo__Test__V1__Node *)m)->name, "p/q+r");
	CU_ASSERT_STRING_EQUAL(((Seo__Test__V1__Node *)m)->child->name, "c");
	CU_ASSERT_EQUAL(gw_json_decode_request(&routes[R_NODE], &name, 1, "",
					       "{\"name\": \"x\"}",
					       strlen("{\"name\": \"x\"}"), NULL,
					       arena, &m, &err),
			SEO_EINVAL);
	CU_ASSERT_STRING_EQUAL(err.message, "duplicate parameter: name");
}

static void test_path_and_raw(void)
{
	Seo__Account__V1__PaymentWebhookRequest *w;
	Seo__Account__V1__RevokeKeyRequest *r;
	ProtobufCMessage *m = NULL;
	gw_kv id[] = {{"id", "abc%20d"}, {"unused", "x"}};
	gw_kv bad = {"id", "a%zz"}, empty = {"id", ""}, notutf = {"id", "%FF"};
	const char *body = "{\"id\": \"evt_1\", \"n\": 1}";

	CU_ASSERT_EQUAL(decode(R_REVOKE, id, 2, "id=ignored", "{\"id\": 1}", NULL,
			       &m), 0);
	r = (Seo__Account__V1__RevokeKeyRequest *)m;
	CU_ASSERT_STRING_EQUAL(r->id, "abc d");
	CU_ASSERT_EQUAL(decode(R_REVOKE, &bad, 1, "", NULL, NULL, &m), SEO_EINVAL);
	CU_ASSERT_STRING_EQUAL(err.message,
			       "invalid percent-encoding in parameter: id");
	CU_ASSERT_EQUAL(decode(R_REVOKE, &notutf, 1, "", NULL, NULL, &m),
			SEO_EINVAL);
	CU_ASSERT_STRING_EQUAL(err.message, "id must be valid utf-8");
	CU_ASSERT_EQUAL(decode(R_REVOKE, &empty, 1, "", NULL, NULL, &m), SEO_EINVAL);
	CU_ASSERT_STRING_EQUAL(err.message, "missing parameter: id");
	CU_ASSERT_EQUAL(decode(R_REVOKE, NULL, 0, "", NULL, NULL, &m), SEO_EINVAL);
	CU_ASSERT_STRING_EQUAL(err.code, "invalid_parameter");
	CU_ASSERT_STRING_EQUAL(err.message, "missing parameter: id");

	/* Raw: the exact bytes and the signature; the query is not input. */
	CU_ASSERT_EQUAL(decode(R_WEBHOOK, NULL, 0, "payload=x", body, "t=1,v1=ab",
			       &m), 0);
	w = (Seo__Account__V1__PaymentWebhookRequest *)m;
	CU_ASSERT(w->payload.len == strlen(body) &&
		  memcmp(w->payload.data, body, strlen(body)) == 0);
	CU_ASSERT_STRING_EQUAL(w->signature, "t=1,v1=ab");
	CU_ASSERT_TRUE(protobuf_c_message_check(m));
	CU_ASSERT_EQUAL(decode(R_WEBHOOK, NULL, 0, "", "not json at all", "s", &m), 0);
	CU_ASSERT_EQUAL(decode(R_WEBHOOK, NULL, 0, "", body, NULL, &m), SEO_EINVAL);
	CU_ASSERT_STRING_EQUAL(err.code, "invalid_signature");
	CU_ASSERT_STRING_EQUAL(err.message, "missing parameter: signature");
	CU_ASSERT_EQUAL(decode(R_WEBHOOK, NULL, 0, "", body, "", &m), SEO_EINVAL);
	CU_ASSERT_STRING_EQUAL(err.code, "invalid_signature");
	CU_ASSERT_EQUAL(decode(R_WEBHOOK, NULL, 0, "", body, "\xff", &m), SEO_EINVAL);
	CU_ASSERT_STRING_EQUAL(err.code, "invalid_signature");
	CU_ASSERT_STRING_EQUAL(err.message, "signature must be valid utf-8");
	CU_ASSERT_EQUAL(decode(R_WEBHOOK, NULL, 0, "", "", "sig", &m), SEO_EINVAL);
	CU_ASSERT_STRING_EQUAL(err.code, "invalid_parameter");
	CU_ASSERT_STRING_EQUAL(err.message, "missing parameter: payload");

	/* No input at all: an Empty message; no descriptor: no message. */
	CU_ASSERT_EQUAL(decode(R_ME, NULL, 0, "x=1", "junk", NULL, &m), 0);
	CU_ASSERT_PTR_EQUAL(m->descriptor, ACCT(empty));
	{
		gw_route none = routes[R_ME];
		none.in.message = NULL;
		m = (ProtobufCMessage *)1;
		CU_ASSERT_EQUAL(gw_json_decode_request(&none, NULL, 0, "", NULL, 0,
						       NULL, arena, &m, &err), 0);
		CU_ASSERT_PTR_NULL(m);
	}
}

static void test_error_message_cut(void)
{
	/* A long unknown name: the message is cut, at a character boundary
	 * (78 whole euro signs fit after "unknown parameter: "). */
	char query[1024], want[256];
	size_t i, o = 0, w;

	for (i = 0; i < 100; i++)
		o += (size_t)snprintf(query + o, sizeof(query) - o, "%%E2%%82%%AC");
	snprintf(query + o, sizeof(query) - o, "=1");
	w = (size_t)snprintf(want, sizeof(want), "unknown parameter: ");
	for (i = 0; i < 78; i++)
		w += (size_t)snprintf(want + w, sizeof(want) - w, "\xe2\x82\xac");
	fails(R_STRICT_Q, query, NULL, "invalid_parameter", want);
	CU_ASSERT_EQUAL(strlen(err.message), 19 + 3 * 78);
}

static void test_rule_messages(void)
{
	static const gw_param_rule open_ends[] = {
		{.name = "tags", .flags = GW_P_RANGE, .min = 1, .max = LLONG_MAX},
		{.name = "str", .flags = GW_P_RANGE, .min = 0, .max = 1},
		{.name = "raw", .flags = GW_P_RANGE, .min = 2, .max = LLONG_MAX},
		{.name = "i32", .flags = GW_P_RANGE, .min = LLONG_MIN, .max = 1},
		{.name = "nums", .flags = GW_P_RANGE, .min = LLONG_MIN, .max = 1},
		{.name = "s32", .flags = GW_P_RANGE | GW_P_CLAMP, .min = 0,
		 .max = LLONG_MAX},
		{.name = "dbl", .flags = GW_P_RANGE, .min = 0, .max = LLONG_MAX},
	};
	gw_route r = routes[R_TYPES_J];
	ProtobufCMessage *m;
	struct {
		const char *body, *message;
	} cases[] = {
		{"{\"tags\": []}", "tags must have at least 1 item"},
		{"{\"str\": \"ab\"}", "str must be between 0 and 1 characters long"},
		{"{\"raw\": \"aA==\"}", "raw must be at least 2 bytes long"},
		{"{\"i32\": 2}", "i32 must be at most 1"},
		{"{\"i32\": -1e300}", "i32 is out of range"},
		{"{\"nums\": [1, 2]}", "nums must have at most 1 item"},
		{"{\"dbl\": -1}", "dbl must be at least 0"},
	};
	size_t i;

	r.in.params = open_ends;
	r.in.n_params = sizeof(open_ends) / sizeof(open_ends[0]);
	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		memset(&err, 0, sizeof(err));
		CU_ASSERT_EQUAL(gw_json_decode_request(&r, NULL, 0, "", cases[i].body,
						       strlen(cases[i].body), NULL,
						       arena, &m, &err),
				SEO_EINVAL);
		CU_ASSERT_STRING_EQUAL(err.message, cases[i].message);
	}
	/* Fallback without a range: past the type, or the wrong type. */
	{
		static const gw_param_rule fb[] = {
			{.name = "sf32", .flags = GW_P_FALLBACK | GW_P_DEFAULT,
			 .dflt = 7},
			{.name = "flt", .flags = GW_P_FALLBACK | GW_P_DEFAULT,
			 .dflt = 1},
			{.name = "dbl", .flags = GW_P_RANGE | GW_P_FALLBACK |
			 GW_P_DEFAULT, .min = 0, .max = 10, .dflt = 5},
		};
		gw_route f = routes[R_TYPES_J];
		Seo__Test__V1__AllTypes *t;
		const char *body = "{\"sf32\": 1e20, \"flt\": 1e300, \"dbl\": 11}";

		f.in.params = fb;
		f.in.n_params = 3;
		m = NULL;
		CU_ASSERT_EQUAL(gw_json_decode_request(&f, NULL, 0, "", body,
						       strlen(body), NULL, arena,
						       &m, &err), 0);
		CU_ASSERT_PTR_NOT_NULL_FATAL(m);
		t = (Seo__Test__V1__AllTypes *)m;
		CU_ASSERT(t->sf32 == 7 && t->flt == 1.0f && t->dbl == 5.0);
		body = "{\"sf32\": \"x\", \"flt\": \"y\"}";
		CU_ASSERT_EQUAL(gw_json_decode_request(&f, NULL, 0, "", body,
						       strlen(body), NULL, arena,
						       &m, &err), 0);
		t = (Seo__Test__V1__AllTypes *)m;
		CU_ASSERT(t->sf32 == 7 && t->flt == 1.0f && t->has_dbl &&
			  t->dbl == 5.0);
		/* Without clamp or fallback, a double range is an error. */
		f.in.params = &types_rules[0];
		f.in.n_params = 0;
		r.in.params = (const gw_param_rule[]){
			{.name = "dbl", .flags = GW_P_RANGE, .min = 0, .max = 10}};
		r.in.n_params = 1;
		body = "{\"dbl\": 10.5}";
		CU_ASSERT_EQUAL(gw_json_decode_request(&r, NULL, 0, "", body,
						       strlen(body), NULL, arena,
						       &m, &err), SEO_EINVAL);
		CU_ASSERT_STRING_EQUAL(err.message, "dbl must be between 0 and 10");
		r.in.params = open_ends;
		r.in.n_params = sizeof(open_ends) / sizeof(open_ends[0]);
	}

	/* Clamped at the open end's type bound. */
	m = NULL;
	CU_ASSERT_EQUAL(gw_json_decode_request(&r, NULL, 0, "", "{\"s32\": -4}",
					       strlen("{\"s32\": -4}"), NULL,
					       arena, &m, &err), 0);
	CU_ASSERT_PTR_NOT_NULL_FATAL(m);
	CU_ASSERT_EQUAL(((Seo__Test__V1__AllTypes *)m)->s32, 0);
	/* Past an open end, a double is only bound by its type. */
	CU_ASSERT_EQUAL(gw_json_decode_request(&r, NULL, 0, "", "{\"dbl\": 1e300}",
					       strlen("{\"dbl\": 1e300}"), NULL,
					       arena, &m, &err), 0);
	CU_ASSERT_EQUAL(((Seo__Test__V1__AllTypes *)m)->dbl, 1e300);
}

/* ---- encoding ------------------------------------------------------------ */

static void test_encode_account(void)
{
	Seo__Account__V1__User u = SEO__ACCOUNT__V1__USER__INIT;
	Seo__Account__V1__ListKeysResponse lk = SEO__ACCOUNT__V1__LIST_KEYS_RESPONSE__INIT;
	Seo__Account__V1__ApiKey k1 = SEO__ACCOUNT__V1__API_KEY__INIT, *keys[1];
	Seo__Account__V1__AuthorizeResponse ar = SEO__ACCOUNT__V1__AUTHORIZE_RESPONSE__INIT;
	Seo__Account__V1__PriceTier t1 = SEO__ACCOUNT__V1__PRICE_TIER__INIT, t2 = t1,
				    t3 = t1, *tiers[3] = {&t1, &t2, &t3};
	Seo__Account__V1__PricingResponse pr = SEO__ACCOUNT__V1__PRICING_RESPONSE__INIT;
	Seo__Account__V1__PaymentWebhookRequest pw =
		SEO__ACCOUNT__V1__PAYMENT_WEBHOOK_REQUEST__INIT;
	Seo__Account__V1__Success ok_ = SEO__ACCOUNT__V1__SUCCESS__INIT;

	/* "Always" strings left unset read "", unset optionals null. */
	encodes_as(&u, "{\"id\":\"\",\"email\":null,\"credits\":null,\"created_at\":0}");
	u.id = "u1";
	u.email = "a@b.c";
	u.has_credits = 1;
	u.credits = 0;
	u.created_at = 1700000000000;
	encodes_as(&u, "{\"id\":\"u1\",\"email\":\"a@b.c\",\"credits\":0,"
		       "\"created_at\":1700000000000}");

	encodes_as(&lk, "{\"keys\":[]}");
	k1.id = "h";
	k1.name = "Default";
	k1.last_four = "abcd";
	keys[0] = &k1;
	lk.keys = keys;
	lk.n_keys = 1;
	encodes_as(&lk, "{\"keys\":[{\"id\":\"h\",\"name\":\"Default\","
			"\"last_four\":\"abcd\",\"created_at\":0}]}");

	/* A message left NULL, not nullable, is left out. */
	encodes_as(&ar, "{\"workspace_id\":\"\",\"user_id\":\"\",\"key_id\":\"\","
			"\"role\":\"\",\"charge_id\":\"\",\"credits_remaining\":0}");

	/* Doubles that are not finite are null. */
	t1.min = 100;
	t1.price_per_credit = 0.01;
	t2.price_per_credit = NAN;
	t3.price_per_credit = -INFINITY;
	pr.tiers = tiers;
	pr.n_tiers = 3;
	encodes_as(&pr, "{\"tiers\":[{\"min\":100,\"price_per_credit\":0.01},"
			"{\"min\":0,\"price_per_credit\":null},"
			"{\"min\":0,\"price_per_credit\":null}]}");

	/* Bytes are base64. */
	encodes_as(&pw, "{\"payload\":\"\",\"signature\":\"\"}");
	pw.payload.data = (uint8_t *)"\x00\x01\xfe\xff";
	pw.payload.len = 4;
	encodes_as(&pw, "{\"payload\":\"AAH+/w==\",\"signature\":\"\"}");
	pw.payload.len = 5;
	pw.payload.data = (uint8_t *)"hello";
	encodes_as(&pw, "{\"payload\":\"aGVsbG8=\",\"signature\":\"\"}");

	ok_.success = 1;
	encodes_as(&ok_, "{\"success\":true}");
}

/* An answer with a field hidden and the envelope's members after the
 * message's own. */
static void test_answer_envelope(void)
{
	Seo__Account__V1__User u = SEO__ACCOUNT__V1__USER__INIT;
	Seo__Account__V1__Success ok_ = SEO__ACCOUNT__V1__SUCCESS__INIT;
	const gw_json_member env[] = {{"credits_used", 3},
				      {"credits_remaining", LLONG_MIN}};
	char *text;
	size_t len;

	u.id = "u\"1";
	u.created_at = -1;
	CU_ASSERT_EQUAL_FATAL(gw_json_write_answer(&u.base, "email", env, 2,
						   &text, &len), 0);
	CU_ASSERT_STRING_EQUAL(text, "{\"id\":\"u\\\"1\",\"credits\":null,"
			       "\"created_at\":-1,\"credits_used\":3,"
			       "\"credits_remaining\":-9223372036854775808}");
	CU_ASSERT_EQUAL(len, strlen(text));
	free(text);
	/* nothing left of the message but the envelope */
	CU_ASSERT_EQUAL_FATAL(gw_json_write_answer(&ok_.base, "success", env, 1,
						   &text, &len), 0);
	CU_ASSERT_STRING_EQUAL(text, "{\"credits_used\":3}");
	free(text);
	CU_ASSERT_EQUAL_FATAL(gw_json_write_answer(&ok_.base, "success", NULL, 0,
						   &text, &len), 0);
	CU_ASSERT_STRING_EQUAL(text, "{}");
	free(text);
}

static void test_encode_types(void)
{
	Seo__Test__V1__AllTypes t = SEO__TEST__V1__ALL_TYPES__INIT;
	Seo__Test__V1__Inner in = SEO__TEST__V1__INNER__INIT, it = in, *items[1];
	Seo__Test__V1__Node n1 = SEO__TEST__V1__NODE__INIT, n2 = n1;
	int64_t nums[2] = {1, -2};
	char *tags[1] = {"a"};
	Seo__Test__V1__Sort sorts[2] = {SEO__TEST__V1__SORT__SORT_IMPORTANCE, 7};
	double reals[2] = {NAN, 1.5};
	protobuf_c_boolean flags[2] = {1, 0};
	ProtobufCBinaryData blobs[2] = {{0, NULL}, {1, (uint8_t *)"\xff"}};
	json_t *j;

	/* No field of the test messages is nullable: unset ones are left
	 * out. */
	encodes_as(&t,
		   "{\"nums\":[],\"tags\":[],\"items\":[],"
		   "\"sorts\":[],\"reals\":[],\"flags\":[],\"blobs\":[]}");

	t.has_i32 = t.has_s32 = t.has_sf32 = t.has_i64 = t.has_s64 = 1;
	t.has_sf64 = t.has_u32 = t.has_f32 = t.has_u64 = t.has_f64 = 1;
	t.has_flt = t.has_dbl = t.has_flag = t.has_sort = t.has_raw = 1;
	t.i32 = -1;
	t.s32 = -2;
	t.sf32 = -3;
	t.i64 = -4;
	t.s64 = -5;
	t.sf64 = -6;
	t.u32 = UINT32_MAX;
	t.f32 = 8;
	t.u64 = 9;
	t.f64 = 10;
	t.flt = 0.5f;
	t.dbl = 2.25;
	t.flag = 1;
	t.sort = SEO__TEST__V1__SORT__SORT_RECENT;
	t.str = "h\xc3\xa9";
	t.raw.data = (uint8_t *)"hi";
	t.raw.len = 2;
	in.n = 1;
	t.inner = &in;
	t.nums = nums;
	t.n_nums = 2;
	t.tags = tags;
	t.n_tags = 1;
	it.n = 2;
	it.label = "x";
	items[0] = &it;
	t.items = items;
	t.n_items = 1;
	t.sorts = sorts;
	t.n_sorts = 2;
	t.reals = reals;
	t.n_reals = 2;
	t.flags = flags;
	t.n_flags = 2;
	t.blobs = blobs;
	t.n_blobs = 2;
	t.pick_case = SEO__TEST__V1__ALL_TYPES__PICK_PICK_ID;
	t.pick_id = 3;
	n1.name = "a";
	n1.child = &n2;
	t.node = &n1;
	/* Unknown enum values and NaN in arrays are null; only the oneof
	 * member set. */
	encodes_as(&t,
		   "{\"i32\":-1,\"s32\":-2,\"sf32\":-3,\"i64\":-4,\"s64\":-5,"
		   "\"sf64\":-6,\"u32\":4294967295,\"f32\":8,\"u64\":9,\"f64\":10,"
		   "\"flt\":0.5,\"dbl\":2.25,\"flag\":true,\"sort\":\"recent\","
		   "\"str\":\"h\xc3\xa9\",\"raw\":\"aGk=\","
		   "\"inner\":{\"n\":1},\"nums\":[1,-2],"
		   "\"tags\":[\"a\"],\"items\":[{\"n\":2,\"label\":\"x\"}],"
		   "\"sorts\":[\"importance\",null],\"reals\":[null,1.5],"
		   "\"flags\":[true,false],\"blobs\":[\"\",\"/w==\"],"
		   "\"pick_id\":3,"
		   "\"node\":{\"name\":\"a\",\"child\":{\"name\":\"\"}}}");

	/* Beyond jansson's integers, a double; floats read as written;
	 * invalid UTF-8 from a service becomes U+FFFD. */
	t.u64 = UINT64_MAX;
	t.flt = 0.1f;
	t.dbl = INFINITY;
	t.str = "a\xff" "b\xe2\x82";
	t.pick_case = SEO__TEST__V1__ALL_TYPES__PICK_PICK_NAME;
	t.pick_name = "pn";
	j = encode(&t.base);
	CU_ASSERT_PTR_NOT_NULL_FATAL(j);
	CU_ASSERT(json_is_real(json_object_get(j, "u64")) &&
		  json_real_value(json_object_get(j, "u64")) == 18446744073709551616.0);
	CU_ASSERT(json_real_value(json_object_get(j, "flt")) == 0.1);
	/* A number without a JSON form, in a field that is not nullable, is
	 * no value. */
	CU_ASSERT_PTR_NULL(json_object_get(j, "dbl"));
	json_decref(j);
	t.flt = NAN;
	j = encode(&t.base);
	CU_ASSERT_PTR_NULL(json_object_get(j, "flt"));
	CU_ASSERT_STRING_EQUAL(json_string_value(json_object_get(j, "str")),
			       "a\xef\xbf\xbd" "b\xef\xbf\xbd\xef\xbf\xbd");
	CU_ASSERT_STRING_EQUAL(json_string_value(json_object_get(j, "pick_name")),
			       "pn");
	CU_ASSERT_PTR_NULL(json_object_get(j, "pick_id"));
	json_decref(j);
}

/* ---- round trips ----------------------------------------------------------- */

static size_t elem_size(ProtobufCType t)
{
	switch (t) {
	case PROTOBUF_C_TYPE_INT64:
	case PROTOBUF_C_TYPE_SINT64:
	case PROTOBUF_C_TYPE_SFIXED64:
	case PROTOBUF_C_TYPE_UINT64:
	case PROTOBUF_C_TYPE_FIXED64:
	case PROTOBUF_C_TYPE_DOUBLE:
		return 8;
	case PROTOBUF_C_TYPE_STRING:
	case PROTOBUF_C_TYPE_MESSAGE:
		return sizeof(void *);
	case PROTOBUF_C_TYPE_BYTES:
		return sizeof(ProtobufCBinaryData);
	default:
		return 4;
	}
}

static ProtobufCMessage *filled(const ProtobufCMessageDescriptor *d, int full,
				int depth);

/* A value for element k of field f. */
static void fill_value(const ProtobufCFieldDescriptor *f, void *slot, int k,
		       int full, int depth)
{
	switch (f->type) {
	case PROTOBUF_C_TYPE_INT32:
	case PROTOBUF_C_TYPE_SINT32:
	case PROTOBUF_C_TYPE_SFIXED32:
		*(int32_t *)slot = -(int32_t)f->id - k;
		break;
	case PROTOBUF_C_TYPE_UINT32:
	case PROTOBUF_C_TYPE_FIXED32:
		*(uint32_t *)slot = 4000000000u + f->id + (uint32_t)k;
		break;
	case PROTOBUF_C_TYPE_INT64:
	case PROTOBUF_C_TYPE_SINT64:
	case PROTOBUF_C_TYPE_SFIXED64:
		*(int64_t *)slot = -1700000000000LL * (f->id + k);
		break;
	case PROTOBUF_C_TYPE_UINT64:
	case PROTOBUF_C_TYPE_FIXED64:
		*(uint64_t *)slot = 9000000000000000000ULL + f->id + (uint64_t)k;
		break;
	case PROTOBUF_C_TYPE_FLOAT:
		*(float *)slot = 0.1f * (float)(f->id + k);
		break;
	case PROTOBUF_C_TYPE_DOUBLE:
		*(double *)slot = 0.01 * (f->id + k);
		break;
	case PROTOBUF_C_TYPE_BOOL:
		*(protobuf_c_boolean *)slot = (f->id + k) % 2;
		break;
	case PROTOBUF_C_TYPE_ENUM:
		*(int *)slot = ((const ProtobufCEnumDescriptor *)f->descriptor)
				       ->values[(f->id + k) % 3].value;
		break;
	case PROTOBUF_C_TYPE_STRING:
		*(char **)slot = seo_arena_printf(arena, "s\xc3\xa9%u \"%d\"\n",
						  f->id, k);
		break;
	case PROTOBUF_C_TYPE_BYTES:
		((ProtobufCBinaryData *)slot)->data =
			(uint8_t *)seo_arena_printf(arena, "%c\xff%d", 0, k);
		((ProtobufCBinaryData *)slot)->len = 2 + (size_t)k % 2;
		break;
	case PROTOBUF_C_TYPE_MESSAGE:
		*(ProtobufCMessage **)slot =
			depth < 3 ? filled(f->descriptor, full, depth + 1) : NULL;
		break;
	}
}

/* A message with every field set (full) or only the required ones, the
 * strings of those left NULL (which must read as ""). */
static ProtobufCMessage *filled(const ProtobufCMessageDescriptor *d, int full,
				int depth)
{
	ProtobufCMessage *m = seo_arena_calloc(arena, d->sizeof_message);
	unsigned i;
	int k;

	protobuf_c_message_init(d, m);
	for (i = 0; i < d->n_fields; i++) {
		const ProtobufCFieldDescriptor *f = &d->fields[i];
		char *base = (char *)m;
		if (f->label == PROTOBUF_C_LABEL_REPEATED) {
			char *arr;
			if (!full)
				continue;
			arr = seo_arena_calloc(arena, 2 * elem_size(f->type));
			for (k = 0; k < 2; k++)
				fill_value(f, arr + k * elem_size(f->type), k, full,
					   depth);
			*(size_t *)(base + f->quantifier_offset) = 2;
			*(void **)(base + f->offset) = arr;
			continue;
		}
		if (f->flags & PROTOBUF_C_FIELD_FLAG_ONEOF) {
			/* The last member wins, as a oneof holds one. */
			if (full) {
				fill_value(f, base + f->offset, 0, full, depth);
				*(uint32_t *)(base + f->quantifier_offset) = f->id;
			}
			continue;
		}
		if (f->label == PROTOBUF_C_LABEL_OPTIONAL && !full)
			continue;
		if (f->label == PROTOBUF_C_LABEL_REQUIRED && !full &&
		    f->type == PROTOBUF_C_TYPE_STRING)
			continue;
		if (f->type == PROTOBUF_C_TYPE_MESSAGE &&
		    f->label == PROTOBUF_C_LABEL_OPTIONAL && depth >= 3)
			continue;
		fill_value(f, base + f->offset, 0, full, depth);
		if (f->label == PROTOBUF_C_LABEL_OPTIONAL &&
		    f->type != PROTOBUF_C_TYPE_STRING &&
		    f->type != PROTOBUF_C_TYPE_MESSAGE)
			*(protobuf_c_boolean *)(base + f->quantifier_offset) = 1;
	}
	return m;
}

/* msg -> JSON -> decoded message -> JSON, and msg -> wire -> JSON: all the
 * same text. */
static void round_trip(const ProtobufCMessage *msg)
{
	const ProtobufCMessageDescriptor *d = msg->descriptor;
	gw_route r = {.method = "POST", .pattern = "/v1/rt",
		      .in = {.kind = GW_IN_JSON, .message = d},
		      .out = {.message = d, .status = 200},
		      .summary = "round trip"};
	json_t *j1 = encode(msg), *j2, *j3;
	char *s1 = dump(j1), *s2 = NULL, *s3 = NULL;
	ProtobufCMessage *back = NULL, *wire;
	ProtobufCAllocator alloc;
	uint8_t *buf;
	size_t len;

	CU_ASSERT_PTR_NOT_NULL_FATAL(s1);
	memset(&err, 0, sizeof(err));
	CU_ASSERT_EQUAL(gw_json_decode_request(&r, NULL, 0, "", s1, strlen(s1),
					       NULL, arena, &back, &err), 0);
	if (back == NULL) {
		fprintf(stderr, "\n  %s: %s: %s\n  %s\n", d->name, err.code,
			err.message, s1);
		CU_FAIL("round trip decode");
		goto out;
	}
	CU_ASSERT_TRUE(protobuf_c_message_check(back));
	j2 = encode(back);
	s2 = dump(j2);
	json_decref(j2);
	CU_ASSERT_STRING_EQUAL(s1, s2);

	len = protobuf_c_message_get_packed_size(back);
	buf = seo_arena_alloc(arena, len + 1);
	protobuf_c_message_pack(back, buf);
	seo_arena_pb_allocator(arena, &alloc);
	wire = protobuf_c_message_unpack(d, &alloc, len, buf);
	CU_ASSERT_PTR_NOT_NULL_FATAL(wire);
	j3 = encode(wire);
	s3 = dump(j3);
	json_decref(j3);
	CU_ASSERT_STRING_EQUAL(s1, s3);
	if (strcmp(s1, s2) != 0 || strcmp(s1, s3) != 0)
		fprintf(stderr, "\n  %s\n  %s\n  %s\n", s1, s2, s3);
out:
	json_decref(j1);
	free(s1);
	free(s2);
	free(s3);
}

static void test_round_trips(void)
{
	static const ProtobufCMessageDescriptor *const all[] = {
		ACCT(authorize_request), ACCT(rate_limit_state),
		ACCT(authorize_response), ACCT(refund_request),
		ACCT(refund_response), ACCT(empty), ACCT(user), ACCT(credits),
		ACCT(api_key), ACCT(list_keys_response), ACCT(create_key_request),
		ACCT(created_key), ACCT(revoke_key_request), ACCT(success),
		ACCT(list_usage_request), ACCT(usage_row),
		ACCT(list_usage_response), ACCT(price_tier),
		ACCT(pricing_response), ACCT(checkout_request),
		ACCT(checkout_response), ACCT(website),
		ACCT(list_websites_response), ACCT(payment_webhook_request),
		ACCT(payment_webhook_response),
		TEST(inner), TEST(node), TEST(all_types), TEST(required),
	};
	size_t i;

	for (i = 0; i < sizeof(all) / sizeof(all[0]); i++) {
		round_trip(filled(all[i], 1, 0));
		round_trip(filled(all[i], 0, 0));
	}
}

/* ---- reading fields back ------------------------------------------------- */

static void test_field_count_and_usage(void)
{
	Seo__Account__V1__ListUsageRequest lu = SEO__ACCOUNT__V1__LIST_USAGE_REQUEST__INIT;
	Seo__Account__V1__ListKeysResponse lk = SEO__ACCOUNT__V1__LIST_KEYS_RESPONSE__INIT;
	Seo__Test__V1__AllTypes t = SEO__TEST__V1__ALL_TYPES__INIT;
	Seo__Test__V1__Required rq = SEO__TEST__V1__REQUIRED__INIT;
	gw_route r = routes[R_TYPES_Q];
	char *tags[2] = {"a.com", "b.org"};
	long long v = -1;

	CU_ASSERT_EQUAL(gw_json_field_count(&lu.base, "limit", &v), SEO_ENOTFOUND);
	lu.has_limit = 1;
	lu.limit = 20;
	CU_ASSERT_EQUAL(gw_json_field_count(&lu.base, "limit", &v), 0);
	CU_ASSERT_EQUAL(v, 20);
	CU_ASSERT_EQUAL(gw_json_field_count(&lu.base, "nope", &v), SEO_ENOTFOUND);
	CU_ASSERT_EQUAL(gw_json_field_count(&lk.base, "keys", &v), 0);
	CU_ASSERT_EQUAL(v, 0);
	lk.n_keys = 3;
	CU_ASSERT_EQUAL(gw_json_field_count(&lk.base, "keys", &v), 0);
	CU_ASSERT_EQUAL(v, 3);
	CU_ASSERT_EQUAL(gw_json_field_count(&t.base, "str", &v), SEO_ENOTFOUND);
	CU_ASSERT_EQUAL(gw_json_field_count(&t.base, "flag", &v), SEO_ENOTFOUND);
	t.has_u64 = 1;
	t.u64 = UINT64_MAX;
	CU_ASSERT_EQUAL(gw_json_field_count(&t.base, "u64", &v), 0);
	CU_ASSERT_EQUAL(v, LLONG_MAX);
	t.has_s32 = t.has_u32 = 1;
	t.s32 = -7;
	t.u32 = UINT32_MAX;
	CU_ASSERT_EQUAL(gw_json_field_count(&t.base, "s32", &v), 0);
	CU_ASSERT_EQUAL(v, -7);
	CU_ASSERT_EQUAL(gw_json_field_count(&t.base, "u32", &v), 0);
	CU_ASSERT_EQUAL(v, UINT32_MAX);
	CU_ASSERT_EQUAL(gw_json_field_count(&t.base, "pick_id", &v), SEO_ENOTFOUND);
	t.pick_case = SEO__TEST__V1__ALL_TYPES__PICK_PICK_ID;
	t.pick_id = 12;
	CU_ASSERT_EQUAL(gw_json_field_count(&t.base, "pick_id", &v), 0);
	CU_ASSERT_EQUAL(v, 12);
	rq.count = 5;
	CU_ASSERT_EQUAL(gw_json_field_count(&rq.base, "count", &v), 0);
	CU_ASSERT_EQUAL(v, 5);

	/* The usage value: the first GW_P_USAGE rule's string. */
	CU_ASSERT_PTR_NULL(gw_json_usage_value(&r, &t.base, arena));
	t.str = "";
	CU_ASSERT_PTR_NULL(gw_json_usage_value(&r, &t.base, arena));
	t.str = "example.com";
	CU_ASSERT_STRING_EQUAL(gw_json_usage_value(&r, &t.base, arena),
			       "example.com");
	CU_ASSERT_PTR_NOT_EQUAL(gw_json_usage_value(&r, &t.base, arena), t.str);
	CU_ASSERT_PTR_NULL(gw_json_usage_value(&routes[R_USAGE], &lu.base, arena));
	r.in.params = list_usage_rules;
	r.in.n_params = 1;
	CU_ASSERT_PTR_NULL(gw_json_usage_value(&r, &t.base, arena));
	t.tags = tags;
	t.n_tags = 2;
	CU_ASSERT_STRING_EQUAL(gw_json_usage_value(&r, &t.base, arena),
			       "a.com,b.org");
}

/* ---- route check ----------------------------------------------------------- */

static void check_fails(const gw_route *r, const char *why)
{
	char buf[160] = "";

	CU_ASSERT_EQUAL(gw_json_route_check(r, buf, sizeof(buf)), SEO_EINVAL);
	CU_ASSERT_STRING_EQUAL(buf, why);
	if (strcmp(buf, why) != 0)
		fprintf(stderr, "\n  got \"%s\" want \"%s\"\n", buf, why);
}

static void check_passes(const gw_route *r)
{
	char buf[160] = "";

	CU_ASSERT_EQUAL(gw_json_route_check(r, buf, sizeof(buf)), 0);
	if (buf[0] != '\0')
		fprintf(stderr, "\n  unexpected \"%s\"\n", buf);
}

/* The stages the route check refuses: statuses outside 2xx, headers the
 * gateway writes itself or that are no header names, the key forwarded, an
 * optional key on a billed route, bytes without a bytes field. */
static void check_stages(void)
{
	static const int redirect[] = {202, 302, 0};
	static const char *const own[] = {"Retry-After", "Content-Type", NULL};
	static const char *const spaced[] = {"Retry After", NULL};
	static const char *const key[] = {"X-Service-Client", "X-API-Key", NULL};
	static const char *const many[] = {"a", "b", "c", "d", "e", "f", "g",
					   "h", "i", NULL};
	gw_route r;

	r = routes[R_ME];
	r.out.statuses = redirect;
	check_fails(&r, "GET /v1/me: success status 302");
	r = routes[R_ME];
	r.out.headers = own;
	check_fails(&r, "GET /v1/me: output header Content-Type is not allowed");
	r.out.headers = spaced;
	check_fails(&r, "GET /v1/me: output header \"Retry After\" is no "
		    "header name");
	r.out.headers = many;
	check_fails(&r, "GET /v1/me: more than 8 output headers");
	r = routes[R_ME];
	r.forward.headers = key;
	check_fails(&r, "GET /v1/me: forwarded header X-API-Key is not allowed");
	r = routes[R_TYPES_Q];
	r.auth.key = GW_KEY_OPTIONAL;
	check_fails(&r, "GET /v1/test/types: an optional key needs a free route "
		    "open to any role");
	r = routes[R_USAGE];
	r.auth.key = GW_KEY_OPTIONAL;
	check_fails(&r, "GET /v1/usage: an optional key needs a free route "
		    "open to any role");
	r.auth.roles = GW_ROLES_ANY;
	check_passes(&r);
	r = routes[R_REQUIRED];
	r.out.kind = GW_OUT_BYTES;
	r.out.body_field = "str";
	r.out.content_type = "application/pdf";
	check_fails(&r, "POST /v1/test/required: bytes output needs a bytes "
		    "field");
	r = routes[R_TYPES_Q];
	r.bill.kind = GW_BILL_FREE;
	r.bill.cost = 0;
	r.out.kind = GW_OUT_BYTES;
	r.out.body_field = "raw";
	check_fails(&r, "GET /v1/test/types: bytes output needs a content type");
	r.out.content_type = "application/pdf";
	check_passes(&r);
	r.bill.envelope = 1;
	check_fails(&r, "GET /v1/test/types: bytes output has no JSON to add "
		    "credits to or hide fields from");
}

static void test_route_check(void)
{
	static const gw_param_rule no_field[] = {
		{.name = "nope", .flags = GW_P_REQUIRED}};
	static const gw_param_rule clamp_only[] = {
		{.name = "limit", .flags = GW_P_CLAMP}};
	static const gw_param_rule both[] = {
		{.name = "limit", .flags = GW_P_RANGE | GW_P_CLAMP | GW_P_FALLBACK,
		 .min = 1, .max = 2, .dflt = 1}};
	static const gw_param_rule str_default[] = {
		{.name = "str", .flags = GW_P_DEFAULT}};
	static const gw_param_rule enum_range[] = {
		{.name = "sort", .flags = GW_P_RANGE, .max = 1}};
	static const gw_param_rule bad_enum[] = {
		{.name = "sort", .flags = GW_P_DEFAULT, .dflt = 9}};
	static const gw_param_rule bad_bool[] = {
		{.name = "flag", .flags = GW_P_DEFAULT, .dflt = 2}};
	static const gw_param_rule wide[] = {
		{.name = "i32", .flags = GW_P_RANGE, .max = 1LL << 40}};
	static const gw_param_rule neg_count[] = {
		{.name = "tags", .flags = GW_P_RANGE, .min = -1, .max = 3}};
	static const gw_param_rule out_default[] = {
		{.name = "u32", .flags = GW_P_RANGE | GW_P_DEFAULT, .min = 1,
		 .max = 5, .dflt = 9}};
	static const gw_param_rule usage_int[] = {
		{.name = "i32", .flags = GW_P_USAGE}};
	static const gw_param_rule bad_code[] = {
		{.name = "i32", .flags = GW_P_REQUIRED, .error_code = "nope"}};
	static const gw_param_rule twice[] = {{.name = "i32"}, {.name = "i32"}};
	static const char *const unknown[] = {"user_not_found", "what", NULL};
	gw_route r;
	char why[160];
	size_t i;

	for (i = 0; i < N_ROUTES; i++) {
		CU_ASSERT_EQUAL(gw_json_route_check(&routes[i], why, sizeof(why)), 0);
	}

#define WITH_RULES(base, rules)                                            \
	(r = routes[base], r.in.params = rules,                               \
	 r.in.n_params = sizeof(rules) / sizeof(rules[0]), &r)
	check_fails(WITH_RULES(R_USAGE, no_field), "rule nope: no such field");
	check_fails(WITH_RULES(R_USAGE, clamp_only),
		    "rule limit: clamp needs a range on a number");
	check_fails(WITH_RULES(R_USAGE, both), "rule limit: clamp and fallback");
	check_fails(WITH_RULES(R_TYPES_Q, str_default),
		    "rule str: default does not fit the field");
	check_fails(WITH_RULES(R_TYPES_Q, enum_range),
		    "rule sort: range does not fit the field");
	check_fails(WITH_RULES(R_TYPES_Q, bad_enum),
		    "rule sort: default does not fit the field");
	check_fails(WITH_RULES(R_TYPES_Q, bad_bool),
		    "rule flag: default does not fit the field");
	check_fails(WITH_RULES(R_TYPES_Q, wide),
		    "rule i32: range does not fit the field");
	check_fails(WITH_RULES(R_TYPES_Q, neg_count),
		    "rule tags: range does not fit the field");
	check_fails(WITH_RULES(R_TYPES_Q, out_default),
		    "rule u32: default does not fit the field");
	check_fails(WITH_RULES(R_TYPES_Q, usage_int),
		    "rule i32: usage value is not a string");
	check_fails(WITH_RULES(R_TYPES_Q, bad_code), "rule i32: unknown code nope");
	check_fails(WITH_RULES(R_TYPES_Q, twice), "rule i32: given twice");
#undef WITH_RULES

	r = routes[R_REVOKE];
	r.pattern = "/v1/keys/:key";
	check_fails(&r, "path parameter key: no such scalar field");
	r.pattern = "v1/keys";
	check_fails(&r, "pattern must start with /");
	r = routes[R_TYPES_Q];
	r.pattern = "/v1/x/:inner";
	check_fails(&r, "path parameter inner: no such scalar field");
	r = routes[R_REVOKE];
	r.pattern = "/v1/keys/:";
	check_fails(&r, "/v1/keys/:: bad path parameter");
	r.pattern = "/v1/:id/:id/:id/:id/:id";
	check_fails(&r, "/v1/:id/:id/:id/:id/:id: too many path parameters");
	r = routes[R_WEBHOOK];
	r.in.message = TEST(raw_only);
	r.in.n_params = 0;
	check_fails(&r, "raw input needs signature string");
	r = routes[R_REVOKE];
	r.errors = unknown;
	check_fails(&r, "unknown code what");
	r = routes[R_STRICT_Q];
	r.in.strict_code = "nope";
	check_fails(&r, "unknown code nope");
	r = routes[R_CHECKOUT];
	r.in.body_code = "nope";
	check_fails(&r, "unknown code nope");
	r = routes[R_CHECKOUT];
	r.in.kind = GW_IN_RAW;
	check_fails(&r, "raw input needs payload bytes");
	r.in.message = ACCT(payment_webhook_response);
	r.in.n_params = 0;
	check_fails(&r, "raw input needs payload bytes");
	r = routes[R_CHECKOUT];
	r.in.message = NULL;
	check_fails(&r, "POST /v1/checkout: input message missing");
	r = routes[R_TYPES_J];
	r.bill.items_field = "str";
	check_fails(&r, "POST /v1/test/types: per-item fields missing");
	r = routes[R_TYPES_J];
	r.bill.billed_field = NULL;
	check_fails(&r, "POST /v1/test/types: per-item fields missing");
	r = routes[R_TYPES_Q];
	r.bill.cost = 0;
	check_fails(&r, "GET /v1/test/types: cost 0");
	r = routes[R_ME];
	r.bill.envelope = 1;
	r.out.message = ACCT(refund_response);
	check_fails(&r, "GET /v1/me: an envelope's output has its own "
		    "credits_used or credits_remaining");
	r = routes[R_ME];
	r.out.status = 0;
	check_fails(&r, "GET /v1/me: success status 0");
	r.summary = NULL;
	check_fails(&r, "method and summary are required");
	check_stages();
}

/* ---- OpenAPI ------------------------------------------------------------- */

/* The value at a '|'-separated path of keys and array indexes. */
static json_t *at(json_t *root, const char *path)
{
	char buf[256], *save = NULL, *tok;

	snprintf(buf, sizeof(buf), "%s", path);
	for (tok = strtok_r(buf, "|", &save); root != NULL && tok != NULL;
	     tok = strtok_r(NULL, "|", &save))
		root = json_is_array(root) ? json_array_get(root, strtoul(tok, NULL, 10))
					   : json_object_get(root, tok);
	return root;
}

static void at_is(json_t *doc, const char *path, const char *want)
{
	json_t *v = at(doc, path);

	CU_ASSERT_PTR_NOT_NULL(v);
	if (v == NULL) {
		fprintf(stderr, "\n  missing %s\n", path);
		return;
	}
	json_is(v, want);
}

/* The keys of the object at path, comma-separated. */
static void keys_are(json_t *doc, const char *path, const char *want)
{
	json_t *o = at(doc, path), *v;
	const char *k;
	char got[512] = "";

	json_object_foreach(o, k, v) {
		if (got[0] != '\0')
			strcat(got, ",");
		strcat(got, k);
	}
	CU_ASSERT_STRING_EQUAL(got, want);
	if (strcmp(got, want) != 0)
		fprintf(stderr, "\n  %s: got %s want %s\n", path, got, want);
}

static void test_openapi(void)
{
	json_t *doc = NULL, *ids, *item, *op, *v;
	const char *path, *method, *out = getenv("SEO_OPENAPI_OUT");
	gw_route clash[2] = {routes[R_PRICING], routes[R_PRICING]};
	size_t i;

	CU_ASSERT_EQUAL_FATAL(gw_openapi_build(routes, N_ROUTES,
					       "https://api.seo.test", &doc), 0);
	if (out != NULL)
		CU_ASSERT_EQUAL(json_dump_file(doc, out, JSON_INDENT(2)), 0);

	at_is(doc, "openapi", "\"3.1.0\"");
	at_is(doc, "info|title", "\"SEO Data Service\"");
	at_is(doc, "info|version", "\"1.0.0\"");
	at_is(doc, "servers", "[{\"url\":\"https://api.seo.test\"}]");
	at_is(doc, "components|securitySchemes|ApiKey|type", "\"apiKey\"");
	at_is(doc, "components|securitySchemes|ApiKey|in", "\"header\"");
	at_is(doc, "components|securitySchemes|ApiKey|name", "\"X-API-Key\"");
	keys_are(doc, "", "openapi,info,servers,tags,paths,components");
	at_is(doc, "tags|0|name", "\"account\"");
	at_is(doc, "tags|1|name", "\"graph\"");
	at_is(doc, "tags|4|name", "\"ranks\"");
	CU_ASSERT_EQUAL(json_array_size(at(doc, "tags")), 5);

	/* The Error object and the messages reached, nothing else. */
	at_is(doc, "components|schemas|Error|required",
	      "[\"error\",\"code\",\"message\"]");
	at_is(doc, "components|schemas|Error|properties|retry_after|type",
	      "\"integer\"");
	at_is(doc, "components|schemas|Error|properties|code|enum|0",
	      "\"invalid_parameter\"");
	keys_are(doc, "components|schemas|Error|properties",
		 "error,code,message,retry_after,retry,reset_at,signup_url,tool,"
		 "tier,quota");
	keys_are(doc, "components|schemas",
		 "Error,seo.account.v1.ListUsageResponse,seo.account.v1.UsageRow,"
		 "seo.account.v1.CheckoutRequest,seo.account.v1.CheckoutResponse,"
		 "seo.account.v1.CreateKeyRequest,seo.account.v1.CreatedKey,"
		 "seo.account.v1.Success,seo.account.v1.PaymentWebhookResponse,"
		 "seo.account.v1.PricingResponse,seo.account.v1.PriceTier,"
		 "seo.account.v1.User,seo.test.v1.AllTypes,seo.test.v1.Inner,"
		 "seo.test.v1.Node,seo.test.v1.Required");
	at_is(doc, "components|schemas|seo.account.v1.User",
	      "{\"type\":\"object\",\"properties\":{"
	      "\"id\":{\"type\":\"string\"},"
	      "\"email\":{\"type\":[\"string\",\"null\"]},"
	      "\"credits\":{\"type\":[\"integer\",\"null\"],\"format\":\"int64\"},"
	      "\"created_at\":{\"type\":\"integer\",\"format\":\"int64\"}},"
	      "\"required\":[\"id\",\"created_at\"]}");
	at_is(doc, "components|schemas|seo.account.v1.ListUsageResponse|properties|usage",
	      "{\"type\":\"array\",\"items\":{\"$ref\":"
	      "\"#/components/schemas/seo.account.v1.UsageRow\"}}");
	at_is(doc, "components|schemas|seo.account.v1.PriceTier|properties|price_per_credit",
	      "{\"type\":\"number\",\"format\":\"double\"}");
	at_is(doc, "components|schemas|seo.account.v1.CreateKeyRequest",
	      "{\"type\":\"object\",\"properties\":{\"name\":{\"type\":\"string\"}}}");
	at_is(doc, "components|schemas|seo.test.v1.Node|properties|child",
	      "{\"$ref\":\"#/components/schemas/seo.test.v1.Node\"}");
	at_is(doc, "components|schemas|seo.test.v1.Required|properties|inner",
	      "{\"$ref\":\"#/components/schemas/seo.test.v1.Inner\"}");
	at_is(doc, "components|schemas|seo.test.v1.Required|properties|sort",
	      "{\"type\":\"string\",\"enum\":[\"unspecified\",\"importance\",\"recent\"]}");
	at_is(doc, "components|schemas|seo.test.v1.AllTypes|properties",
	      "{\"i32\":{\"type\":\"integer\",\"format\":\"int32\"},"
	      "\"s32\":{\"type\":\"integer\",\"format\":\"int32\"},"
	      "\"sf32\":{\"type\":\"integer\",\"format\":\"int32\"},"
	      "\"i64\":{\"type\":\"integer\",\"format\":\"int64\"},"
	      "\"s64\":{\"type\":\"integer\",\"format\":\"int64\"},"
	      "\"sf64\":{\"type\":\"integer\",\"format\":\"int64\"},"
	      "\"u32\":{\"type\":\"integer\",\"minimum\":0,\"maximum\":4294967295},"
	      "\"f32\":{\"type\":\"integer\",\"minimum\":0,\"maximum\":4294967295},"
	      "\"u64\":{\"type\":\"integer\",\"minimum\":0},"
	      "\"f64\":{\"type\":\"integer\",\"minimum\":0},"
	      "\"flt\":{\"type\":\"number\",\"format\":\"float\"},"
	      "\"dbl\":{\"type\":\"number\",\"format\":\"double\"},"
	      "\"flag\":{\"type\":\"boolean\"},"
	      "\"sort\":{\"type\":\"string\",\"enum\":[\"unspecified\",\"importance\",\"recent\"]},"
	      "\"str\":{\"type\":\"string\"},"
	      "\"raw\":{\"type\":\"string\",\"contentEncoding\":\"base64\"},"
	      "\"inner\":{\"$ref\":\"#/components/schemas/seo.test.v1.Inner\"},"
	      "\"nums\":{\"type\":\"array\",\"items\":{\"type\":\"integer\",\"format\":\"int64\"}},"
	      "\"tags\":{\"type\":\"array\",\"items\":{\"type\":\"string\"}},"
	      "\"items\":{\"type\":\"array\",\"items\":{\"$ref\":\"#/components/schemas/seo.test.v1.Inner\"}},"
	      "\"sorts\":{\"type\":\"array\",\"items\":{\"type\":\"string\",\"enum\":[\"unspecified\",\"importance\",\"recent\"]}},"
	      "\"reals\":{\"type\":\"array\",\"items\":{\"type\":\"number\",\"format\":\"double\"}},"
	      "\"flags\":{\"type\":\"array\",\"items\":{\"type\":\"boolean\"}},"
	      "\"blobs\":{\"type\":\"array\",\"items\":{\"type\":\"string\",\"contentEncoding\":\"base64\"}},"
	      "\"pick_name\":{\"type\":\"string\"},"
	      "\"pick_id\":{\"type\":\"integer\",\"format\":\"int32\"},"
	      "\"node\":{\"$ref\":\"#/components/schemas/seo.test.v1.Node\"}}");
	CU_ASSERT_PTR_NULL(at(doc, "components|schemas|seo.test.v1.AllTypes|required"));

	keys_are(doc, "paths",
		 "/v1/usage,/v1/checkout,/v1/keys,/v1/keys/{id},"
		 "/v1/payments/webhook,/v1/pricing,/v1/me,/v1/test/types,"
		 "/v1/test/required,/v1/test/strict,/v1/test/nodes/{name}");
	keys_are(doc, "paths|/v1/test/types", "get,post");

	/* DELETE /v1/keys/:id */
	op = at(doc, "paths|/v1/keys/{id}|delete");
	keys_are(op, "", "operationId,summary,description,tags,parameters,"
		 "responses,security,x-credit-cost,x-billing,x-roles");
	at_is(op, "operationId", "\"deleteKeysById\"");
	at_is(op, "summary", "\"Revoke an API key\"");
	at_is(op, "description", "\"Free: no credits are charged. Roles allowed: "
	      "owner, admin, member.\"");
	at_is(op, "tags", "[\"account\"]");
	at_is(op, "parameters", "[{\"name\":\"id\",\"in\":\"path\",\"required\":true,"
	      "\"schema\":{\"type\":\"string\"}}]");
	keys_are(op, "responses", "200,400,401,403,404,429,503");
	at_is(op, "responses|200",
	      "{\"description\":\"OK\",\"content\":{\"application/json\":{\"schema\":"
	      "{\"$ref\":\"#/components/schemas/seo.account.v1.Success\"}}}}");
	at_is(op, "responses|404|description",
	      "\"Not Found.\\n- `not_found`: no such route\\n- `key_not_found`: "
	      "key unknown, already revoked or another person's\"");
	at_is(op, "responses|404|content|application/json|schema",
	      "{\"$ref\":\"#/components/schemas/Error\"}");
	at_is(op, "responses|404|content|application/json|examples|key_not_found",
	      "{\"summary\":\"key unknown, already revoked or another person's\","
	      "\"value\":{\"error\":\"Not Found\",\"code\":\"key_not_found\","
	      "\"message\":\"key unknown, already revoked or another person's\"}}");
	keys_are(op, "responses|401|content|application/json|examples",
		 "invalid_api_key");
	keys_are(op, "responses|403|content|application/json|examples",
		 "capability_missing");
	keys_are(op, "responses|429|content|application/json|examples",
		 "rate_limited");
	keys_are(op, "responses|503|content|application/json|examples",
		 "service_unavailable");
	keys_are(op, "responses|400|content|application/json|examples",
		 "invalid_parameter");
	at_is(op, "security", "[{\"ApiKey\":[]}]");
	at_is(op, "x-credit-cost", "0");
	at_is(op, "x-billing", "\"free\"");
	at_is(op, "x-roles", "[\"owner\",\"admin\",\"member\"]");

	/* GET /v1/usage: query parameters with the rules' bounds. */
	op = at(doc, "paths|/v1/usage|get");
	at_is(op, "operationId", "\"getUsage\"");
	at_is(op, "parameters",
	      "[{\"name\":\"limit\",\"in\":\"query\",\"required\":false,"
	      "\"schema\":{\"type\":\"integer\",\"format\":\"int64\",\"minimum\":1,"
	      "\"maximum\":200,\"default\":50},"
	      "\"description\":\"Rows per page. Values out of range are clamped.\"},"
	      "{\"name\":\"offset\",\"in\":\"query\",\"required\":false,"
	      "\"schema\":{\"type\":\"integer\",\"format\":\"int64\",\"minimum\":0,"
	      "\"default\":0},\"description\":\"Rows to skip.\"}]");
	CU_ASSERT_PTR_NULL(at(op, "requestBody"));

	/* POST /v1/checkout: the body with the rules combined. */
	op = at(doc, "paths|/v1/checkout|post");
	at_is(op, "operationId", "\"postCheckout\"");
	CU_ASSERT_PTR_NULL(at(op, "parameters"));
	at_is(op, "requestBody",
	      "{\"required\":true,\"content\":{\"application/json\":{\"schema\":"
	      "{\"allOf\":[{\"$ref\":\"#/components/schemas/seo.account.v1.CheckoutRequest\"},"
	      "{\"type\":\"object\",\"properties\":{\"credits\":{\"description\":"
	      "\"Credits to buy, at least 100.\",\"minimum\":100}},"
	      "\"required\":[\"credits\"]}]}}}}");
	keys_are(op, "responses", "200,400,401,403,404,429,500,503");
	keys_are(op, "responses|400|content|application/json|examples",
		 "invalid_parameter,invalid_json,invalid_credits");
	keys_are(op, "responses|500|content|application/json|examples",
		 "checkout_failed");
	at_is(op, "x-roles", "[\"owner\",\"admin\"]");

	/* POST /v1/keys: 201, a body that is not required. */
	op = at(doc, "paths|/v1/keys|post");
	keys_are(op, "responses", "201,400,401,403,404,429,503");
	at_is(op, "responses|201|description", "\"Created\"");
	at_is(op, "requestBody",
	      "{\"required\":false,\"content\":{\"application/json\":{\"schema\":"
	      "{\"$ref\":\"#/components/schemas/seo.account.v1.CreateKeyRequest\"}}}}");

	/* The webhook: no key, no rate limit, raw body. */
	op = at(doc, "paths|/v1/payments/webhook|post");
	at_is(op, "security", "[]");
	keys_are(op, "responses", "200,400,404,503");
	keys_are(op, "responses|400|content|application/json|examples",
		 "invalid_parameter,invalid_signature");
	at_is(op, "requestBody|content", "{\"*/*\":{\"schema\":{}}}");
	at_is(op, "description", "\"Free: no credits are charged. No API key is needed.\"");
	at_is(op, "x-roles", "[\"any\"]");

	/* Pricing: no key, no input: no 400, 401 or 429. */
	op = at(doc, "paths|/v1/pricing|get");
	keys_are(op, "responses", "200,404,503");
	at_is(op, "security", "[]");

	/* GET /v1/me: any key, no parameters. */
	op = at(doc, "paths|/v1/me|get");
	keys_are(op, "responses", "200,401,404,429,503");
	at_is(op, "responses|404|description",
	      "\"Not Found.\\n- `not_found`: no such route\\n- `user_not_found`: "
	      "user missing or in another workspace\"");
	at_is(op, "description", "\"Free: no credits are charged. Any API key may call it.\"");

	/* GET /v1/test/types: every scalar type as a query parameter. */
	op = at(doc, "paths|/v1/test/types|get");
	at_is(op, "operationId", "\"getTestTypes\"");
	at_is(op, "description", "\"Costs 2 credits per call, debited before the "
	      "work and refunded if it fails. Any API key may call it.\"");
	at_is(op, "x-credit-cost", "2");
	at_is(op, "x-billing", "\"fixed\"");
	at_is(op, "x-roles", "[\"any\"]");
	keys_are(op, "responses", "200,400,401,402,404,429,503");
	keys_are(op, "responses|400|content|application/json|examples",
		 "invalid_parameter,invalid_domain");
	v = at(op, "parameters");
	CU_ASSERT_EQUAL(json_array_size(v), 24);
	at_is(v, "0", "{\"name\":\"i32\",\"in\":\"query\",\"required\":false,"
	      "\"schema\":{\"type\":\"integer\",\"format\":\"int32\",\"minimum\":-5,"
	      "\"maximum\":5}}");
	at_is(v, "6", "{\"name\":\"u32\",\"in\":\"query\",\"required\":false,"
	      "\"schema\":{\"type\":\"integer\",\"minimum\":1,\"maximum\":10,"
	      "\"default\":3},\"description\":\"Invalid or out-of-range values "
	      "fall back to the default.\"}");
	at_is(v, "11", "{\"name\":\"dbl\",\"in\":\"query\",\"required\":false,"
	      "\"schema\":{\"type\":\"number\",\"format\":\"double\",\"minimum\":0,"
	      "\"maximum\":100},\"description\":\"Values out of range are clamped.\"}");
	at_is(v, "12", "{\"name\":\"flag\",\"in\":\"query\",\"required\":false,"
	      "\"schema\":{\"type\":\"boolean\",\"default\":true}}");
	at_is(v, "13", "{\"name\":\"sort\",\"in\":\"query\",\"required\":false,"
	      "\"schema\":{\"type\":\"string\",\"enum\":[\"unspecified\","
	      "\"importance\",\"recent\"],\"default\":\"importance\"},"
	      "\"description\":\"Row order. Invalid or out-of-range values fall "
	      "back to the default.\"}");
	at_is(v, "14", "{\"name\":\"str\",\"in\":\"query\",\"required\":false,"
	      "\"schema\":{\"type\":\"string\",\"minLength\":2,\"maxLength\":4}}");
	at_is(v, "15", "{\"name\":\"raw\",\"in\":\"query\",\"required\":false,"
	      "\"schema\":{\"type\":\"string\",\"contentEncoding\":\"base64\"}}");
	at_is(v, "17", "{\"name\":\"tags\",\"in\":\"query\",\"required\":false,"
	      "\"schema\":{\"type\":\"array\",\"items\":{\"type\":\"string\"},"
	      "\"minItems\":1,\"maxItems\":3},\"style\":\"form\",\"explode\":false}");
	at_is(v, "23|name", "\"pick_id\"");

	/* POST /v1/test/types: strict, envelope, per item. */
	op = at(doc, "paths|/v1/test/types|post");
	at_is(op, "operationId", "\"postTestTypes\"");
	at_is(op, "tags", "[\"realtime\"]");
	at_is(op, "x-billing", "\"per_item\"");
	at_is(op, "description", "\"Costs 1 credit per item (`nums`): the most "
	      "items are debited before the work, and the items not billed "
	      "(`nums` in the response) are refunded. Any API key may call it.\"");
	at_is(op, "responses|200|content|application/json|schema",
	      "{\"allOf\":[{\"$ref\":\"#/components/schemas/seo.test.v1.AllTypes\"},"
	      "{\"type\":\"object\",\"required\":[\"credits_used\"],"
	      "\"properties\":{\"credits_used\":{\"type\":\"integer\",\"minimum\":0,"
	      "\"description\":\"Credits this call cost after refunds.\"},"
	      "\"credits_remaining\":{\"type\":\"integer\",\"minimum\":0,"
	      "\"description\":\"The workspace balance after this call; absent for "
	      "a key whose role may not read the balance (client).\"}}}]}");
	keys_are(op, "responses|400|content|application/json|examples",
		 "invalid_parameter,invalid_json,invalid_domain,invalid_proposal_input");
	at_is(op, "requestBody|required", "false");
	at_is(op, "requestBody|content|application/json|schema|allOf|1|properties|tags",
	      "{\"minItems\":1,\"maxItems\":3}");

	/* PATCH with a path parameter: the body schema is inlined without it. */
	op = at(doc, "paths|/v1/test/nodes/{name}|patch");
	at_is(op, "operationId", "\"patchTestNodesByName\"");
	at_is(op, "parameters", "[{\"name\":\"name\",\"in\":\"path\",\"required\":true,"
	      "\"schema\":{\"type\":\"string\"}}]");
	at_is(op, "requestBody",
	      "{\"required\":false,\"content\":{\"application/json\":{\"schema\":"
	      "{\"type\":\"object\",\"properties\":{\"child\":{\"$ref\":"
	      "\"#/components/schemas/seo.test.v1.Node\"}}}}}}");

	/* A message with "always" fields: body required. */
	at_is(doc, "paths|/v1/test/required|post|requestBody|required", "true");

	/* operationIds are unique and URL-safe. */
	ids = json_object();
	json_object_foreach(at(doc, "paths"), path, item) {
		json_object_foreach(item, method, op) {
			const char *id = json_string_value(json_object_get(op, "operationId"));
			CU_ASSERT_PTR_NOT_NULL_FATAL(id);
			CU_ASSERT_PTR_NULL(json_object_get(ids, id));
			json_object_set_new(ids, id, json_true());
			for (i = 0; id[i] != '\0'; i++)
				CU_ASSERT(strchr("abcdefghijklmnopqrstuvwxyzABCDEFGHIJK"
						 "LMNOPQRSTUVWXYZ0123456789", id[i]) != NULL);
		}
	}
	CU_ASSERT_EQUAL(json_object_size(ids), N_ROUTES);
	json_decref(ids);
	json_decref(doc);

	/* A rule that says nothing about the body leaves it a plain $ref; a
	 * path parameter naming no field is still documented, as a string. */
	{
		static const gw_param_rule usage_only[] = {
			{.name = "name", .flags = GW_P_USAGE}};
		static const gw_param_rule name_required[] = {
			{.name = "name", .flags = GW_P_REQUIRED}};
		static const gw_param_rule count_default[] = {
			{.name = "count", .flags = GW_P_DEFAULT, .dflt = 1}};
		gw_route more[5] = {routes[R_CREATE_KEY], routes[R_ME],
				    routes[R_CREATE_KEY], routes[R_ME],
				    routes[R_USAGE]};
		more[0].in.params = usage_only;
		more[0].in.n_params = 1;
		more[1].pattern = "/v1/me/:zzz";
		more[2].pattern = "/v1/keys2";
		more[2].in.params = name_required;
		more[2].in.n_params = 1;
		more[3].pattern = "/v1/health";
		more[3].out.message = NULL;
		more[3].service = GW_SVC_NONE;
		more[3].quota = GW_QUOTA_NONE;
		more[4].in.message = TEST(required);
		more[4].in.params = count_default;
		more[4].in.n_params = 1;
		CU_ASSERT_EQUAL_FATAL(gw_openapi_build(more, 5, "http://x", &doc), 0);
		at_is(doc, "paths|/v1/keys|post|requestBody|content|application/json|schema",
		      "{\"$ref\":\"#/components/schemas/seo.account.v1.CreateKeyRequest\"}");
		at_is(doc, "paths|/v1/me/{zzz}|get|parameters",
		      "[{\"name\":\"zzz\",\"in\":\"path\",\"required\":true,"
		      "\"schema\":{\"type\":\"string\"}}]");
		at_is(doc, "paths|/v1/keys2|post|operationId", "\"postKeys2\"");
		at_is(doc, "paths|/v1/keys2|post|requestBody|required", "true");
		at_is(doc, "paths|/v1/keys2|post|requestBody|content|application/json|schema",
		      "{\"allOf\":[{\"$ref\":\"#/components/schemas/seo.account.v1."
		      "CreateKeyRequest\"},{\"type\":\"object\",\"properties\":{},"
		      "\"required\":[\"name\"]}]}");
		at_is(doc, "paths|/v1/health|get|responses|200", "{\"description\":\"OK\"}");
		keys_are(doc, "paths|/v1/health|get|responses", "200,401,404");
		at_is(doc, "paths|/v1/health|get|tags", "[\"gateway\"]");
		at_is(doc, "paths|/v1/health|get|description",
		      "\"Free: no credits are charged. Any API key may call it. Not "
		      "counted against the per-key rate limit.\"");
		at_is(doc, "tags|0|name", "\"gateway\"");
		at_is(doc, "paths|/v1/usage|get|parameters",
		      "[{\"name\":\"domain\",\"in\":\"query\",\"required\":true,"
		      "\"schema\":{\"type\":\"string\"}},"
		      "{\"name\":\"count\",\"in\":\"query\",\"required\":false,"
		      "\"schema\":{\"type\":\"integer\",\"format\":\"int32\","
		      "\"default\":1}},"
		      "{\"name\":\"sort\",\"in\":\"query\",\"required\":true,"
		      "\"schema\":{\"type\":\"string\",\"enum\":[\"unspecified\","
		      "\"importance\",\"recent\"]}}]");
		json_decref(doc);
	}

	/* Clashing ids get a number; no server gives "/". */
	clash[0].pattern = "/v1/a-b";
	clash[1].pattern = "/v1/a/b";
	CU_ASSERT_EQUAL_FATAL(gw_openapi_build(clash, 2, NULL, &doc), 0);
	at_is(doc, "paths|/v1/a-b|get|operationId", "\"getAB\"");
	at_is(doc, "paths|/v1/a/b|get|operationId", "\"getAB2\"");
	at_is(doc, "servers|0|url", "\"/\"");
	keys_are(doc, "components|schemas",
		 "Error,seo.account.v1.PricingResponse,seo.account.v1.PriceTier");
	json_decref(doc);
}

/* GW_P_URL: the syntax of an absolute http(s) URL, checked before any
 * charge; the route check wants it on a string field. */
static void test_url_rule(void)
{
	static const gw_param_rule url_rules[] = {
		{"url", GW_P_REQUIRED | GW_P_URL, 0, 0, 0, "invalid_url", NULL}};
	static const gw_param_rule on_int[] = {
		{"limit", GW_P_URL, 0, 0, 0, NULL, NULL}};
	static const char *const good[] = {
		"http%3A%2F%2Fa.test%2F", "HTTPS://a.test:8080/x?y=1",
		"http://a.test", "http://a.test?q", "http://%5B::1%5D:80/",
		"http://10.0.0.1/",
	};
	static const char *const bad[] = {
		"ftp://a.test/", "http://u:p@a.test/", "http://a.test/%23top",
		"http://a test/", "http://a.test:65536/", "http://a.test:/",
		"http:///x", "http:/a.test/", "a.test", "http://a.test:8x/",
		"http://%5B%5D/", "javascript:alert(1)",
	};
	gw_route r = {.method = "GET", .pattern = "/v1/page-seo",
		      .endpoint = "page-seo", .service = GW_SVC_REALTIME,
		      .in = {.kind = GW_IN_QUERY,
			     .message = &seo__realtime__v1__url_request__descriptor,
			     .params = url_rules, .n_params = 1},
		      .out = {.message =
				      &seo__realtime__v1__page_seo_response__descriptor,
			      .status = 200},
		      .summary = "page"};
	ProtobufCMessage *m;
	char q[256], why[160];

	CU_ASSERT_EQUAL(gw_json_route_check(&r, why, sizeof(why)), 0);
	for (size_t i = 0; i < sizeof(good) / sizeof(good[0]); i++) {
		snprintf(q, sizeof(q), "url=%s", good[i]);
		CU_ASSERT_EQUAL(gw_json_decode_request(&r, NULL, 0, q, NULL, 0, NULL,
						       arena, &m, &err), 0);
	}
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		snprintf(q, sizeof(q), "url=%s", bad[i]);
		CU_ASSERT_EQUAL(gw_json_decode_request(&r, NULL, 0, q, NULL, 0, NULL,
						       arena, &m, &err), SEO_EINVAL);
		CU_ASSERT_STRING_EQUAL(err.code, "invalid_url");
		CU_ASSERT_EQUAL(err.http_status, 400);
	}
	r = routes[R_USAGE];
	r.in.params = on_int;
	r.in.n_params = 1;
	check_fails(&r, "rule limit: a URL rule needs a string field");
	/* a fixed price refunded by a response field needs that field */
	r = routes[R_TYPES_Q];
	r.bill.billed_field = "nope";
	check_fails(&r, "GET /v1/test/types: billed field nope missing");
	r.bill.billed_field = "u32";
	CU_ASSERT_EQUAL(gw_json_route_check(&r, why, sizeof(why)), 0);
	/* a surcharge reads a request boolean of a fixed-price route */
	r.bill.surcharge_field = "u32";
	r.bill.surcharge = 1;
	check_fails(&r, "GET /v1/test/types: surcharge needs a boolean request "
			"field and a fixed price");
	r.bill.surcharge_field = "flag";
	CU_ASSERT_EQUAL(gw_json_route_check(&r, why, sizeof(why)), 0);
	r.bill.surcharge = 0;
	check_fails(&r, "GET /v1/test/types: surcharge needs a boolean request "
			"field and a fixed price");
}

/* GW_P_DOMAIN: a domain's syntax, checked before any charge, on a string
 * or each string of a repeated field; invalid_domain unless the rule names
 * another code. A hidden billed field is not in the OpenAPI answer. */
static void test_domain_rule(void)
{
	static const gw_param_rule rules[] = {
		{"str", GW_P_DOMAIN, 0, 0, 0, NULL, NULL},
		{"tags", GW_P_DOMAIN | GW_P_RANGE, 1, 3, 0, NULL, NULL},
		{"pick_name", GW_P_DOMAIN, 0, 0, 0, "invalid_parameter", NULL}};
	static const gw_param_rule on_int[] = {
		{"u32", GW_P_DOMAIN, 0, 0, 0, NULL, NULL}};
	static const char *const good[] = {
		"example.com", "EXAMPLE.COM.", "www.example.co.uk",
		"https%3A%2F%2Fexample.com%2Fa%3Fb", "http://u@example.com:8080/x",
		"b%C3%BCcher.de", "xn--bcher-kva.de", "a-b_c.example",
		"%20example.com",
	};
	static const char *const bad[] = {
		"localhost", "10.0.0.1", "a..com", ".a.com", "-", "a%20b.com",
		"bad!.com", "https%3A%2F%2F", "a.com%3Bx",
		"aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa.com",
	};
	gw_route r = routes[R_TYPES_Q];
	ProtobufCMessage *m;
	json_t *doc;
	char q[256], why[160];
	const char *resp = "paths|/v1/test/types|get|responses|200|content|"
			   "application/json|schema|properties|";

	r.in.params = rules;
	r.in.n_params = sizeof(rules) / sizeof(rules[0]);
	CU_ASSERT_EQUAL(gw_json_route_check(&r, why, sizeof(why)), 0);
	for (size_t i = 0; i < sizeof(good) / sizeof(good[0]); i++) {
		snprintf(q, sizeof(q), "str=%s&tags=a.com,%s", good[i], good[i]);
		CU_ASSERT_EQUAL(gw_json_decode_request(&r, NULL, 0, q, NULL, 0, NULL,
						       arena, &m, &err), 0);
	}
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		snprintf(q, sizeof(q), "str=%s", bad[i]);
		CU_ASSERT_EQUAL(gw_json_decode_request(&r, NULL, 0, q, NULL, 0, NULL,
						       arena, &m, &err), SEO_EINVAL);
		CU_ASSERT_STRING_EQUAL(err.code, "invalid_domain");
		snprintf(q, sizeof(q), "tags=a.com,%s", bad[i]);
		CU_ASSERT_EQUAL(gw_json_decode_request(&r, NULL, 0, q, NULL, 0, NULL,
						       arena, &m, &err), SEO_EINVAL);
		CU_ASSERT_STRING_EQUAL(err.code, "invalid_domain");
	}
	snprintf(q, sizeof(q), "str=a%%20b.com");
	gw_json_decode_request(&r, NULL, 0, q, NULL, 0, NULL, arena, &m, &err);
	CU_ASSERT_STRING_EQUAL(err.message,
			       "str is not a valid domain name: \"a b.com\"");
	/* the count is checked first, with its own code */
	gw_json_decode_request(&r, NULL, 0, "tags=a.com,b.com,c.com,bad!", NULL,
			       0, NULL, arena, &m, &err);
	CU_ASSERT_STRING_EQUAL(err.code, "invalid_parameter");
	gw_json_decode_request(&r, NULL, 0, "pick_name=bad!", NULL, 0, NULL,
			       arena, &m, &err);
	CU_ASSERT_STRING_EQUAL(err.code, "invalid_parameter");
	r.in.params = on_int;
	r.in.n_params = 1;
	check_fails(&r, "rule u32: a domain rule needs a string field");

	r = routes[R_TYPES_Q];
	r.bill.billed_field = "u32";
	r.bill.hide_billed = 1;
	CU_ASSERT_EQUAL(gw_openapi_build(&r, 1, "/", &doc), 0);
	snprintf(q, sizeof(q), "%su32", resp);
	CU_ASSERT_PTR_NULL(at(doc, q));
	snprintf(q, sizeof(q), "%su64", resp);
	CU_ASSERT_PTR_NOT_NULL(at(doc, q));
	json_decref(doc);
}

/* A seo.common.RawJson is written as the value it carries. */
static void test_raw_json(void)
{
	Seo__Realtime__V1__SchemaEntity e = SEO__REALTIME__V1__SCHEMA_ENTITY__INIT;
	Seo__Common__RawJson raw = SEO__COMMON__RAW_JSON__INIT;
	char *types[] = {"Thing"};
	json_t *o;

	e.n_type = 1;
	e.type = types;
	e.source = "top_level";
	e.properties = &raw;
	raw.json = "{\"@type\":\"Thing\",\"n\":[1,2]}";
	o = encode(&e.base);
	CU_ASSERT_PTR_NOT_NULL_FATAL(o);
	CU_ASSERT_EQUAL(json_integer_value(json_array_get(json_object_get(
		json_object_get(o, "properties"), "n"), 1)), 2);
	CU_ASSERT(json_is_null(json_object_get(o, "id")));
	json_decref(o);
	/* text that does not load fails the answer: out of memory, or a bug */
	raw.json = "{oops";
	CU_ASSERT_PTR_NULL(encode(&e.base));
}

/* The stages in the OpenAPI document: an optional key, a second success
 * status, a header the service may set, a forwarded header, a per-IP
 * quota; an answer of bytes. */
static void test_openapi_stages(void)
{
	static const int accepted[] = {202, 0};
	static const char *const retry[] = {"Retry-After", NULL};
	static const char *const client[] = {"X-Service-Client", NULL};
	static const char *const no_errors[] = {NULL};
	gw_route rows[2] = {routes[R_ME], routes[R_TYPES_Q]};
	json_t *doc = NULL, *op;

	rows[0].auth.key = GW_KEY_OPTIONAL;
	rows[0].quota = GW_QUOTA_IP;
	rows[0].forward.headers = client;
	rows[0].out.statuses = accepted;
	rows[0].out.headers = retry;
	rows[0].errors = no_errors;
	rows[1].bill.kind = GW_BILL_FREE;
	rows[1].bill.cost = 0;
	rows[1].out.kind = GW_OUT_BYTES;
	rows[1].out.body_field = "raw";
	rows[1].out.content_type = "application/pdf";
	CU_ASSERT_EQUAL_FATAL(gw_openapi_build(rows, 2, NULL, &doc), 0);

	op = at(doc, "paths|/v1/me|get");
	at_is(op, "security", "[{},{\"ApiKey\":[]}]");
	at_is(op, "parameters", "[{\"name\":\"X-Service-Client\",\"in\":\"header\","
	      "\"required\":false,\"schema\":{\"type\":\"string\"},"
	      "\"description\":\"Forwarded to the service.\"}]");
	at_is(op, "responses|202|description", "\"Accepted\"");
	at_is(op, "responses|202|content|application/json|schema|$ref",
	      "\"#/components/schemas/seo.account.v1.User\"");
	at_is(op, "responses|200|headers|Retry-After|schema", "{\"type\":\"string\"}");
	at_is(op, "responses|202|headers|Retry-After|schema", "{\"type\":\"string\"}");
	at_is(op, "responses|401|headers|Retry-After|schema", "{\"type\":\"string\"}");
	CU_ASSERT_PTR_NULL(at(op, "responses|429"));
	CU_ASSERT_PTR_NOT_NULL(strstr(json_string_value(at(op, "description")),
				      "The API key is optional"));
	CU_ASSERT_PTR_NOT_NULL(strstr(json_string_value(at(op, "description")),
				      "per client IP"));

	op = at(doc, "paths|/v1/test/types|get");
	at_is(op, "responses|200|content",
	      "{\"application/pdf\":{\"schema\":{\"type\":\"string\","
	      "\"format\":\"binary\"}}}");
	at_is(op, "x-billing", "\"free\"");
	json_decref(doc);
}

/* The specification's nullability: BacklinkRow's anchor_text is "string,
 * nullable" (present as null when unset), its anchor_type an enum that is
 * optional but never null (absent when unset); the OpenAPI document says
 * the same. */
static void test_nullable(void)
{
	static const char *const no_errors[] = {NULL};
	const gw_route row = {
		.method = "GET", .pattern = "/v1/backlinks",
		.endpoint = "backlinks", .service = GW_SVC_GRAPH,
		.rpc_path = "/seo.graph.v1.Graph/Backlinks",
		.in = {.kind = GW_IN_QUERY,
		       .message = &seo__graph__v1__backlinks_request__descriptor},
		.out = {.message = &seo__graph__v1__backlinks_response__descriptor,
			.status = 200},
		.summary = "Backlinks", .errors = no_errors};
	Seo__Graph__V1__BacklinkRow r = SEO__GRAPH__V1__BACKLINK_ROW__INIT;
	Seo__Graph__V1__CrawlHistory h = SEO__GRAPH__V1__CRAWL_HISTORY__INIT;
	json_t *doc = NULL;

	r.from_domain = "a.test";
	r.from_url = "https://a.test/";
	r.to_url = "https://b.test/";
	r.link_type = "hyperlink";
	r.crawled_at = "2024-05-10T10:00:00Z";
	encodes_as(&r, "{\"from_domain\":\"a.test\",\"from_url\":\"https://a.test/\","
		       "\"to_url\":\"https://b.test/\",\"anchor_text\":null,"
		       "\"rel\":null,\"link_type\":\"hyperlink\","
		       "\"domain_host_count\":null,"
		       "\"crawled_at\":\"2024-05-10T10:00:00Z\"}");
	r.anchor_type = "branded";
	r.link_quality = "high";
	r.has_from_domain_score = 1;
	r.from_domain_score = 40;
	r.has_domain_host_count = 1;
	r.domain_host_count = NAN;
	r.anchor_text = "a";
	encodes_as(&r, "{\"from_domain\":\"a.test\",\"from_url\":\"https://a.test/\","
		       "\"to_url\":\"https://b.test/\",\"anchor_text\":\"a\","
		       "\"rel\":null,\"link_type\":\"hyperlink\","
		       "\"domain_host_count\":null,"
		       "\"crawled_at\":\"2024-05-10T10:00:00Z\","
		       "\"from_domain_score\":40,\"anchor_type\":\"branded\","
		       "\"link_quality\":\"high\"}");
	encodes_as(&h, "{\"first_seen\":null,\"last_seen\":null,\"total_urls\":0}");

	CU_ASSERT_EQUAL_FATAL(gw_openapi_build(&row, 1, NULL, &doc), 0);
	at_is(doc, "components|schemas|seo.graph.v1.BacklinkRow|properties|anchor_text",
	      "{\"type\":[\"string\",\"null\"]}");
	at_is(doc, "components|schemas|seo.graph.v1.BacklinkRow|properties|anchor_type",
	      "{\"type\":\"string\"}");
	at_is(doc, "components|schemas|seo.graph.v1.BacklinkRow|properties|domain_host_count",
	      "{\"type\":[\"number\",\"null\"],\"format\":\"double\"}");
	at_is(doc, "components|schemas|seo.graph.v1.BacklinkRow|properties|from_domain_score",
	      "{\"type\":\"integer\",\"format\":\"int32\"}");
	json_decref(doc);
}

int main(void)
{
	CU_pSuite s;

	if (CU_initialize_registry() != CUE_SUCCESS)
		return 1;
	s = CU_add_suite("gw_json", setup, teardown);
	if (s == NULL ||
	    CU_add_test(s, "query defaults and clamp", test_query_defaults_and_clamp) == NULL ||
	    CU_add_test(s, "query strict", test_query_strict) == NULL ||
	    CU_add_test(s, "domain rule", test_domain_rule) == NULL ||
	    CU_add_test(s, "query types", test_query_types) == NULL ||
	    CU_add_test(s, "json checkout", test_json_checkout) == NULL ||
	    CU_add_test(s, "json body code", test_json_body_code) == NULL ||
	    CU_add_test(s, "json types", test_json_types) == NULL ||
	    CU_add_test(s, "path and raw", test_path_and_raw) == NULL ||
	    CU_add_test(s, "error message cut", test_error_message_cut) == NULL ||
	    CU_add_test(s, "rule messages", test_rule_messages) == NULL ||
	    CU_add_test(s, "encode account", test_encode_account) == NULL ||
	    CU_add_test(s, "encode types", test_encode_types) == NULL ||
	    CU_add_test(s, "answer envelope", test_answer_envelope) == NULL ||
	    CU_add_test(s, "round trips", test_round_trips) == NULL ||
	    CU_add_test(s, "field count and usage", test_field_count_and_usage) == NULL ||
	    CU_add_test(s, "route check", test_route_check) == NULL ||
	    CU_add_test(s, "openapi", test_openapi) == NULL ||
	    CU_add_test(s, "url rule", test_url_rule) == NULL ||
	    CU_add_test(s, "raw json", test_raw_json) == NULL ||
	    CU_add_test(s, "nullable", test_nullable) == NULL ||
	    CU_add_test(s, "openapi stages", test_openapi_stages) == NULL) {
		CU_cleanup_registry();
		return 1;
	}
	CU_basic_set_mode(CU_BRM_VERBOSE);
	CU_basic_run_tests();
	{
		unsigned failed = CU_get_number_of_failures();
		CU_cleanup_registry();
		return failed != 0;
	}
}

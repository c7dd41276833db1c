/*
 * test_gw_json_failmalloc.c: the gateway's transcoder (gw_json.h) when
 * allocations fail (tests/support/failmalloc.h). Each run decodes a valid
 * request (JSON body, query string, path parameters) onto a fresh arena
 * and writes the message back as JSON text, or builds the OpenAPI document: a run
 * whose allocation failed must answer SEO_ENOMEM (with the 500
 * internal_error of gw_json_error) or NULL, never a 400 blaming the
 * client's valid input nor a document missing parts; none may crash or,
 * under ASan, leak.
 */
#include <CUnit/Basic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "failmalloc.h"
#include "gw_json.h"
#include "seo/errors.h"
#include "seo/json_text.h"
#include "test_gw_json.pb-c.h"

#define TEST(m) (&seo__test__v1__##m##__descriptor)

static const gw_param_rule rules[] = {
	{"i32", GW_P_RANGE, -5, 5, 0, NULL, NULL},
	{"u32", GW_P_RANGE | GW_P_FALLBACK | GW_P_DEFAULT, 1, 10, 3, NULL, NULL},
	{"sort", GW_P_DEFAULT | GW_P_FALLBACK, 0, 0, 1, NULL, "Row order."},
	{"tags", GW_P_RANGE | GW_P_DOMAIN, 1, 3, 0, NULL, NULL},
	{"str", GW_P_RANGE | GW_P_USAGE, 2, 8, 0, NULL, NULL},
};

enum { R_BODY, R_QUERY, R_PATH, N_ROUTES };

static const gw_route routes[N_ROUTES] = {
	[R_BODY] = {.method = "POST", .pattern = "/v1/test/types",
		.endpoint = "types",
		.service = GW_SVC_REALTIME, .rpc_path = "/seo.test.v1.Test/Types",
		.in = {.kind = GW_IN_JSON, .message = TEST(all_types),
		       .params = rules,
		       .n_params = sizeof(rules) / sizeof(rules[0]),
		       .strict = 1},
		.out = {.message = TEST(all_types), .status = 200},
		.summary = "Every type by body"},
	[R_QUERY] = {.method = "GET", .pattern = "/v1/test/types",
		.endpoint = "types",
		.service = GW_SVC_GRAPH, .rpc_path = "/seo.test.v1.Test/Types",
		.in = {.kind = GW_IN_QUERY, .message = TEST(all_types),
		       .params = rules,
		       .n_params = sizeof(rules) / sizeof(rules[0])},
		.out = {.message = TEST(all_types), .status = 200},
		.summary = "Every type by query"},
	[R_PATH] = {.method = "PATCH", .pattern = "/v1/test/nodes/:name",
		.endpoint = "nodes",
		.service = GW_SVC_AGENT, .rpc_path = "/seo.test.v1.Test/Node",
		.in = {.kind = GW_IN_JSON, .message = TEST(node)},
		.out = {.message = TEST(node), .status = 200},
		.summary = "Path and body"},
};

/* One request, and the JSON its message encodes to (from a run without a
 * failed allocation). */
struct request {
	int route;
	const gw_kv *path;
	size_t n_path;
	const char *query;
	const char *body;
	char *want;
};

/* Decodes and encodes `r`; 0 and *out, or SEO_ENOMEM, or 1 when the valid
 * request was refused as the client's fault. */
static int transcode(const struct request *r, char **out)
{
	size_t len;
	seo_arena *a = seo_arena_new(64); /* small: the arena grows */
	ProtobufCMessage *m = NULL;
	gw_json_error err;
	int rc;

	*out = NULL;
	if (a == NULL)
		return SEO_ENOMEM;
	memset(&err, 0, sizeof(err));
	rc = gw_json_decode_request(&routes[r->route], r->path, r->n_path,
				    r->query, r->body,
				    r->body != NULL ? strlen(r->body) : 0, NULL,
				    a, &m, &err);
	if (rc == SEO_ENOMEM && (err.http_status != 500 || err.code == NULL ||
				 strcmp(err.code, "internal_error") != 0))
		rc = 1;
	if (rc == SEO_EINVAL) {
		fprintf(stderr, "\n  refused: %s %s\n", err.code, err.message);
		rc = 1;
	}
	if (rc == 0)
		rc = gw_json_write_answer(m, NULL, NULL, 0, out, &len);
	seo_arena_free(a);
	return rc;
}

static int run_request(void *ud)
{
	const struct request *r = ud;
	char *got;
	int rc = transcode(r, &got);

	if (rc == 0 && strcmp(got, r->want) != 0)
		rc = 1;
	failmalloc_settle();
	free(got);
	return rc;
}

static void loop(struct request *r)
{
	long n;

	CU_ASSERT_EQUAL_FATAL(transcode(r, &r->want), 0);
	n = failmalloc_loop(routes[r->route].pattern, run_request, r, 5000);
	CU_ASSERT(n > 0);
	fprintf(stderr, " %ld allocations ", n);
	free(r->want);
}

static void test_body(void)
{
	struct request r = {R_BODY, NULL, 0, "flag=true",
		"{\"i32\": -5, \"s32\": 2, \"u64\": 9223372036854775807,"
		" \"flt\": 0.5, \"dbl\": 5, \"sort\": \"recent\","
		" \"str\": \"h\\u00e9llo\", \"raw\": \"aGk=\","
		" \"inner\": {\"n\": 4, \"label\": \"in\"},"
		" \"nums\": [1, 2], \"tags\": [\"a.com\", \"b.org\"],"
		" \"items\": [{\"n\": 1}, {\"n\": 2, \"label\": null}],"
		" \"sorts\": [\"recent\"], \"reals\": [1, 2.5],"
		" \"flags\": [true], \"blobs\": [\"\", \"/w==\"],"
		" \"pick_name\": \"pn\","
		" \"node\": {\"name\": \"a\", \"child\": {\"name\": \"b\"}}}",
		NULL};

	loop(&r);
}

static void test_query(void)
{
	struct request r = {R_QUERY, NULL, 0,
		"i32=3&u32=99&sort=recent&tags=a.com,b.org&nums=1&nums=2"
		"&str=caf%C3%A9&flag=false&dbl=2.5&raw=aGk%3D&pick_id=7", NULL,
		NULL};

	loop(&r);
}

static void test_path(void)
{
	static const gw_kv path[] = {{"name", "p%2Fq+r"}};
	struct request r = {R_PATH, path, 1, "",
		"{\"child\": {\"name\": \"c\", \"child\": {\"name\": \"d\"}}}",
		NULL};

	loop(&r);
}

static json_t *openapi_want;

static int run_openapi(void *ud)
{
	json_t *doc = NULL;
	int rc = gw_openapi_build(routes, N_ROUTES, "https://api.example",
				  &doc);

	(void)ud;
	if (rc == 0 && !json_equal(doc, openapi_want))
		rc = 1;
	failmalloc_settle();
	json_decref(doc);
	return rc;
}

static void test_openapi(void)
{
	long n;

	CU_ASSERT_EQUAL_FATAL(gw_openapi_build(routes, N_ROUTES,
					       "https://api.example",
					       &openapi_want), 0);
	n = failmalloc_loop("openapi", run_openapi, NULL, 50000);
	CU_ASSERT(n > 0);
	fprintf(stderr, " %ld allocations ", n);
	json_decref(openapi_want);
}

int main(void)
{
	CU_pSuite s;
	unsigned failed;

	failmalloc_init();
	seo_json_init();
	if (CU_initialize_registry() != CUE_SUCCESS)
		return 1;
	s = CU_add_suite("transcoder under failing allocations", NULL, NULL);
	CU_add_test(s, "JSON body", test_body);
	CU_add_test(s, "query string", test_query);
	CU_add_test(s, "path parameters", test_path);
	CU_add_test(s, "OpenAPI document", test_openapi);
	CU_basic_set_mode(CU_BRM_VERBOSE);
	CU_basic_run_tests();
	failed = CU_get_number_of_tests_failed() +
		 CU_get_number_of_suites_failed();
	CU_cleanup_registry();
	return failed != 0;
}

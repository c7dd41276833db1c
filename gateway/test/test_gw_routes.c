/* The real route table: every row is consistent with its descriptors, and
 * matching binds path parameters and tells 404 from 405. */
#include <string.h>

#include <CUnit/Basic.h>

#include "gw_json.h"
#include "gw_routes.h"

static void test_every_row_checks(void)
{
	size_t n;
	const gw_route *r = gw_routes(&n);
	char why[256];

	CU_ASSERT_FATAL(n > 0);
	for (size_t i = 0; i < n; i++) {
		int rc = gw_json_route_check(&r[i], why, sizeof(why));
		if (rc != 0)
			fprintf(stderr, "%s %s: %s\n", r[i].method, r[i].pattern, why);
		CU_ASSERT_EQUAL(rc, 0);
	}
}

static void test_rows_are_unique(void)
{
	size_t n;
	const gw_route *r = gw_routes(&n);

	for (size_t i = 0; i < n; i++)
		for (size_t j = i + 1; j < n; j++)
			CU_ASSERT_FALSE(strcmp(r[i].method, r[j].method) == 0 &&
					strcmp(r[i].pattern, r[j].pattern) == 0);
}

static void test_match(void)
{
	char scratch[256];
	gw_kv params[GW_MAX_PATH_PARAMS];
	size_t np;
	int known;
	const gw_route *r;

	r = gw_route_match("DELETE", "/v1/keys/abc123", scratch, params, &np, &known);
	CU_ASSERT_PTR_NOT_NULL_FATAL(r);
	CU_ASSERT_STRING_EQUAL(r->pattern, "/v1/keys/:id");
	CU_ASSERT_EQUAL(np, 1);
	CU_ASSERT_STRING_EQUAL(params[0].name, "id");
	CU_ASSERT_STRING_EQUAL(params[0].value, "abc123");

	r = gw_route_match("GET", "/v1/keys", scratch, params, &np, &known);
	CU_ASSERT_PTR_NOT_NULL_FATAL(r);
	CU_ASSERT_STRING_EQUAL(r->method, "GET");
	CU_ASSERT_EQUAL(np, 0);

	r = gw_route_match("HEAD", "/v1/pricing", scratch, params, &np, &known);
	CU_ASSERT_PTR_NOT_NULL(r);
	/* HEAD of a billed GET would be charged for an answer without body */
	r = gw_route_match("HEAD", "/v1/referring-domains", scratch, params,
			   &np, &known);
	CU_ASSERT_PTR_NULL(r);
	CU_ASSERT_EQUAL(known, 1);

	r = gw_route_match("PUT", "/v1/keys", scratch, params, &np, &known);
	CU_ASSERT_PTR_NULL(r);
	CU_ASSERT_EQUAL(known, 1);

	r = gw_route_match("GET", "/v1/keys/", scratch, params, &np, &known);
	CU_ASSERT_PTR_NULL(r);
	CU_ASSERT_EQUAL(known, 0);

	r = gw_route_match("GET", "/v1/nope", scratch, params, &np, &known);
	CU_ASSERT_PTR_NULL(r);
	CU_ASSERT_EQUAL(known, 0);

	r = gw_route_match("DELETE", "/v1/keys/a/b", scratch, params, &np, &known);
	CU_ASSERT_PTR_NULL(r);
}

static void test_allow(void)
{
	char scratch[256], allow[64];
	gw_kv params[GW_MAX_PATH_PARAMS];

	CU_ASSERT_EQUAL(gw_route_allow("/v1/referring-domains", scratch, params,
				       allow, sizeof(allow)), 3);
	CU_ASSERT_STRING_EQUAL(allow, "GET");
	gw_route_allow("/v1/keys", scratch, params, allow, sizeof(allow));
	CU_ASSERT_PTR_NOT_NULL(strstr(allow, "GET, HEAD"));
	CU_ASSERT_PTR_NOT_NULL(strstr(allow, "POST"));
	CU_ASSERT_EQUAL(gw_route_allow("/v1/nope", scratch, params, allow,
				       sizeof(allow)), 0);
	CU_ASSERT_STRING_EQUAL(allow, "");
	/* too small for two methods: the first only */
	gw_route_allow("/v1/keys", scratch, params, allow, 6);
	CU_ASSERT_EQUAL(strchr(allow, ','), NULL);
}

static void test_roles(void)
{
	CU_ASSERT_EQUAL(gw_role_bit("owner"), GW_ROLE_OWNER);
	CU_ASSERT_EQUAL(gw_role_bit("client"), GW_ROLE_CLIENT);
	CU_ASSERT_EQUAL(gw_role_bit("root"), 0);
	CU_ASSERT_EQUAL(gw_role_bit(NULL), 0);
}

int main(void)
{
	CU_pSuite s;
	unsigned failed;

	if (CU_initialize_registry() != CUE_SUCCESS)
		return 1;
	s = CU_add_suite("gw_routes", NULL, NULL);
	CU_add_test(s, "every row checks", test_every_row_checks);
	CU_add_test(s, "rows are unique", test_rows_are_unique);
	CU_add_test(s, "match", test_match);
	CU_add_test(s, "allow", test_allow);
	CU_add_test(s, "roles", test_roles);
	CU_basic_set_mode(CU_BRM_VERBOSE);
	CU_basic_run_tests();
	failed = CU_get_number_of_failures();
	CU_cleanup_registry();
	return failed ? 1 : 0;
}

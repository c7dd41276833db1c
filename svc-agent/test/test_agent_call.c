/*
 * test_agent_call: ids and errors shared by svc-agent's parts.
 */
#include <string.h>

#include <CUnit/Basic.h>

#include "agent_int.h"
#include "seo/errors.h"
#include "seo/util.h"

static void test_new_id(void)
{
	seo_arena *a = seo_arena_new(0);
	char *x = agent__new_id(a, "prp_"), *y = agent__new_id(a, "prp_");

	CU_ASSERT_PTR_NOT_NULL_FATAL(x);
	CU_ASSERT_PTR_NOT_NULL_FATAL(y);
	CU_ASSERT_EQUAL(strlen(x), 4 + 24);
	CU_ASSERT_EQUAL(strncmp(x, "prp_", 4), 0);
	CU_ASSERT_EQUAL(strspn(x + 4, SEO_URLSAFE), 24);
	CU_ASSERT_NOT_EQUAL(strcmp(x, y), 0);
	seo_arena_free(a);
}

static void test_err(void)
{
	agent_err e;

	CU_ASSERT_EQUAL(agent__err(&e, SEO_EINVAL, "invalid_proposal_input",
				   "kind must be %s", "indexnow_submit"),
			SEO_EINVAL);
	CU_ASSERT_STRING_EQUAL(e.code, "invalid_proposal_input");
	CU_ASSERT_STRING_EQUAL(e.message, "kind must be indexnow_submit");
}

int main(void)
{
	CU_pSuite s;
	unsigned failed;

	if (CU_initialize_registry() != CUE_SUCCESS)
		return 1;
	s = CU_add_suite("agent_call", NULL, NULL);
	CU_add_test(s, "new_id", test_new_id);
	CU_add_test(s, "err", test_err);
	CU_basic_set_mode(CU_BRM_VERBOSE);
	CU_basic_run_tests();
	failed = CU_get_number_of_failures();
	CU_cleanup_registry();
	return failed != 0;
}

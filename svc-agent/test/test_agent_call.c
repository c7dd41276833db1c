/*
 * test_agent_call: ids, errors and text cleaning shared by svc-agent's
 * parts.
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

static void test_clean_text(void)
{
	seo_arena *a = seo_arena_new(0);

	CU_ASSERT_PTR_NOT_NULL_FATAL(a);
	/* C0 (newline, tab, bell), DEL and C1 go; letters stay */
	CU_ASSERT_STRING_EQUAL(agent__clean_text(a, "a\nb\tc\x07" "d\x7f\xc2\x85" "e", 100, 0),
			       "abcde");
	/* invisible ones only when asked */
	CU_ASSERT_STRING_EQUAL(agent__clean_text(a, "x\xe2\x80\x8by\xef\xbb\xbfz", 100, 0),
			       "x\xe2\x80\x8by\xef\xbb\xbfz");
	CU_ASSERT_STRING_EQUAL(agent__clean_text(a, "x\xe2\x80\x8by\xef\xbb\xbfz\xe2\x80\xaeq",
						 100, 1),
			       "xyzq");
	/* the cut counts code points kept, not bytes */
	CU_ASSERT_STRING_EQUAL(agent__clean_text(a, "\xc3\xa9\x01\xc3\xa9\xc3\xa9", 2, 0),
			       "\xc3\xa9\xc3\xa9");
	CU_ASSERT_STRING_EQUAL(agent__clean_text(a, "", 5, 1), "");
	seo_arena_free(a);
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
	CU_add_test(s, "clean_text", test_clean_text);
	CU_basic_set_mode(CU_BRM_VERBOSE);
	CU_basic_run_tests();
	failed = CU_get_number_of_failures();
	CU_cleanup_registry();
	return failed != 0;
}

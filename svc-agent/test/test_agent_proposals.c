/*
 * test_agent_proposals: the proposals part's tables and drafts
 * (proposals.c, proposals_indexnow.c): the kinds, and an IndexNow list
 * made canonical (de-duplicated, sorted) with its title and content key.
 */
#include <string.h>

#include <CUnit/Basic.h>

#include "proposals_int.h"

#define DAY_MS ((int64_t)24 * 3600 * 1000)

static void test_kinds(void)
{
	const agent__kind *inow = agent__kind_find("indexnow_submit");
	const agent__kind *out = agent__kind_find("outreach_send");

	CU_ASSERT_PTR_NOT_NULL_FATAL(inow);
	CU_ASSERT_PTR_NOT_NULL_FATAL(out);
	CU_ASSERT_EQUAL(inow->expiry_ms, 7 * DAY_MS);
	CU_ASSERT_EQUAL(out->expiry_ms, 14 * DAY_MS);
	CU_ASSERT_EQUAL(inow->credits, 1);
	CU_ASSERT_EQUAL(out->credits, 0);
	/* only the two creatable kinds */
	CU_ASSERT_PTR_NULL(agent__kind_find("investigate_drop"));
	CU_ASSERT_PTR_NULL(agent__kind_find("outreach_sending_change"));
	CU_ASSERT_PTR_NULL(agent__kind_find(""));
	CU_ASSERT_PTR_NULL(agent__kind_find(NULL));
}

static void test_indexnow_draft(void)
{
	const char *urls[] = {"https://a.test/z", "https://a.test/b",
			      "https://a.test/z", "https://a.test/a"};
	const char *shuffled[] = {"https://a.test/a", "https://a.test/z",
				  "https://a.test/b"};
	seo_arena *arena = seo_arena_new(0);
	agent_proposal_draft d, e;

	CU_ASSERT_PTR_NOT_NULL_FATAL(arena);
	CU_ASSERT_EQUAL_FATAL(agent__indexnow_draft(arena, "site_1", 1, "a.test",
						    urls, 4, &d), 0);
	CU_ASSERT_STRING_EQUAL(d.payload_json,
			       "{\"host\":\"a.test\",\"urls\":[\"https://a.test/a\","
			       "\"https://a.test/b\",\"https://a.test/z\"]}");
	CU_ASSERT_STRING_EQUAL(d.title, "Submit 3 URLs of a.test to IndexNow");
	CU_ASSERT_STRING_EQUAL(d.site_id, "site_1");
	CU_ASSERT_EQUAL(d.automatic, 1);
	CU_ASSERT_PTR_NULL(d.supersede_key);
	CU_ASSERT_EQUAL(strlen(d.dedupe_key), 64);
	/* the same set in another order is the same content */
	CU_ASSERT_EQUAL_FATAL(agent__indexnow_draft(arena, "site_1", 0, "a.test",
						    shuffled, 3, &e), 0);
	CU_ASSERT_STRING_EQUAL(e.dedupe_key, d.dedupe_key);
	CU_ASSERT_EQUAL(e.automatic, 0);
	/* another set is not */
	CU_ASSERT_EQUAL_FATAL(agent__indexnow_draft(arena, "site_1", 0, "a.test",
						    shuffled, 1, &e), 0);
	CU_ASSERT_STRING_NOT_EQUAL(e.dedupe_key, d.dedupe_key);
	CU_ASSERT_STRING_EQUAL(e.title, "Submit 1 URL of a.test to IndexNow");
	seo_arena_free(arena);
}

int main(void)
{
	CU_pSuite s;
	unsigned failed;

	if (CU_initialize_registry() != CUE_SUCCESS)
		return 1;
	s = CU_add_suite("agent_proposals", NULL, NULL);
	CU_add_test(s, "kinds", test_kinds);
	CU_add_test(s, "indexnow_draft", test_indexnow_draft);
	CU_basic_set_mode(CU_BRM_VERBOSE);
	CU_basic_run_tests();
	failed = CU_get_number_of_failures();
	CU_cleanup_registry();
	return failed != 0;
}

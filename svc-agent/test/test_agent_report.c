/*
 * test_agent_report: the client report's weeks (Monday 00:00 UTC to the
 * next Monday) and the week_start rule (a real date, a Monday, YYYY-MM-DD).
 */
#include <CUnit/Basic.h>

#include "report.h"
#include "seo/errors.h"

#define MON_2026_11_23 1795392000000LL
#define HOUR_MS 3600000LL

static void test_week_of(void)
{
	/* Thursday 2026-11-26 16:53 */
	CU_ASSERT_EQUAL(agent__week_of(1795711980000LL), MON_2026_11_23);
	CU_ASSERT_EQUAL(agent__week_of(MON_2026_11_23), MON_2026_11_23);
	CU_ASSERT_EQUAL(agent__week_of(MON_2026_11_23 - 1),
			MON_2026_11_23 - AGENT_WEEK_MS);
	CU_ASSERT_EQUAL(agent__week_of(MON_2026_11_23 + AGENT_WEEK_MS - 1),
			MON_2026_11_23);
	/* the first Monday of the epoch */
	CU_ASSERT_EQUAL(agent__week_of(345600000LL + 7 * HOUR_MS), 345600000LL);
}

static void test_week_parse(void)
{
	static const char *const bad[] = {
		"2026-11-24",  /* a Tuesday */
		"2026-11-22",  /* a Sunday */
		"2026-02-30",  /* no such day */
		"2026-13-02", "2026-00-05", "2026-11-00",
		"2026-11-23x", "2026-11-2", "2026-1-23", "26-11-23",
		"2026/11/23", "2026-11-23T00:00:00Z", " 2026-11-23", "", "2026",
		"+026-11-23", "2026-1a-23",
	};
	int64_t ms = 0;

	CU_ASSERT_EQUAL(agent__week_parse("2026-11-23", &ms), 0);
	CU_ASSERT_EQUAL(ms, MON_2026_11_23);
	/* across a leap day: 2024-02-26 and 2024-03-04 */
	CU_ASSERT_EQUAL(agent__week_parse("2024-02-26", &ms), 0);
	CU_ASSERT_EQUAL(ms, 1708905600000LL);
	CU_ASSERT_EQUAL(agent__week_parse("2024-03-04", &ms), 0);
	CU_ASSERT_EQUAL(ms, 1709510400000LL);
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		ms = 7;
		CU_ASSERT_EQUAL(agent__week_parse(bad[i], &ms), SEO_EINVAL);
		CU_ASSERT_EQUAL(ms, 7);
	}
}

static void test_date(void)
{
	char d[AGENT_DATE_LEN];

	agent__date(MON_2026_11_23, d);
	CU_ASSERT_STRING_EQUAL(d, "2026-11-23");
	agent__date(MON_2026_11_23 + AGENT_WEEK_MS - 1, d);
	CU_ASSERT_STRING_EQUAL(d, "2026-11-29");
	agent__date(1709164800000LL, d);
	CU_ASSERT_STRING_EQUAL(d, "2024-02-29");
}

int main(void)
{
	CU_pSuite s;
	unsigned failed;

	if (CU_initialize_registry() != CUE_SUCCESS)
		return 1;
	s = CU_add_suite("agent_report", NULL, NULL);
	CU_add_test(s, "week_of", test_week_of);
	CU_add_test(s, "week_parse", test_week_parse);
	CU_add_test(s, "date", test_date);
	CU_basic_set_mode(CU_BRM_VERBOSE);
	CU_basic_run_tests();
	failed = CU_get_number_of_failures();
	CU_cleanup_registry();
	return failed != 0;
}

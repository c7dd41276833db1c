/*
 * test_gw_authfail.c: failed authentications per client address
 * (gateway/lib/authfail.c): an address that used its tries waits, by the
 * refill rate, while other addresses are untouched; 0 turns it off; the
 * table stays bounded.
 */
#include <CUnit/Basic.h>
#include <stdio.h>

#include "authfail.h"

static void test_limit_per_address(void)
{
	gw_authfail *f = NULL;

	CU_ASSERT_FATAL(gw__authfail_new(30, &f) == 0);
	for (int i = 0; i < 30; i++) {
		CU_ASSERT_EQUAL(gw__authfail_wait(f, "192.0.2.1", 1000), 0);
		gw__authfail_count(f, "192.0.2.1", 1000);
	}
	/* one try back every 2 s */
	CU_ASSERT_EQUAL(gw__authfail_wait(f, "192.0.2.1", 1000), 2);
	CU_ASSERT_EQUAL(gw__authfail_wait(f, "192.0.2.1", 2500), 1);
	CU_ASSERT_EQUAL(gw__authfail_wait(f, "192.0.2.1", 3000), 0);
	CU_ASSERT_EQUAL(gw__authfail_wait(f, "192.0.2.2", 1000), 0);
	CU_ASSERT_EQUAL(gw__authfail_wait(f, "2001:db8::1", 1000), 0);
	gw__authfail_count(f, "192.0.2.1", 3000);
	CU_ASSERT(gw__authfail_wait(f, "192.0.2.1", 3000) > 0);
	/* a minute refills it whole */
	CU_ASSERT_EQUAL(gw__authfail_wait(f, "192.0.2.1", 63000), 0);
	gw__authfail_free(f);
}

static void test_off(void)
{
	gw_authfail *f = NULL;

	CU_ASSERT_FATAL(gw__authfail_new(0, &f) == 0);
	for (int i = 0; i < 1000; i++)
		gw__authfail_count(f, "192.0.2.1", 0);
	CU_ASSERT_EQUAL(gw__authfail_wait(f, "192.0.2.1", 0), 0);
	gw__authfail_free(f);
}

static void test_bounded(void)
{
	gw_authfail *f = NULL;
	char ip[32];

	CU_ASSERT_FATAL(gw__authfail_new(1, &f) == 0);
	gw__authfail_count(f, "198.51.100.7", 0);
	CU_ASSERT(gw__authfail_wait(f, "198.51.100.7", 0) > 0);
	/* more addresses than the table holds: it starts over, no growth */
	for (unsigned i = 0; i <= GW_AUTHFAIL_MAX_ADDRS; i++) {
		snprintf(ip, sizeof(ip), "10.%u.%u.%u", i >> 16 & 255,
			 i >> 8 & 255, i & 255);
		gw__authfail_count(f, ip, 0);
	}
	CU_ASSERT_EQUAL(gw__authfail_wait(f, "10.1.0.0", 0), 1 * 60);
	gw__authfail_free(f);
}

int main(void)
{
	CU_pSuite s;
	unsigned failed;

	if (CU_initialize_registry() != CUE_SUCCESS)
		return 1;
	s = CU_add_suite("authfail", NULL, NULL);
	CU_add_test(s, "a limit per address", test_limit_per_address);
	CU_add_test(s, "0 turns it off", test_off);
	CU_add_test(s, "a bounded table", test_bounded);
	CU_basic_set_mode(CU_BRM_VERBOSE);
	CU_basic_run_tests();
	failed = CU_get_number_of_tests_failed() +
		 CU_get_number_of_suites_failed();
	CU_cleanup_registry();
	return failed != 0;
}

/* The client's address behind trusted proxies (lib/client_ip.c):
 * SEO_TRUSTED_PROXIES' syntax, and X-Forwarded-For read only from them. */
#include <stdio.h>
#include <string.h>

#include <CUnit/Basic.h>

#include "client_ip.h"
#include "seo/errors.h"

static void test_parse(void)
{
	static const char *const good[] = {
		"", " , ", "10.0.0.0/8", "127.0.0.1", "::1/128, 192.168.0.0/16",
		" 10.1.2.3/32 ,fd00::/8 ", "0.0.0.0/0",
	};
	static const char *const bad[] = {
		"10.0.0.0/33", "::1/129", "10.0.0/8", "example.com", "10.0.0.0/",
		"10.0.0.0/x", "10.0.0.1, nope", "1.2.3.4/8/8", "/8",
	};
	gw_proxies *p;

	for (size_t i = 0; i < sizeof(good) / sizeof(good[0]); i++) {
		CU_ASSERT_EQUAL(gw__proxies_parse(good[i], &p), 0);
		gw__proxies_free(p);
	}
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		p = (gw_proxies *)1;
		CU_ASSERT_EQUAL(gw__proxies_parse(bad[i], &p), SEO_EINVAL);
		CU_ASSERT_PTR_NULL(p);
	}
	CU_ASSERT_EQUAL(gw__proxies_parse("", &p), 0);
	CU_ASSERT_PTR_NULL(p);
}

static void test_client_ip(void)
{
	static const struct {
		const char *peer, *xff, *want;
	} cases[] = {
		/* an untrusted peer: its header is ignored */
		{"203.0.113.9", "198.51.100.1", "203.0.113.9"},
		/* a trusted peer without the header is the client */
		{"10.0.0.2", NULL, "10.0.0.2"},
		{"10.0.0.2", "198.51.100.1", "198.51.100.1"},
		/* from the right: trusted hops skipped, a spoofed left part not
		 * believed */
		{"10.0.0.2", "1.1.1.1, 198.51.100.1, 10.0.0.7", "198.51.100.1"},
		{"10.0.0.2", " 2001:db8::5 ,10.9.9.9", "2001:db8::5"},
		/* a malformed entry stops at the last trusted hop */
		{"10.0.0.2", "198.51.100.1, garbage", "10.0.0.2"},
		{"10.0.0.2", "garbage, 10.0.0.3", "10.0.0.3"},
		{"10.0.0.2", "", "10.0.0.2"},
		/* only proxies: the leftmost */
		{"10.0.0.2", "10.0.0.4, 10.0.0.3", "10.0.0.4"},
		{"::1", "198.51.100.2", "198.51.100.2"},
		{"::2", "198.51.100.2", "::2"},
		/* a /12 boundary: 172.16.0.0/12 holds 172.31.x, not 172.32.x */
		{"172.31.255.1", "198.51.100.3", "198.51.100.3"},
		{"172.32.0.1", "198.51.100.3", "172.32.0.1"},
	};
	seo_arena *a = seo_arena_new(0);
	gw_proxies *p;

	CU_ASSERT_FATAL(a != NULL);
	CU_ASSERT_EQUAL_FATAL(gw__proxies_parse("10.0.0.0/8, ::1, 172.16.0.0/12",
						&p), 0);
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		const char *got = gw__client_ip(p, cases[i].peer, cases[i].xff, a);

		CU_ASSERT_STRING_EQUAL(got, cases[i].want);
		if (strcmp(got, cases[i].want) != 0)
			fprintf(stderr, "\n  %s + %s: got %s, want %s\n",
				cases[i].peer, cases[i].xff ? cases[i].xff : "-",
				got, cases[i].want);
	}
	/* No trusted proxies: always the peer. */
	CU_ASSERT_STRING_EQUAL(gw__client_ip(NULL, "10.0.0.2", "1.2.3.4", a),
			       "10.0.0.2");
	gw__proxies_free(p);
	seo_arena_free(a);
}

int main(void)
{
	CU_pSuite s;
	unsigned failed;

	if (CU_initialize_registry() != CUE_SUCCESS)
		return 1;
	s = CU_add_suite("gw_client_ip", NULL, NULL);
	if (s == NULL ||
	    CU_add_test(s, "trusted proxies syntax", test_parse) == NULL ||
	    CU_add_test(s, "client ip", test_client_ip) == NULL) {
		CU_cleanup_registry();
		return 1;
	}
	CU_basic_set_mode(CU_BRM_VERBOSE);
	CU_basic_run_tests();
	failed = CU_get_number_of_failures();
	CU_cleanup_registry();
	return failed != 0;
}

/*
 * test_domain.c: the one domain normaliser (common/src/domain.c): a table
 * of what users type, in both forms (graph: "www." dropped; site: the
 * host as given), IDNA of host names and the "ends in a number" rule.
 */
#include "seo/domain.h"

#include "seo/errors.h"

#include <CUnit/Basic.h>
#include <stdio.h>
#include <string.h>

/* What the user typed, and the graph and site forms; NULL: refused. */
static const struct {
	const char *in;
	const char *graph, *site;
} cases[] = {
	{"example.com", "example.com", "example.com"},
	{"Example.COM.", "example.com", "example.com"},
	{"  example.com  ", "example.com", "example.com"},
	{"https://example.com/path", "example.com", "example.com"},
	{"HTTPS://user:pw@WWW.Example.COM.:8443/p?q#f", "example.com", "www.example.com"},
	{"http://example.com/x?next=https://other.org/", "example.com", "example.com"},
	{"example.com:8080", "example.com", "example.com"},
	{"example.com?q", "example.com", "example.com"},
	{"www.example.com", "example.com", "www.example.com"},
	{"www.com", "www.com", "www.com"},
	{"blog.example.co.uk", "blog.example.co.uk", "blog.example.co.uk"},
	{"my_host-1.example", "my_host-1.example", "my_host-1.example"},
	{"1.2.3.example", "1.2.3.example", "1.2.3.example"},
	{"b\xc3\xbc" "cher.de", "xn--bcher-kva.de", "xn--bcher-kva.de"},
	{"https://www.B\xc3\x9c" "CHER.de/", "xn--bcher-kva.de", "www.xn--bcher-kva.de"},
	{"\xd0\xbf\xd1\x80\xd0\xb8\xd0\xbc\xd0\xb5\xd1\x80.\xd1\x80\xd1\x84",
	 "xn--e1afmkfd.xn--p1ai", "xn--e1afmkfd.xn--p1ai"},
	/* non-transitional, as browsers: the sharp s stays */
	{"fa\xc3\x9f.de", "xn--fa-hia.de", "xn--fa-hia.de"},
	/* an ideographic full stop separates labels */
	{"b\xc3\xbc" "cher\xe3\x80\x82" "de", "xn--bcher-kva.de", "xn--bcher-kva.de"},
	{"xn--bcher-kva.de", "xn--bcher-kva.de", "xn--bcher-kva.de"},
	{"", NULL, NULL},
	{"   ", NULL, NULL},
	{"https://", NULL, NULL},
	{"not a domain", NULL, NULL},
	{"localhost", NULL, NULL},
	{"10.0.0.1", NULL, NULL},
	{"http://10.0.0.1/", NULL, NULL},
	{"0x7f.1", NULL, NULL},
	{"example.123", NULL, NULL},
	{"example.0x1f", NULL, NULL},
	{"[::1]", NULL, NULL},
	{"a..example", NULL, NULL},
	{".example.com", NULL, NULL},
	{"exa*mple.com", NULL, NULL},
	{"ex\xff" "ample.com", NULL, NULL},
	{"\xe2\x98\x83.com", NULL, NULL},
};

static void test_table(void)
{
	char out[SEO_DOMAIN_MAX + 1];

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		const char *want[2] = {cases[i].graph, cases[i].site};
		unsigned flags[2] = {SEO_DOMAIN_STRIP_WWW, 0};

		for (int f = 0; f < 2; f++) {
			int rc = seo_domain_normalize(cases[i].in, flags[f], out, sizeof(out));
			int ok = want[f] == NULL ? rc == SEO_EINVAL :
				rc == 0 && strcmp(out, want[f]) == 0;

			if (!ok)
				fprintf(stderr, "\n\"%s\" (flags %u): rc %d, \"%s\", want %s\n",
					cases[i].in, flags[f], rc, rc == 0 ? out : "",
					want[f] ? want[f] : "invalid");
			CU_ASSERT(ok);
		}
	}
	CU_ASSERT_EQUAL(seo_domain_normalize(NULL, 0, out, sizeof(out)), SEO_EINVAL);
}

static void test_bounds(void)
{
	char in[400], out[SEO_DOMAIN_MAX + 1];
	size_t n;

	/* a 63-byte label passes, 64 does not */
	n = (size_t)snprintf(in, sizeof(in), "%.63s.com", "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa");
	CU_ASSERT_EQUAL(n, 67);
	CU_ASSERT_EQUAL(seo_domain_normalize(in, 0, out, sizeof(out)), 0);
	snprintf(in, sizeof(in), "%.64s.com", "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa");
	CU_ASSERT_EQUAL(seo_domain_normalize(in, 0, out, sizeof(out)), SEO_EINVAL);
	/* 253 bytes in all pass, 254 do not */
	memset(in, 'a', 253);
	for (size_t i = 50; i < 253; i += 50)
		in[i] = '.';
	in[253] = '\0';
	CU_ASSERT_EQUAL(seo_domain_normalize(in, 0, out, sizeof(out)), 0);
	CU_ASSERT_EQUAL(strlen(out), 253);
	in[253] = 'a';
	in[254] = '\0';
	CU_ASSERT_EQUAL(seo_domain_normalize(in, 0, out, sizeof(out)), SEO_EINVAL);
	/* the caller's buffer bounds the answer */
	CU_ASSERT_EQUAL(seo_domain_normalize("example.com", 0, out, 12), 0);
	CU_ASSERT_EQUAL(seo_domain_normalize("example.com", 0, out, 11), SEO_EINVAL);
}

static void test_to_ascii(void)
{
	char out[SEO_DOMAIN_MAX + 1];

	/* ASCII is copied as it is, case included */
	CU_ASSERT_EQUAL(seo_domain_to_ascii("Example.COM", 11, out, sizeof(out)), 0);
	CU_ASSERT_STRING_EQUAL(out, "Example.COM");
	/* full-width letters and digits are mapped: what a resolver would
	 * look up, an address included */
	CU_ASSERT_EQUAL(seo_domain_to_ascii("\xef\xbc\xa5\xef\xbd\x98.com", 10, out, sizeof(out)), 0);
	CU_ASSERT_STRING_EQUAL(out, "ex.com");
	CU_ASSERT_EQUAL(seo_domain_to_ascii("\xef\xbc\x91\xef\xbc\x92\xef\xbc\x97\xef\xbc\x8e"
					    "0.0.1", 17, out, sizeof(out)), 0);
	CU_ASSERT_STRING_EQUAL(out, "127.0.0.1");
	CU_ASSERT_EQUAL(seo_domain_to_ascii("b\xc3\xbc" "cher.de", 10, out, sizeof(out)), 0);
	CU_ASSERT_STRING_EQUAL(out, "xn--bcher-kva.de");
	/* only `len` bytes are read */
	CU_ASSERT_EQUAL(seo_domain_to_ascii("b\xc3\xbc" "cher.de/x", 10, out, sizeof(out)), 0);
	CU_ASSERT_STRING_EQUAL(out, "xn--bcher-kva.de");
	CU_ASSERT_EQUAL(seo_domain_to_ascii("b\xc3\xbc" "cher.de", 10, out, 16), SEO_EINVAL);
	CU_ASSERT_EQUAL(seo_domain_to_ascii("\xc3", 1, out, sizeof(out)), SEO_EINVAL);
	CU_ASSERT_EQUAL(seo_domain_to_ascii("a\0b", 3, out, sizeof(out)), SEO_EINVAL);
}

static void test_ends_in_number(void)
{
	static const struct {
		const char *host;
		int want;
	} t[] = {
		{"127.0.0.1", 1}, {"example.123", 1}, {"a.0x1F", 1}, {"a.0x", 1},
		{"2130706433", 1}, {"example.com", 0}, {"127.0.0.1.nip.io", 0},
		{"a.0xg", 0}, {"a.1b", 0}, {"", 0},
	};

	for (size_t i = 0; i < sizeof(t) / sizeof(t[0]); i++)
		CU_ASSERT_EQUAL(seo_domain_ends_in_number(t[i].host, strlen(t[i].host)), t[i].want);
}

int main(void)
{
	CU_pSuite s;
	unsigned failed;

	if (CU_initialize_registry() != CUE_SUCCESS)
		return 1;
	s = CU_add_suite("domain", NULL, NULL);
	CU_add_test(s, "what users type, both forms", test_table);
	CU_add_test(s, "label and name lengths", test_bounds);
	CU_add_test(s, "IDNA of host names", test_to_ascii);
	CU_add_test(s, "ends in a number", test_ends_in_number);
	CU_basic_set_mode(CU_BRM_NORMAL);
	CU_basic_run_tests();
	failed = CU_get_number_of_failures();
	CU_cleanup_registry();
	return failed ? 1 : 0;
}

/*
 * test_fetch_url.c: what the fetcher applies before it connects (url.c,
 * netpolicy.c, fetch_config.c, charset.c): URL validation, the
 * private-address policy (a table
 * of SSRF bypass spellings, IDN ones included, every one refused), IDN
 * hosts, connect-to and allow-list parsing, and charset detection and
 * conversion.
 */
#include "seo/charset.h"
#include "seo/errors.h"
#include "seo/fetch.h"

#include <CUnit/Basic.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Parses and resolves `url` under `policy` the way a fetch hop does. */
static int check_url(const char *url, const seo_fetch_config *policy)
{
	seo_arena *a = seo_arena_new(0);
	struct sockaddr_storage ss;
	seo_url u;
	int rc = seo_url_parse(url, a, &u);

	if (rc == 0)
		rc = seo_resolve_checked(policy, u.host, u.port, &ss);
	seo_arena_free(a);
	return rc;
}

/* Spellings of private, loopback and reserved targets; each must be
 * refused as invalid_url (SEO_EINVAL) or private_ip (SEO_EDENIED). */
static const struct {
	const char *url;
	int want;
} bypasses[] = {
	{"http://127.0.0.1/", SEO_EDENIED},
	{"http://2130706433/", SEO_EDENIED},
	{"http://017700000001/", SEO_EDENIED},
	{"http://0x7f000001/", SEO_EDENIED},
	{"http://0177.0.0.1/", SEO_EDENIED},
	{"http://0x7f.1/", SEO_EDENIED},
	{"http://0x7f.0x0.0x0.0x1/", SEO_EDENIED},
	{"http://0177.1/", SEO_EDENIED},
	{"http://127.1/", SEO_EDENIED},
	{"http://127.0.1/", SEO_EDENIED},
	{"http://127.000.000.001/", SEO_EDENIED},
	{"http://127.0.0.1./", SEO_EDENIED},
	{"HTTP://127.0.0.1:8080/", SEO_EDENIED},
	{"http://0/", SEO_EDENIED},
	{"http://0.0.0.0/", SEO_EDENIED},
	{"http://0.0.0.0:22/", SEO_EDENIED},
	{"http://[::]/", SEO_EDENIED},
	{"http://[::1]/", SEO_EDENIED},
	{"http://[0:0:0:0:0:0:0:1]/", SEO_EDENIED},
	{"http://[::ffff:127.0.0.1]/", SEO_EDENIED},
	{"http://[::ffff:7f00:1]/", SEO_EDENIED},
	{"http://[0:0:0:0:0:ffff:127.0.0.1]/", SEO_EDENIED},
	{"http://[::ffff:127.0.0.1]:80/", SEO_EDENIED},
	{"http://[::127.0.0.1]/", SEO_EDENIED},
	{"http://[::ffff:0:7f00:1]/", SEO_EDENIED},
	{"http://[::ffff:a9fe:a9fe]/", SEO_EDENIED},
	{"http://[64:ff9b::7f00:1]/", SEO_EDENIED},
	{"http://[64:ff9b::a9fe:a9fe]/", SEO_EDENIED},
	{"http://[64:ff9b:1::1]/", SEO_EDENIED},
	{"http://[2002:7f00:1::]/", SEO_EDENIED},
	{"http://[2002:c0a8:101::1]/", SEO_EDENIED},
	{"http://[2001::1]/", SEO_EDENIED},
	{"http://[2001:db8::1]/", SEO_EDENIED},
	{"http://[fe80::1]/", SEO_EDENIED},
	{"http://[fe80::a9fe:a9fe]/", SEO_EDENIED},
	{"http://[fe80::1%25eth0]/", SEO_EINVAL},
	{"http://[fe80::1%eth0]/", SEO_EINVAL},
	{"http://[fc00::1]/", SEO_EDENIED},
	{"http://[fd00:ec2::254]/", SEO_EDENIED},
	{"http://[fec0::1]/", SEO_EDENIED},
	{"http://[ff02::1]/", SEO_EDENIED},
	{"http://[100::1]/", SEO_EDENIED},
	{"http://10.0.0.1/", SEO_EDENIED},
	{"http://172.16.0.1/", SEO_EDENIED},
	{"http://172.31.255.255/", SEO_EDENIED},
	{"http://192.168.1.1/", SEO_EDENIED},
	{"http://100.64.0.1/", SEO_EDENIED},
	{"http://100.100.100.200/latest/meta-data/", SEO_EDENIED},
	{"http://169.254.169.254/latest/meta-data/", SEO_EDENIED},
	{"http://0xa9fea9fe/", SEO_EDENIED},
	{"http://2852039166/", SEO_EDENIED},
	{"http://192.0.0.192/", SEO_EDENIED},
	{"http://198.18.0.1/", SEO_EDENIED},
	{"http://192.0.2.1/", SEO_EDENIED},
	{"http://224.0.0.1/", SEO_EDENIED},
	{"http://240.0.0.1/", SEO_EDENIED},
	{"http://255.255.255.255/", SEO_EDENIED},
	{"http://localhost/", SEO_EDENIED},
	{"http://LOCALHOST/", SEO_EDENIED},
	{"http://localhost./", SEO_EDENIED},
	{"http://LocalHost:8080/admin", SEO_EDENIED},
	{"http://example.com@127.0.0.1/", SEO_EINVAL},
	{"http://127.0.0.1:80@example.com/", SEO_EINVAL},
	{"http://user:pass@example.com/", SEO_EINVAL},
	{"http://example.com\\@127.0.0.1/", SEO_EINVAL},
	{"http://127.0.0.1#@example.com/", SEO_EINVAL},
	{"http://example.com/#frag", SEO_EINVAL},
	{"http://%31%32%37.0.0.1/", SEO_EINVAL},
	{"http://127%2E0%2E0%2E1/", SEO_EINVAL},
	{"http://0x100000000/", SEO_EINVAL},
	{"http://256.0.0.1/", SEO_EINVAL},
	{"http://1.2.3.4.5/", SEO_EINVAL},
	{"http://08.0.0.1/", SEO_EINVAL},
	{"http://127.0.0.1 /", SEO_EINVAL},
	{" http://127.0.0.1/", SEO_EINVAL},
	{"http://127.0.0.1\t/", SEO_EINVAL},
	{"http:/127.0.0.1/", SEO_EINVAL},
	{"http:\\\\127.0.0.1\\", SEO_EINVAL},
	{"//127.0.0.1/", SEO_EINVAL},
	{"ftp://127.0.0.1/", SEO_EINVAL},
	{"file:///etc/passwd", SEO_EINVAL},
	{"gopher://127.0.0.1:6379/_INFO", SEO_EINVAL},
	{"dict://127.0.0.1:11211/stat", SEO_EINVAL},
	{"http://[::1/", SEO_EINVAL},
	{"http://[v1.fe]/", SEO_EINVAL},
	{"http://127.0.0.1:0/", SEO_EINVAL},
	{"http://127.0.0.1:65536/", SEO_EINVAL},
	{"http://exa..mple.com/", SEO_EINVAL},
	/* IDN hosts: the policy sees the name they map to */
	{"http://\xef\xbc\x91\xef\xbc\x92\xef\xbc\x97.0.0.1/", SEO_EDENIED},
	{"http://127\xe3\x80\x82" "0\xe3\x80\x82" "0\xe3\x80\x82" "1/", SEO_EDENIED},
	{"http://\xe2\x93\x9b\xe2\x93\x9e\xe2\x93\x92\xe2\x93\x90\xe2\x93\x9b"
	 "\xe2\x93\x97\xe2\x93\x9e\xe2\x93\xa2\xe2\x93\xa3/", SEO_EDENIED},
	{"http://LOCALHOST\xe3\x80\x82/", SEO_EDENIED},
	{"http://\xe2\x98\x83.example/", SEO_EINVAL},
	{"http://ex\xff" "ample.com/", SEO_EINVAL},
	{"http://b\xc3\xbc" "cher.example:8x/", SEO_EINVAL},
	{"http://%C3%BC.example/", SEO_EINVAL},
	{"http:///", SEO_EINVAL},
};

static void test_bypasses_refused(void)
{
	size_t n = sizeof(bypasses) / sizeof(bypasses[0]);

	CU_ASSERT(n >= 30);
	for (size_t i = 0; i < n; i++) {
		int rc = check_url(bypasses[i].url, NULL);

		if (rc != bypasses[i].want)
			fprintf(stderr, "\n%s: got %d, want %d\n", bypasses[i].url,
				rc, bypasses[i].want);
		CU_ASSERT_EQUAL(rc, bypasses[i].want);
	}
}

static void test_public_allowed(void)
{
	static const char *const ok[] = {
		"http://8.8.8.8/", "https://1.1.1.1/", "http://134744072/",
		"http://[2606:4700:4700::1111]/", "http://[64:ff9b::808:808]/",
		"http://[2002:808:808::1]/", "http://93.184.216.34:8080/x?y=1",
	};

	for (size_t i = 0; i < sizeof(ok) / sizeof(ok[0]); i++)
		CU_ASSERT_EQUAL(check_url(ok[i], NULL), 0);
}

static void test_allow_nets(void)
{
	seo_fetch_config p = {0};
	seo_cidr *nets = NULL;
	size_t n = 9;
	char *many;

	CU_ASSERT_EQUAL(seo_fetch_parse_allow_nets("127.0.0.0/8, ::1", &p.allow_nets,
						   &p.n_allow_nets), 0);
	CU_ASSERT_EQUAL(p.n_allow_nets, 2);
	CU_ASSERT_EQUAL(check_url("http://127.0.0.1:8080/", &p), 0);
	CU_ASSERT_EQUAL(check_url("http://2130706433/", &p), 0);
	CU_ASSERT_EQUAL(check_url("http://[::1]/", &p), 0);
	CU_ASSERT_EQUAL(check_url("http://10.0.0.1/", &p), SEO_EDENIED);
	CU_ASSERT_EQUAL(check_url("http://[::ffff:10.0.0.1]/", &p), SEO_EDENIED);
	seo_fetch_config_clear(&p);
	CU_ASSERT_EQUAL(seo_fetch_parse_allow_nets("127.0.0.1/32", &p.allow_nets,
						   &p.n_allow_nets), 0);
	CU_ASSERT_EQUAL(check_url("http://127.0.0.2/", &p), SEO_EDENIED);
	seo_fetch_config_clear(&p);
	CU_ASSERT_EQUAL(seo_fetch_parse_allow_nets(" , ", &nets, &n), 0);
	CU_ASSERT_EQUAL(n, 0);
	CU_ASSERT_PTR_NULL(nets);
	CU_ASSERT_EQUAL(seo_fetch_parse_allow_nets("127.0.0.0/33", &nets, &n), SEO_EINVAL);
	CU_ASSERT_EQUAL(seo_fetch_parse_allow_nets("localhost", &nets, &n), SEO_EINVAL);
	CU_ASSERT_EQUAL(seo_fetch_parse_allow_nets("10.0.0.0/", &nets, &n), SEO_EINVAL);
	CU_ASSERT_PTR_NULL(nets);
	/* as many networks as given: 1000 hosts of 10.0.0.0/16, the last one
	 * allowed as well as the first */
	many = calloc(1000, 16);
	CU_ASSERT_PTR_NOT_NULL_FATAL(many);
	for (int i = 0; i < 1000; i++)
		sprintf(many + strlen(many), "%s10.0.%d.%d", i ? "," : "", i / 256, i % 256);
	CU_ASSERT_EQUAL(seo_fetch_parse_allow_nets(many, &p.allow_nets, &p.n_allow_nets), 0);
	CU_ASSERT_EQUAL(p.n_allow_nets, 1000);
	CU_ASSERT_EQUAL(check_url("http://10.0.3.231/", &p), 0);
	CU_ASSERT_EQUAL(check_url("http://10.0.0.0/", &p), 0);
	CU_ASSERT_EQUAL(check_url("http://10.0.3.232/", &p), SEO_EDENIED);
	seo_fetch_config_clear(&p);
	free(many);
}

static void test_canonical(void)
{
	seo_arena *a = seo_arena_new(0);
	seo_url u;

	CU_ASSERT_EQUAL(seo_url_parse("HTTPS://Example.COM.:8443/p?q=1", a, &u), 0);
	CU_ASSERT_STRING_EQUAL(u.scheme, "https");
	CU_ASSERT_STRING_EQUAL(u.host, "example.com");
	CU_ASSERT_EQUAL(u.port, 8443);
	CU_ASSERT_STRING_EQUAL(u.path, "/p?q=1");
	CU_ASSERT_STRING_EQUAL(u.href, "https://example.com:8443/p?q=1");
	CU_ASSERT_EQUAL(seo_url_parse("http://example.com", a, &u), 0);
	CU_ASSERT_STRING_EQUAL(u.href, "http://example.com/");
	CU_ASSERT_EQUAL(seo_url_parse("http://example.com:80?a", a, &u), 0);
	CU_ASSERT_STRING_EQUAL(u.href, "http://example.com/?a");
	CU_ASSERT_EQUAL(seo_url_parse("http://example.com:/caf\xc3\xa9", a, &u), 0);
	CU_ASSERT_STRING_EQUAL(u.href, "http://example.com/caf%C3%A9");
	CU_ASSERT_EQUAL(seo_url_parse("http://0x7f.1/", a, &u), 0);
	CU_ASSERT_EQUAL(u.host_kind, SEO_HOST_V4);
	CU_ASSERT_STRING_EQUAL(u.host, "127.0.0.1");
	CU_ASSERT_EQUAL(seo_url_parse("http://[0:0:0:0:0:ffff:127.0.0.1]:81/", a, &u), 0);
	CU_ASSERT_EQUAL(u.host_kind, SEO_HOST_V6);
	CU_ASSERT_STRING_EQUAL(u.href, "http://[::ffff:127.0.0.1]:81/");
	/* IDN hosts in punycode, as browsers look them up; the path is
	 * percent-encoded as ever */
	CU_ASSERT_EQUAL(seo_url_parse("https://b\xc3\xbc" "cher.example/", a, &u), 0);
	CU_ASSERT_EQUAL(u.host_kind, SEO_HOST_NAME);
	CU_ASSERT_STRING_EQUAL(u.host, "xn--bcher-kva.example");
	CU_ASSERT_STRING_EQUAL(u.href, "https://xn--bcher-kva.example/");
	CU_ASSERT_EQUAL(seo_url_parse("http://\xd0\xbf\xd1\x80\xd0\xb8\xd0\xbc\xd0\xb5\xd1\x80."
				     "\xd1\x80\xd1\x84/\xd0\xbf\xd1\x83\xd1\x82\xd1\x8c", a, &u), 0);
	CU_ASSERT_STRING_EQUAL(u.href, "http://xn--e1afmkfd.xn--p1ai/%D0%BF%D1%83%D1%82%D1%8C");
	CU_ASSERT_EQUAL(seo_url_parse("HTTPS://B\xc3\x9c" "CHER.Example.:8443/?q", a, &u), 0);
	CU_ASSERT_STRING_EQUAL(u.href, "https://xn--bcher-kva.example:8443/?q");
	CU_ASSERT_EQUAL(seo_url_parse("http://xn--bcher-kva.example/", a, &u), 0);
	CU_ASSERT_STRING_EQUAL(u.host, "xn--bcher-kva.example");
	CU_ASSERT_EQUAL(seo_url_parse("http://my_host-1.example/", a, &u), 0);
	CU_ASSERT_EQUAL(u.host_kind, SEO_HOST_NAME);
	/* a name whose last label is not a number is a DNS name */
	CU_ASSERT_EQUAL(seo_url_parse("http://127.0.0.1.nip.io/", a, &u), 0);
	CU_ASSERT_EQUAL(u.host_kind, SEO_HOST_NAME);
	/* one trailing dot goes; a second would leave "127.0.0.1." as a
	 * name whose href reads back as an address (found by fuzz_url) */
	CU_ASSERT_EQUAL(seo_url_parse("http://127.0.0.1../", a, &u), SEO_EINVAL);
	CU_ASSERT_EQUAL(seo_url_parse("http://example.com../", a, &u), SEO_EINVAL);
	CU_ASSERT_EQUAL(seo_url_resolve("https://a.example/", "http:///827..", a, &u), SEO_EINVAL);
	/* 3000 bytes of UTF-8 pass the length check but escape to 9000: the
	 * canonical form must stay parseable (found by fuzz_url) */
	{
		char *big = seo_arena_alloc(a, 3100);
		size_t n = (size_t)sprintf(big, "http://example.com/");

		while (n < 3000) {
			big[n++] = '\xc3';
			big[n++] = '\xa9';
		}
		big[n] = '\0';
		CU_ASSERT_EQUAL(seo_url_parse(big, a, &u), SEO_EINVAL);
	}
	seo_arena_free(a);
}

static void test_resolve_ref(void)
{
	seo_arena *a = seo_arena_new(0);
	seo_url u;

	CU_ASSERT_EQUAL(seo_url_resolve("http://a.example/b/c", "../d?x#frag", a, &u), 0);
	CU_ASSERT_STRING_EQUAL(u.href, "http://a.example/d?x");
	CU_ASSERT_EQUAL(seo_url_resolve("https://a.example/b", "//0x7f.1:8080/x", a, &u), 0);
	CU_ASSERT_STRING_EQUAL(u.href, "https://127.0.0.1:8080/x");
	CU_ASSERT_EQUAL(seo_url_resolve("http://a.example/", "/a b", a, &u), 0);
	CU_ASSERT_STRING_EQUAL(u.href, "http://a.example/a%20b");
	CU_ASSERT_EQUAL(seo_url_resolve("http://a.example/", "http://u:p@b.example/", a, &u), SEO_EINVAL);
	CU_ASSERT_EQUAL(seo_url_resolve("http://a.example/", "file:///etc/passwd", a, &u), SEO_EINVAL);
	/* a link or redirect to an IDN host */
	CU_ASSERT_EQUAL(seo_url_resolve("http://a.example/", "https://b\xc3\xbc" "cher.example/b\xc3\xbc",
				       a, &u), 0);
	CU_ASSERT_STRING_EQUAL(u.href, "https://xn--bcher-kva.example/b%c3%bc");
	CU_ASSERT_EQUAL(seo_url_resolve("https://b\xc3\xbc" "cher.example/a/", "../x", a, &u), 0);
	CU_ASSERT_STRING_EQUAL(u.href, "https://xn--bcher-kva.example/x");
	seo_arena_free(a);
}

static void test_connect_to(void)
{
	seo_connect_to *ct = NULL;
	size_t n = 9;
	char *many;

	CU_ASSERT_EQUAL_FATAL(seo_fetch_parse_connect_to("Site.test:80:127.0.0.1:8080, ::[::1]:9000",
							 &ct, &n), 0);
	CU_ASSERT_EQUAL(n, 2);
	CU_ASSERT_STRING_EQUAL(ct[0].host, "site.test");
	CU_ASSERT_EQUAL(ct[0].port, 80);
	CU_ASSERT_STRING_EQUAL(ct[0].connect_host, "127.0.0.1");
	CU_ASSERT_EQUAL(ct[0].connect_port, 8080);
	CU_ASSERT_STRING_EQUAL(ct[1].host, "");
	CU_ASSERT_EQUAL(ct[1].port, 0);
	CU_ASSERT_STRING_EQUAL(ct[1].connect_host, "::1");
	CU_ASSERT_EQUAL(ct[1].connect_port, 9000);
	free(ct);
	CU_ASSERT_EQUAL(seo_fetch_parse_connect_to("", &ct, &n), 0);
	CU_ASSERT_EQUAL(n, 0);
	CU_ASSERT_PTR_NULL(ct);
	CU_ASSERT_EQUAL(seo_fetch_parse_connect_to("a:80:b", &ct, &n), SEO_EINVAL);
	CU_ASSERT_EQUAL(seo_fetch_parse_connect_to("a:x:b:1", &ct, &n), SEO_EINVAL);
	CU_ASSERT_EQUAL(seo_fetch_parse_connect_to("a:80:b:70000", &ct, &n), SEO_EINVAL);
	CU_ASSERT_EQUAL(seo_fetch_parse_connect_to("ok:80:b:1,a:80:b:70000", &ct, &n),
			SEO_EINVAL);
	CU_ASSERT_PTR_NULL(ct);
	/* no bound on the count: 500 entries, in order */
	many = calloc(500, 48);
	CU_ASSERT_PTR_NOT_NULL_FATAL(many);
	for (int i = 0; i < 500; i++)
		sprintf(many + strlen(many), "%sh%d.test:443:127.0.0.1:%d", i ? ", " : "", i,
			1000 + i);
	CU_ASSERT_EQUAL_FATAL(seo_fetch_parse_connect_to(many, &ct, &n), 0);
	CU_ASSERT_EQUAL(n, 500);
	CU_ASSERT_STRING_EQUAL(ct[499].host, "h499.test");
	CU_ASSERT_EQUAL(ct[499].connect_port, 1499);
	free(ct);
	free(many);
}

static void test_charset(void)
{
	seo_arena *a = seo_arena_new(0);
	const char *latin = "<html><head><meta charset=\"ISO-8859-1\"></head>caf\xe9</html>";
	char *out;
	size_t len;

	CU_ASSERT_STRING_EQUAL(seo_charset_detect("\xef\xbb\xbfhi", 5, "text/html; charset=latin1", a), "utf-8");
	CU_ASSERT_STRING_EQUAL(seo_charset_detect("hi", 2, "text/html; charset=\"Shift_JIS\"", a), "shift_jis");
	CU_ASSERT_STRING_EQUAL(seo_charset_detect(latin, strlen(latin), "text/html", a), "windows-1252");
	CU_ASSERT_STRING_EQUAL(seo_charset_detect("<meta http-equiv=\"Content-Type\" content=\"text/html; charset=koi8-r\">", 66, NULL, a), "koi8-r");
	CU_ASSERT_STRING_EQUAL(seo_charset_detect("<meta charset=utf-16>", 21, NULL, a), "utf-8");
	CU_ASSERT_STRING_EQUAL(seo_charset_detect("caf\xc3\xa9", 5, NULL, a), "utf-8");
	CU_ASSERT_STRING_EQUAL(seo_charset_detect("caf\xe9", 4, NULL, a), "windows-1252");

	CU_ASSERT_EQUAL(seo_to_utf8("caf\xe9 \x80", 6, "windows-1252", a, &out, &len), 0);
	CU_ASSERT_STRING_EQUAL(out, "caf\xc3\xa9 \xe2\x82\xac");
	CU_ASSERT_EQUAL(seo_to_utf8("\xef\xbb\xbf" "a\xff" "b\xc0\xaf", 8, "utf-8", a, &out, &len), 0);
	CU_ASSERT_STRING_EQUAL(out, "a\xef\xbf\xbd" "b\xef\xbf\xbd\xef\xbf\xbd");
	CU_ASSERT_EQUAL(seo_to_utf8("\xff\xfeh\0i\0", 6, "utf-16le", a, &out, &len), 0);
	CU_ASSERT_STRING_EQUAL(out, "hi");
	CU_ASSERT_EQUAL(seo_to_utf8("\xd0\xd2\xc9", 3, "koi8-r", a, &out, &len), 0);
	CU_ASSERT_STRING_EQUAL(out, "\xd0\xbf\xd1\x80\xd0\xb8");
	/* unknown labels read as UTF-8, still sanitised */
	CU_ASSERT_EQUAL(seo_to_utf8("x\xfey", 3, "no-such-charset", a, &out, &len), 0);
	CU_ASSERT_STRING_EQUAL(out, "x\xef\xbf\xbdy");
	seo_arena_free(a);
}

int main(void)
{
	CU_pSuite s;
	unsigned failed;

	if (CU_initialize_registry() != CUE_SUCCESS)
		return 1;
	s = CU_add_suite("fetch_url", NULL, NULL);
	CU_add_test(s, "ssrf bypass spellings are refused", test_bypasses_refused);
	CU_add_test(s, "public addresses are allowed", test_public_allowed);
	CU_add_test(s, "allow-list exempts only its networks", test_allow_nets);
	CU_add_test(s, "urls are canonicalised", test_canonical);
	CU_add_test(s, "redirect targets resolve against the base", test_resolve_ref);
	CU_add_test(s, "connect-to entries parse as curl's", test_connect_to);
	CU_add_test(s, "charsets are detected and converted", test_charset);
	CU_basic_set_mode(CU_BRM_NORMAL);
	CU_basic_run_tests();
	failed = CU_get_number_of_failures();
	CU_cleanup_registry();
	return failed ? 1 : 0;
}

/*
 * test_agent_indexnow: IndexNow's URL rules (shared with proposals) and
 * the key file's content rule, without a network.
 */
#include <stdio.h>
#include <string.h>

#include <CUnit/Basic.h>

#include "indexnow_int.h"
#include "seo/errors.h"

/* The reason `n` URLs get (AGENT_INOW_URLS_OK when they pass), and the
 * index at fault in *bad. */
static int reason_of(const char *const *urls, size_t n, agent_inow_urls *out,
		     size_t *bad, seo_arena *a)
{
	int reason = -1, rc;

	rc = agent_indexnow_check_urls(NULL, urls, n, a, out, &reason, bad);
	CU_ASSERT(rc == 0 || rc == SEO_EINVAL);
	CU_ASSERT_EQUAL(rc == 0, reason == AGENT_INOW_URLS_OK);
	return reason;
}

static int one(const char *url)
{
	seo_arena *a = seo_arena_new(0);
	agent_inow_urls out;
	size_t bad;
	int reason = reason_of(&url, 1, &out, &bad, a);

	seo_arena_free(a);
	return reason;
}

static void test_each_url(void)
{
	static const struct {
		const char *url;
		int reason;
	} cases[] = {
		{"https://example.com/a", AGENT_INOW_URLS_OK},
		{"http://example.com", AGENT_INOW_URLS_OK},
		{"https://8.8.8.8/a", AGENT_INOW_URLS_OK},
		{"ftp://example.com/a", AGENT_INOW_URLS_INVALID},
		{"example.com/a", AGENT_INOW_URLS_INVALID},
		{"https://u:p@example.com/", AGENT_INOW_URLS_INVALID},
		{"https://example.com/#x", AGENT_INOW_URLS_INVALID},
		{" https://example.com/", AGENT_INOW_URLS_INVALID},
		{"https://example.com/\n", AGENT_INOW_URLS_INVALID},
		{"", AGENT_INOW_URLS_INVALID},
		{"https://example.com:443/", AGENT_INOW_URLS_PORT},
		{"https://example.com:8080/", AGENT_INOW_URLS_PORT},
		{"https://example.com:/", AGENT_INOW_URLS_PORT},
		{"https://[2001:4860::8888]:443/", AGENT_INOW_URLS_PORT},
		{"https://[2001:4860::8888]/", AGENT_INOW_URLS_OK},
		{"https://127.0.0.1/", AGENT_INOW_URLS_PRIVATE},
		{"https://0x7f.1/", AGENT_INOW_URLS_PRIVATE},
		{"https://192.168.1.1/", AGENT_INOW_URLS_PRIVATE},
		{"https://[::1]/", AGENT_INOW_URLS_PRIVATE},
		{"https://localhost/", AGENT_INOW_URLS_PRIVATE},
		{"https://a.localhost/", AGENT_INOW_URLS_PRIVATE},
		{"https://printer.local/", AGENT_INOW_URLS_PRIVATE},
		{"https://db.internal/", AGENT_INOW_URLS_PRIVATE},
		{"https://intranet/", AGENT_INOW_URLS_PRIVATE},
	};

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		int got = one(cases[i].url);

		if (got != cases[i].reason)
			fprintf(stderr, "\n%s: %d, expected %d\n", cases[i].url, got,
				cases[i].reason);
		CU_ASSERT_EQUAL(got, cases[i].reason);
	}
}

static void test_length(void)
{
	char url[2100];
	size_t head = strlen("https://example.com/");

	memcpy(url, "https://example.com/", head);
	memset(url + head, 'a', AGENT_INOW_MAX_URL_CHARS - head);
	url[AGENT_INOW_MAX_URL_CHARS] = '\0';
	CU_ASSERT_EQUAL(one(url), AGENT_INOW_URLS_OK);
	url[AGENT_INOW_MAX_URL_CHARS] = 'a';
	url[AGENT_INOW_MAX_URL_CHARS + 1] = '\0';
	CU_ASSERT_EQUAL(one(url), AGENT_INOW_URLS_TOO_LONG);
	/* characters, not bytes: 1000 of them two bytes long */
	{
		static char wide[2 * AGENT_INOW_MAX_URL_CHARS + 1];
		size_t n = head;

		memcpy(wide, "https://example.com/", head);
		for (int i = 0; i < 1000; i++) {
			wide[n++] = (char)0xc3;
			wide[n++] = (char)0xa9;
		}
		memset(wide + n, 'a', AGENT_INOW_MAX_URL_CHARS - head - 1000);
		n += AGENT_INOW_MAX_URL_CHARS - head - 1000;
		wide[n] = '\0';
		CU_ASSERT_EQUAL(one(wide), AGENT_INOW_URLS_OK);
		wide[n] = 'a';
		wide[n + 1] = '\0';
		CU_ASSERT_EQUAL(one(wide), AGENT_INOW_URLS_TOO_LONG);
	}
}

static void test_list(void)
{
	seo_arena *a = seo_arena_new(0);
	const char *same[] = {"https://Example.com/b", "http://example.com/a",
			      "https://example.com/b"};
	const char *mixed[] = {"https://example.com/a", "https://www.example.com/a",
			       "ftp://x"};
	const char *hosts[] = {"https://example.com/a", "https://example.com/b",
			       "https://www.example.com/a"};
	const char *many[AGENT_INOW_MAX_URLS + 1];
	agent_inow_urls out;
	size_t bad;

	CU_ASSERT_EQUAL(reason_of(same, 3, &out, &bad, a), AGENT_INOW_URLS_OK);
	CU_ASSERT_STRING_EQUAL(out.host, "example.com");
	CU_ASSERT_EQUAL(out.n, 3);
	CU_ASSERT_STRING_EQUAL(out.urls[0], "https://example.com/b");
	CU_ASSERT_STRING_EQUAL(out.urls[1], "http://example.com/a");
	CU_ASSERT_EQUAL(reason_of(NULL, 0, &out, &bad, a), AGENT_INOW_URLS_NONE);
	/* each URL before the hosts */
	CU_ASSERT_EQUAL(reason_of(mixed, 3, &out, &bad, a), AGENT_INOW_URLS_INVALID);
	CU_ASSERT_EQUAL(bad, 2);
	CU_ASSERT_EQUAL(reason_of(hosts, 3, &out, &bad, a), AGENT_INOW_URLS_HOSTS);
	CU_ASSERT_EQUAL(bad, 2);
	for (size_t i = 0; i <= AGENT_INOW_MAX_URLS; i++)
		many[i] = "ftp://not-even-read";
	CU_ASSERT_EQUAL(reason_of(many, AGENT_INOW_MAX_URLS + 1, &out, &bad, a),
			AGENT_INOW_URLS_TOO_MANY);
	CU_ASSERT_STRING_EQUAL(agent_indexnow_reason_code(AGENT_INOW_URLS_TOO_MANY),
			       "indexnow_too_many_urls");
	CU_ASSERT_STRING_EQUAL(agent_indexnow_reason_code(AGENT_INOW_URLS_HOSTS),
			       "indexnow_host_mismatch");
	CU_ASSERT_STRING_EQUAL(agent_indexnow_reason_code(AGENT_INOW_URLS_PORT),
			       "indexnow_invalid_url");
	seo_arena_free(a);
}

static void test_file_matches(void)
{
	const char *key = "0123456789abcdef0123456789abcdef";
	const char *ok[] = {"0123456789abcdef0123456789abcdef",
			    "  0123456789abcdef0123456789abcdef\r\n",
			    "\xef\xbb\xbf" "0123456789abcdef0123456789abcdef\n"};
	const char *no[] = {"", "0123456789abcdef0123456789abcde",
			    "0123456789ABCDEF0123456789ABCDEF",
			    "0123456789abcdef0123456789abcdef0",
			    "key=0123456789abcdef0123456789abcdef",
			    "0123456789abcdef 0123456789abcdef"};

	for (size_t i = 0; i < sizeof(ok) / sizeof(ok[0]); i++)
		CU_ASSERT(agent__inow_file_matches(ok[i], strlen(ok[i]), key));
	for (size_t i = 0; i < sizeof(no) / sizeof(no[0]); i++)
		CU_ASSERT(!agent__inow_file_matches(no[i], strlen(no[i]), key));
}

int main(void)
{
	CU_pSuite s;
	unsigned failed;

	if (CU_initialize_registry() != CUE_SUCCESS)
		return 1;
	s = CU_add_suite("agent_indexnow", NULL, NULL);
	CU_add_test(s, "each_url", test_each_url);
	CU_add_test(s, "length", test_length);
	CU_add_test(s, "list", test_list);
	CU_add_test(s, "file_matches", test_file_matches);
	CU_basic_set_mode(CU_BRM_VERBOSE);
	CU_basic_run_tests();
	failed = CU_get_number_of_failures();
	CU_cleanup_registry();
	return failed != 0;
}

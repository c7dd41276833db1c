/*
 * test_provider.c: the provider client (seo/provider.h) against
 * tests/fakes/site_server.py: query, form and JSON bodies, the three kinds
 * of key, retries and their budget, time and size caps, no proxy from the
 * environment.
 */
#include "seo/errors.h"
#include "seo/provider.h"
#include "seo/util.h"
#include "test_site.h"

#include <CUnit/Basic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static char base[64];

/* The site as a provider with `auth` and key "k&y". */
static seo_provider site(int auth, const char *key_name)
{
	return (seo_provider){.name = "test site", .base_url = base, .auth = auth,
			      .key = "k&y", .key_name = key_name, .backoff_ms = 20};
}

static const char *member(const seo_provider_answer *a, const char *name)
{
	return json_string_value(json_object_get(a->json, name));
}

static void test_query_and_key(void)
{
	seo_provider p = site(SEO_AUTH_QUERY, "key");
	const seo_param q[] = {{"url", "https://a.test/x?y=1"}, {"c", "A"}, {"c", "B"}};
	seo_provider_call c = {.path = "/echo", .query = q, .n_query = 3};
	seo_provider_answer a;
	char why[128];

	CU_ASSERT_EQUAL_FATAL(seo_provider_do(&p, &c, &a, why, sizeof(why)), 0);
	CU_ASSERT_EQUAL(a.status, 200);
	CU_ASSERT_EQUAL(a.attempts, 1);
	CU_ASSERT_PTR_NOT_NULL_FATAL(a.json);
	CU_ASSERT_STRING_EQUAL(member(&a, "method"), "GET");
	CU_ASSERT_STRING_EQUAL(member(&a, "path"),
			       "/echo?url=https%3A%2F%2Fa.test%2Fx%3Fy%3D1&c=A&c=B&key=k%26y");
	CU_ASSERT_PTR_NULL(member(&a, "authorization"));
	seo_provider_answer_free(&a);
	/* the key alone starts the query; no key, no parameter */
	c.n_query = 0;
	CU_ASSERT_EQUAL_FATAL(seo_provider_do(&p, &c, &a, why, sizeof(why)), 0);
	CU_ASSERT_STRING_EQUAL(member(&a, "path"), "/echo?key=k%26y");
	seo_provider_answer_free(&a);
	p.key = "";
	CU_ASSERT_EQUAL_FATAL(seo_provider_do(&p, &c, &a, why, sizeof(why)), 0);
	CU_ASSERT_STRING_EQUAL(member(&a, "path"), "/echo");
	seo_provider_answer_free(&a);
}

static void test_form_and_bearer(void)
{
	seo_provider p = site(SEO_AUTH_BEARER, NULL);
	const seo_param form[] = {{"mode", "payment"}, {"line_items[0][name]", "100 credits"}};
	seo_provider_call c = {.method = "POST", .path = "/echo", .form = form, .n_form = 2};
	seo_provider_answer a;
	char why[128];

	CU_ASSERT_EQUAL_FATAL(seo_provider_do(&p, &c, &a, why, sizeof(why)), 0);
	CU_ASSERT_STRING_EQUAL(member(&a, "method"), "POST");
	CU_ASSERT_STRING_EQUAL(member(&a, "authorization"), "Bearer k&y");
	CU_ASSERT_STRING_EQUAL(member(&a, "content_type"), "application/x-www-form-urlencoded");
	CU_ASSERT_STRING_EQUAL(member(&a, "body"),
			       "mode=payment&line_items%5B0%5D%5Bname%5D=100%20credits");
	seo_provider_answer_free(&a);
}

static void test_json_and_header_key(void)
{
	seo_provider p = site(SEO_AUTH_HEADER, "X-Api-Key");
	json_t *in = json_pack("{s:s, s:i}", "url", "https://a.test/", "n", 2);
	seo_provider_call c = {.method = "POST", .path = "/echo", .json = in};
	const seo_param form[] = {{"a", "b"}};
	seo_provider_answer a;
	char why[128];

	CU_ASSERT_EQUAL_FATAL(seo_provider_do(&p, &c, &a, why, sizeof(why)), 0);
	CU_ASSERT_STRING_EQUAL(member(&a, "x_api_key"), "k&y");
	CU_ASSERT_PTR_NULL(member(&a, "authorization"));
	CU_ASSERT_STRING_EQUAL(member(&a, "content_type"), "application/json");
	CU_ASSERT_STRING_EQUAL(member(&a, "body"), "{\"url\":\"https://a.test/\",\"n\":2}");
	seo_provider_answer_free(&a);
	/* one body at a time */
	c.form = form;
	c.n_form = 1;
	CU_ASSERT_EQUAL(seo_provider_do(&p, &c, &a, why, sizeof(why)), SEO_EINVAL);
	json_decref(in);
}

/* The requests /flaky saw for `id`. */
static long count_of(const char *id)
{
	seo_provider p = site(SEO_AUTH_NONE, NULL);
	const seo_param q[] = {{"id", id}};
	seo_provider_call c = {.path = "/count", .query = q, .n_query = 1};
	seo_provider_answer a;
	char why[128];
	long n = -1;

	if (seo_provider_do(&p, &c, &a, why, sizeof(why)) == 0)
		n = (long)json_integer_value(json_object_get(a.json, "count"));
	seo_provider_answer_free(&a);
	return n;
}

/* Calls /flaky for `id` failing `fail` times with `status`. */
static int flaky(const char *id, const char *fail, const char *status, int retries,
		 long backoff_ms, long timeout_ms, seo_provider_answer *a)
{
	seo_provider p = site(SEO_AUTH_NONE, NULL);
	const seo_param q[] = {{"id", id}, {"fail", fail}, {"status", status}};
	seo_provider_call c = {.path = "/flaky", .query = q, .n_query = 3,
			       .retries = retries, .timeout_ms = timeout_ms};
	char why[128];

	p.backoff_ms = backoff_ms;
	return seo_provider_do(&p, &c, a, why, sizeof(why));
}

static void test_retries(void)
{
	seo_provider_answer a;
	int64_t t0;

	/* a 503 twice, then the answer: three attempts */
	CU_ASSERT_EQUAL_FATAL(flaky("r1", "2", "503", 2, 20, 0, &a), 0);
	CU_ASSERT_EQUAL(a.status, 200);
	CU_ASSERT_EQUAL(a.attempts, 3);
	CU_ASSERT_EQUAL(json_integer_value(json_object_get(a.json, "attempt")), 3);
	seo_provider_answer_free(&a);
	CU_ASSERT_EQUAL(count_of("r1"), 3);
	/* 429 is retried as well */
	CU_ASSERT_EQUAL_FATAL(flaky("r2", "1", "429", 1, 20, 0, &a), 0);
	CU_ASSERT_EQUAL(a.status, 200);
	seo_provider_answer_free(&a);
	/* a call without retries answers the first status */
	CU_ASSERT_EQUAL_FATAL(flaky("r3", "2", "503", 0, 20, 0, &a), 0);
	CU_ASSERT_EQUAL(a.status, 503);
	CU_ASSERT_EQUAL(a.attempts, 1);
	CU_ASSERT_STRING_EQUAL(json_string_value(json_object_get(a.json, "error")), "try again");
	seo_provider_answer_free(&a);
	CU_ASSERT_EQUAL(count_of("r3"), 1);
	/* a client error is an answer, never retried */
	CU_ASSERT_EQUAL_FATAL(flaky("r4", "3", "404", 3, 20, 0, &a), 0);
	CU_ASSERT_EQUAL(a.status, 404);
	seo_provider_answer_free(&a);
	CU_ASSERT_EQUAL(count_of("r4"), 1);
	/* the waits stay within the call's budget: 300 ms of backoff does not
	 * fit twice into 500 ms */
	t0 = seo_mono_ms();
	CU_ASSERT_EQUAL_FATAL(flaky("r5", "9", "503", 9, 300, 500, &a), 0);
	CU_ASSERT_EQUAL(a.status, 503);
	CU_ASSERT_EQUAL(a.attempts, 2);
	CU_ASSERT(seo_mono_ms() - t0 < 1000);
	seo_provider_answer_free(&a);
}

static void test_caps(void)
{
	seo_provider p = site(SEO_AUTH_NONE, NULL);
	const seo_param n[] = {{"n", "1001"}}, ms[] = {{"ms", "3000"}};
	seo_provider_call c = {.path = "/big", .query = n, .n_query = 1, .retries = 2};
	seo_provider_answer a;
	char why[128];
	int64_t t0;

	p.max_body = 1000;
	CU_ASSERT_EQUAL(seo_provider_do(&p, &c, &a, why, sizeof(why)), SEO_EUPSTREAM);
	CU_ASSERT_STRING_EQUAL(why, "the answer is too large");
	CU_ASSERT_PTR_NULL(a.body);
	/* without a length: the running count stops it */
	c.path = "/chunked-big";
	CU_ASSERT_EQUAL(seo_provider_do(&p, &c, &a, why, sizeof(why)), SEO_EUPSTREAM);
	CU_ASSERT_STRING_EQUAL(why, "the answer is too large");
	/* a body that is no JSON is kept as text */
	p.max_body = 0;
	c = (seo_provider_call){.path = "/ok"};
	CU_ASSERT_EQUAL_FATAL(seo_provider_do(&p, &c, &a, why, sizeof(why)), 0);
	CU_ASSERT_PTR_NULL(a.json);
	CU_ASSERT_PTR_NOT_NULL(strstr(a.body, "<title>ok page</title>"));
	seo_provider_answer_free(&a);
	/* the time budget covers the retries too */
	c = (seo_provider_call){.path = "/slow", .query = ms, .n_query = 1, .retries = 3,
				.timeout_ms = 300};
	t0 = seo_mono_ms();
	CU_ASSERT_EQUAL(seo_provider_do(&p, &c, &a, why, sizeof(why)), SEO_EUPSTREAM);
	CU_ASSERT(seo_mono_ms() - t0 < 1500);
	CU_ASSERT(why[0] != '\0');
}

static void test_unreachable_and_unset(void)
{
	seo_provider p = site(SEO_AUTH_NONE, NULL);
	seo_provider_call c = {.path = "/echo"};
	seo_provider_answer a;
	char why[128];

	p.base_url = "http://127.0.0.1:1";
	CU_ASSERT_EQUAL(seo_provider_do(&p, &c, &a, why, sizeof(why)), SEO_EUPSTREAM);
	p.base_url = "";
	CU_ASSERT_EQUAL(seo_provider_do(&p, &c, &a, why, sizeof(why)), SEO_EUPSTREAM);
	CU_ASSERT_STRING_EQUAL(why, "test site is not configured");
	p.base_url = "gopher://127.0.0.1/";
	CU_ASSERT_EQUAL(seo_provider_do(&p, &c, &a, why, sizeof(why)), SEO_EUPSTREAM);
}

/* A proxy in the environment is never used: the site answers directly. */
static void test_no_proxy_from_environment(void)
{
	seo_provider p = site(SEO_AUTH_NONE, NULL);
	seo_provider_call c = {.path = "/echo"};
	seo_provider_answer a;
	char why[128];

	setenv("http_proxy", "http://127.0.0.1:1", 1);
	setenv("ALL_PROXY", "http://127.0.0.1:1", 1);
	CU_ASSERT_EQUAL(seo_provider_do(&p, &c, &a, why, sizeof(why)), 0);
	CU_ASSERT_EQUAL(a.status, 200);
	seo_provider_answer_free(&a);
	unsetenv("http_proxy");
	unsetenv("ALL_PROXY");
}

int main(void)
{
	CU_pSuite s;
	unsigned failed;
	int port;

	if (CU_initialize_registry() != CUE_SUCCESS)
		return 1;
	if (test_site_start(&port) != 0) {
		fprintf(stderr, "cannot start tests/fakes/site_server.py\n");
		test_site_stop();
		return 1;
	}
	snprintf(base, sizeof(base), "http://127.0.0.1:%d/", port);
	s = CU_add_suite("provider", NULL, test_site_stop);
	CU_add_test(s, "query parameters and a query key", test_query_and_key);
	CU_add_test(s, "a form body and a bearer key", test_form_and_bearer);
	CU_add_test(s, "a json body and a header key", test_json_and_header_key);
	CU_add_test(s, "retries where the call allows them", test_retries);
	CU_add_test(s, "size and time caps", test_caps);
	CU_add_test(s, "unreachable or unset providers", test_unreachable_and_unset);
	CU_add_test(s, "no proxy from the environment", test_no_proxy_from_environment);
	CU_basic_set_mode(CU_BRM_NORMAL);
	CU_basic_run_tests();
	failed = CU_get_number_of_failures();
	CU_cleanup_registry();
	return failed ? 1 : 0;
}

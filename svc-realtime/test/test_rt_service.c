/*
 * test_rt_service.c: svc-realtime's answers without the network:
 * rt_pb_from_json() (strictness, presence, oneofs, RawJson), that every
 * analyser's output fits its answer message (hand-written and the saved
 * real pages of ../shared/data/pages), and rt_site_health() on
 * hand-made probe results.
 */
#include "rt.h"
#include "rt_service.h"

#include <CUnit/Basic.h>
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "seo/common/raw_json.pb-c.h"
#include "seo/errors.h"
#include "seo/realtime/v1/realtime.pb-c.h"

#define MSG(t) (&seo__realtime__v1__##t##__descriptor)

/* Converts `text` (JSON) to a message of `desc` on `a`; the return code,
 * and *where when it does not fit. */
static int convert(const char *text, const ProtobufCMessageDescriptor *desc,
		   seo_arena *a, ProtobufCMessage **out, const char **where)
{
	json_t *j = json_loads(text, 0, NULL);
	int rc;

	CU_ASSERT_PTR_NOT_NULL_FATAL(j);
	rc = rt_pb_from_json(j, desc, a, out, where);
	json_decref(j);
	return rc;
}

static void test_pb_from_json(void)
{
	seo_arena *a = seo_arena_new(0);
	ProtobufCMessage *m = NULL;
	const char *where = NULL;
	Seo__Realtime__V1__SitemapUrl *u;
	Seo__Realtime__V1__WwwRedirect *w;
	Seo__Realtime__V1__SchemaEntity *e;

	CU_ASSERT_EQUAL(convert("{\"url\":\"http://a.test/\",\"priority\":\"0.5\"}",
				MSG(sitemap_url), a, &m, &where), 0);
	u = (void *)m;
	CU_ASSERT_STRING_EQUAL(u->url, "http://a.test/");
	CU_ASSERT_EQUAL(u->priority_given_case,
			SEO__REALTIME__V1__SITEMAP_URL__PRIORITY_GIVEN_PRIORITY);
	CU_ASSERT_EQUAL(u->lastmod_given_case,
			SEO__REALTIME__V1__SITEMAP_URL__LASTMOD_GIVEN__NOT_SET);
	/* null leaves an optional field unset */
	CU_ASSERT_EQUAL(convert("{\"enabled\":true,\"target\":null}", MSG(www_redirect),
				a, &m, &where), 0);
	w = (void *)m;
	CU_ASSERT(w->enabled && w->target == NULL);
	/* strict: unknown member, wrong type, missing required field */
	CU_ASSERT_EQUAL(convert("{\"url\":\"x\",\"other\":1}", MSG(sitemap_url), a, &m,
				&where), SEO_EINVAL);
	CU_ASSERT_STRING_EQUAL(where, "seo.realtime.v1.SitemapUrl");
	CU_ASSERT_EQUAL(convert("{\"enabled\":1}", MSG(www_redirect), a, &m, &where),
			SEO_EINVAL);
	CU_ASSERT_STRING_EQUAL(where, "enabled");
	CU_ASSERT_EQUAL(convert("{}", MSG(www_redirect), a, &m, &where), SEO_EINVAL);
	CU_ASSERT_STRING_EQUAL(where, "enabled");
	/* integers within the field's type: billed is a uint32 */
	CU_ASSERT_EQUAL(convert("{\"present\":true,\"disallow_all\":false,"
				"\"sitemap_declared\":\"yes\"}", MSG(robots_facts), a,
				&m, &where), SEO_EINVAL);
	/* a RawJson keeps any value as its compact text */
	CU_ASSERT_EQUAL(convert("{\"type\":[\"A\"],\"id\":null,\"block_index\":0,"
				"\"source\":\"top_level\",\"properties\":{\"b\": [1, 2]}}",
				MSG(schema_entity), a, &m, &where), 0);
	e = (void *)m;
	CU_ASSERT_EQUAL(e->n_type, 1);
	CU_ASSERT_PTR_NULL(e->id);
	CU_ASSERT_STRING_EQUAL(e->properties->json, "{\"b\":[1,2]}");
	seo_arena_free(a);
}

/* The service's page answers for one page: both analyses fit. */
static void page_fits(const rt_page *p)
{
	seo_arena *a = seo_arena_new(0);
	ProtobufCMessage *m = NULL;
	const char *where = NULL;
	json_t *o = NULL;

	CU_ASSERT_EQUAL_FATAL(rt_page_seo(p, &o), 0);
	o = json_pack("{s:o}", "data", o);
	CU_ASSERT_EQUAL(rt_pb_from_json(o, MSG(page_seo_response), a, &m, &where), 0);
	if (where != NULL)
		fprintf(stderr, "\npage-seo does not fit at %s\n", where);
	json_decref(o);
	CU_ASSERT_EQUAL_FATAL(rt_schema_markup(p, &o), 0);
	CU_ASSERT_EQUAL(rt_pb_from_json(o, MSG(schema_markup_response), a, &m, &where), 0);
	if (where != NULL)
		fprintf(stderr, "\nschema-markup does not fit at %s\n", where);
	json_decref(o);
	seo_arena_free(a);
}

static void test_pages_fit(void)
{
	static const char *const pages[] = {
		"",
		"<title>t</title><link rel=canonical href=/c>"
		"<script type=application/ld+json>[{\"@type\":\"A\"},3,"
		"{\"@graph\":[{\"@id\":\"x\"}]}]</script>"
		"<script type=application/ld+json>{oops</script>",
		("<html lang=de><meta name=description content=d><h1>a</h1>"
		 "<link rel=alternate hreflang=en href=/en><img src=x>"),
	};
	for (size_t i = 0; i < sizeof(pages) / sizeof(pages[0]); i++) {
		rt_page p = {"https://a.test/", "https://a.test/", 200, 5, pages[i],
			     strlen(pages[i]), NULL, 0};
		page_fits(&p);
	}
}

/* Every saved real page fits (skipped when the data is absent). */
static void test_real_pages_fit(void)
{
	static const char *const dirs[] = {"readability", "trafilatura", "extruct"};
	const char *src = getenv("SEO_SOURCE_DIR");
	char path[4096], file[4700];
	int n = 0;

	for (size_t d = 0; src != NULL && d < sizeof(dirs) / sizeof(dirs[0]); d++) {
		DIR *dir;
		struct dirent *de;

		snprintf(path, sizeof(path), "%s/../shared/data/pages/%s", src, dirs[d]);
		if ((dir = opendir(path)) == NULL)
			continue;
		while ((de = readdir(dir)) != NULL) {
			seo_arena *a;
			char *raw, *html;
			size_t len, cap = 1 << 20;
			FILE *f;
			rt_page p = {"https://page.test/", "https://page.test/", 200, 1,
				     NULL, 0, NULL, 0};

			if (strstr(de->d_name, ".htm") == NULL)
				continue;
			snprintf(file, sizeof(file), "%s/%s", path, de->d_name);
			if ((f = fopen(file, "rb")) == NULL)
				continue;
			a = seo_arena_new(0);
			raw = malloc(cap);
			CU_ASSERT_FATAL(raw != NULL && a != NULL);
			len = fread(raw, 1, cap, f);
			fclose(f);
			CU_ASSERT_EQUAL(seo_to_utf8(raw, len, seo_charset_detect(raw, len, NULL, a),
						   a, &html, &p.html_len), 0);
			p.html = html;
			page_fits(&p);
			free(raw);
			seo_arena_free(a);
			n++;
		}
		closedir(dir);
	}
	fprintf(stderr, "\n%d real pages converted\n", n);
}

/* A probe result that answered `status` at `final_url` with `hops`
 * responses and the given headers. */
static seo_fetch_result probe(const char *url, const char *final_url, long status,
			     size_t hops, const seo_header *h, size_t nh,
			     const char *body)
{
	seo_fetch_result r = {0};

	r.url = url;
	r.final_url = final_url;
	r.status = status;
	r.n_hops = hops;
	r.headers = h;
	r.n_headers = nh;
	r.body = body ? body : "";
	r.body_len = strlen(r.body);
	r.message = "";
	r.response_time_ms = 7;
	return r;
}

static seo_fetch_result failed(const char *url)
{
	seo_fetch_result r = {0};

	r.error = SEO_FETCH_FAILED;
	r.url = url;
	r.message = "refused";
	return r;
}

/* Runs rt_site_health() and checks that its output fits the answer. */
static json_t *health(const char *domain, const char *apex, const rt_site_probes *p)
{
	seo_arena *a = seo_arena_new(0);
	ProtobufCMessage *m = NULL;
	const char *where = NULL;
	json_t *o = NULL, *top;

	CU_ASSERT_EQUAL_FATAL(rt_site_health(domain, apex, p, a, &o), 0);
	top = json_pack("{s:O}", "data", o);
	CU_ASSERT_EQUAL(rt_pb_from_json(top, MSG(site_health_response), a, &m, &where), 0);
	json_decref(top);
	seo_arena_free(a);
	return o;
}

static json_int_t geti(json_t *o, const char *a, const char *b)
{
	return json_integer_value(json_object_get(json_object_get(o, a), b));
}

static int getb(json_t *o, const char *a, const char *b)
{
	return json_is_true(json_object_get(json_object_get(o, a), b));
}

static void test_site_health(void)
{
	static const struct {
		const char *sts;
		long long max_age;
	} hsts[] = {
		{"max-age=31536000; includeSubDomains", 31536000},
		{"includeSubDomains; MAX-AGE = \"600\"", 600},
		{"max-age=0", 0},
		{"max-age=-5", 0},
		{"preload", 0},
		{"", 0},
	};
	seo_header robots_h[] = {{"content-type", "text/plain"}};
	seo_fetch_result robots = probe("https://a.test/robots.txt", "https://a.test/robots.txt",
				       200, 1, robots_h, 1, "User-agent: *\nDisallow: /\n");
	seo_fetch_result sm = failed("https://a.test/sitemap.xml");
	seo_fetch_result http = probe("http://a.test/", "https://a.test/", 200, 2, NULL, 0, NULL);
	seo_fetch_result www = probe("https://www.a.test/", "https://a.test/", 200, 2, NULL, 0, NULL);
	json_t *o;

	for (size_t i = 0; i < sizeof(hsts) / sizeof(hsts[0]); i++) {
		seo_header h[] = {{"strict-transport-security", hsts[i].sts}};
		seo_fetch_result home = probe("https://a.test/", "https://a.test/", 200, 1, h, 1, NULL);
		rt_site_probes p = {&home, &robots, &sm, &http, &www};

		o = health("a.test", "a.test", &p);
		CU_ASSERT_EQUAL(geti(o, "https", "hsts_max_age"), hsts[i].max_age);
		CU_ASSERT_EQUAL(getb(o, "https", "hsts"), hsts[i].max_age > 0);
		CU_ASSERT(getb(o, "https", "enforced"));
		CU_ASSERT(getb(o, "www_redirect", "enabled"));
		CU_ASSERT(getb(o, "robots_txt", "disallow_all"));
		CU_ASSERT(json_is_null(json_object_get(json_array_get(json_object_get(o, "checks"), 2),
						       "status")));
		json_decref(o);
	}
	/* nothing answers: every fact false, every status null */
	{
		seo_fetch_result home = failed("https://b.test/"), r = failed("https://b.test/robots.txt");
		seo_fetch_result h2 = failed("http://b.test/"), w = failed("https://www.b.test/");
		rt_site_probes p = {&home, &r, &sm, &h2, &w};

		o = health("b.test", "b.test", &p);
		CU_ASSERT(!getb(o, "https", "enforced") && !getb(o, "https", "hsts"));
		CU_ASSERT(!getb(o, "www_redirect", "enabled"));
		CU_ASSERT(json_is_null(json_object_get(json_object_get(o, "www_redirect"), "target")));
		CU_ASSERT(!getb(o, "robots_txt", "present"));
		CU_ASSERT(!getb(o, "security_headers", "content_security_policy"));
		json_decref(o);
	}
	/* an https homepage over http is not HSTS; a www host that stays put
	 * is no redirect */
	{
		seo_header h[] = {{"strict-transport-security", "max-age=60"}};
		seo_fetch_result home = probe("https://c.test/", "http://c.test/", 200, 2, h, 1, NULL);
		seo_fetch_result h2 = probe("http://c.test/", "http://c.test/", 200, 1, NULL, 0, NULL);
		seo_fetch_result w = probe("https://www.c.test/", "https://www.c.test/", 200, 1,
					  NULL, 0, NULL);
		rt_site_probes p = {&home, &robots, &sm, &h2, &w};

		o = health("c.test", "c.test", &p);
		CU_ASSERT(!getb(o, "https", "hsts") && !getb(o, "https", "enforced"));
		CU_ASSERT(!getb(o, "www_redirect", "enabled"));
		CU_ASSERT(json_is_null(json_object_get(json_object_get(o, "www_redirect"), "target")));
		json_decref(o);
	}
}

/* Each workspace holds at most `max` slots, whatever the others hold; a
 * slot given back can be taken again, and a workspace holding none is
 * forgotten. */
static void test_slots(void)
{
	rt_slots *s = NULL;

	CU_ASSERT_EQUAL_FATAL(rt_slots_new(2, &s), 0);
	CU_ASSERT_EQUAL(rt_slots_take(s, "w1"), 0);
	CU_ASSERT_EQUAL(rt_slots_take(s, "w1"), 0);
	CU_ASSERT_EQUAL(rt_slots_take(s, "w1"), SEO_EDENIED);
	CU_ASSERT_EQUAL(rt_slots_take(s, "w2"), 0);
	CU_ASSERT_EQUAL(rt_slots_held(s, "w1"), 2);
	CU_ASSERT_EQUAL(rt_slots_held(s, "w2"), 1);
	rt_slots_give(s, "w1");
	CU_ASSERT_EQUAL(rt_slots_take(s, "w1"), 0);
	rt_slots_give(s, "w2");
	CU_ASSERT_EQUAL(rt_slots_held(s, "w2"), 0);
	rt_slots_give(s, "w2"); /* none held: nothing happens */
	CU_ASSERT_EQUAL(rt_slots_held(s, "w2"), 0);
	rt_slots_free(s);
}

int main(void)
{
	CU_pSuite s;
	unsigned failed_n;

	if (CU_initialize_registry() != CUE_SUCCESS)
		return 1;
	s = CU_add_suite("rt_service", NULL, NULL);
	CU_add_test(s, "JSON to protobuf: strict, presence, oneofs, RawJson", test_pb_from_json);
	CU_add_test(s, "analyses fit their answers", test_pages_fit);
	CU_add_test(s, "saved real pages fit their answers", test_real_pages_fit);
	CU_add_test(s, "site health facts", test_site_health);
	CU_add_test(s, "live-analysis slots per workspace", test_slots);
	CU_basic_set_mode(CU_BRM_NORMAL);
	CU_basic_run_tests();
	failed_n = CU_get_number_of_failures();
	CU_cleanup_registry();
	return failed_n != 0;
}

/*
 * test_graph_platforms.c: platforms in the crawl index. A hand-built
 * crawl whose WAT records show known platforms the ways real pages do
 * (meta generator, headers, Set-Cookie, script and preload hosts) is
 * ingested; then the counts, every order and filter, the limit, names
 * and aliases, and svc-graph's PlatformTrends and PlatformDomains
 * methods with their errors. Last, the real WAT samples of
 * ../shared/data/crawl-samples (skipped when absent).
 */
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <CUnit/Basic.h>
#include <jansson.h>

#include <seo/arena.h>
#include <seo/errors.h>

#include "graph.h"
#include "graph_ingest.h"
#include "graph_service.h"
#include "test_crawl.h"
#include "seo/graph/v1/graph.pb-c.h"
#include "test_config.h"

#define T(name) Seo__Graph__V1__##name
#define N(a) (sizeof(a) / sizeof((a)[0]))

static char tmp[256], ixdir[300];
static graph_index *ix;
static graph_service *svc;
static graph_ingest_stats stats;
static seo_arena *arena;

static const char *file(const char *name, const char *text)
{
	return tcrawl_put(tmp, name, text);
}

/* A WAT response record of `uri` linking to its own root, with extra
 * Headers members, Head members and Links items (each "" or starting with
 * a comma, as JSON). */
static void page(FILE *f, const char *uri, const char *headers,
		 const char *head, const char *links)
{
	char items[2048];

	snprintf(items, sizeof(items),
		 "{\"path\":\"A@/href\",\"url\":\"/\"}%s", links);
	tcrawl_response(f, uri, "2024-05-10T10:00:00Z", headers, head, items);
}

#define GENERATOR(g) ",\"Metas\":[{\"name\":\"generator\",\"content\":\"" g "\"}]"

/*
 * Authority comes from the referring domains of the domain graph: alpha
 * has 4 (the most: 100), beta and kappa 2 (68), epsilon 1 (43), the rest
 * none (0). Platforms: WordPress on alpha, beta, epsilon (through
 * WordPress.com, which implies it), kappa and lambda; PayPal on another
 * page of alpha; Shopify on gamma (a cookie) and eta (a body script);
 * Wix on delta; Webflow and Contentful on zeta's one page; theta and
 * iota show none.
 */
static int ingest(const char *out, graph_ingest_stats *st)
{
	graph_input in[3];
	graph_ingest_opts o = {.out_dir = out, .release = "plat-test",
			       .inputs = in, .n_inputs = 3};
	char wat[320];
	FILE *f;

	in[0] = (graph_input){GRAPH_IN_VERTICES, file("v.txt",
		"0\tcom.alpha\t1\n1\tcom.beta\t1\n2\tcom.eta\t1\n"
		"3\tcom.iota\t1\n4\tcom.lambda\t1\n5\tcom.src1\t1\n"
		"6\tcom.src2\t1\n7\tcom.src3\t1\n8\tcom.src4\t1\n"
		"9\tcom.theta\t1\n10\tcom.zeta\t1\n11\torg.delta\t1\n"
		"12\torg.epsilon\t1\n13\tuk.co.gamma\t1\n"
		"14\tuk.co.kappa\t1\n")};
	in[1] = (graph_input){GRAPH_IN_EDGES, file("e.txt",
		"5\t0\n5\t1\n5\t12\n5\t14\n6\t0\n6\t1\n6\t14\n7\t0\n8\t0\n")};
	snprintf(wat, sizeof(wat), "%s/p.wat", tmp);
	f = fopen(wat, "w");
	page(f, "https://www.alpha.com/", "", GENERATOR("WordPress 6.4.3"), "");
	page(f, "https://www.alpha.com/about", "", GENERATOR("WordPress 6.4.3"), "");
	page(f, "https://alpha.com/shop", "",
	     ",\"Scripts\":[{\"path\":\"SCRIPT@/src\",\"url\":"
	     "\"https://www.paypal.com/sdk/js?client-id=x\"}]", "");
	page(f, "https://beta.com/",
	     ",\"X-Pingback\":\"https://beta.com/xmlrpc.php\"", "", "");
	page(f, "https://gamma.co.uk/",
	     ",\"Set-Cookie\":[\"other=1; path=/\",\"_shopify_y=abc; path=/\"]",
	     "", "");
	page(f, "https://delta.org/", ",\"X-Wix-Request-Id\":\"1718.1\"", "",
	     "");
	page(f, "https://epsilon.org/", "", GENERATOR("WordPress.com"), "");
	page(f, "https://zeta.com/", "",
	     GENERATOR("Webflow") ",\"Link\":[{\"path\":\"LINK@/href\","
	     "\"rel\":\"preload\",\"url\":"
	     "\"https://images.ctfassets.net/s/hero.jpg\"}]", "");
	page(f, "https://eta.com/", "", "",
	     ",{\"path\":\"SCRIPT@/src\",\"url\":"
	     "\"https://cdn.shopify.com/s/files/x.js\"}");
	page(f, "https://theta.com/", "",
	     GENERATOR("Hugo 0.121") ",\"Link\":[{\"path\":\"LINK@/href\","
	     "\"rel\":\"alternate\",\"url\":\"https://cdn.shopify.com/x\"}]",
	     "");
	page(f, "https://kappa.co.uk/", "",
	     ",\"Scripts\":[{\"path\":\"SCRIPT@/src\",\"url\":"
	     "\"/wp-content/themes/k/app.js\"}]", "");
	page(f, "https://lambda.com/", "",
	     ",\"Metas\":[{\"property\":\"og:title\",\"content\":\"L\"},"
	     "{\"name\":\"generator\",\"content\":\"WordPress\"}]", "");
	page(f, "https://iota.com/", "", "", "");
	fclose(f);
	in[2] = (graph_input){GRAPH_IN_WAT, wat};
	return graph_ingest(&o, st);
}

static int suite_init(void)
{
	const char *t = getenv("TMPDIR");

	snprintf(tmp, sizeof(tmp), "%s/test_platforms-XXXXXX",
		 t && *t ? t : "/tmp");
	if (!mkdtemp(tmp) || !(arena = seo_arena_new(0)))
		return 1;
	snprintf(ixdir, sizeof(ixdir), "%s/index", tmp);
	if (ingest(ixdir, &stats) != 0 || graph_index_open(ixdir, &ix) != 0)
		return 1;
	return graph_service_new(ixdir, &svc) != 0;
}

static int suite_clean(void)
{
	graph_service_free(svc);
	graph_index_close(ix);
	seo_arena_free(arena);
	graph_remove_dir(tmp);
	return 0;
}

static size_t idx_of(const char *slug)
{
	size_t i;

	CU_ASSERT_EQUAL_FATAL(graph_platform_find(slug, &i), 0);
	return i;
}

/* The domains of one query, joined by blanks ("alpha.com beta.com"). */
static const char *query(const char *slug, int min, int max, const char *tld,
			 graph_platform_sort sort, uint32_t limit,
			 uint64_t *total)
{
	static char out[1024];
	graph_platform_query q = {idx_of(slug), (uint8_t)min, (uint8_t)max,
				  tld, sort, limit};
	graph_platform_row *rows;
	size_t n;
	uint64_t t;

	out[0] = '\0';
	CU_ASSERT_EQUAL_FATAL(graph_platform_domains(ix, &q, arena, &rows, &n,
						     &t), 0);
	for (size_t i = 0; i < n; i++)
		snprintf(out + strlen(out), sizeof(out) - strlen(out), "%s%s",
			 i ? " " : "", rows[i].domain);
	if (total)
		*total = t;
	return out;
}

static void test_trends(void)
{
	graph_platform_count c[GRAPH_PLATFORM_COUNT];
	static const char *const order[] = {
		"WordPress", "Shopify", "Contentful", "PayPal", "Webflow",
		"Wix", "BigCommerce", "Bubble", "Carrd", "Framer",
		"GoDaddy Website Builder", "Kajabi", "Sanity", "Softr",
		"Squarespace", "Strikingly", "Thinkific", "Tilda", "Weebly"};
	static const uint64_t counts[] = {5, 2, 1, 1, 1, 1};

	CU_ASSERT_EQUAL(stats.malformed, 0);
	/* 11 pairs: 5 WordPress, 2 Shopify, 4 of one each */
	CU_ASSERT_EQUAL(stats.platform_domains, 11);
	graph_platform_trends(ix, c);
	for (size_t i = 0; i < N(order); i++) {
		CU_ASSERT_STRING_EQUAL(c[i].platform->name, order[i]);
		CU_ASSERT_EQUAL(c[i].count, i < N(counts) ? counts[i] : 0);
	}
	CU_ASSERT_STRING_EQUAL(c[0].platform->slug, "wordpress");
	CU_ASSERT_STRING_EQUAL(c[0].platform->category, "cms");
}

static void test_orders(void)
{
	uint64_t total;

	CU_ASSERT_STRING_EQUAL(query("wordpress", 0, 100, NULL,
				     GRAPH_PSORT_DA_DESC, 100, &total),
			       "alpha.com beta.com kappa.co.uk epsilon.org lambda.com");
	CU_ASSERT_EQUAL(total, 5);
	CU_ASSERT_STRING_EQUAL(query("wordpress", 0, 100, NULL,
				     GRAPH_PSORT_DA_ASC, 100, NULL),
			       "lambda.com epsilon.org beta.com kappa.co.uk alpha.com");
	/* a page of 1 walks the stored name order, 100 sorts the slice */
	CU_ASSERT_STRING_EQUAL(query("wordpress", 0, 100, NULL,
				     GRAPH_PSORT_DOMAIN_ASC, 100, NULL),
			       "alpha.com beta.com epsilon.org kappa.co.uk lambda.com");
	CU_ASSERT_STRING_EQUAL(query("wordpress", 0, 100, NULL,
				     GRAPH_PSORT_DOMAIN_ASC, 1, NULL),
			       "alpha.com");
	CU_ASSERT_STRING_EQUAL(query("shopify", 0, 100, NULL,
				     GRAPH_PSORT_DOMAIN_ASC, 100, &total),
			       "eta.com gamma.co.uk");
	CU_ASSERT_EQUAL(total, 2);
	CU_ASSERT_STRING_EQUAL(query("squarespace", 0, 100, NULL,
				     GRAPH_PSORT_DA_DESC, 100, &total), "");
	CU_ASSERT_EQUAL(total, 0);
}

static void test_filters(void)
{
	uint64_t total;
	graph_platform_row *rows;
	size_t n;
	graph_platform_query q = {idx_of("wordpress"), 0, 100, NULL,
				  GRAPH_PSORT_DA_DESC, 100};

	/* total_count counts the platform, whatever the filters */
	CU_ASSERT_STRING_EQUAL(query("wordpress", 50, 100, NULL,
				     GRAPH_PSORT_DA_DESC, 100, &total),
			       "alpha.com beta.com kappa.co.uk");
	CU_ASSERT_EQUAL(total, 5);
	CU_ASSERT_STRING_EQUAL(query("wordpress", 0, 50, NULL,
				     GRAPH_PSORT_DA_DESC, 100, NULL),
			       "epsilon.org lambda.com");
	CU_ASSERT_STRING_EQUAL(query("wordpress", 60, 70, NULL,
				     GRAPH_PSORT_DA_ASC, 100, NULL),
			       "beta.com kappa.co.uk");
	CU_ASSERT_STRING_EQUAL(query("wordpress", 60, 100, NULL,
				     GRAPH_PSORT_DOMAIN_ASC, 1, NULL),
			       "alpha.com");
	CU_ASSERT_STRING_EQUAL(query("wordpress", 60, 70, NULL,
				     GRAPH_PSORT_DOMAIN_ASC, 1, NULL),
			       "beta.com");
	CU_ASSERT_STRING_EQUAL(query("wordpress", 70, 60, NULL,
				     GRAPH_PSORT_DA_DESC, 100, &total), "");
	CU_ASSERT_EQUAL(total, 5);
	CU_ASSERT_STRING_EQUAL(query("wordpress", 0, 100, "com",
				     GRAPH_PSORT_DA_DESC, 100, NULL),
			       "alpha.com beta.com lambda.com");
	CU_ASSERT_STRING_EQUAL(query("wordpress", 0, 100, ".CO.UK",
				     GRAPH_PSORT_DOMAIN_ASC, 100, NULL),
			       "kappa.co.uk");
	CU_ASSERT_STRING_EQUAL(query("wordpress", 0, 100, "uk",
				     GRAPH_PSORT_DA_DESC, 100, NULL), "");
	CU_ASSERT_STRING_EQUAL(query("wordpress", 0, 100, "net",
				     GRAPH_PSORT_DA_DESC, 100, NULL), "");
	CU_ASSERT_STRING_EQUAL(query("wordpress", 40, 100, "org",
				     GRAPH_PSORT_DA_ASC, 100, NULL),
			       "epsilon.org");
	CU_ASSERT_STRING_EQUAL(query("wordpress", 0, 100, NULL,
				     GRAPH_PSORT_DA_DESC, 2, &total),
			       "alpha.com beta.com");
	CU_ASSERT_EQUAL(total, 5);
	/* rows carry the suffix and the score */
	CU_ASSERT_EQUAL_FATAL(graph_platform_domains(ix, &q, arena, &rows, &n,
						     &total), 0);
	CU_ASSERT_EQUAL_FATAL(n, 5);
	CU_ASSERT_STRING_EQUAL(rows[0].tld, "com");
	CU_ASSERT_EQUAL(rows[0].da_score, 100);
	CU_ASSERT_STRING_EQUAL(rows[2].tld, "co.uk");
	CU_ASSERT_EQUAL(rows[1].da_score, 68);
	CU_ASSERT_EQUAL(rows[2].da_score, 68);
	CU_ASSERT_EQUAL(rows[3].da_score, 43);
	CU_ASSERT_EQUAL(rows[4].da_score, 0);
	/* the page size is bounded whatever the caller asks */
	q.limit = 5000;
	CU_ASSERT_EQUAL(graph_platform_domains(ix, &q, arena, &rows, &n,
					       &total), 0);
	CU_ASSERT_EQUAL(n, 5);
	q.platform = GRAPH_PLATFORM_COUNT;
	CU_ASSERT_EQUAL(graph_platform_domains(ix, &q, arena, &rows, &n,
					       &total), SEO_EINVAL);
}

static void test_two_platforms(void)
{
	/* alpha: WordPress on two pages, PayPal on a third; zeta: Webflow
	 * and Contentful on one page */
	CU_ASSERT_STRING_EQUAL(query("paypal", 0, 100, NULL,
				     GRAPH_PSORT_DA_DESC, 100, NULL), "alpha.com");
	CU_ASSERT_STRING_EQUAL(query("webflow", 0, 100, NULL,
				     GRAPH_PSORT_DA_DESC, 100, NULL), "zeta.com");
	CU_ASSERT_STRING_EQUAL(query("contentful", 0, 100, NULL,
				     GRAPH_PSORT_DA_DESC, 100, NULL), "zeta.com");
	CU_ASSERT_STRING_EQUAL(query("wix", 0, 100, NULL,
				     GRAPH_PSORT_DA_DESC, 100, NULL), "delta.org");
}

static void test_names(void)
{
	static const struct {
		const char *in, *slug;
	} names[] = {
		{"WordPress", "wordpress"}, {"wp", "wordpress"},
		{"word press", "wordpress"}, {"WORDPRESS", "wordpress"},
		{"GoDaddy", "godaddy_builder"},
		{"godaddy website builder", "godaddy_builder"},
		{"GoDaddy_Builder", "godaddy_builder"},
		{"BigCommerce", "bigcommerce"}, {"big commerce", "bigcommerce"},
		{"big-commerce", "bigcommerce"}, {"Pay Pal", "paypal"},
		{"wix.com", "wix"}, {"Square Space", "squarespace"},
		{"bubble.io", "bubble"}, {"Carrd", "carrd"},
	};
	static const char *const unknown[] = {"drupal", "", "  ", "word",
					      "joomla", NULL};
	size_t n, i;
	const graph_platform *p = graph_platforms(&n);

	CU_ASSERT_EQUAL(n, GRAPH_PLATFORM_COUNT);
	for (i = 0; i < n; i++) {
		size_t j;

		CU_ASSERT_EQUAL(graph_platform_find(p[i].slug, &j), 0);
		CU_ASSERT_EQUAL(j, i);
		CU_ASSERT_EQUAL(graph_platform_find(p[i].name, &j), 0);
		CU_ASSERT_EQUAL(j, i);
		CU_ASSERT_PTR_NOT_NULL(strstr(graph_platform_slugs(), p[i].slug));
	}
	for (i = 0; i < N(names); i++)
		CU_ASSERT_STRING_EQUAL(p[idx_of(names[i].in)].slug,
				       names[i].slug);
	for (i = 0; i < N(unknown); i++)
		CU_ASSERT_EQUAL(graph_platform_find(unknown[i], &n),
				SEO_ENOTFOUND);
}

/* ---- the methods ---- */

static int call(const char *method, const ProtobufCMessage *req,
		ProtobufCMessage **resp, graph_fail *err)
{
	return graph_service_call(svc, method, req, arena, resp, err);
}

static void test_method_trends(void)
{
	T(PlatformTrendsRequest) req = SEO__GRAPH__V1__PLATFORM_TRENDS_REQUEST__INIT;
	ProtobufCMessage *m;
	T(PlatformTrendsResponse) *r;
	graph_fail err;

	CU_ASSERT_EQUAL_FATAL(call("PlatformTrends", &req.base, &m, &err), 0);
	r = (T(PlatformTrendsResponse) *)m;
	CU_ASSERT_EQUAL_FATAL(r->n_data, GRAPH_PLATFORM_COUNT);
	CU_ASSERT_STRING_EQUAL(r->data[0]->platform, "WordPress");
	CU_ASSERT_STRING_EQUAL(r->data[0]->platform_slug, "wordpress");
	CU_ASSERT_STRING_EQUAL(r->data[0]->category, "cms");
	CU_ASSERT_EQUAL(r->data[0]->count, 5);
	CU_ASSERT_STRING_EQUAL(r->data[1]->category, "ecommerce");
	CU_ASSERT_EQUAL(r->data[18]->count, 0);
}

static T(PlatformDomainsResponse) *domains(T(PlatformDomainsRequest) *req)
{
	ProtobufCMessage *m;
	graph_fail err;

	CU_ASSERT_EQUAL_FATAL(call("PlatformDomains", &req->base, &m, &err), 0);
	return (T(PlatformDomainsResponse) *)m;
}

static void test_method_domains(void)
{
	T(PlatformDomainsRequest) req = SEO__GRAPH__V1__PLATFORM_DOMAINS_REQUEST__INIT;
	T(PlatformDomainsResponse) *r;
	T(PlatformDomains) *d;

	req.platform = "Word Press";
	r = domains(&req);
	d = r->data;
	CU_ASSERT_STRING_EQUAL(d->platform, "WordPress");
	CU_ASSERT_STRING_EQUAL(d->platform_slug, "wordpress");
	CU_ASSERT_EQUAL(d->total_count, 5);
	CU_ASSERT_EQUAL(d->returned, 5);
	CU_ASSERT_EQUAL(d->credits_used, 5);
	CU_ASSERT_EQUAL(r->returned, 5);
	CU_ASSERT_FALSE(d->filters_applied->has_min_da);
	CU_ASSERT_FALSE(d->filters_applied->has_max_da);
	CU_ASSERT_PTR_NULL(d->filters_applied->tld);
	CU_ASSERT_EQUAL_FATAL(d->n_domains, 5);
	CU_ASSERT_STRING_EQUAL(d->domains[0]->domain, "alpha.com");
	CU_ASSERT_STRING_EQUAL(d->domains[0]->tld, "com");
	CU_ASSERT_EQUAL(d->domains[0]->da_score, 100);

	req.has_min_da = 1;
	req.min_da = 50;
	req.tld = ".COM";
	req.has_sort = 1;
	req.sort = SEO__GRAPH__V1__PLATFORM_SORT__PLATFORM_SORT_DA_ASC;
	req.has_limit = 1;
	req.limit = 5000;
	d = domains(&req)->data;
	CU_ASSERT_EQUAL(d->total_count, 5);
	CU_ASSERT_EQUAL_FATAL(d->n_domains, 2);
	CU_ASSERT_STRING_EQUAL(d->domains[0]->domain, "beta.com");
	CU_ASSERT_STRING_EQUAL(d->domains[1]->domain, "alpha.com");
	CU_ASSERT_TRUE(d->filters_applied->has_min_da);
	CU_ASSERT_EQUAL(d->filters_applied->min_da, 50);
	CU_ASSERT_FALSE(d->filters_applied->has_max_da);
	CU_ASSERT_STRING_EQUAL(d->filters_applied->tld, "com");

	req.limit = 0;
	req.sort = SEO__GRAPH__V1__PLATFORM_SORT__PLATFORM_SORT_DOMAIN_ASC;
	d = domains(&req)->data;
	CU_ASSERT_EQUAL_FATAL(d->n_domains, 1);
	CU_ASSERT_STRING_EQUAL(d->domains[0]->domain, "alpha.com");
	CU_ASSERT_EQUAL(d->credits_used, 1);
}

static void expect_fail(T(PlatformDomainsRequest) *req, const char *code)
{
	ProtobufCMessage *m;
	graph_fail err;

	CU_ASSERT_EQUAL(call("PlatformDomains", &req->base, &m, &err),
			SEO_EINVAL);
	CU_ASSERT_STRING_EQUAL(err.code, code);
	if (strcmp(code, "invalid_parameter") != 0) {
		/* the message names every supported slug */
		CU_ASSERT_PTR_NOT_NULL(strstr(err.message, "wix, wordpress"));
		CU_ASSERT_PTR_NOT_NULL(strstr(err.message, "thinkific, paypal"));
	}
}

static void test_method_errors(void)
{
	T(PlatformDomainsRequest) req = SEO__GRAPH__V1__PLATFORM_DOMAINS_REQUEST__INIT;

	expect_fail(&req, "missing_platform");
	req.platform = "";
	expect_fail(&req, "missing_platform");
	req.platform = "drupal";
	expect_fail(&req, "unknown_platform");
	req.platform = "shopify";
	req.has_max_da = 1;
	req.max_da = 101;
	expect_fail(&req, "invalid_parameter");
	req.max_da = 100;
	req.has_min_da = 1;
	req.min_da = -1;
	expect_fail(&req, "invalid_parameter");
}

/* ---- the real samples ---- */

/* The real 2014 WAT record of 0pointer.de (Head with Link and Scripts,
 * Headers as an object), given a generator meta. */
static int real_with_generator(const char *src, const char *dst)
{
	FILE *in = fopen(src, "rb"), *out = fopen(dst, "w");
	char *buf = NULL, *p;
	long size;
	int found = 0;

	if (!in || !out || fseek(in, 0, SEEK_END) || (size = ftell(in)) < 0 ||
	    fseek(in, 0, SEEK_SET) || !(buf = calloc(1, (size_t)size + 1)) ||
	    fread(buf, 1, (size_t)size, in) != (size_t)size)
		goto out;
	for (p = buf; (p = strstr(p, "\r\n\r\n{\"Envelope\"")) != NULL; p++) {
		json_error_t e;
		json_t *j = json_loadb(p + 4, strcspn(p + 4, "\r"), 0, &e);
		json_t *resp = json_object_get(json_object_get(json_object_get(
			json_object_get(j, "Envelope"), "Payload-Metadata"),
			"HTTP-Response-Metadata"), "HTML-Metadata");
		json_t *head = json_object_get(resp, "Head");
		char *text;

		if (head && json_object_get(head, "Scripts")) {
			json_object_set_new(head, "Metas", json_pack(
				"[{s:s, s:s}]", "name", "generator", "content",
				"WordPress 3.9.2"));
			text = json_dumps(j, JSON_COMPACT);
			tcrawl_warc(out, "metadata", text);
			free(text);
			found++;
		}
		json_decref(j);
	}
out:
	free(buf);
	if (in)
		fclose(in);
	if (out)
		fclose(out);
	return found;
}

static void test_real_samples(void)
{
	const char *src = getenv("SEO_SOURCE_DIR");
	static const char *const wats[] = {
		"CC-MAIN-20140820021334-00006-ip-10-180-136-8.ec2.internal.excerpt.warc.wat",
		"CC-MAIN-2024-22.an-wikipedia-escopete.whirlwind.warc.wat.gz",
	};
	graph_input in[3];
	graph_ingest_opts o = {.release = "real", .inputs = in};
	graph_platform_count c[GRAPH_PLATFORM_COUNT];
	char base[512], paths[3][1024], out[400], out2[400];
	graph_ingest_stats st;
	graph_index *x;
	uint64_t sum = 0;
	struct stat sb;

	snprintf(base, sizeof(base), "%s/../shared/data/crawl-samples/wat-warc",
		 src ? src : ".");
	if (!src || stat(base, &sb) != 0) {
		printf("\n  real samples not found, skipped ");
		return;
	}
	for (size_t i = 0; i < N(wats); i++) {
		snprintf(paths[i], sizeof(paths[i]), "%s/%s", base, wats[i]);
		in[o.n_inputs++] = (graph_input){GRAPH_IN_WAT, paths[i]};
	}
	snprintf(out, sizeof(out), "%s/real", tmp);
	o.out_dir = out;
	CU_ASSERT_EQUAL_FATAL(graph_ingest(&o, &st), 0);
	CU_ASSERT_EQUAL(st.malformed, 0);
	CU_ASSERT_EQUAL_FATAL(graph_index_open(out, &x), 0);
	graph_platform_trends(x, c);
	printf("\n  real WAT samples: %llu response records, platforms:",
	       (unsigned long long)st.captures);
	for (size_t i = 0; i < GRAPH_PLATFORM_COUNT; i++) {
		sum += c[i].count;
		if (c[i].count)
			printf(" %s %llu", c[i].platform->slug,
			       (unsigned long long)c[i].count);
	}
	printf("%s ", sum ? "" : " none (an Apache/PHP site and a redirect)");
	CU_ASSERT_EQUAL(sum, st.platform_domains);
	graph_index_close(x);

	/* the same real record with a generator meta added is WordPress */
	snprintf(paths[2], sizeof(paths[2]), "%s/real-gen.wat", tmp);
	CU_ASSERT_EQUAL_FATAL(real_with_generator(paths[0], paths[2]), 1);
	in[0] = (graph_input){GRAPH_IN_WAT, paths[2]};
	o.n_inputs = 1;
	snprintf(out2, sizeof(out2), "%s/real-gen", tmp);
	o.out_dir = out2;
	CU_ASSERT_EQUAL_FATAL(graph_ingest(&o, &st), 0);
	CU_ASSERT_EQUAL_FATAL(graph_index_open(out2, &x), 0);
	graph_platform_trends(x, c);
	CU_ASSERT_STRING_EQUAL(c[0].platform->slug, "wordpress");
	CU_ASSERT_EQUAL(c[0].count, 1);
	CU_ASSERT_EQUAL(c[1].count, 0);
	{
		graph_platform_query q = {idx_of("wordpress"), 0, 100, "de",
					  GRAPH_PSORT_DA_DESC, 10};
		graph_platform_row *rows;
		size_t n;
		uint64_t total;

		CU_ASSERT_EQUAL(graph_platform_domains(x, &q, arena, &rows, &n,
						       &total), 0);
		CU_ASSERT_EQUAL_FATAL(n, 1);
		CU_ASSERT_STRING_EQUAL(rows[0].domain, "0pointer.de");
	}
	graph_index_close(x);
}

/* An ingest of WAT records needs the rule file: without one it fails
 * rather than writing an index without platforms. The configuration
 * refuses a missing file at start, so this one goes away after. */
static void test_rules_required(void)
{
	graph_input in = {GRAPH_IN_WAT, file("one.wat", "")};
	graph_ingest_opts o = {.release = "x", .inputs = &in, .n_inputs = 1};
	char out[400], *saved = getenv("SEO_TECH_RULES");
	char keep[1024] = "";
	const char *gone = file("gone.json", "{}");
	struct stat sb;

	if (saved)
		snprintf(keep, sizeof(keep), "%s", saved);
	snprintf(out, sizeof(out), "%s/norules", tmp);
	o.out_dir = out;
	seo_test_config_set("SEO_TECH_RULES", gone);
	unlink(gone);
	CU_ASSERT_EQUAL(graph_ingest(&o, NULL), SEO_ENOTFOUND);
	CU_ASSERT_NOT_EQUAL(stat(out, &sb), 0);
	seo_test_config_set("SEO_TECH_RULES", keep[0] ? keep : NULL);
}

int main(void)
{
	CU_pSuite s;
	unsigned failed;

	if (CU_initialize_registry() != CUE_SUCCESS)
		return 1;
	s = CU_add_suite("graph platforms", suite_init, suite_clean);
	CU_add_test(s, "counts in popularity order", test_trends);
	CU_add_test(s, "every sort", test_orders);
	CU_add_test(s, "filters and limit", test_filters);
	CU_add_test(s, "a domain with two platforms", test_two_platforms);
	CU_add_test(s, "names and aliases", test_names);
	CU_add_test(s, "PlatformTrends", test_method_trends);
	CU_add_test(s, "PlatformDomains", test_method_domains);
	CU_add_test(s, "PlatformDomains errors", test_method_errors);
	CU_add_test(s, "real WAT samples", test_real_samples);
	CU_add_test(s, "rule file required with WAT", test_rules_required);
	CU_basic_set_mode(CU_BRM_VERBOSE);
	CU_basic_run_tests();
	failed = CU_get_number_of_failures() + CU_get_number_of_suites_failed();
	CU_cleanup_registry();
	return failed ? 1 : 0;
}

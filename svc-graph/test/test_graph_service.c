/*
 * test_graph_service.c: svc-graph's methods (svc-graph/lib/service.c) run
 * without sockets on a small hand-built crawl with known answers; the
 * release switch (a symlink swapped, as a deploy does) and the answer
 * while no index is there.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <CUnit/Basic.h>

#include <seo/arena.h>
#include <seo/errors.h>

#include "graph.h"
#include "graph_ingest.h"
#include "graph_service.h"
#include "test_crawl.h"
/* the result cache on its own */
#include "../lib/cache.h"
#include "seo/graph/v1/graph.pb-c.h"

#define T(name) Seo__Graph__V1__##name

static char tmp[256], data[300];
static graph_service *svc;
static seo_arena *arena;
static graph_fail err;

static const char *file(const char *name, const char *text)
{
	return tcrawl_put(tmp, name, text);
}

/* One WAT response record of `uri` holding `links` (JSON array items). */
static void wat_page(FILE *f, const char *uri, const char *date,
		     const char *links)
{
	tcrawl_response(f, uri, date, "", NULL, links);
}

/*
 * site.com is linked by a.com, b.org and c.net (a.com twice, with an
 * image); a.com and b.org also link to other.com; c.net to a.com.
 */
static int ingest(const char *out, const char *release)
{
	graph_input in[4];
	graph_ingest_opts o = {.out_dir = out, .release = release,
			       .inputs = in, .n_inputs = 4};
	char wat[320];
	FILE *f;

	in[0] = (graph_input){GRAPH_IN_VERTICES, file("v.txt",
		"0\tcom.a\t2\n1\tcom.other\t1\n2\tcom.site\t3\n"
		"3\tnet.c\t1\n4\torg.b\t4\n")};
	in[1] = (graph_input){GRAPH_IN_EDGES, file("e.txt",
		"0\t1\n0\t2\n3\t0\n3\t2\n4\t1\n4\t2\n")};
	in[2] = (graph_input){GRAPH_IN_CDX, file("c.cdxj",
		"com,site)/ 20240510100000 {\"url\": \"https://site.com/\", "
		"\"mime\": \"text/html\", \"status\": \"200\"}\n"
		"com,site)/old 20240301000000 {\"url\": \"https://site.com/old\", "
		"\"status\": \"404\"}\n")};
	snprintf(wat, sizeof(wat), "%s/a.wat", tmp);
	f = fopen(wat, "w");
	wat_page(f, "https://a.com/post", "2024-05-10T10:00:00Z",
		 "{\"path\":\"A@/href\",\"url\":\"https://site.com/pricing\","
		 "\"text\":\"Site pricing\"},"
		 "{\"path\":\"IMG@/src\",\"url\":\"https://site.com/logo.png\","
		 "\"alt\":\"logo\"},"
		 "{\"path\":\"A@/href\",\"url\":\"https://other.com/\","
		 "\"text\":\"other\"}");
	wat_page(f, "https://b.org/", "2024-06-01T00:00:00Z",
		 "{\"path\":\"A@/href\",\"url\":\"https://site.com/pricing\","
		 "\"text\":\"click here\"}");
	wat_page(f, "https://c.net/x", "2024-04-01T00:00:00Z",
		 "{\"path\":\"A@/href\",\"url\":\"https://site.com/\","
		 "\"text\":\"site.com\"}");
	fclose(f);
	in[3] = (graph_input){GRAPH_IN_WAT, seo_arena_strdup(arena, wat)};
	return graph_ingest(&o, NULL);
}

static int init(void)
{
	char dir[320];

	snprintf(tmp, sizeof(tmp), "%s/test_graph_service-XXXXXX",
		 getenv("TMPDIR") && *getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp");
	if (mkdtemp(tmp) == NULL)
		return 1;
	arena = seo_arena_new(0);
	snprintf(dir, sizeof(dir), "%s/r1", tmp);
	snprintf(data, sizeof(data), "%s/current", tmp);
	if (ingest(dir, "r1") != 0 || symlink("r1", data) != 0)
		return 1;
	return graph_service_new(data, &svc) != 0;
}

static int clean(void)
{
	char cmd[400];

	graph_service_free(svc);
	seo_arena_free(arena);
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", tmp);
	return system(cmd) != 0;
}

/* Runs `method`; returns the response, or NULL with `err` filled. */
static void *call(const char *method, const void *req)
{
	ProtobufCMessage *resp = NULL;

	memset(&err, 0, sizeof(err));
	if (graph_service_call(svc, method, req, arena, &resp, &err) != 0)
		return NULL;
	CU_ASSERT_TRUE(protobuf_c_message_check(resp));
	return resp;
}

static void expect_fail(const char *method, const void *req, const char *code)
{
	CU_ASSERT_PTR_NULL(call(method, req));
	CU_ASSERT_STRING_EQUAL(err.code ? err.code : "", code);
}

static void test_referring_domains_and_paging(void)
{
	T(DomainPageRequest) q = SEO__GRAPH__V1__DOMAIN_PAGE_REQUEST__INIT;
	T(ReferringDomainsResponse) *r;

	q.domain = "HTTPS://WWW.Site.com./path";
	r = call("ReferringDomains", &q);
	CU_ASSERT_PTR_NOT_NULL_FATAL(r);
	CU_ASSERT_STRING_EQUAL(r->domain, "site.com");
	CU_ASSERT_EQUAL(r->total, 3);
	CU_ASSERT_EQUAL(r->n_data, 3);
	for (size_t i = 0; i < r->n_data; i++) {
		CU_ASSERT_EQUAL(r->data[i]->dofollow_links, 0);
		CU_ASSERT_TRUE(r->data[i]->has_from_domain_score);
		if (strcmp(r->data[i]->from_domain, "a.com") == 0)
			CU_ASSERT_EQUAL(r->data[i]->total_links, 2);
	}
	q.has_limit = 1, q.limit = 1;
	q.has_offset = 1, q.offset = 2;
	r = call("ReferringDomains", &q);
	CU_ASSERT_PTR_NOT_NULL_FATAL(r);
	CU_ASSERT_EQUAL(r->n_data, 1);
	CU_ASSERT_EQUAL(r->total, 3);
	q.offset = 3;
	r = call("ReferringDomains", &q);
	CU_ASSERT_PTR_NOT_NULL_FATAL(r);
	CU_ASSERT_EQUAL(r->n_data, 0);
	q.limit = 0;
	expect_fail("ReferringDomains", &q, "invalid_parameter");
	q.limit = 1001;
	expect_fail("ReferringDomains", &q, "invalid_parameter");
	q.limit = 1, q.offset = -1;
	expect_fail("ReferringDomains", &q, "invalid_parameter");
	q.offset = 0, q.domain = "not a domain";
	expect_fail("ReferringDomains", &q, "invalid_domain");
	q.domain = "unknown.example";
	r = call("ReferringDomains", &q);
	CU_ASSERT_PTR_NOT_NULL_FATAL(r);
	CU_ASSERT_EQUAL(r->n_data, 0);
	CU_ASSERT_EQUAL(r->total, 0);
	q.domain = "site.com", q.limit = 101;
	expect_fail("SimilarDomains", &q, "invalid_parameter");
}

static void test_backlinks(void)
{
	T(BacklinksRequest) q = SEO__GRAPH__V1__BACKLINKS_REQUEST__INIT;
	T(BacklinksResponse) *r;

	q.domain = "site.com";
	r = call("Backlinks", &q);
	CU_ASSERT_PTR_NOT_NULL_FATAL(r);
	CU_ASSERT_EQUAL(r->total, 3); /* one row per referrer */
	CU_ASSERT_EQUAL(r->limit, 100);
	CU_ASSERT_EQUAL(r->offset, 0);
	CU_ASSERT_PTR_NULL(r->data[0]->anchor_type);
	CU_ASSERT_PTR_NULL(r->data[0]->link_quality);
	q.has_sort = 1, q.sort = SEO__GRAPH__V1__SORT__SORT_RECENT;
	q.has_score = 1, q.score = 1;
	r = call("Backlinks", &q);
	CU_ASSERT_PTR_NOT_NULL_FATAL(r);
	CU_ASSERT_EQUAL(r->total, 4);
	CU_ASSERT_STRING_EQUAL(r->data[0]->from_domain, "b.org");
	CU_ASSERT_STRING_EQUAL(r->data[0]->crawled_at, "2024-06-01T00:00:00Z");
	CU_ASSERT_STRING_EQUAL(r->data[0]->anchor_type, "generic");
	CU_ASSERT_PTR_NOT_NULL(r->data[0]->link_quality);
	q.link_type = "image";
	r = call("Backlinks", &q);
	CU_ASSERT_PTR_NOT_NULL_FATAL(r);
	CU_ASSERT_EQUAL(r->n_data, 1);
	CU_ASSERT_STRING_EQUAL(r->data[0]->anchor_type, "image");
	q.link_type = NULL, q.from_domain = "www.C.net";
	r = call("Backlinks", &q);
	CU_ASSERT_PTR_NOT_NULL_FATAL(r);
	CU_ASSERT_EQUAL(r->n_data, 1);
	CU_ASSERT_STRING_EQUAL(r->data[0]->anchor_type, "naked");
	q.from_domain = "bad domain";
	expect_fail("Backlinks", &q, "invalid_domain");
}

static void test_single_objects(void)
{
	T(DomainRequest) q = SEO__GRAPH__V1__DOMAIN_REQUEST__INIT;
	T(DomainAuthorityResponse) *au;
	T(CrawlHistoryResponse) *ch;
	T(StatusCodesResponse) *sc;

	q.domain = "nowhere.example";
	au = call("DomainAuthority", &q);
	CU_ASSERT_PTR_NOT_NULL_FATAL(au);
	CU_ASSERT_EQUAL(au->data->score, 0);
	CU_ASSERT_EQUAL(au->data->health_score, 70);
	CU_ASSERT_EQUAL_FATAL(au->data->n_risk_flags, 2);
	CU_ASSERT_STRING_EQUAL(au->data->risk_flags[0], "no_tranco_presence");
	CU_ASSERT_STRING_EQUAL(au->data->risk_flags[1], "low_authority");
	CU_ASSERT_FALSE(au->data->has_popularity_rank);
	ch = call("CrawlHistory", &q);
	CU_ASSERT_PTR_NOT_NULL_FATAL(ch);
	CU_ASSERT_PTR_NULL(ch->data->first_seen);
	q.domain = "site.com";
	ch = call("CrawlHistory", &q);
	CU_ASSERT_PTR_NOT_NULL_FATAL(ch);
	CU_ASSERT_STRING_EQUAL(ch->data->first_seen, "2024-03-01T00:00:00Z");
	sc = call("StatusCodes", &q);
	CU_ASSERT_PTR_NOT_NULL_FATAL(sc);
	CU_ASSERT_EQUAL_FATAL(sc->n_data, 2);
	CU_ASSERT_EQUAL(sc->data[0]->status_code, 200);
	CU_ASSERT_EQUAL(sc->data[1]->status_code, 404);
	q.domain = "";
	expect_fail("DomainRank", &q, "invalid_domain");
}

static void test_cross_domain(void)
{
	T(LinkIntersectRequest) li = SEO__GRAPH__V1__LINK_INTERSECT_REQUEST__INIT;
	T(DomainOverlapRequest) ov = SEO__GRAPH__V1__DOMAIN_OVERLAP_REQUEST__INIT;
	T(LinkGapRequest) gap = SEO__GRAPH__V1__LINK_GAP_REQUEST__INIT;
	T(LinkIntersectResponse) *lr;
	T(DomainOverlapResponse) *orr;
	T(LinkGapResponse) *gr;
	char *two[] = {"site.com", "OTHER.com"}, *one[] = {"other.com"};

	li.domain_a = "site.com", li.domain_b = "other.com";
	lr = call("LinkIntersect", &li);
	CU_ASSERT_PTR_NOT_NULL_FATAL(lr);
	CU_ASSERT_EQUAL_FATAL(lr->n_data, 1);
	CU_ASSERT_STRING_EQUAL(lr->data[0]->from_domain, "c.net");
	ov.domains = two, ov.n_domains = 2;
	orr = call("DomainOverlap", &ov);
	CU_ASSERT_PTR_NOT_NULL_FATAL(orr);
	CU_ASSERT_EQUAL(orr->total, 2); /* a.com and b.org */
	CU_ASSERT_STRING_EQUAL(orr->domains[1], "other.com");
	ov.n_domains = 1;
	expect_fail("DomainOverlap", &ov, "invalid_parameter");
	gap.domain = "other.com", gap.competitors = two, gap.n_competitors = 1;
	gr = call("LinkGap", &gap);
	CU_ASSERT_PTR_NOT_NULL_FATAL(gr);
	CU_ASSERT_EQUAL_FATAL(gr->n_data, 1);
	CU_ASSERT_STRING_EQUAL(gr->data[0]->from_domain, "c.net");
	CU_ASSERT_EQUAL_FATAL(gr->data[0]->n_links_to, 1);
	CU_ASSERT_STRING_EQUAL(gr->data[0]->links_to[0], "site.com");
	gap.competitors = one, gap.n_competitors = 0;
	expect_fail("LinkGap", &gap, "invalid_parameter");
}

static void test_site_explorer_and_audit(void)
{
	T(DomainRequest) q = SEO__GRAPH__V1__DOMAIN_REQUEST__INIT;
	T(BacklinksRequest) bq = SEO__GRAPH__V1__BACKLINKS_REQUEST__INIT;
	T(SiteExplorerResponse) *se;
	T(BacklinksResponse) *bl;
	T(LinkAuditResponse) *la;
	uint8_t a[4096], b[4096];
	size_t na, nb;

	q.domain = bq.domain = "site.com";
	se = call("SiteExplorer", &q);
	bl = call("Backlinks", &bq);
	CU_ASSERT_PTR_NOT_NULL_FATAL(se);
	CU_ASSERT_PTR_NOT_NULL_FATAL(bl);
	CU_ASSERT_EQUAL(se->data->backlinks_total, bl->total);
	CU_ASSERT_EQUAL_FATAL(se->data->n_backlinks, bl->n_data);
	for (size_t i = 0; i < bl->n_data; i++) {
		na = protobuf_c_message_pack(&se->data->backlinks[i]->base, a);
		nb = protobuf_c_message_pack(&bl->data[i]->base, b);
		CU_ASSERT_TRUE(na == nb && memcmp(a, b, na) == 0);
	}
	CU_ASSERT_EQUAL(se->data->authority->referring_domains, 3);
	la = call("LinkAudit", &q);
	CU_ASSERT_PTR_NOT_NULL_FATAL(la);
	CU_ASSERT_EQUAL(la->link_quality->total, 3);
	CU_ASSERT_EQUAL(la->link_quality->high + la->link_quality->medium +
				la->link_quality->low, 3);
	CU_ASSERT_DOUBLE_EQUAL(la->anchor_profile->branded +
				       la->anchor_profile->partial +
				       la->anchor_profile->generic +
				       la->anchor_profile->naked +
				       la->anchor_profile->image, 1.0, 1e-9);
	CU_ASSERT_EQUAL(la->n_top_backlinks, 3);
	CU_ASSERT_STRING_EQUAL(la->crawl_release, "r1");
	q.domain = "a.com";
	la = call("LinkAudit", &q);
	CU_ASSERT_PTR_NOT_NULL_FATAL(la);
	CU_ASSERT_EQUAL(la->outbound_summary->unique_destinations, 2);
	CU_ASSERT_PTR_NOT_NULL(la->outbound_summary->top_domain);
}

static void test_batch(void)
{
	T(BatchRequest) q = SEO__GRAPH__V1__BATCH_REQUEST__INIT;
	T(BatchResponse) *r;
	char *domains[] = {"site.com", "no such", "unknown.example"};

	q.domains = domains, q.n_domains = 3;
	r = call("Batch", &q);
	CU_ASSERT_PTR_NOT_NULL_FATAL(r);
	CU_ASSERT_EQUAL(r->succeeded, 2);
	CU_ASSERT_TRUE(r->data[0]->success && r->data[0]->total == 3);
	CU_ASSERT_FALSE(r->data[1]->success);
	CU_ASSERT_STRING_EQUAL(r->data[1]->error, "invalid_domain");
	CU_ASSERT_STRING_EQUAL(r->data[1]->domain, "no such");
	CU_ASSERT_TRUE(r->data[2]->success && r->data[2]->n_data == 0);
	CU_ASSERT_PTR_NULL(r->data[2]->error);
	q.n_domains = 0;
	expect_fail("Batch", &q, "invalid_parameter");
	CU_ASSERT_EQUAL(graph_service_call(svc, "Nope", &q.base, arena, NULL,
					   &err), SEO_ENOTFOUND);
}

/* Similar-domains and link-audit answers come from the release's cache on
 * the second call, pages of a ranking from the one computed first. */
static void test_result_cache(void)
{
	T(DomainPageRequest) q = SEO__GRAPH__V1__DOMAIN_PAGE_REQUEST__INIT;
	T(DomainRequest) aq = SEO__GRAPH__V1__DOMAIN_REQUEST__INIT;
	T(SimilarDomainsResponse) *first, *again, *page;
	T(LinkAuditResponse) *a1, *a2;
	uint8_t p1[4096], p2[4096];
	size_t n1, n2;

	q.domain = "site.com";
	first = call("SimilarDomains", &q);
	CU_ASSERT_PTR_NOT_NULL_FATAL(first);
	CU_ASSERT_FALSE(first->cached);
	CU_ASSERT_EQUAL(first->total, 2);
	CU_ASSERT_EQUAL_FATAL(first->n_data, 2);
	CU_ASSERT_STRING_EQUAL(first->data[0]->similar_domain, "other.com");
	CU_ASSERT_EQUAL(first->data[0]->shared_linkers, 2);
	CU_ASSERT_STRING_EQUAL(first->data[1]->similar_domain, "a.com");
	CU_ASSERT_EQUAL(first->data[1]->shared_linkers, 1);
	/* the same domain, normalised: the same entry */
	q.domain = "WWW.Site.com";
	again = call("SimilarDomains", &q);
	CU_ASSERT_PTR_NOT_NULL_FATAL(again);
	CU_ASSERT_TRUE(again->cached);
	CU_ASSERT_EQUAL(again->total, 2);
	CU_ASSERT_EQUAL_FATAL(again->n_data, 2);
	CU_ASSERT_STRING_EQUAL(again->data[1]->similar_domain, "a.com");
	CU_ASSERT_STRING_EQUAL(again->crawl_release, "r1");
	q.has_offset = 1, q.offset = 1;
	q.has_limit = 1, q.limit = 1;
	page = call("SimilarDomains", &q);
	CU_ASSERT_PTR_NOT_NULL_FATAL(page);
	CU_ASSERT_TRUE(page->cached);
	CU_ASSERT_EQUAL(page->total, 2);
	CU_ASSERT_EQUAL(page->offset, 1);
	CU_ASSERT_EQUAL(page->limit, 1);
	CU_ASSERT_EQUAL_FATAL(page->n_data, 1);
	CU_ASSERT_STRING_EQUAL(page->data[0]->similar_domain, "a.com");
	q.offset = 5;
	page = call("SimilarDomains", &q);
	CU_ASSERT_PTR_NOT_NULL_FATAL(page);
	CU_ASSERT_TRUE(page->cached);
	CU_ASSERT_EQUAL(page->n_data, 0);
	CU_ASSERT_EQUAL(page->total, 2);
	/* a first page of one row still computes a whole page: the next,
	 * larger page is a hit */
	q.domain = "a.com", q.offset = 0;
	page = call("SimilarDomains", &q);
	CU_ASSERT_PTR_NOT_NULL_FATAL(page);
	CU_ASSERT_FALSE(page->cached);
	q.has_limit = 0, q.has_offset = 0;
	page = call("SimilarDomains", &q);
	CU_ASSERT_PTR_NOT_NULL_FATAL(page);
	CU_ASSERT_TRUE(page->cached);
	CU_ASSERT_EQUAL_FATAL(page->n_data, 1);
	CU_ASSERT_STRING_EQUAL(page->data[0]->similar_domain, "site.com");

	aq.domain = "b.org";
	a1 = call("LinkAudit", &aq);
	CU_ASSERT_PTR_NOT_NULL_FATAL(a1);
	CU_ASSERT_FALSE(a1->cached);
	a2 = call("LinkAudit", &aq);
	CU_ASSERT_PTR_NOT_NULL_FATAL(a2);
	CU_ASSERT_TRUE(a2->cached);
	/* the same answer but for the flag */
	a2->cached = 0;
	n1 = protobuf_c_message_pack(&a1->base, p1);
	n2 = protobuf_c_message_pack(&a2->base, p2);
	CU_ASSERT_TRUE(n1 == n2 && memcmp(p1, p2, n1) == 0);
}

/* The cache itself: its bound, least recently used first out, a
 * replacement, an entry too large to keep. */
static void test_cache_bound(void)
{
	graph__cache *c;
	char key[32], val[1000], big[9000], *got;
	size_t len, entries, bytes;

	CU_ASSERT_EQUAL_FATAL(graph__cache_new(64 * 1024, &c), 0);
	CU_ASSERT_EQUAL(graph__cache_get(c, "k0", 2, arena, (void **)&got, &len),
			SEO_ENOTFOUND);
	memset(val, 'x', sizeof(val));
	for (int i = 0; i < 200; i++) {
		snprintf(key, sizeof(key), "k%d", i);
		val[0] = (char)i;
		CU_ASSERT_EQUAL(graph__cache_put(c, key, strlen(key), val,
						 sizeof(val)), 0);
		/* k0 stays the most recently used */
		CU_ASSERT_EQUAL(graph__cache_get(c, "k0", 2, arena, (void **)&got,
						 &len), 0);
	}
	graph__cache_usage(c, &entries, &bytes);
	CU_ASSERT(bytes <= 64 * 1024);
	CU_ASSERT(entries >= 50 && entries < 64);
	CU_ASSERT_EQUAL(graph__cache_get(c, "k1", 2, arena, (void **)&got, &len),
			SEO_ENOTFOUND);
	CU_ASSERT_EQUAL_FATAL(graph__cache_get(c, "k199", 4, arena, (void **)&got,
					       &len), 0);
	CU_ASSERT_EQUAL(len, sizeof(val));
	CU_ASSERT_EQUAL(got[0], (char)199);
	CU_ASSERT_EQUAL(graph__cache_put(c, "k199", 4, "short", 5), 0);
	CU_ASSERT_EQUAL_FATAL(graph__cache_get(c, "k199", 4, arena, (void **)&got,
					       &len), 0);
	CU_ASSERT_TRUE(len == 5 && memcmp(got, "short", 5) == 0);
	graph__cache_usage(c, &len, &bytes);
	CU_ASSERT_EQUAL(len, entries);
	memset(big, 'y', sizeof(big));
	CU_ASSERT_EQUAL(graph__cache_put(c, "big", 3, big, sizeof(big)), 0);
	CU_ASSERT_EQUAL(graph__cache_get(c, "big", 3, arena, (void **)&got, &len),
			SEO_ENOTFOUND);
	graph__cache_free(c);
}

/* A new release swapped in by symlink; answers of the old one stay
 * readable after it is closed (their strings are in the arena). */
static void test_release_switch(void)
{
	T(DomainPageRequest) q = SEO__GRAPH__V1__DOMAIN_PAGE_REQUEST__INIT;
	T(SimilarDomainsResponse) *before, *after;
	T(ReferringDomainsResponse) *old;
	char dir[320], next[320], first[64];

	q.domain = "site.com";
	before = call("SimilarDomains", &q);
	old = call("ReferringDomains", &q);
	CU_ASSERT_PTR_NOT_NULL_FATAL(before);
	CU_ASSERT_PTR_NOT_NULL_FATAL(old);
	CU_ASSERT_TRUE(before->cached);
	snprintf(first, sizeof(first), "%s", old->data[0]->from_domain);
	CU_ASSERT_EQUAL(graph_service_reload(svc), 0);
	snprintf(dir, sizeof(dir), "%s/r2", tmp);
	snprintf(next, sizeof(next), "%s/next", tmp);
	CU_ASSERT_EQUAL_FATAL(ingest(dir, "r2"), 0);
	CU_ASSERT_EQUAL_FATAL(symlink("r2", next), 0);
	CU_ASSERT_EQUAL_FATAL(rename(next, data), 0);
	CU_ASSERT_EQUAL(graph_service_reload(svc), 1);
	CU_ASSERT_EQUAL(graph_service_reload(svc), 0);
	after = call("SimilarDomains", &q);
	CU_ASSERT_PTR_NOT_NULL_FATAL(after);
	CU_ASSERT_STRING_EQUAL(before->crawl_release, "r1");
	CU_ASSERT_STRING_EQUAL(after->crawl_release, "r2");
	CU_ASSERT_EQUAL(after->n_data, before->n_data);
	/* the new release starts with an empty cache */
	CU_ASSERT_FALSE(after->cached);
	after = call("SimilarDomains", &q);
	CU_ASSERT_PTR_NOT_NULL_FATAL(after);
	CU_ASSERT_TRUE(after->cached);
	CU_ASSERT_STRING_EQUAL(after->crawl_release, "r2");
	/* r1 is unmapped now: this would fault if it pointed there */
	CU_ASSERT_STRING_EQUAL(old->data[0]->from_domain, first);
}

static void test_no_index(void)
{
	T(DomainRequest) q = SEO__GRAPH__V1__DOMAIN_REQUEST__INIT;
	graph_service *empty;
	ProtobufCMessage *resp;
	char dir[320];

	snprintf(dir, sizeof(dir), "%s/missing", tmp);
	CU_ASSERT_EQUAL_FATAL(graph_service_new(dir, &empty), 0);
	q.domain = "site.com";
	CU_ASSERT_EQUAL(graph_service_call(empty, "DomainRank", &q.base, arena,
					   &resp, &err), SEO_EINVAL);
	CU_ASSERT_STRING_EQUAL(err.code, "service_unavailable");
	CU_ASSERT_EQUAL(graph_service_reload(empty), SEO_ENOTFOUND);
	CU_ASSERT_EQUAL_FATAL(ingest(dir, "r3"), 0);
	CU_ASSERT_EQUAL(graph_service_reload(empty), 1);
	CU_ASSERT_EQUAL(graph_service_call(empty, "DomainRank", &q.base, arena,
					   &resp, &err), 0);
	graph_service_free(empty);
}

int main(void)
{
	CU_pSuite s;

	if (CU_initialize_registry() != CUE_SUCCESS)
		return 1;
	s = CU_add_suite("graph_service", init, clean);
	if (s == NULL ||
	    CU_add_test(s, "referring domains and paging",
			test_referring_domains_and_paging) == NULL ||
	    CU_add_test(s, "backlinks", test_backlinks) == NULL ||
	    CU_add_test(s, "single objects", test_single_objects) == NULL ||
	    CU_add_test(s, "cross-domain", test_cross_domain) == NULL ||
	    CU_add_test(s, "site explorer and audit",
			test_site_explorer_and_audit) == NULL ||
	    CU_add_test(s, "batch", test_batch) == NULL ||
	    CU_add_test(s, "result cache", test_result_cache) == NULL ||
	    CU_add_test(s, "result cache bound", test_cache_bound) == NULL ||
	    CU_add_test(s, "release switch", test_release_switch) == NULL ||
	    CU_add_test(s, "no index", test_no_index) == NULL) {
		CU_cleanup_registry();
		return 1;
	}
	CU_basic_set_mode(CU_BRM_VERBOSE);
	CU_basic_run_tests();
	{
		unsigned failed = CU_get_number_of_failures();

		CU_cleanup_registry();
		return failed != 0;
	}
}

/*
 * test_graph.c: the crawl ingest and the index queries, on a small
 * hand-built crawl with known answers, on the demo crawl (also with
 * sorted runs spilled to disk), on a synthetic crawl ingested by
 * seo-ingest within a small --mem-mb, and on the real samples in
 * ../shared/data/crawl-samples when that folder exists.
 */
#include <dirent.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <CUnit/Basic.h>
#include <zlib.h>

#include <seo/arena.h>
#include <seo/errors.h>
#include <seo/log.h>
#include <seo/util.h>

#include "crawlgen.h"
#include "graph.h"
#include "graph_ingest.h"
#include "test_crawl.h"
/* the ingest's sorts and arrays; graph__similar_domains(), to count both
 * ways */
#include "index.h"
#include "ingest.h"

static char tmp[4096];
static char ixdir[4200];
static graph_index *ix;
static graph_ingest_stats hand_stats;
static seo_arena *arena;

/* ---- helpers ---- */

static const char *path_of(const char *name)
{
	return tcrawl_path(tmp, name);
}

static const char *put(const char *name, const char *text)
{
	return tcrawl_put(tmp, name, text);
}

static const char *put_gz(const char *name, const char *text)
{
	return tcrawl_put_gz(tmp, name, text);
}

static void response(FILE *f, const char *uri, const char *date,
		     const char *links)
{
	tcrawl_response(f, uri, date, "", NULL, links);
}

static int ingest(const char *out, const graph_input *in, size_t n,
		  size_t mem_mb, graph_ingest_stats *st)
{
	graph_ingest_opts o = { .out_dir = out, .release = "test-2024",
				.inputs = in, .n_inputs = n, .mem_mb = mem_mb };

	return graph_ingest(&o, st);
}

/* ---- the index byte for byte ---- */

/* Whether `path` hashes to `hex`; prints what it hashes to when not. */
static int file_is(const char *path, const char *hex)
{
	FILE *f = fopen(path, "rb");
	char *data = NULL, got[65];
	long len = -1;
	int same;

	if (f && fseek(f, 0, SEEK_END) == 0 && (len = ftell(f)) >= 0 &&
	    fseek(f, 0, SEEK_SET) == 0 && (data = malloc((size_t)len + 1)) &&
	    fread(data, 1, (size_t)len, f) != (size_t)len)
		len = -1;
	if (f)
		fclose(f);
	if (len < 0 || !data) {
		free(data);
		printf("\n  %s: cannot be read ", path);
		return 0;
	}
	seo_sha256_hex(data, (size_t)len, got);
	free(data);
	same = strcmp(got, hex) == 0;
	if (!same)
		printf("\n  %s: %s ", path, got);
	return same;
}

/*
 * Whether the files of `dir` are those of svc-graph/test/`list` (in
 * sha256sum's format, so `sha256sum -c` checks them by hand too), byte
 * for byte, and no others but manifest.json (which names the inputs'
 * paths). The lists were recorded before the ingest and the query side
 * became two libraries, and stay what the format (docs/index-format.md)
 * writes: a change to them is a change of the format.
 */
static int same_bytes(const char *dir, const char *list)
{
	const char *src = getenv("SEO_SOURCE_DIR");
	char path[8400], line[4400], hex[65], name[4096];
	int listed = 0, ok = 1, present = 0;
	struct dirent *e;
	DIR *d;
	FILE *f;

	snprintf(path, sizeof(path), "%s/svc-graph/test/%s", src ? src : ".",
		 list);
	f = fopen(path, "r");
	if (!f) {
		printf("\n  %s: cannot be read ", path);
		return 0;
	}
	while (fgets(line, sizeof(line), f)) {
		if (sscanf(line, "%64s %4095s", hex, name) != 2)
			continue;
		listed++;
		snprintf(path, sizeof(path), "%s/%s", dir, name);
		ok &= file_is(path, hex);
	}
	fclose(f);
	d = opendir(dir);
	while (d && (e = readdir(d)))
		present += e->d_name[0] != '.' &&
			   strcmp(e->d_name, "manifest.json") != 0;
	if (d)
		closedir(d);
	return ok && listed > 0 && present == listed;
}

/* ---- the hand-built crawl ---- */

static int hand_init(void)
{
	const char *t = getenv("TMPDIR");
	graph_input in[8];
	FILE *f;

	snprintf(tmp, sizeof(tmp), "%s/test_graph-XXXXXX", t && *t ? t : "/tmp");
	if (!mkdtemp(tmp))
		return 1;
	arena = seo_arena_new(0);
	in[0] = (graph_input){ GRAPH_IN_VERTICES, put("v.txt",
		"0\tcom.alpha\t3\n"
		"1\tcom.beta\t1\n"
		"2\tcom.gamma\t2\n"
		"3\torg.delta\t1\n"
		"4\torg.epsilon\t5\n"
		"x\tcom.bad\t1\n"
		"5\tCOM.UPPER\t1\n") };
	in[1] = (graph_input){ GRAPH_IN_EDGES, put_gz("e.txt.gz",
		"0\t1\n0\t2\n1\t2\n3\t0\n3\t2\n4\t0\n4\t2\n7\t1\nabc\n") };
	in[2] = (graph_input){ GRAPH_IN_RANKS, put("r.txt",
		"#harmonicc_pos\t#harmonicc_val\t#pr_pos\t#pr_val\t#host_rev\t#n_hosts\n"
		"1\t9.0E6\t1\t0.1\tcom.gamma\t2\n"
		"2\t8.0E6\t2\t0.05\tcom.alpha\t3\n"
		"3\t7.0E6\t3\t0.01\tcom.beta\t1\n"
		"4\t6.0E6\t5\t0.001\torg.epsilon\t5\n"
		"5\t5.0E6\t4\t0.002\torg.delta\t1\n") };
	in[3] = (graph_input){ GRAPH_IN_TRANCO, put("t.csv",
		"1,gamma.com\r\n2,alpha.com\r\n3,www.beta.com\r\nbadline\r\n") };
	in[4] = (graph_input){ GRAPH_IN_WHOIS, put("w.csv",
		"domain,registered_at,registrar\n"
		"gamma.com,2000-01-15,Registrar A\n"
		"epsilon.org,2024-03-01,\"Registrar B\"\n"
		"alpha.com,notadate,X\n") };
	in[5] = (graph_input){ GRAPH_IN_CDX, put_gz("c.cdxj.gz",
		"com,gamma)/pricing 20240510100000 {\"url\": \"https://gamma.com/pricing\", \"mime\": \"text/html\", \"status\": \"200\"}\n"
		"com,gamma)/pricing 20240601100000 {\"url\": \"https://gamma.com/pricing\", \"mime\": \"text/html\", \"status\": \"301\"}\n"
		"com,gamma)/old 20240301000000 {\"url\": \"https://gamma.com/old\", \"mime\": \"text/html\", \"status\": \"404\"}\n"
		"garbage line\n"
		"com,gamma)/x 2024 {\"url\": \"https://gamma.com/x\"}\n") };
	f = fopen(path_of("a.wat"), "w");
	tcrawl_warc(f, "warcinfo", "{\"software\":\"test\"}");
	response(f, "https://www.alpha.com/blog/post1", "2024-05-10T10:00:00Z",
		 "{\"path\":\"A@/href\",\"url\":\"https://gamma.com/pricing\",\"text\":\"Gamma pricing\"},"
		 "{\"path\":\"A@/href\",\"url\":\"https://www.gamma.com/\",\"text\":\"click here\",\"rel\":\"nofollow\"},"
		 "{\"path\":\"IMG@/src\",\"url\":\"https://cdn.gamma.com/logo.png\",\"alt\":\"Gamma logo\"},"
		 "{\"path\":\"A@/href\",\"url\":\"/internal\",\"text\":\"internal\"},"
		 "{\"path\":\"A@/href\",\"url\":\"https://beta.com/\",\"text\":\"beta\"},"
		 "{\"path\":\"A@/href\",\"url\":\"https://gamma.com/a?x=1&amp;y=2\",\"text\":\"Gamma &amp; friends\"}");
	response(f, "https://beta.com/", "2024-06-01T00:00:00Z",
		 "{\"path\":\"A@/href\",\"url\":\"https://gamma.com/pricing\",\"text\":\"Gamma  pricing\"}");
	/* beta.com's page again, older: the same link, counted once, and
	 * the newer crawl date kept */
	response(f, "https://beta.com/", "2024-05-20T00:00:00Z",
		 "{\"path\":\"A@/href\",\"url\":\"https://gamma.com/pricing\",\"text\":\"Gamma pricing\"}");
	response(f, "http://delta.org/x", "2024-04-01T00:00:00Z",
		 "{\"path\":\"A@/href\",\"url\":\"https://gamma.com/\",\"text\":\"gamma.com\"}");
	tcrawl_warc(f, "metadata", "{not json");
	tcrawl_warc(f, "request", "{\"Envelope\":{}}");
	fclose(f);
	in[6] = (graph_input){ GRAPH_IN_WAT, path_of("a.wat") };
	snprintf(ixdir, sizeof(ixdir), "%s/index", tmp);
	if (ingest(ixdir, in, 7, 0, &hand_stats) != 0)
		return 1;
	return graph_index_open(ixdir, &ix) != 0;
}

static int hand_clean(void)
{
	graph_index_close(ix);
	seo_arena_free(arena);
	graph_remove_dir(tmp);
	return 0;
}

static const graph_page P100 = { 100, 0 };

static void test_counts(void)
{
	CU_ASSERT_EQUAL(hand_stats.domains, 5);
	CU_ASSERT_EQUAL(hand_stats.domain_edges, 7);
	CU_ASSERT_EQUAL(hand_stats.links, 7); /* 6 to gamma.com, 1 to beta.com */
	/* vertices 2, edges 2, tranco 1, whois 1, WAT 1, CDX 2 */
	CU_ASSERT_EQUAL(hand_stats.malformed, 9);
	CU_ASSERT_EQUAL(graph_index_domain_count(ix), 5);
	CU_ASSERT_EQUAL(graph_index_edge_count(ix), 7);
	CU_ASSERT_STRING_EQUAL(graph_index_release(ix), "test-2024");
}

static void test_hand_bytes(void)
{
	CU_ASSERT(same_bytes(ixdir, "hand-index.sha256"));
}

static void test_normalize(void)
{
	char out[GRAPH_DOMAIN_MAX + 1];

	CU_ASSERT_EQUAL(graph_normalize_domain("HTTPS://user@WWW.Example.COM.:8080/p?q", out, sizeof(out)), 0);
	CU_ASSERT_STRING_EQUAL(out, "example.com");
	CU_ASSERT_EQUAL(graph_normalize_domain("  blog.example.co.uk ", out, sizeof(out)), 0);
	CU_ASSERT_STRING_EQUAL(out, "blog.example.co.uk");
	CU_ASSERT_EQUAL(graph_normalize_domain("b\xc3\xbc" "cher.de", out, sizeof(out)), 0);
	CU_ASSERT_STRING_EQUAL(out, "xn--bcher-kva.de");
	CU_ASSERT_EQUAL(graph_normalize_domain("not a domain", out, sizeof(out)), SEO_EINVAL);
	CU_ASSERT_EQUAL(graph_normalize_domain("localhost", out, sizeof(out)), SEO_EINVAL);
	CU_ASSERT_EQUAL(graph_normalize_domain("10.0.0.1", out, sizeof(out)), SEO_EINVAL);
	CU_ASSERT_EQUAL(graph_normalize_domain("", out, sizeof(out)), SEO_EINVAL);
}

static void test_referring_domains(void)
{
	graph_refdomain_row *r;
	graph_page pg = { 2, 1 };
	size_t n;
	uint64_t total;

	CU_ASSERT_EQUAL(graph_referring_domains(ix, "gamma.com", &P100, arena, &r, &n, &total), 0);
	CU_ASSERT_EQUAL(total, 4);
	CU_ASSERT_EQUAL_FATAL(n, 4);
	/* importance: score, then referring domains, then centrality */
	CU_ASSERT_STRING_EQUAL(r[0].from_domain, "alpha.com");
	CU_ASSERT_STRING_EQUAL(r[1].from_domain, "beta.com");
	CU_ASSERT_STRING_EQUAL(r[2].from_domain, "epsilon.org");
	CU_ASSERT_STRING_EQUAL(r[3].from_domain, "delta.org");
	CU_ASSERT_EQUAL(r[0].total_links, 4);
	CU_ASSERT_EQUAL(r[1].total_links, 1);
	CU_ASSERT_EQUAL(r[2].total_links, 1); /* domain graph only */
	CU_ASSERT(r[0].from_domain_score > r[1].from_domain_score);

	CU_ASSERT_EQUAL(graph_referring_domains(ix, "WWW.Gamma.com", &pg, arena, &r, &n, &total), 0);
	CU_ASSERT_EQUAL(total, 4);
	CU_ASSERT_EQUAL_FATAL(n, 2);
	CU_ASSERT_STRING_EQUAL(r[0].from_domain, "beta.com");
	CU_ASSERT_STRING_EQUAL(r[1].from_domain, "epsilon.org");
	pg.offset = 3;
	CU_ASSERT_EQUAL(graph_referring_domains(ix, "gamma.com", &pg, arena, &r, &n, &total), 0);
	CU_ASSERT_EQUAL_FATAL(n, 1);
	CU_ASSERT_STRING_EQUAL(r[0].from_domain, "delta.org");
	pg.offset = 4;
	CU_ASSERT_EQUAL(graph_referring_domains(ix, "gamma.com", &pg, arena, &r, &n, &total), 0);
	CU_ASSERT_EQUAL(n, 0);
	CU_ASSERT_EQUAL(total, 4);
	/* absent but well-formed: empty; malformed: an error */
	CU_ASSERT_EQUAL(graph_referring_domains(ix, "unknown.com", &P100, arena, &r, &n, &total), 0);
	CU_ASSERT_EQUAL(n, 0);
	CU_ASSERT_EQUAL(total, 0);
	CU_ASSERT_EQUAL(graph_referring_domains(ix, "bad domain!", &P100, arena, &r, &n, &total), SEO_EINVAL);
	/* a subdomain answers for its registrable domain */
	CU_ASSERT_EQUAL(graph_referring_domains(ix, "blog.gamma.com", &P100, arena, &r, &n, &total), 0);
	CU_ASSERT_EQUAL(total, 4);
	CU_ASSERT_EQUAL(graph_referring_domains(ix, "delta.org", &P100, arena, &r, &n, &total), 0);
	CU_ASSERT_EQUAL(total, 0);
}

static void test_backlinks(void)
{
	graph_backlink_filter f = { 0 };
	graph_backlink_row *r;
	graph_page pg = { 2, 1 };
	size_t n;
	uint64_t total;

	CU_ASSERT_EQUAL(graph_backlinks(ix, "gamma.com", GRAPH_SORT_IMPORTANCE, NULL, &P100, arena, &r, &n, &total), 0);
	CU_ASSERT_EQUAL(total, 3);
	CU_ASSERT_EQUAL_FATAL(n, 3);
	CU_ASSERT_STRING_EQUAL(r[0].from_domain, "alpha.com");
	CU_ASSERT_STRING_EQUAL(r[1].from_domain, "beta.com");
	CU_ASSERT_STRING_EQUAL(r[2].from_domain, "delta.org");
	CU_ASSERT_EQUAL(r[0].domain_host_count, 3);
	CU_ASSERT_STRING_EQUAL(r[2].from_url, "http://delta.org/x");
	CU_ASSERT_STRING_EQUAL(r[2].to_url, "https://gamma.com/");
	CU_ASSERT_STRING_EQUAL(r[2].anchor_text, "gamma.com");
	CU_ASSERT_EQUAL(r[2].crawled_at, 1711929600); /* 2024-04-01 */

	CU_ASSERT_EQUAL(graph_backlinks(ix, "gamma.com", GRAPH_SORT_RECENT, NULL, &P100, arena, &r, &n, &total), 0);
	CU_ASSERT_EQUAL(total, 6);
	CU_ASSERT_EQUAL_FATAL(n, 6);
	CU_ASSERT_STRING_EQUAL(r[0].from_domain, "beta.com");
	CU_ASSERT_EQUAL(r[0].crawled_at, 1717200000); /* 2024-06-01 */
	/* whitespace runs fold: the two "Gamma pricing" anchors are one */
	CU_ASSERT_STRING_EQUAL(r[0].anchor_text, "Gamma pricing");
	CU_ASSERT_STRING_EQUAL(r[5].from_domain, "delta.org");
	for (size_t i = 1; i < n; i++)
		CU_ASSERT(r[i - 1].crawled_at >= r[i].crawled_at);

	CU_ASSERT_EQUAL(graph_backlinks(ix, "gamma.com", GRAPH_SORT_RECENT, NULL, &pg, arena, &r, &n, &total), 0);
	CU_ASSERT_EQUAL(total, 6);
	CU_ASSERT_EQUAL(n, 2);
	pg.limit = 1;
	pg.offset = 0;
	CU_ASSERT_EQUAL(graph_backlinks(ix, "gamma.com", GRAPH_SORT_IMPORTANCE, NULL, &pg, arena, &r, &n, &total), 0);
	CU_ASSERT_EQUAL(total, 3);
	CU_ASSERT_EQUAL_FATAL(n, 1);
	CU_ASSERT_STRING_EQUAL(r[0].from_domain, "alpha.com");
	pg.offset = 3;
	CU_ASSERT_EQUAL(graph_backlinks(ix, "gamma.com", GRAPH_SORT_IMPORTANCE, NULL, &pg, arena, &r, &n, &total), 0);
	CU_ASSERT_EQUAL(total, 3);
	CU_ASSERT_EQUAL(n, 0);

	f.link_type = "image";
	CU_ASSERT_EQUAL(graph_backlinks(ix, "gamma.com", GRAPH_SORT_RECENT, &f, &P100, arena, &r, &n, &total), 0);
	CU_ASSERT_EQUAL(total, 1);
	CU_ASSERT_EQUAL_FATAL(n, 1);
	CU_ASSERT_STRING_EQUAL(r[0].link_type, "image");
	CU_ASSERT_STRING_EQUAL(r[0].anchor_text, "Gamma logo");
	CU_ASSERT_STRING_EQUAL(r[0].to_url, "https://cdn.gamma.com/logo.png");

	f.link_type = "hyperlink";
	f.from_domain = "www.alpha.com";
	CU_ASSERT_EQUAL(graph_backlinks(ix, "gamma.com", GRAPH_SORT_RECENT, &f, &P100, arena, &r, &n, &total), 0);
	CU_ASSERT_EQUAL(total, 3);
	CU_ASSERT_EQUAL(n, 3);
	for (size_t i = 0; i < n; i++)
		CU_ASSERT_STRING_EQUAL(r[i].from_domain, "alpha.com");
	CU_ASSERT_EQUAL(graph_backlinks(ix, "gamma.com", GRAPH_SORT_IMPORTANCE, &f, &P100, arena, &r, &n, &total), 0);
	CU_ASSERT_EQUAL(total, 1);

	f.link_type = NULL;
	f.from_domain = "beta.com";
	CU_ASSERT_EQUAL(graph_backlinks(ix, "gamma.com", GRAPH_SORT_RECENT, &f, &P100, arena, &r, &n, &total), 0);
	CU_ASSERT_EQUAL(total, 1);
	CU_ASSERT_EQUAL_FATAL(n, 1);
	CU_ASSERT_PTR_NULL(r[0].rel);

	f.from_domain = "alpha.com";
	f.link_type = NULL;
	CU_ASSERT_EQUAL(graph_backlinks(ix, "gamma.com", GRAPH_SORT_RECENT, &f, &P100, arena, &r, &n, &total), 0);
	CU_ASSERT_EQUAL(total, 4);
	{
		int nofollow = 0;

		for (size_t i = 0; i < n; i++)
			nofollow += r[i].rel && strcmp(r[i].rel, "nofollow") == 0;
		CU_ASSERT_EQUAL(nofollow, 1);
	}
	f.from_domain = "unknown.com";
	CU_ASSERT_EQUAL(graph_backlinks(ix, "gamma.com", GRAPH_SORT_RECENT, &f, &P100, arena, &r, &n, &total), 0);
	CU_ASSERT_EQUAL(total, 0);
	f.from_domain = NULL;
	f.link_type = "video";
	CU_ASSERT_EQUAL(graph_backlinks(ix, "gamma.com", GRAPH_SORT_RECENT, &f, &P100, arena, &r, &n, &total), 0);
	CU_ASSERT_EQUAL(total, 0);
}

static void test_outbound(void)
{
	graph_outbound_row *r;
	graph_outbound_summary s;
	size_t n;
	uint64_t total;

	CU_ASSERT_EQUAL(graph_outbound_links(ix, "alpha.com", &P100, arena, &r, &n, &total, &s), 0);
	CU_ASSERT_EQUAL(total, 5);
	CU_ASSERT_EQUAL(n, 5);
	CU_ASSERT_EQUAL(s.unique_destinations, 2);
	CU_ASSERT_STRING_EQUAL(s.top_domain, "gamma.com");
	CU_ASSERT_DOUBLE_EQUAL(s.top_domain_concentration, 0.8, 1e-9);
	for (size_t i = 0; i < n; i++)
		CU_ASSERT_EQUAL(r[i].edge_count, 1);
	CU_ASSERT_EQUAL(graph_outbound_links(ix, "gamma.com", &P100, arena, &r, &n, &total, &s), 0);
	CU_ASSERT_EQUAL(total, 0);
	CU_ASSERT_PTR_NULL(s.top_domain);
}

static void test_anchor_and_pages(void)
{
	graph_anchor_row *a;
	graph_top_page_row *p;
	size_t n;
	uint64_t total;

	CU_ASSERT_EQUAL(graph_anchor_text(ix, "gamma.com", &P100, arena, &a, &n, &total), 0);
	CU_ASSERT_EQUAL(total, 5);
	CU_ASSERT_EQUAL_FATAL(n, 5);
	CU_ASSERT_STRING_EQUAL(a[0].anchor_text, "Gamma pricing");
	CU_ASSERT_EQUAL(a[0].link_count, 2);
	CU_ASSERT_EQUAL(a[0].domain_count, 2);
	CU_ASSERT_STRING_EQUAL(a[1].anchor_text, "Gamma & friends");
	CU_ASSERT_STRING_EQUAL(a[4].anchor_text, "gamma.com");

	CU_ASSERT_EQUAL(graph_top_pages(ix, "gamma.com", &P100, arena, &p, &n, &total), 0);
	CU_ASSERT_EQUAL(total, 5);
	CU_ASSERT_EQUAL_FATAL(n, 5);
	CU_ASSERT_STRING_EQUAL(p[0].url, "https://gamma.com/pricing");
	CU_ASSERT_EQUAL(p[0].inbound_links, 2);
	CU_ASSERT_EQUAL(p[0].referring_domains, 2);
	{
		graph_page pg = { 10, 5 };

		CU_ASSERT_EQUAL(graph_top_pages(ix, "gamma.com", &pg, arena, &p, &n, &total), 0);
		CU_ASSERT_EQUAL(n, 0);
		CU_ASSERT_EQUAL(total, 5);
		pg.offset = 99;
		CU_ASSERT_EQUAL(graph_anchor_text(ix, "gamma.com", &pg, arena, &a, &n, &total), 0);
		CU_ASSERT_EQUAL(n, 0);
	}
}

/* Whether two answers of similar domains are the same rows and total. */
static int same_similar(const graph_similar_row *a, size_t na, uint64_t ta,
			const graph_similar_row *b, size_t nb, uint64_t tb)
{
	int ok = na == nb && ta == tb;

	for (size_t i = 0; ok && i < na; i++)
		ok = strcmp(a[i].similar_domain, b[i].similar_domain) == 0 &&
		     a[i].shared_linkers == b[i].shared_linkers;
	return ok;
}

static void test_similar_intersect(void)
{
	graph_similar_row *s;
	graph_intersect_row *r;
	size_t n;
	uint64_t total;

	CU_ASSERT_EQUAL(graph_similar_domains(ix, "gamma.com", &P100, arena, &s, &n, &total), 0);
	CU_ASSERT_EQUAL(total, 2);
	CU_ASSERT_EQUAL_FATAL(n, 2);
	CU_ASSERT_STRING_EQUAL(s[0].similar_domain, "alpha.com");
	CU_ASSERT_EQUAL(s[0].shared_linkers, 2);
	CU_ASSERT_STRING_EQUAL(s[1].similar_domain, "beta.com");
	CU_ASSERT_EQUAL(s[1].shared_linkers, 1);
	/* five domains: every linked one is heavy, its rows stored */
	{
		static const char *const names[] = { "alpha.com", "beta.com",
						     "gamma.com", "delta.org",
						     "epsilon.org" };
		const graph_page pages[] = { { 100, 0 }, { 1, 1 }, { 1, 5 } };

		for (size_t i = 0; i < 5; i++)
			for (size_t p = 0; p < 3; p++) {
				graph_similar_row *f;
				size_t nf;
				uint64_t tf;

				CU_ASSERT_EQUAL(graph__similar_domains(ix, names[i], &pages[p],
								       GRAPH__SIM_STORED, arena,
								       &s, &n, &total), 0);
				CU_ASSERT_EQUAL(graph__similar_domains(ix, names[i], &pages[p],
								       GRAPH__SIM_FORWARD, arena,
								       &f, &nf, &tf), 0);
				CU_ASSERT(same_similar(s, n, total, f, nf, tf));
			}
	}

	CU_ASSERT_EQUAL(graph_link_intersect(ix, "gamma.com", "alpha.com", &P100, arena, &r, &n, &total), 0);
	CU_ASSERT_EQUAL(total, 1);
	CU_ASSERT_EQUAL_FATAL(n, 1);
	CU_ASSERT_STRING_EQUAL(r[0].domain, "beta.com");
	CU_ASSERT_EQUAL(graph_link_intersect(ix, "gamma.com", "unknown.com", &P100, arena, &r, &n, &total), 0);
	CU_ASSERT_EQUAL(total, 4);
	CU_ASSERT_EQUAL(graph_link_intersect(ix, "gamma.com", "bad domain!", &P100, arena, &r, &n, &total), SEO_EINVAL);
	CU_ASSERT_EQUAL(graph_link_intersect(ix, "unknown.com", "bad domain!", &P100, arena, &r, &n, &total), SEO_EINVAL);
}

/* ---- similar domains against a brute-force count ---- */

#define SIM_N 2000

/* A random domain graph of SIM_N domains "sNNNN.com": most linkers link to
 * a few hubs, fifty link to hundreds of domains, a third link nowhere;
 * some lines are self-links, which the ingest drops. */
static unsigned sim_rand(unsigned *seed)
{
	*seed = *seed * 1103515245u + 12345u;
	return *seed >> 8;
}

typedef struct sim_graph {
	unsigned char *adj;      /* adj[a * SIM_N + b]: a links to b */
	uint32_t off[SIM_N + 1]; /* out-lists from adj */
	uint32_t *to;
	uint32_t pos[SIM_N];     /* importance position of each domain */
} sim_graph;

/* The number in the name ("s17.com" with fmt "s%u.com") of the domain at
 * each importance position, below `n`, read from byrank.u32 and domfwd.*
 * (the documented layout) of the n-domain index at dir. */
static int index_numbers(const char *dir, uint32_t n, const char *fmt,
			 uint32_t *num)
{
	uint64_t *off = malloc((n + 1) * sizeof(*off));
	char *names = malloc((size_t)n * 16), path[4500];
	FILE *f;
	int ok = off && names;

	snprintf(path, sizeof(path), "%s/byrank.u32", dir);
	f = ok ? fopen(path, "rb") : NULL;
	ok = f && fread(num, 4, n, f) == n;
	if (f)
		fclose(f);
	snprintf(path, sizeof(path), "%s/domfwd.off", dir);
	f = ok ? fopen(path, "rb") : NULL;
	ok = ok && f && fread(off, 8, n + 1, f) == n + 1 &&
	     off[n] <= (uint64_t)n * 16;
	if (f)
		fclose(f);
	snprintf(path, sizeof(path), "%s/domfwd.str", dir);
	f = ok ? fopen(path, "rb") : NULL;
	ok = ok && f && fread(names, 1, off[n], f) == off[n];
	if (f)
		fclose(f);
	for (uint32_t r = 0; ok && r < n; r++)
		ok = num[r] < n && sscanf(names + off[num[r]], fmt, &num[r]) == 1 &&
		     num[r] < n;
	free(off);
	free(names);
	return ok ? 0 : -1;
}

/* The importance position of every domain of the index at dir. */
static int sim_positions(const char *dir, sim_graph *g)
{
	uint32_t num[SIM_N];

	if (index_numbers(dir, SIM_N, "s%u.com", num))
		return -1;
	for (uint32_t r = 0; r < SIM_N; r++)
		g->pos[num[r]] = r;
	return 0;
}

typedef struct sim_want {
	uint32_t d, count;
} sim_want;

static const sim_graph *sim_order_graph;

static int sim_want_cmp(const void *pa, const void *pb)
{
	const sim_want *a = pa, *b = pb;

	if (a->count != b->count)
		return a->count > b->count ? -1 : 1;
	return sim_order_graph->pos[a->d] < sim_order_graph->pos[b->d] ? -1 : 1;
}

/* The old way, on the test's own edges: every linker's targets counted,
 * everything sorted (more shared linkers, then importance). */
static size_t sim_oracle(const sim_graph *g, unsigned t, sim_want *out)
{
	static uint32_t count[SIM_N];
	size_t n = 0;

	memset(count, 0, sizeof(count));
	for (unsigned r = 0; r < SIM_N; r++)
		if (g->adj[r * SIM_N + t])
			for (uint32_t k = g->off[r]; k < g->off[r + 1]; k++)
				count[g->to[k]]++;
	for (unsigned c = 0; c < SIM_N; c++)
		if (count[c] && c != t)
			out[n++] = (sim_want){ c, count[c] };
	sim_order_graph = g;
	qsort(out, n, sizeof(*out), sim_want_cmp);
	return n;
}

static void test_similar_exact(void)
{
	static const graph__sim_method methods[] = {
		GRAPH__SIM_AUTO, GRAPH__SIM_FORWARD, GRAPH__SIM_REVERSE,
		GRAPH__SIM_REVERSE, /* again: the bitmaps cached by the first */
	};
	static sim_want want[SIM_N];
	char dir[4400], out[4400], line[64];
	graph_input in[2];
	graph_index *x = NULL;
	sim_graph g;
	unsigned seed = 7, bad = 0;
	FILE *fv, *fe;

	g.adj = calloc((size_t)SIM_N * SIM_N, 1);
	CU_ASSERT_PTR_NOT_NULL_FATAL(g.adj);
	snprintf(dir, sizeof(dir), "%s/sim-v.txt", tmp);
	fv = fopen(dir, "w");
	snprintf(out, sizeof(out), "%s/sim-e.txt", tmp);
	fe = fopen(out, "w");
	CU_ASSERT_PTR_NOT_NULL_FATAL(fv);
	CU_ASSERT_PTR_NOT_NULL_FATAL(fe);
	for (unsigned a = 0; a < SIM_N; a++) {
		unsigned d = sim_rand(&seed) % 3 == 0 ? 0 :
			     a < 50 ? 200 + sim_rand(&seed) % 300 :
				      1 + sim_rand(&seed) % 8;

		fprintf(fv, "%u\tcom.s%04u\t1\n", a, a);
		for (unsigned k = 0; k < d; k++) {
			unsigned b = sim_rand(&seed) % 2 ? sim_rand(&seed) % 5 :
							   sim_rand(&seed) % SIM_N;

			fprintf(fe, "%u\t%u\n", a, b);
			if (a != b)
				g.adj[a * SIM_N + b] = 1;
		}
	}
	fclose(fv);
	fclose(fe);
	g.to = malloc((size_t)SIM_N * SIM_N * sizeof(*g.to) / 8);
	CU_ASSERT_PTR_NOT_NULL_FATAL(g.to);
	g.off[0] = 0;
	for (unsigned a = 0; a < SIM_N; a++) {
		g.off[a + 1] = g.off[a];
		for (unsigned b = 0; b < SIM_N; b++)
			if (g.adj[a * SIM_N + b])
				g.to[g.off[a + 1]++] = b;
	}
	in[0] = (graph_input){ GRAPH_IN_VERTICES, seo_arena_strdup(arena, dir) };
	in[1] = (graph_input){ GRAPH_IN_EDGES, seo_arena_strdup(arena, out) };
	snprintf(dir, sizeof(dir), "%s/sim-index", tmp);
	CU_ASSERT_EQUAL_FATAL(ingest(dir, in, 2, 0, NULL), 0);
	CU_ASSERT_EQUAL_FATAL(sim_positions(dir, &g), 0);
	CU_ASSERT_EQUAL_FATAL(graph_index_open(dir, &x), 0);
	CU_ASSERT_EQUAL_FATAL(graph_index_domain_count(x), SIM_N);
	for (unsigned t = 0; t < SIM_N; t++) {
		size_t nw = sim_oracle(&g, t, want);
		const graph_page pages[] = {
			{ 100, 0 }, { 1, 0 }, { 3, 2 }, { 1000, 0 },
			{ 10, nw > 5 ? nw - 5 : 0 }, { 5, nw + 3 },
		};

		snprintf(line, sizeof(line), "s%04u.com", t);
		for (size_t m = 0; m < sizeof(methods) / sizeof(methods[0]); m++)
			for (size_t p = 0; p < sizeof(pages) / sizeof(pages[0]); p++) {
				graph_similar_row *rows;
				size_t n, expect;
				uint64_t total;
				int ok = graph__similar_domains(x, line, &pages[p], methods[m],
								arena, &rows, &n, &total) == 0;

				expect = pages[p].offset >= nw ? 0 :
					 nw - pages[p].offset < pages[p].limit ?
						 nw - pages[p].offset : pages[p].limit;
				ok = ok && total == nw && n == expect;
				for (size_t i = 0; ok && i < n; i++) {
					const sim_want *w = &want[pages[p].offset + i];
					unsigned d;

					ok = sscanf(rows[i].similar_domain, "s%u.com", &d) == 1 &&
					     d == w->d && rows[i].shared_linkers == w->count;
				}
				if (!ok && bad++ < 5)
					printf("\n  %s, method %zu, page %zu: wrong ", line, m, p);
			}
	}
	CU_ASSERT_EQUAL(bad, 0);
	graph_index_close(x);
	free(g.to);
	free(g.adj);
}

/* ---- stored similar domains and deep pages ---- */

/* PRE_N domains "pNNNNN.com"; most link to a few of the first PRE_HUBS
 * (the heavy domains: more than 64, so that one pass cannot count them
 * all) and to two others; PRE_WAT pages of other domains link to
 * p00000.com, one to three links each. */
#define PRE_N 80000
#define PRE_HUBS 100
#define PRE_WAT 300

static int same_index(const char *a, const char *b);

static int pre_crawl(graph_input *in)
{
	static const char *const names[] = { "pre-v.txt", "pre-e.txt", "pre.wat" };
	static const graph_input_kind kinds[] = { GRAPH_IN_VERTICES,
						  GRAPH_IN_EDGES, GRAPH_IN_WAT };
	unsigned seed = 11;
	FILE *fv, *fe, *fw;

	for (int i = 0; i < 3; i++)
		in[i] = (graph_input){ kinds[i],
				       seo_arena_strdup(arena, path_of(names[i])) };
	if (!in[0].path || !in[1].path || !in[2].path)
		return -1;
	fv = fopen(in[0].path, "w");
	fe = fopen(in[1].path, "w");
	fw = fopen(in[2].path, "w");
	if (!fv || !fe || !fw)
		return -1;
	for (unsigned a = 0; a < PRE_N; a++) {
		unsigned hubs = sim_rand(&seed) % 4 == 0 ? 0 : 12;

		fprintf(fv, "%u\tcom.p%05u\t1\n", a, a);
		for (unsigned k = 0; k < hubs; k++)
			fprintf(fe, "%u\t%u\n", a, sim_rand(&seed) % PRE_HUBS);
		for (unsigned k = 0; hubs && k < 2; k++)
			fprintf(fe, "%u\t%u\n", a, sim_rand(&seed) % PRE_N);
	}
	for (unsigned i = 0; i < PRE_WAT; i++) {
		char uri[64], date[32], links[512];
		size_t len = 0;

		snprintf(uri, sizeof(uri), "https://p%05u.com/a", PRE_HUBS + i);
		snprintf(date, sizeof(date), "2024-05-%02uT10:00:00Z", 1 + i % 28);
		for (unsigned k = 0; k <= i % 3; k++)
			len += (size_t)snprintf(links + len, sizeof(links) - len,
				"%s{\"path\":\"A@/href\",\"url\":\"https://p00000.com/x%u\",\"text\":\"x\"}",
				k ? "," : "", i * 3 + k);
		response(fw, uri, date, links);
	}
	fclose(fv);
	fclose(fe);
	fclose(fw);
	return 0;
}

/* The overlap of k domains (every one linked) against the merge's rows
 * linking to all k, page by page, for pairs and triples of hubs and of a
 * hub with a light domain; with the domains themselves among them. */
static void pre_overlap(graph_index *x)
{
	static const unsigned sets[][3] = {
		{ 0, 1, 0 }, { 5, 99, 0 }, { 3, 40000, 0 }, { 2, 7, 11 },
		{ 0, 1, 2 },
	};
	static const size_t ks[] = { 2, 2, 2, 3, 3 };

	for (size_t s = 0; s < sizeof(ks) / sizeof(ks[0]); s++) {
		char names[3][32];
		const char *doms[3];
		graph_overlap_row *all, *r;
		size_t nall, nr, want = 0, got = 0;
		uint64_t tall, tr;
		const graph_page big = { GRAPH_LIMIT_MAX, 0 };
		unsigned every = (1u << ks[s]) - 1;

		for (size_t i = 0; i < ks[s]; i++) {
			snprintf(names[i], sizeof(names[i]), "p%05u.com", sets[s][i]);
			doms[i] = names[i];
		}
		for (graph_page pg = big;; pg.offset += nall) {
			CU_ASSERT_EQUAL_FATAL(graph_domain_overlap(x, doms, ks[s], 1,
				NULL, &pg, arena, &all, &nall, &tall), 0);
			for (size_t i = 0; i < nall; i++) {
				if (all[i].links_to != every)
					continue;
				if (want % 100 == 0) {
					graph_page one = { 100, want };

					CU_ASSERT_EQUAL_FATAL(graph_domain_overlap(x,
						doms, ks[s], (unsigned)ks[s], NULL,
						&one, arena, &r, &nr, &tr), 0);
					got = 0;
				}
				CU_ASSERT_FATAL(got < nr);
				CU_ASSERT_STRING_EQUAL(r[got].domain, all[i].domain);
				CU_ASSERT_EQUAL(r[got].links_to, every);
				got++;
				want++;
			}
			if (nall < GRAPH_LIMIT_MAX)
				break;
		}
		{
			graph_page one = { 1, 0 };

			CU_ASSERT_EQUAL(graph_domain_overlap(x, doms, ks[s],
				(unsigned)ks[s], NULL, &one, arena, &r, &nr, &tr), 0);
			CU_ASSERT_EQUAL(tr, want);
		}
		if (s < 2)
			CU_ASSERT(want > 300);
	}
}

/* Stored rows against the forward count, page by page: the first
 * GRAPH__SIM_ROWS rows from the store, deeper and straddling pages
 * counted; every domain is stored exactly when heavy. */
static void pre_similar(graph_index *x)
{
	unsigned bad = 0, heavy = 0, stored = 0;

	for (unsigned d = 0; d < PRE_N; d++) {
		char name[32];
		graph_authority au;
		graph_similar_row *f, *r;
		size_t nf, nr;
		uint64_t tf, tr;
		graph_page one = { 1, 0 };
		int h, rc;

		snprintf(name, sizeof(name), "p%05u.com", d);
		CU_ASSERT_EQUAL(graph_authority_get(x, name, arena, &au), 0);
		h = graph__sim_heavy(au.referring_domains, PRE_N);
		heavy += (unsigned)h;
		rc = graph__similar_domains(x, name, &one, GRAPH__SIM_STORED,
					    arena, &r, &nr, &tr);
		stored += rc == 0 && au.referring_domains > 0;
		{
			uint64_t rows;

			CU_ASSERT_EQUAL(graph_similar_stored(x, name, &rows), 0);
			CU_ASSERT_EQUAL(rows > 0, h && au.referring_domains > 0);
		}
		if (rc != (h || au.referring_domains == 0 ? 0 : SEO_ENOTFOUND) &&
		    bad++ < 5)
			printf("\n  %s: stored %d, heavy %d ", name, rc, h);
		if (!h)
			continue;
		CU_ASSERT_EQUAL(graph__similar_domains(x, name, &one, GRAPH__SIM_FORWARD,
						       arena, &f, &nf, &tf), 0);
		{
			const graph_page pages[] = {
				{ 100, 0 }, { 100, 100 }, { 100, 500 }, { 100, 900 },
				{ 1000, 0 }, { 7, 993 }, { 1, 999 }, { 100, 950 },
				{ 100, 1000 }, { 10, tf > 5 ? tf - 5 : 0 },
				{ 5, tf + 3 },
			};

			for (size_t p = 0; p < sizeof(pages) / sizeof(pages[0]); p++) {
				const graph_page *pg = &pages[p];
				int within = pg->offset + pg->limit <= GRAPH__SIM_ROWS ||
					     tf <= GRAPH__SIM_ROWS;
				int ok;

				ok = graph__similar_domains(x, name, pg, GRAPH__SIM_FORWARD,
							    arena, &f, &nf, &tf) == 0 &&
				     graph__similar_domains(x, name, pg, GRAPH__SIM_AUTO,
							    arena, &r, &nr, &tr) == 0 &&
				     same_similar(f, nf, tf, r, nr, tr);
				rc = graph__similar_domains(x, name, pg, GRAPH__SIM_STORED,
							    arena, &r, &nr, &tr);
				ok = ok && (within ? rc == 0 && same_similar(f, nf, tf, r, nr, tr) :
						     rc == SEO_ENOTFOUND);
				if (!ok && bad++ < 5)
					printf("\n  %s, page %zu: wrong ", name, p);
			}
		}
	}
	CU_ASSERT_EQUAL(bad, 0);
	CU_ASSERT(heavy >= PRE_HUBS);
	CU_ASSERT_EQUAL(stored, heavy);
}

/* Referring domains at every offset of the hubs' lists (limit 1) and at
 * pages around the skip entries, against link-intersect with an absent
 * domain, which reads the whole list from its start. */
static void pre_referring(graph_index *x)
{
	static graph_intersect_row all[16000];
	unsigned bad = 0;

	for (unsigned d = 0; d < 4; d++) {
		char name[32];
		graph_intersect_row *ir;
		graph_refdomain_row *r;
		size_t n, have = 0;
		uint64_t total = 0, t;

		snprintf(name, sizeof(name), "p%05u.com", d);
		do {
			graph_page pg = { 1000, have };

			CU_ASSERT_EQUAL_FATAL(graph_link_intersect(x, name, "absent.example", &pg,
								   arena, &ir, &n, &total), 0);
			CU_ASSERT_FATAL(have + n <= sizeof(all) / sizeof(all[0]));
			memcpy(all + have, ir, n * sizeof(*ir));
			have += n;
		} while (n > 0);
		CU_ASSERT_EQUAL(have, total);
		CU_ASSERT(total > 10 * GRAPH__SKIP);
		for (uint64_t o = 0; o <= total + 2; o++) {
			graph_page pg = { 1, o };
			int ok = graph_referring_domains(x, name, &pg, arena, &r, &n, &t) == 0 &&
				 t == total && n == (o < total);

			ok = ok && (n == 0 || (strcmp(r[0].from_domain, all[o].domain) == 0 &&
					       r[0].from_domain_score == all[o].domain_score));
			if (!ok && bad++ < 5)
				printf("\n  %s, offset %llu: wrong ", name, (unsigned long long)o);
		}
		for (uint64_t o = GRAPH__SKIP - 3; o < total; o += GRAPH__SKIP * 5 + 1) {
			graph_page pg = { 100, o };
			int ok = graph_referring_domains(x, name, &pg, arena, &r, &n, &t) == 0 &&
				 n == (total - o < 100 ? total - o : 100);

			for (size_t i = 0; ok && i < n; i++)
				ok = strcmp(r[i].from_domain, all[o + i].domain) == 0;
			if (!ok && bad++ < 5)
				printf("\n  %s, page at %llu: wrong ", name, (unsigned long long)o);
		}
	}
	CU_ASSERT_EQUAL(bad, 0);
}

/* Backlinks of p00000.com without a filter (skip entries, or the rows
 * indexed directly) against the same with the hyperlink filter, which
 * scans the group from its start: every link is a hyperlink. */
static void pre_backlinks(graph_index *x)
{
	static const graph_sort sorts[] = { GRAPH_SORT_IMPORTANCE, GRAPH_SORT_RECENT };
	graph_backlink_filter hyper = { .link_type = "hyperlink" };
	graph_backlink_filter from = { .from_domain = "p00102.com" };
	graph_backlink_filter from_hyper = { .from_domain = "p00102.com",
					     .link_type = "hyperlink" };
	unsigned bad = 0;

	for (size_t s = 0; s < 2; s++) {
		uint64_t total = 0;

		for (uint64_t o = 0; o <= total + 2; o++)
			for (uint32_t limit = 1; limit <= 100; limit += 99) {
				graph_backlink_row *a, *b;
				size_t na, nb;
				uint64_t ta, tb;
				graph_page pg = { limit, o };
				int ok = graph_backlinks(x, "p00000.com", sorts[s], NULL, &pg,
							 arena, &a, &na, &ta) == 0 &&
					 graph_backlinks(x, "p00000.com", sorts[s], &hyper, &pg,
							 arena, &b, &nb, &tb) == 0 &&
					 na == nb && ta == tb;

				for (size_t i = 0; ok && i < na; i++)
					ok = strcmp(a[i].from_domain, b[i].from_domain) == 0 &&
					     strcmp(a[i].to_url, b[i].to_url) == 0 &&
					     a[i].crawled_at == b[i].crawled_at;
				total = ta;
				if (!ok && bad++ < 5)
					printf("\n  sort %zu, offset %llu: wrong ", s,
					       (unsigned long long)o);
			}
		CU_ASSERT_EQUAL(total, s == 0 ? PRE_WAT : PRE_WAT * 2);
		/* one referrer: all its links (recent), or its newest */
		for (uint64_t o = 0; o < 4; o++) {
			graph_backlink_row *a, *b;
			size_t na, nb;
			uint64_t ta, tb;
			graph_page pg = { 1, o };

			CU_ASSERT_EQUAL(graph_backlinks(x, "p00000.com", sorts[s], &from, &pg,
							arena, &a, &na, &ta), 0);
			CU_ASSERT_EQUAL(graph_backlinks(x, "p00000.com", sorts[s], &from_hyper,
							&pg, arena, &b, &nb, &tb), 0);
			CU_ASSERT_EQUAL(ta, s == 0 ? 1 : 3);
			CU_ASSERT_EQUAL(ta, tb);
			CU_ASSERT_EQUAL_FATAL(na, nb);
			if (na > 0)
				CU_ASSERT_STRING_EQUAL(a[0].to_url, b[0].to_url);
		}
	}
	CU_ASSERT_EQUAL(bad, 0);
}

/* A copy of the index `from` at `to` (hard links) without the files of
 * format 3, its meta.bin saying `version`. */
static int older_index(const char *from, const char *to, uint32_t version)
{
	static const char *const v3[] = { "inskip.dir", "inskip.bin",
					  "linkskip.dir", "linkskip.bin",
					  "simtop.dir", "simtop.bin" };
	DIR *d = opendir(from);
	struct dirent *e;
	int rc = d && mkdir(to, 0755) == 0 ? 0 : -1;

	while (rc == 0 && (e = readdir(d))) {
		char pa[8400], pb[8400];
		int skip = e->d_name[0] == '.';

		for (size_t i = 0; i < sizeof(v3) / sizeof(v3[0]); i++)
			skip |= strcmp(e->d_name, v3[i]) == 0;
		if (skip)
			continue;
		snprintf(pa, sizeof(pa), "%s/%s", from, e->d_name);
		snprintf(pb, sizeof(pb), "%s/%s", to, e->d_name);
		if (strcmp(e->d_name, "meta.bin") == 0) {
			graph__meta m;
			FILE *f = fopen(pa, "rb");

			rc = f && fread(&m, sizeof(m), 1, f) == 1 ? 0 : -1;
			if (f)
				fclose(f);
			m.version = version;
			f = rc ? NULL : fopen(pb, "wb");
			rc = f && fwrite(&m, sizeof(m), 1, f) == 1 ? 0 : -1;
			if (f)
				fclose(f);
		} else {
			rc = link(pa, pb);
		}
	}
	if (d)
		closedir(d);
	return rc;
}

/* An index of format 2 (no skip entries, no stored similar domains)
 * answers as the one of format 3 it was cut from; one of format 3
 * without them is refused. */
static void pre_format2(graph_index *x, const char *dir)
{
	char v2[4400], v3[4400];
	graph_index *o = NULL;
	unsigned bad = 0;

	snprintf(v2, sizeof(v2), "%s/pre-v2", tmp);
	snprintf(v3, sizeof(v3), "%s/pre-v3", tmp);
	CU_ASSERT_EQUAL_FATAL(older_index(dir, v2, 2), 0);
	CU_ASSERT_EQUAL_FATAL(older_index(dir, v3, 3), 0);
	CU_ASSERT_EQUAL(graph_index_open(v3, &o), SEO_EINVAL);
	CU_ASSERT_EQUAL_FATAL(graph_index_open(v2, &o), 0);
	for (unsigned d = 0; d < 8; d++) {
		const graph_page pages[] = { { 100, 0 }, { 100, 900 }, { 100, 3000 } };
		char name[32];

		snprintf(name, sizeof(name), "p%05u.com", d);
		for (size_t p = 0; p < sizeof(pages) / sizeof(pages[0]); p++) {
			graph_similar_row *a, *b;
			graph_refdomain_row *ra, *rb;
			size_t na, nb;
			uint64_t ta, tb;
			int ok = graph_similar_domains(x, name, &pages[p], arena, &a, &na, &ta) == 0 &&
				 graph_similar_domains(o, name, &pages[p], arena, &b, &nb, &tb) == 0 &&
				 same_similar(a, na, ta, b, nb, tb) &&
				 graph__similar_domains(o, name, &pages[p], GRAPH__SIM_STORED,
							arena, &b, &nb, &tb) == SEO_ENOTFOUND &&
				 graph_referring_domains(x, name, &pages[p], arena, &ra, &na, &ta) == 0 &&
				 graph_referring_domains(o, name, &pages[p], arena, &rb, &nb, &tb) == 0 &&
				 na == nb && ta == tb;

			for (size_t i = 0; ok && i < na; i++)
				ok = strcmp(ra[i].from_domain, rb[i].from_domain) == 0;
			if (!ok && bad++ < 5)
				printf("\n  format 2, %s, page %zu: wrong ", name, p);
		}
	}
	{
		graph_backlink_row *a, *b;
		size_t na, nb;
		uint64_t ta, tb;
		graph_page pg = { 100, 250 };

		CU_ASSERT_EQUAL(graph_backlinks(x, "p00000.com", GRAPH_SORT_IMPORTANCE, NULL,
						&pg, arena, &a, &na, &ta), 0);
		CU_ASSERT_EQUAL(graph_backlinks(o, "p00000.com", GRAPH_SORT_IMPORTANCE, NULL,
						&pg, arena, &b, &nb, &tb), 0);
		CU_ASSERT_EQUAL(ta, tb);
		CU_ASSERT_EQUAL_FATAL(na, nb);
		CU_ASSERT(na > 0);
		for (size_t i = 0; i < na; i++)
			CU_ASSERT_STRING_EQUAL(a[i].to_url, b[i].to_url);
	}
	CU_ASSERT_EQUAL(bad, 0);
	graph_index_close(o);
}

/*
 * The heavy domains' similar domains stored at ingest: the same index in
 * a budget that holds only narrow masks (more passes), the stored pages
 * equal to the computed ones; deep pages of referring domains and
 * backlinks equal to reading the lists from their start; and the same
 * answers from an index of format 2.
 */
static void test_precomputed(void)
{
	char a[4400], b[4400];
	graph_input in[3];
	graph_ingest_stats sa, sb;
	graph_index *x = NULL;

	CU_ASSERT_EQUAL_FATAL(pre_crawl(in), 0);
	snprintf(a, sizeof(a), "%s/pre-a", tmp);
	snprintf(b, sizeof(b), "%s/pre-b", tmp);
	CU_ASSERT_EQUAL_FATAL(ingest(a, in, 3, 0, &sa), 0);
	CU_ASSERT_EQUAL_FATAL(ingest(b, in, 3, 1, &sb), 0);
	printf("\n  %llu heavy domains, %u passes, %u within --mem-mb 1 ",
	       (unsigned long long)sa.similar_domains, sa.similar_passes,
	       sb.similar_passes);
	CU_ASSERT(sa.similar_domains >= PRE_HUBS);
	CU_ASSERT_EQUAL(sa.similar_domains, sb.similar_domains);
	CU_ASSERT_EQUAL(sa.similar_passes, 2);
	CU_ASSERT(sb.similar_passes > sa.similar_passes);
	CU_ASSERT(same_index(a, b));
	CU_ASSERT_EQUAL_FATAL(graph_index_open(a, &x), 0);
	pre_similar(x);
	pre_referring(x);
	pre_backlinks(x);
	pre_overlap(x);
	pre_format2(x, a);
	graph_index_close(x);
}

static void test_overlap(void)
{
	const char *both[] = { "gamma.com", "alpha.com" };
	const char *comp[] = { "alpha.com" };
	const char *bad[] = { "gamma.com", "bad domain!" };
	graph_overlap_row *r;
	size_t n;
	uint64_t total;

	/* gamma.com <- alpha, beta, delta, epsilon; alpha.com <- delta,
	 * epsilon */
	CU_ASSERT_EQUAL(graph_domain_overlap(ix, both, 2, 2, NULL, &P100, arena, &r, &n, &total), 0);
	CU_ASSERT_EQUAL(total, 2);
	CU_ASSERT_EQUAL_FATAL(n, 2);
	CU_ASSERT_STRING_EQUAL(r[0].domain, "epsilon.org");
	CU_ASSERT_STRING_EQUAL(r[1].domain, "delta.org");
	CU_ASSERT_EQUAL(r[0].links_to, 3);
	/* any of them: the two domains themselves are not rows */
	CU_ASSERT_EQUAL(graph_domain_overlap(ix, both, 2, 1, NULL, &P100, arena, &r, &n, &total), 0);
	CU_ASSERT_EQUAL(total, 3);
	CU_ASSERT_STRING_EQUAL(r[0].domain, "beta.com");
	CU_ASSERT_EQUAL(r[0].links_to, 1);
	/* the gap: alpha.com's referrers that do not link to beta.com */
	CU_ASSERT_EQUAL(graph_domain_overlap(ix, comp, 1, 1, "beta.com", &P100, arena, &r, &n, &total), 0);
	CU_ASSERT_EQUAL(total, 2);
	CU_ASSERT_EQUAL(graph_domain_overlap(ix, both, 1, 1, "alpha.com", &P100, arena, &r, &n, &total), 0);
	CU_ASSERT_EQUAL(total, 1);
	CU_ASSERT_STRING_EQUAL(r[0].domain, "beta.com");
	CU_ASSERT_EQUAL(graph_domain_overlap(ix, bad, 2, 1, NULL, &P100, arena, &r, &n, &total), SEO_EINVAL);
	CU_ASSERT_EQUAL(graph_domain_overlap(ix, both, 0, 1, NULL, &P100, arena, &r, &n, &total), SEO_EINVAL);
}

/* ---- overlap, gap and intersect against the edges ---- */

/*
 * OV_N domains "oNNNNN.com"; the first OV_T are the targets asked about,
 * linked from about 70, 40, 3 and 1.5 % of the others (dense lists read a
 * block against the span of its positions, sparse ones an entry at a
 * time, leaping over the dense ones' blocks), from exactly 127, 128, 129,
 * 256 and 257 of them (lists ending on either side of a skip block), from
 * 3 and from none. Some targets link to others, so that the domains asked
 * about are in each other's lists.
 */
#define OV_N 30000
#define OV_T 11

static const unsigned ov_permille[OV_T] = { 700, 400, 30, 15 };
static const unsigned ov_exact[OV_T] = { 0, 0, 0, 0, 127, 128, 129, 256, 257, 3, 0 };
static const unsigned ov_links[][2] = {
	{ 1, 0 }, { 2, 0 }, { 2, 1 }, { 0, 2 }, { 3, 0 }, { 3, 1 },
	{ 4, 0 }, { 5, 1 }, { 6, 2 }, { 9, 0 }, { 10, 3 },
};

static unsigned char ov_in[OV_T][OV_N];  /* ov_in[t][a]: a links to t */
static uint32_t ov_vert[OV_N];           /* importance position -> domain */

typedef struct ov_row {
	unsigned d, mask;
} ov_row;

enum { OV_INTERSECT, OV_ALL, OV_ANY };

static int ov_crawl(graph_input *in)
{
	unsigned seed = 5;
	FILE *fv, *fe;

	in[0] = (graph_input){ GRAPH_IN_VERTICES, seo_arena_strdup(arena, path_of("ov-v.txt")) };
	in[1] = (graph_input){ GRAPH_IN_EDGES, seo_arena_strdup(arena, path_of("ov-e.txt")) };
	if (!in[0].path || !in[1].path)
		return -1;
	fv = fopen(in[0].path, "w");
	fe = fopen(in[1].path, "w");
	if (!fv || !fe)
		return -1;
	memset(ov_in, 0, sizeof(ov_in));
	for (unsigned a = 0; a < OV_N; a++)
		fprintf(fv, "%u\tcom.o%05u\t1\n", a, a);
	for (unsigned t = 0; t < OV_T; t++)
		for (unsigned j = 0; j < OV_N - OV_T; j++) {
			unsigned a = OV_T + j;

			if (ov_exact[t] ? j * 113 + t < (OV_N - OV_T) && j < ov_exact[t] :
					  sim_rand(&seed) % 1000 < ov_permille[t]) {
				a = ov_exact[t] ? OV_T + j * 113 + t : a;
				fprintf(fe, "%u\t%u\n", a, t);
				ov_in[t][a] = 1;
			}
		}
	for (size_t i = 0; i < sizeof(ov_links) / sizeof(ov_links[0]); i++) {
		fprintf(fe, "%u\t%u\n", ov_links[i][0], ov_links[i][1]);
		ov_in[ov_links[i][1]][ov_links[i][0]] = 1;
	}
	fclose(fv);
	fclose(fe);
	return 0;
}

/* Each position's domain, of the index at dir. */
static int ov_positions(const char *dir)
{
	return index_numbers(dir, OV_N, "o%u.com", ov_vert);
}

/* The rows of question q about targets t[0..k) (OV_ANY: linking to at
 * least `min` of them and not to `mine`, unless that is OV_N), read from
 * the edges in importance order. */
static size_t ov_expect(int q, const unsigned *t, size_t k, unsigned min,
			unsigned mine, ov_row *want)
{
	unsigned need = min < 1 ? 1 : k > 1 && min > k ? (unsigned)k : min;
	size_t n = 0;

	for (unsigned p = 0; p < OV_N; p++) {
		unsigned a = ov_vert[p], mask = 0, cnt = 0, self = 0, keep;

		for (size_t i = 0; i < k; i++) {
			mask |= (unsigned)ov_in[t[i]][a] << i;
			cnt += ov_in[t[i]][a];
			self |= a == t[i];
		}
		if (q == OV_INTERSECT)
			keep = mask == 1 && a != t[1];
		else if (q == OV_ALL)
			keep = cnt == k && !self;
		else
			keep = cnt >= need && !self &&
			       !(mine < OV_N && (a == mine || ov_in[mine][a]));
		if (keep)
			want[n++] = (ov_row){ a, q == OV_INTERSECT ? 0 : mask };
	}
	return n;
}

/* The library's answer to the same question, one page. */
static int ov_ask(graph_index *x, int q, const unsigned *t, size_t k,
		  unsigned min, unsigned mine, const graph_page *pg,
		  ov_row *got, size_t *n, uint64_t *total)
{
	char names[GRAPH_OVERLAP_MAX][16], other[16];
	const char *d[GRAPH_OVERLAP_MAX];
	int rc;

	for (size_t i = 0; i < k; i++) {
		snprintf(names[i], sizeof(names[i]), "o%05u.com", t[i]);
		d[i] = names[i];
	}
	snprintf(other, sizeof(other), "o%05u.com", mine);
	if (q == OV_INTERSECT) {
		graph_intersect_row *r;

		rc = graph_link_intersect(x, d[0], d[1], pg, arena, &r, n, total);
		for (size_t i = 0; rc == 0 && i < *n; i++) {
			got[i].mask = 0;
			rc = sscanf(r[i].domain, "o%u.com", &got[i].d) == 1 ? 0 : -1;
		}
	} else {
		graph_overlap_row *r;

		rc = graph_domain_overlap(x, d, k, q == OV_ALL ? (unsigned)k : min,
					  mine < OV_N ? other : NULL, pg, arena, &r, n,
					  total);
		for (size_t i = 0; rc == 0 && i < *n; i++) {
			got[i].mask = r[i].links_to;
			rc = sscanf(r[i].domain, "o%u.com", &got[i].d) == 1 ? 0 : -1;
		}
	}
	return rc;
}

/* Pages of the question at the edges of skip blocks and of the result,
 * against the edges; the number of wrong pages. */
static unsigned ov_check(graph_index *x, int q, const unsigned *t, size_t k,
			 unsigned min, unsigned mine)
{
	static ov_row want[OV_N], got[GRAPH_LIMIT_MAX];
	size_t nw = ov_expect(q, t, k, min, mine, want);
	const graph_page pages[] = {
		{ 100, 0 }, { 1000, 0 }, { 1, 1 }, { 100, 127 }, { 1, 128 },
		{ 100, 129 }, { 100, 1000 }, { 1000, nw > 1000 ? nw - 1000 : 0 },
		{ 1, nw > 0 ? nw - 1 : 0 }, { 10, nw }, { 10, nw + 1 },
	};
	unsigned bad = 0;

	for (size_t p = 0; p < sizeof(pages) / sizeof(pages[0]); p++) {
		const graph_page *pg = &pages[p];
		size_t n, expect = pg->offset >= nw ? 0 :
				   nw - pg->offset < pg->limit ? nw - pg->offset :
								  pg->limit;
		uint64_t total;
		int ok = ov_ask(x, q, t, k, min, mine, pg, got, &n, &total) == 0 &&
			 total == nw && n == expect;

		for (size_t i = 0; ok && i < n; i++)
			ok = got[i].d == want[pg->offset + i].d &&
			     got[i].mask == want[pg->offset + i].mask;
		if (!ok && bad++ < 3)
			printf("\n  question %d about o%05u.com and %zu more, page %zu: wrong ",
			       q, t[0], k - 1, p);
	}
	return bad;
}

static unsigned ov_all_questions(graph_index *x)
{
	static const unsigned sets[][GRAPH_OVERLAP_MAX] = {
		{ 0, 1, 2 }, { 2, 0, 3 }, { 1, 0, 2, 3 }, { 0, 1, 2, 3, 5 },
		{ 3, 2, 1, 0, 9 }, { 0, 1, 10 }, { 8, 0, 6, 1 }, { 4, 5, 6, 7, 8 },
	};
	static const size_t ks[] = { 3, 3, 4, 5, 5, 3, 4, 5 };
	unsigned bad = 0;

	for (unsigned a = 0; a < OV_T; a++)
		for (unsigned b = 0; b < OV_T; b++) {
			const unsigned ab[2] = { a, b };

			bad += ov_check(x, OV_INTERSECT, ab, 2, 0, OV_N);
			bad += ov_check(x, OV_ALL, ab, 2, 0, OV_N);
			/* the gap of b against one competitor, a */
			bad += ov_check(x, OV_ANY, ab, 1, 1, b);
		}
	for (size_t s = 0; s < sizeof(ks) / sizeof(ks[0]); s++) {
		bad += ov_check(x, OV_ALL, sets[s], ks[s], 0, OV_N);
		bad += ov_check(x, OV_ANY, sets[s], ks[s], 1, OV_N);
		bad += ov_check(x, OV_ANY, sets[s], ks[s], 2, 0);
		bad += ov_check(x, OV_ANY, sets[s], ks[s], 1, 4);
		bad += ov_check(x, OV_ANY, sets[s], ks[s], 0, 3);
		bad += ov_check(x, OV_ANY, sets[s], ks[s], (unsigned)ks[s] + 1, 1);
	}
	bad += ov_check(x, OV_ANY, sets[0], 1, 2, OV_N);
	bad += ov_check(x, OV_ANY, sets[0], 1, 0, OV_N);
	return bad;
}

/*
 * Link-intersect, domain-overlap and link-gap of targets whose in-lists
 * are dense, sparse, one entry short of, on and past the skip blocks'
 * edges, against the crawl's own edges, every page checked; and the same
 * from an index of format 2, whose lists have no skip entries.
 */
static void test_overlap_exact(void)
{
	char dir[4400], v2[4400];
	graph_input in[2];
	graph_index *x = NULL;

	CU_ASSERT_EQUAL_FATAL(ov_crawl(in), 0);
	snprintf(dir, sizeof(dir), "%s/ov-index", tmp);
	snprintf(v2, sizeof(v2), "%s/ov-v2", tmp);
	CU_ASSERT_EQUAL_FATAL(ingest(dir, in, 2, 0, NULL), 0);
	CU_ASSERT_EQUAL_FATAL(ov_positions(dir), 0);
	CU_ASSERT_EQUAL_FATAL(graph_index_open(dir, &x), 0);
	CU_ASSERT_EQUAL(ov_all_questions(x), 0);
	graph_index_close(x);
	x = NULL;
	CU_ASSERT_EQUAL_FATAL(older_index(dir, v2, 2), 0);
	CU_ASSERT_EQUAL_FATAL(graph_index_open(v2, &x), 0);
	CU_ASSERT_EQUAL(ov_all_questions(x), 0);
	graph_index_close(x);
}

static void test_domain_objects(void)
{
	graph_authority au;
	graph_domain_rank dr;
	graph_crawl_history ch;

	CU_ASSERT_EQUAL(graph_authority_get(ix, "gamma.com", arena, &au), 0);
	CU_ASSERT_EQUAL(au.score, 100);
	CU_ASSERT_EQUAL(au.referring_domains, 4);
	CU_ASSERT_EQUAL(au.total_host_count, 2);
	CU_ASSERT_STRING_EQUAL(au.registered_at, "2000-01-15");
	CU_ASSERT_STRING_EQUAL(au.registrar, "Registrar A");
	CU_ASSERT_EQUAL(au.popularity_rank, 1);
	CU_ASSERT_EQUAL(au.risk_flags, 0);
	CU_ASSERT_EQUAL(au.health_score, 100);

	CU_ASSERT_EQUAL(graph_authority_get(ix, "alpha.com", arena, &au), 0);
	CU_ASSERT_EQUAL(au.score, 72);
	CU_ASSERT_PTR_NULL(au.registered_at);

	CU_ASSERT_EQUAL(graph_authority_get(ix, "epsilon.org", arena, &au), 0);
	CU_ASSERT_EQUAL(au.score, 7);
	CU_ASSERT_STRING_EQUAL(au.registrar, "Registrar B");
	CU_ASSERT_EQUAL(au.risk_flags, GRAPH_RISK_NEW_DOMAIN |
				       GRAPH_RISK_NO_TRANCO_PRESENCE |
				       GRAPH_RISK_LOW_AUTHORITY);
	CU_ASSERT_EQUAL(au.health_score, 50);
	CU_ASSERT_STRING_EQUAL(graph_risk_flag_name(GRAPH_RISK_NO_TRANCO_PRESENCE), "no_tranco_presence");

	CU_ASSERT_EQUAL(graph_domain_rank_get(ix, "gamma.com", &dr), 0);
	CU_ASSERT_EQUAL(dr.unique_domains, 4);
	CU_ASSERT_EQUAL(dr.inbound_edges, 7);
	CU_ASSERT_DOUBLE_EQUAL(dr.avg_linking_host_count, 2.5, 1e-9);

	CU_ASSERT_EQUAL(graph_crawl_history_get(ix, "gamma.com", &ch), 0);
	CU_ASSERT_EQUAL(ch.first_seen, 1709251200); /* 2024-03-01 */
	CU_ASSERT_EQUAL(ch.last_seen, 1717236000);  /* 2024-06-01 10:00 */
	CU_ASSERT_EQUAL(ch.total_urls, 2);
	CU_ASSERT_EQUAL(graph_crawl_history_get(ix, "unknown.com", &ch), 0);
	CU_ASSERT_EQUAL(ch.total_urls, 0);
	CU_ASSERT_EQUAL(graph_crawl_history_get(ix, "", &ch), SEO_EINVAL);
}

static void test_captures(void)
{
	graph_status_row *s;
	graph_url_row *u;
	size_t n;
	uint64_t total;

	CU_ASSERT_EQUAL(graph_status_codes(ix, "gamma.com", arena, &s, &n), 0);
	CU_ASSERT_EQUAL_FATAL(n, 3);
	CU_ASSERT_EQUAL(s[0].status_code, 200);
	CU_ASSERT_EQUAL(s[1].status_code, 301);
	CU_ASSERT_EQUAL(s[2].status_code, 404);
	CU_ASSERT_EQUAL(s[2].count, 1);

	CU_ASSERT_EQUAL(graph_url_index(ix, "gamma.com", &P100, arena, &u, &n, &total), 0);
	CU_ASSERT_EQUAL(total, 2);
	CU_ASSERT_EQUAL_FATAL(n, 2);
	CU_ASSERT_STRING_EQUAL(u[0].url, "https://gamma.com/old");
	CU_ASSERT_EQUAL(u[0].status_code, 404);
	CU_ASSERT_STRING_EQUAL(u[1].url, "https://gamma.com/pricing");
	CU_ASSERT_EQUAL(u[1].status_code, 301); /* the latest capture */
	CU_ASSERT_STRING_EQUAL(u[1].mime, "text/html");

	/* WAT responses are captures too */
	CU_ASSERT_EQUAL(graph_url_index(ix, "alpha.com", &P100, arena, &u, &n, &total), 0);
	CU_ASSERT_EQUAL(total, 1);
}

/* An offset anywhere up to UINT64_MAX is an empty page past the end, with
 * the total of the whole list (the ASan/UBSan build checks that no index
 * or pointer leaves the list on the way). */
static void test_far_offsets(void)
{
	static const uint64_t far[] = { 99, INT64_MAX, UINT64_MAX - 1,
					UINT64_MAX };
	const char *pair[] = { "gamma.com", "alpha.com" };
	graph_backlink_filter f = { .link_type = "hyperlink" };
	union {
		graph_refdomain_row *rd;
		graph_backlink_row *bl;
		graph_outbound_row *ob;
		graph_anchor_row *an;
		graph_top_page_row *tp;
		graph_similar_row *sm;
		graph_intersect_row *in;
		graph_overlap_row *ov;
		graph_url_row *ur;
	} r;
	graph_page pg = P100;
	size_t n;
	uint64_t total, want;

/* The call at offset 0 has rows; at each far offset none, same total. */
#define EMPTY_FAR(call)                                               \
	do {                                                          \
		pg.offset = 0;                                        \
		CU_ASSERT_EQUAL(call, 0);                             \
		CU_ASSERT(n > 0);                                     \
		want = total;                                         \
		for (size_t i = 0; i < sizeof(far) / sizeof(far[0]); i++) { \
			pg.offset = far[i];                           \
			n = 99;                                       \
			CU_ASSERT_EQUAL(call, 0);                     \
			CU_ASSERT_EQUAL(n, 0);                        \
			CU_ASSERT_EQUAL(total, want);                 \
		}                                                     \
	} while (0)
	EMPTY_FAR(graph_referring_domains(ix, "gamma.com", &pg, arena, &r.rd, &n, &total));
	EMPTY_FAR(graph_backlinks(ix, "gamma.com", GRAPH_SORT_IMPORTANCE, NULL, &pg, arena, &r.bl, &n, &total));
	EMPTY_FAR(graph_backlinks(ix, "gamma.com", GRAPH_SORT_RECENT, NULL, &pg, arena, &r.bl, &n, &total));
	EMPTY_FAR(graph_backlinks(ix, "gamma.com", GRAPH_SORT_RECENT, &f, &pg, arena, &r.bl, &n, &total));
	EMPTY_FAR(graph_outbound_links(ix, "alpha.com", &pg, arena, &r.ob, &n, &total, NULL));
	EMPTY_FAR(graph_anchor_text(ix, "gamma.com", &pg, arena, &r.an, &n, &total));
	EMPTY_FAR(graph_top_pages(ix, "gamma.com", &pg, arena, &r.tp, &n, &total));
	EMPTY_FAR(graph_url_index(ix, "gamma.com", &pg, arena, &r.ur, &n, &total));
	EMPTY_FAR(graph_similar_domains(ix, "gamma.com", &pg, arena, &r.sm, &n, &total));
	EMPTY_FAR(graph_link_intersect(ix, "gamma.com", "alpha.com", &pg, arena, &r.in, &n, &total));
	EMPTY_FAR(graph_domain_overlap(ix, pair, 2, 2, NULL, &pg, arena, &r.ov, &n, &total));
#undef EMPTY_FAR
}

static void test_enrichment(void)
{
	CU_ASSERT_STRING_EQUAL(graph_link_quality(80), "high");
	CU_ASSERT_STRING_EQUAL(graph_link_quality(30), "medium");
	CU_ASSERT_STRING_EQUAL(graph_link_quality(3), "low");
	CU_ASSERT_STRING_EQUAL(graph_anchor_type("x", "image", "gamma.com"), "image");
	CU_ASSERT_STRING_EQUAL(graph_anchor_type("Click here", "hyperlink", "gamma.com"), "generic");
	CU_ASSERT_STRING_EQUAL(graph_anchor_type("https://gamma.com/", "hyperlink", "gamma.com"), "naked");
	CU_ASSERT_STRING_EQUAL(graph_anchor_type("Gamma pricing", "hyperlink", "gamma.com"), "branded");
	CU_ASSERT_STRING_EQUAL(graph_anchor_type("cheap widgets", "hyperlink", "gamma.com"), "partial");
}

static void test_all_or_nothing(void)
{
	graph_input in[2] = {
		{ GRAPH_IN_VERTICES, path_of("v.txt") },
		{ GRAPH_IN_EDGES, path_of("missing.txt") },
	};
	char out[4400];
	struct stat st;
	DIR *d;
	struct dirent *e;
	int leftovers = 0;

	snprintf(out, sizeof(out), "%s/partial", tmp);
	CU_ASSERT_EQUAL(ingest(out, in, 2, 0, NULL), SEO_ENOTFOUND);
	CU_ASSERT_NOT_EQUAL(stat(out, &st), 0);
	d = opendir(tmp);
	while (d && (e = readdir(d)))
		leftovers += strncmp(e->d_name, "partial", 7) == 0;
	if (d)
		closedir(d);
	CU_ASSERT_EQUAL(leftovers, 0);
	/* an existing index is never overwritten */
	CU_ASSERT_EQUAL(ingest(ixdir, in, 1, 0, NULL), SEO_EEXIST);
	{
		graph_index *bad = NULL;

		CU_ASSERT_EQUAL(graph_index_open(tmp, &bad), SEO_ENOTFOUND);
		CU_ASSERT_PTR_NULL(bad);
	}
}

/* ---- over-long lines: malformed, never fatal ---- */

/* `n` bytes of `c` to `gz`, a MiB at a time. */
static void fill(gzFile gz, char c, size_t n)
{
	static char buf[1 << 20];

	memset(buf, c, sizeof(buf));
	for (size_t k; n > 0; n -= k) {
		k = n < sizeof(buf) ? n : sizeof(buf);
		gzwrite(gz, buf, (unsigned)k);
	}
}

/* Lines at the limit are read; longer ones, one of them past the 258 MiB
 * that used to stop the whole ingest, are skipped as they stream by and
 * counted as lines, with the reader's buffer staying a few MiB. */
static void test_reader_long_lines(void)
{
	const char *path = path_of("long.txt.gz");
	gzFile gz = gzopen(path, "wb1R");
	graph__reader r;
	char *line;
	size_t len;

	CU_ASSERT_PTR_NOT_NULL_FATAL(gz);
	gzputs(gz, "first\n");
	fill(gz, 'x', GRAPH__LINE_MAX);
	gzputs(gz, "\n");
	fill(gz, 'x', GRAPH__LINE_MAX);
	gzputs(gz, "\r\n");
	fill(gz, 'y', GRAPH__LINE_MAX + 1);
	gzputs(gz, "\n");
	fill(gz, 'z', (size_t)300 << 20);
	gzputs(gz, "\nlast\n");
	fill(gz, 'w', (size_t)3 << 20);
	CU_ASSERT_EQUAL_FATAL(gzclose(gz), Z_OK);

	CU_ASSERT_EQUAL_FATAL(graph__reader_open(&r, path), 0);
	CU_ASSERT_EQUAL(graph__reader_line(&r, &line, &len), 1);
	CU_ASSERT_STRING_EQUAL(line, "first");
	for (int i = 0; i < 2; i++) {
		CU_ASSERT_EQUAL(graph__reader_line(&r, &line, &len), 1);
		CU_ASSERT_EQUAL(len, GRAPH__LINE_MAX);
		CU_ASSERT_EQUAL(r.line, (uint64_t)i + 2);
	}
	CU_ASSERT_EQUAL(graph__reader_line(&r, &line, &len), GRAPH__LINE_TOO_LONG);
	CU_ASSERT_EQUAL(r.line, 4);
	CU_ASSERT_EQUAL(graph__reader_line(&r, &line, &len), GRAPH__LINE_TOO_LONG);
	CU_ASSERT_EQUAL(r.line, 5);
	CU_ASSERT_EQUAL(graph__reader_line(&r, &line, &len), 1);
	CU_ASSERT_STRING_EQUAL(line, "last");
	CU_ASSERT_EQUAL(r.line, 6);
	/* the last line, without its end of line */
	CU_ASSERT_EQUAL(graph__reader_line(&r, &line, &len), GRAPH__LINE_TOO_LONG);
	CU_ASSERT_EQUAL(r.line, 7);
	CU_ASSERT_EQUAL(graph__reader_line(&r, &line, &len), 0);
	CU_ASSERT(r.cap <= (size_t)8 << 20);
	graph__reader_close(&r, NULL);
	remove(path);
}

/* An ingest whose inputs hold over-long lines completes, counts each one
 * malformed, logs its file and line, and reads the lines after it. */
static void test_ingest_long_lines(void)
{
	graph_input in[4];
	graph_ingest_stats st;
	graph_index *lix = NULL;
	graph_authority au;
	graph_backlink_row *r;
	char out[4400], *log = NULL;
	size_t n, loglen = 0;
	uint64_t total;
	int saved, fd, rc;
	gzFile gz;
	FILE *f;

	in[0] = (graph_input){ GRAPH_IN_VERTICES, put("long-v.txt",
		"0\tcom.alpha\t1\n1\tcom.gamma\t1\n") };
	in[1] = (graph_input){ GRAPH_IN_EDGES, put("long-e.txt", "0\t1\n") };
	/* plain files ("T") */
	gz = gzopen(path_of("long-t.csv"), "wT");
	CU_ASSERT_PTR_NOT_NULL_FATAL(gz);
	gzputs(gz, "1,gamma.com\n");
	fill(gz, 'q', GRAPH__LINE_MAX + 10);
	gzputs(gz, "\n2,alpha.com\n");
	gzclose(gz);
	in[2] = (graph_input){ GRAPH_IN_TRANCO, path_of("long-t.csv") };
	gz = gzopen(path_of("long.wat"), "wT");
	CU_ASSERT_PTR_NOT_NULL_FATAL(gz);
	fill(gz, 'g', (size_t)2 << 20);
	gzputs(gz, "\nWARC/1.0\r\nWARC-Type: metadata\r\nX-Long: ");
	fill(gz, 'h', (size_t)2 << 20);
	gzputs(gz, "\r\nContent-Length: 9\r\n\r\n{not json\r\n\r\n");
	gzclose(gz);
	f = fopen(path_of("long.wat"), "a");
	CU_ASSERT_PTR_NOT_NULL_FATAL(f);
	response(f, "https://alpha.com/", "2024-05-10T10:00:00Z",
		 "{\"path\":\"A@/href\",\"url\":\"https://gamma.com/\",\"text\":\"g\"}");
	fclose(f);
	in[3] = (graph_input){ GRAPH_IN_WAT, path_of("long.wat") };
	snprintf(out, sizeof(out), "%s/long", tmp);

	/* the warnings go to a file for a while */
	fflush(stderr);
	saved = dup(2);
	fd = open(path_of("long.log"), O_WRONLY | O_CREAT | O_TRUNC, 0600);
	CU_ASSERT_FATAL(saved >= 0 && fd >= 0);
	dup2(fd, 2);
	close(fd);
	seo_log_min_level = SEO_LOG_WARN;
	rc = ingest(out, in, 4, 0, &st);
	seo_log_min_level = SEO_LOG_ERROR + 1;
	fflush(stderr);
	dup2(saved, 2);
	close(saved);
	f = fopen(path_of("long.log"), "r");
	if (f) {
		log = calloc(1, 1 << 16);
		loglen = log ? fread(log, 1, (1 << 16) - 1, f) : 0;
		fclose(f);
	}

	CU_ASSERT_EQUAL_FATAL(rc, 0);
	/* the tranco line; the WAT's garbage and the record with the
	 * over-long header (its block skipped by its length) */
	CU_ASSERT_EQUAL(st.malformed, 3);
	CU_ASSERT(loglen > 0 && strstr(log, "long-t.csv\\\" line 2: line too long") != NULL);
	CU_ASSERT(loglen > 0 && strstr(log, "long.wat\\\" line 1: expected a WARC record") != NULL);
	CU_ASSERT(loglen > 0 && strstr(log, "long.wat\\\" line 2: WARC header line too long") != NULL);
	free(log);
	CU_ASSERT_EQUAL_FATAL(graph_index_open(out, &lix), 0);
	CU_ASSERT_EQUAL(graph_authority_get(lix, "alpha.com", arena, &au), 0);
	CU_ASSERT_EQUAL(au.popularity_rank, 2);
	CU_ASSERT_EQUAL(graph_backlinks(lix, "gamma.com", GRAPH_SORT_RECENT, NULL, &P100, arena, &r, &n, &total), 0);
	CU_ASSERT_EQUAL_FATAL(n, 1);
	CU_ASSERT_STRING_EQUAL(r[0].from_url, "https://alpha.com/");
	graph_index_close(lix);
}

/* ---- domain names: streamed from the vertices or hashed ---- */

/* Ingests the vertices in `vertices` with the same other inputs, which
 * name domains the vertices do not list (zulu.com, aardvark.net,
 * extra.org), into `name` under tmp. */
static int ingest_names(const char *name, const char *vertices, char *out,
			size_t outlen)
{
	char vname[256];
	graph_input in[6];
	FILE *f;

	snprintf(vname, sizeof(vname), "%s-v.txt", name);
	in[0] = (graph_input){ GRAPH_IN_VERTICES, put(vname, vertices) };
	in[1] = (graph_input){ GRAPH_IN_EDGES, put("n-e.txt",
		"0\t1\n0\t3\n1\t3\n4\t0\n4\t3\n") };
	in[2] = (graph_input){ GRAPH_IN_RANKS, put("n-r.txt",
		"#harmonicc_pos\t#harmonicc_val\t#pr_pos\t#pr_val\t#host_rev\t#n_hosts\n"
		"1\t9.0E6\t1\t0.1\tcom.gamma\t2\n"
		"2\t8.0E6\t3\t0.05\tcom.zulu\t4\n"
		"3\t7.0E6\t2\t0.01\tcom.alpha\t3\n") };
	in[3] = (graph_input){ GRAPH_IN_TRANCO, put("n-t.csv",
		"1,gamma.com\n2,aardvark.net\n3,www.gamma.com\n") };
	in[4] = (graph_input){ GRAPH_IN_WHOIS, put("n-w.csv",
		"domain,registered_at,registrar\n"
		"zulu.com,2001-02-03,Registrar Z\n"
		"zulu.com,2002-02-03,Registrar Y\n") };
	f = fopen(path_of("n.wat"), "w");
	response(f, "https://alpha.com/", "2024-05-10T10:00:00Z",
		 "{\"path\":\"A@/href\",\"url\":\"https://extra.org/x\",\"text\":\"x\"},"
		 "{\"path\":\"A@/href\",\"url\":\"https://gamma.com/\",\"text\":\"g\"}");
	fclose(f);
	in[5] = (graph_input){ GRAPH_IN_WAT, path_of("n.wat") };
	snprintf(out, outlen, "%s/%s", tmp, name);
	return ingest(out, in, 6, 0, NULL);
}

/* Number of files of `a` that differ from or are missing in `b`, or -1
 * when `a` cannot be read; *files counts those compared. A file named
 * `skip` (may be NULL) is not compared. */
static int dir_diff(const char *a, const char *b, const char *skip,
		    int *files)
{
	DIR *d = opendir(a);
	struct dirent *e;
	int diff = 0;

	*files = 0;
	if (!d)
		return -1;
	while ((e = readdir(d))) {
		char pa[8400], pb[8400];
		FILE *fa, *fb;
		int ca, cb;

		if (e->d_name[0] == '.' ||
		    (skip != NULL && strcmp(e->d_name, skip) == 0))
			continue;
		snprintf(pa, sizeof(pa), "%s/%s", a, e->d_name);
		snprintf(pb, sizeof(pb), "%s/%s", b, e->d_name);
		fa = fopen(pa, "rb");
		fb = fopen(pb, "rb");
		(*files)++;
		do {
			ca = fa ? getc(fa) : -2;
			cb = fb ? getc(fb) : -3;
		} while (ca == cb && ca != EOF);
		diff += ca != cb;
		if (fa)
			fclose(fa);
		if (fb)
			fclose(fb);
	}
	closedir(d);
	return diff;
}

/* Same files (but the manifest, which names the inputs) in both. */
static int same_index(const char *a, const char *b)
{
	int files;

	return dir_diff(a, b, "manifest.json", &files) == 0 && files > 20;
}

static void test_domain_names(void)
{
	static const char *const names[] = {
		"alpha.com", "beta.com", "gamma.com", "delta.org", "zulu.com",
		"aardvark.net", "extra.org",
	};
	char sorted[4400], dup[4400], shuffled[4400];
	graph_index *xs = NULL, *xh = NULL;

	/* in byte order, with a gap in the ids (vertex 2 is absent) */
	CU_ASSERT_EQUAL_FATAL(ingest_names("n-sorted",
		"0\tcom.alpha\t3\n1\tcom.beta\t1\n3\tcom.gamma\t2\n"
		"4\torg.delta\t1\n", sorted, sizeof(sorted)), 0);
	/* the same and a repeated name: every name goes to the hash table
	 * after the fact, with the same ids */
	CU_ASSERT_EQUAL_FATAL(ingest_names("n-dup",
		"0\tcom.alpha\t3\n1\tcom.beta\t1\n3\tcom.gamma\t2\n"
		"4\torg.delta\t1\n5\torg.delta\t1\n", dup, sizeof(dup)), 0);
	CU_ASSERT(same_index(sorted, dup));
	/* out of order from the start: other ids, the same answers */
	CU_ASSERT_EQUAL_FATAL(ingest_names("n-shuffled",
		"4\torg.delta\t1\n3\tcom.gamma\t2\n1\tcom.beta\t1\n"
		"0\tcom.alpha\t3\n", shuffled, sizeof(shuffled)), 0);
	CU_ASSERT_FALSE(same_index(sorted, shuffled));
	CU_ASSERT_EQUAL_FATAL(graph_index_open(sorted, &xs), 0);
	CU_ASSERT_EQUAL_FATAL(graph_index_open(shuffled, &xh), 0);
	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		graph_authority as, ah;
		graph_domain_rank rs, rh;

		CU_ASSERT_EQUAL(graph_authority_get(xs, names[i], arena, &as), 0);
		CU_ASSERT_EQUAL(graph_authority_get(xh, names[i], arena, &ah), 0);
		CU_ASSERT_EQUAL(as.referring_domains, ah.referring_domains);
		CU_ASSERT_EQUAL(as.score, ah.score);
		CU_ASSERT_EQUAL(as.total_host_count, ah.total_host_count);
		CU_ASSERT_EQUAL(as.popularity_rank, ah.popularity_rank);
		CU_ASSERT_EQUAL(graph_domain_rank_get(xs, names[i], &rs), 0);
		CU_ASSERT_EQUAL(graph_domain_rank_get(xh, names[i], &rh), 0);
		CU_ASSERT_EQUAL(rs.unique_domains, rh.unique_domains);
		CU_ASSERT_EQUAL(rs.avg_linking_host_count,
				rh.avg_linking_host_count);
	}
	{
		graph_authority a;
		graph_refdomain_row *r;
		size_t n;
		uint64_t total;

		/* gamma.com: from alpha (domain graph and WAT), beta, delta */
		CU_ASSERT_EQUAL(graph_authority_get(xs, "gamma.com", arena, &a), 0);
		CU_ASSERT_EQUAL(a.referring_domains, 3);
		CU_ASSERT_EQUAL(graph_referring_domains(xs, "extra.org", &P100,
							arena, &r, &n, &total), 0);
		CU_ASSERT_EQUAL(total, 1);
		CU_ASSERT_EQUAL_FATAL(n, 1);
		CU_ASSERT_STRING_EQUAL(r[0].from_domain, "alpha.com");
		CU_ASSERT_EQUAL(a.popularity_rank, 1);
		/* alpha.com (3 hosts) and beta.com (1) link to it */
		{
			graph_domain_rank dr;

			CU_ASSERT_EQUAL(graph_domain_rank_get(xs, "gamma.com",
							      &dr), 0);
			CU_ASSERT_DOUBLE_EQUAL(dr.avg_linking_host_count,
					       (3 + 1 + 1) / 3.0, 1e-9);
		}
		/* domains of the Tranco and ranks files only; the later
		 * whois line wins */
		CU_ASSERT_EQUAL(graph_authority_get(xs, "aardvark.net", arena,
						    &a), 0);
		CU_ASSERT_EQUAL(a.popularity_rank, 2);
		CU_ASSERT_EQUAL(graph_authority_get(xs, "zulu.com", arena, &a), 0);
		CU_ASSERT_STRING_EQUAL(a.registered_at, "2002-02-03");
		CU_ASSERT_STRING_EQUAL(a.registrar, "Registrar Y");
	}
	graph_index_close(xs);
	graph_index_close(xh);
}

/* ---- the demo crawl, in memory and spilled ---- */

static void test_demo(void)
{
	char dir[4400], a[4400], b[4400];
	graph_input in[16];
	size_t n = 0;
	graph_ingest_stats s1, s2;
	graph_index *x1 = NULL, *x2 = NULL;
	graph_refdomain_row *r1, *r2;
	graph_similar_row *m;
	size_t n1, n2;
	uint64_t t1, t2;
	const char *heavy;
	graph_page pg = { 1000, 0 };

	snprintf(dir, sizeof(dir), "%s/demo-src", tmp);
	snprintf(a, sizeof(a), "%s/demo-a", tmp);
	snprintf(b, sizeof(b), "%s/demo-b", tmp);
	CU_ASSERT_EQUAL_FATAL(crawlgen_demo_write(dir, 1, arena, in, &n), 0);
	CU_ASSERT_EQUAL(n, 7);
	CU_ASSERT(same_bytes(dir, "demo-crawl.sha256"));
	CU_ASSERT_EQUAL_FATAL(ingest(a, in, n, 0, &s1), 0);
	/* a 4 MiB budget, most of it the dictionaries': every sort spills
	 * runs and merges */
	CU_ASSERT_EQUAL_FATAL(ingest(b, in, n, 4, &s2), 0);
	CU_ASSERT(s2.runs_spilled > 0);
	CU_ASSERT_EQUAL(s1.runs_spilled, 0);
	CU_ASSERT_EQUAL(s1.malformed, 0);
	CU_ASSERT_EQUAL(s1.domains, 3000);
	CU_ASSERT_EQUAL(s1.domain_edges, s2.domain_edges);
	CU_ASSERT_EQUAL(s1.links, s2.links);
	CU_ASSERT_EQUAL(s1.index_bytes, s2.index_bytes);
	CU_ASSERT(s1.domain_edges > 10000);
	CU_ASSERT(s1.bytes_per_edge <= 6.0);
	CU_ASSERT_EQUAL_FATAL(graph_index_open(a, &x1), 0);
	CU_ASSERT_EQUAL_FATAL(graph_index_open(b, &x2), 0);
	heavy = NULL;
	{
		/* the most linked of a few demo names */
		uint64_t best = 0;
		const char *names[] = { "alphalabs.com", "bluelabs.org", "cedarlabs.net" };

		for (size_t i = 0; i < 3; i++) {
			graph_authority au;

			CU_ASSERT_EQUAL(graph_authority_get(x1, names[i], arena, &au), 0);
			if (au.referring_domains >= best) {
				best = au.referring_domains;
				heavy = names[i];
			}
		}
	}
	CU_ASSERT_EQUAL(graph_referring_domains(x1, heavy, &pg, arena, &r1, &n1, &t1), 0);
	CU_ASSERT_EQUAL(graph_referring_domains(x2, heavy, &pg, arena, &r2, &n2, &t2), 0);
	CU_ASSERT_EQUAL(t1, t2);
	CU_ASSERT_EQUAL_FATAL(n1, n2);
	for (size_t i = 0; i < n1; i++) {
		CU_ASSERT_STRING_EQUAL(r1[i].from_domain, r2[i].from_domain);
		if (i > 0)
			CU_ASSERT(r1[i - 1].from_domain_score >= r1[i].from_domain_score);
	}
	CU_ASSERT_EQUAL(graph_similar_domains(x1, heavy, &pg, arena, &m, &n1, &t1), 0);
	CU_ASSERT(n1 > 20);
	for (size_t i = 1; i < n1; i++)
		CU_ASSERT(m[i - 1].shared_linkers >= m[i].shared_linkers);
	{
		/* a page is the same slice of the whole ordered result */
		graph_page p2 = { 10, 7 };
		graph_similar_row *m2;

		CU_ASSERT_EQUAL(graph_similar_domains(x1, heavy, &p2, arena, &m2, &n2, &t2), 0);
		CU_ASSERT_EQUAL(t2, t1);
		CU_ASSERT_EQUAL_FATAL(n2, 10);
		for (size_t i = 0; i < n2; i++) {
			CU_ASSERT_STRING_EQUAL(m2[i].similar_domain, m[7 + i].similar_domain);
			CU_ASSERT_EQUAL(m2[i].shared_linkers, m[7 + i].shared_linkers);
		}
	}
	graph_index_close(x1);
	graph_index_close(x2);
}

/* ---- dictionaries of URLs and anchors past the budget ---- */

/* Whether the strings of name.str in `dir` ascend in byte order. */
static int str_file_sorted(const char *dir, const char *name, size_t *n)
{
	char path[4400], prev[512] = "", cur[512];
	FILE *f;
	size_t len = 0;
	int c, ok = 1;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	f = fopen(path, "rb");
	if (!f)
		return 0;
	*n = 0;
	while ((c = getc(f)) != EOF) {
		if (c != '\0') {
			if (len + 1 < sizeof(cur))
				cur[len++] = (char)c;
			continue;
		}
		cur[len] = '\0';
		if (*n > 0 && strcmp(prev, cur) >= 0)
			ok = 0;
		memcpy(prev, cur, len + 1);
		len = 0;
		(*n)++;
	}
	fclose(f);
	return ok;
}

/*
 * 6,000 pages crawled twice, the second time thousands of pages later,
 * each linking 12 of 60,000 target URLs with one of 20,000 anchors: with
 * --mem-mb 4 the URLs and anchors spill in several generations, so a
 * string and a link come back under new temporary ids, and the index is
 * still the one the default budget writes, byte for byte, the crawls'
 * repeats counted once.
 */
static void test_dict_spill(void)
{
	char a[4400], b[4400], link[160], links[12 * 160];
	graph_ingest_stats s1, s2;
	graph_input in[2];
	graph_index *x = NULL;
	graph_top_page_row *tp;
	graph_anchor_row *ar;
	uint64_t total;
	size_t n, nstr;
	int files = 0;
	FILE *f = fopen(path_of("spill.wat"), "w"),
	     *cdx = fopen(path_of("spill.cdxj"), "w");

	CU_ASSERT_FATAL(f != NULL && cdx != NULL);
	for (int i = 0; i < 12000; i++) {
		int page = i % 6000;
		char uri[64], date[32];

		links[0] = '\0';
		for (int j = 0; j < 12; j++) {
			int k = page * 12 + j, u = k % 60000;

			snprintf(link, sizeof(link),
				 "%s{\"path\":\"A@/href\",\"url\":\"https://"
				 "tgt%d.com/a-fairly-long-path/segment-%06d/"
				 "index.html\",\"text\":\"anchor words %d\"}",
				 j ? "," : "", u % 40, u, (page * 7 + j) % 20000);
			strcat(links, link);
		}
		snprintf(uri, sizeof(uri), "https://src%d.org/p%d", page % 3000,
			 page);
		snprintf(date, sizeof(date), "2024-0%d-10T10:00:00Z",
			 i < 6000 ? 4 : 5);
		response(f, uri, date, links);
		if (i % 3 == 0)
			fprintf(cdx, "com,tgt%d)/x 2024051%d100000 {\"url\": "
				"\"https://tgt%d.com/a-fairly-long-path/"
				"segment-%06d/index.html\", \"status\": \"%d\"}\n",
				i % 40, i % 10, i % 40, i % 60000,
				i % 2 ? 200 : 404);
	}
	fclose(f);
	fclose(cdx);
	in[0] = (graph_input){ GRAPH_IN_WAT, path_of("spill.wat") };
	in[1] = (graph_input){ GRAPH_IN_CDX, path_of("spill.cdxj") };
	snprintf(a, sizeof(a), "%s/spill-default", tmp);
	snprintf(b, sizeof(b), "%s/spill-4", tmp);
	CU_ASSERT_EQUAL_FATAL(ingest(a, in, 2, 0, &s1), 0);
	CU_ASSERT_EQUAL_FATAL(ingest(b, in, 2, 4, &s2), 0);
	printf("\n  --mem-mb 4: %llu runs of URLs and anchors ",
	       (unsigned long long)s2.dict_runs);
	CU_ASSERT_EQUAL(s1.dict_runs, 0);
	CU_ASSERT(s2.dict_runs >= 2);
	CU_ASSERT_EQUAL(s1.urls, 66000);
	CU_ASSERT_EQUAL(s1.anchors, 20000);
	CU_ASSERT_EQUAL(s1.links, 72000);
	CU_ASSERT_EQUAL(s2.urls, s1.urls);
	CU_ASSERT_EQUAL(s2.anchors, s1.anchors);
	CU_ASSERT_EQUAL(s2.links, s1.links);
	CU_ASSERT_EQUAL(dir_diff(a, b, NULL, &files), 0);
	CU_ASSERT(files >= 30);
	CU_ASSERT_EQUAL(dir_diff(b, a, NULL, &files), 0);
	CU_ASSERT(str_file_sorted(b, "urls.str", &nstr));
	CU_ASSERT_EQUAL(nstr, 66000);
	CU_ASSERT(str_file_sorted(b, "anchors.str", &nstr));
	CU_ASSERT_EQUAL(nstr, 20000);
	CU_ASSERT_EQUAL_FATAL(graph_index_open(b, &x), 0);
	/* tgt0.com: links k = 12 page + j with k % 40 == 0, to 1,500 URLs */
	CU_ASSERT_EQUAL(graph_top_pages(x, "tgt0.com", &P100, arena, &tp, &n,
					&total), 0);
	CU_ASSERT_EQUAL(total, 1500);
	CU_ASSERT_EQUAL_FATAL(n, 100);
	for (size_t i = 0; i < n; i++)
		CU_ASSERT(strncmp(tp[i].url, "https://tgt0.com/", 17) == 0);
	CU_ASSERT_EQUAL(graph_anchor_text(x, "tgt0.com", &P100, arena, &ar, &n,
					  &total), 0);
	CU_ASSERT(total > 0 && total <= 1800);
	graph_index_close(x);
}

/* ---- memory bounded by --mem-mb ---- */

/* The budget of the small run, and what seo-ingest holds besides it: the
 * process with its libraries and rule file, stdio and input buffers. */
#define SMALL_BUDGET "16"
#define BOUND_MB (16 + 24)

/* Whether the run's RSS means anything (not under AddressSanitizer). */
#if defined(__SANITIZE_ADDRESS__)
#define RSS_MEASURED 0
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define RSS_MEASURED 0
#endif
#endif
#ifndef RSS_MEASURED
#define RSS_MEASURED 1
#endif

/* A child inherits its parent's pages and ru_maxrss keeps them across
 * exec: this suite runs first, from a small process, and writes its crawl
 * in a child of its own. */
static char mem_tmp[4096];

static int mem_init(void)
{
	const char *t = getenv("TMPDIR");

	snprintf(mem_tmp, sizeof(mem_tmp), "%s/test_graph_mem-XXXXXX",
		 t && *t ? t : "/tmp");
	return mkdtemp(mem_tmp) == NULL;
}

static int mem_clean(void)
{
	graph_remove_dir(mem_tmp);
	return 0;
}

static int write_synth(const char *dir)
{
	int status;
	pid_t pid = fork();

	if (pid == 0) {
		seo_arena *a = seo_arena_new(0);
		graph_input in[8];
		size_t n = 0;

		_exit(a && crawlgen_synth_write(dir, 400000, 4000000, 7, a, in,
						&n) == 0 ? 0 : 1);
	}
	if (pid < 0 || waitpid(pid, &status, 0) != pid)
		return -1;
	return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

/* Runs `bin` with `argv` (NULL-terminated), its output to /dev/null; its
 * exit status, and its peak RSS in KiB in *rss. */
static int run_tool(const char *bin, const char *const *argv, long *rss)
{
	struct rusage ru;
	int status;
	pid_t pid;

	fflush(NULL);
	pid = fork();
	if (pid == 0) {
		/* the summary line is not ours to print */
		if (!freopen("/dev/null", "w", stdout))
			_exit(126);
		execv(bin, (char *const *)argv);
		_exit(127);
	}
	if (pid < 0 || wait4(pid, &status, 0, &ru) != pid)
		return -1;
	*rss = ru.ru_maxrss;
	return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

/* Runs `bin` on the crawl in `crawl` with `mem_mb` (NULL: the default);
 * its exit status, and its peak RSS in KiB in *rss. */
static int run_ingest(const char *bin, const char *crawl, const char *out,
		      const char *mem_mb, long *rss)
{
	static const char *const files[] = {
		"--domain-vertices", "domain-vertices.txt",
		"--domain-edges", "domain-edges.txt",
		"--domain-ranks", "domain-ranks.txt",
		"--wat", "synth.warc.wat.gz",
	};
	char paths[4][4500];
	const char *argv[16];
	int n = 0;

	argv[n++] = "seo-ingest";
	argv[n++] = "--out";
	argv[n++] = out;
	argv[n++] = "--release";
	argv[n++] = "mem-test";
	for (int i = 0; i < 4; i++) {
		snprintf(paths[i], sizeof(paths[i]), "%s/%s", crawl,
			 files[2 * i + 1]);
		argv[n++] = files[2 * i];
		argv[n++] = paths[i];
	}
	if (mem_mb) {
		argv[n++] = "--mem-mb";
		argv[n++] = mem_mb;
	}
	argv[n] = NULL;
	return run_tool(bin, argv, rss);
}

static uint64_t dir_size(const char *dir)
{
	DIR *d = opendir(dir);
	struct dirent *e;
	uint64_t sum = 0;

	while (d && (e = readdir(d))) {
		char p[8400];
		struct stat st;

		snprintf(p, sizeof(p), "%s/%s", dir, e->d_name);
		if (e->d_name[0] != '.' && stat(p, &st) == 0)
			sum += (uint64_t)st.st_size;
	}
	if (d)
		closedir(d);
	return sum;
}

/*
 * seo-ingest with --mem-mb 16 on a crawl whose per-domain data alone
 * (400,000 domains: 32 MB of domains.bin, their names, the rank columns)
 * is more than that: its peak RSS stays within the budget and a fixed
 * overhead, and the index is the one the default budget writes, byte for
 * byte.
 */
static void test_memory_budget(void)
{
	const char *build = getenv("SEO_BUILD_DIR");
	char bin[4400], crawl[4400], small[4400], big[4400];
	long rss_small = 0, rss_big = 0;
	int files = 0;

	snprintf(bin, sizeof(bin), "%s/bin/seo-ingest", build ? build : ".");
	if (!build || access(bin, X_OK) != 0) {
		printf("\n  seo-ingest not built, skipped ");
		return;
	}
	snprintf(crawl, sizeof(crawl), "%s/synth", mem_tmp);
	snprintf(small, sizeof(small), "%s/synth-small", mem_tmp);
	snprintf(big, sizeof(big), "%s/synth-big", mem_tmp);
	CU_ASSERT_EQUAL_FATAL(write_synth(crawl), 0);
	CU_ASSERT(same_bytes(crawl, "synth-crawl.sha256"));
	CU_ASSERT_EQUAL_FATAL(run_ingest(bin, crawl, small, SMALL_BUDGET,
					 &rss_small), 0);
	CU_ASSERT_EQUAL_FATAL(run_ingest(bin, crawl, big, NULL, &rss_big), 0);
	printf("\n  peak RSS %ld MiB with --mem-mb " SMALL_BUDGET ", %ld MiB "
	       "with the default; index %.0f MiB ", rss_small >> 10,
	       rss_big >> 10, (double)dir_size(big) / 1048576.0);
	/* the index could not have been held in the budget */
	CU_ASSERT(dir_size(big) > (uint64_t)BOUND_MB << 20);
	if (RSS_MEASURED)
		CU_ASSERT(rss_small <= (long)BOUND_MB << 10);
	CU_ASSERT_EQUAL(dir_diff(big, small, NULL, &files), 0);
	CU_ASSERT(files >= 30);
	CU_ASSERT_EQUAL(dir_diff(small, big, NULL, &files), 0);
	CU_ASSERT(same_bytes(big, "synth-index.sha256"));
}

/* seo-ingest --demo, as `./seo up` runs it: the same index as before. */
static void test_demo_tool(void)
{
	const char *build = getenv("SEO_BUILD_DIR");
	char bin[4400], out[4400];
	const char *argv[] = { "seo-ingest", "--demo", "--out", out, NULL };
	long rss;

	snprintf(bin, sizeof(bin), "%s/bin/seo-ingest", build ? build : ".");
	if (!build || access(bin, X_OK) != 0) {
		printf("\n  seo-ingest not built, skipped ");
		return;
	}
	snprintf(out, sizeof(out), "%s/demo", mem_tmp);
	CU_ASSERT_EQUAL_FATAL(run_tool(bin, argv, &rss), 0);
	CU_ASSERT(same_bytes(out, "demo-index.sha256"));
}

/* ---- the ingest's external sort and file-backed arrays ---- */

static int cmp_u64(const void *pa, const void *pb)
{
	uint64_t a = *(const uint64_t *)pa, b = *(const uint64_t *)pb;

	return (a > b) - (a < b);
}

/* A 64 KiB sort limit and 2,000,000 records: far more runs than are kept
 * open, so the smallest are merged along the way; all come back, in
 * order, and the pool is charged, then given everything back. */
/* 2,000,000 random u64 through a sort (or, cmp NULL, a spool) of 64 KiB
 * in a 1 MiB pool: every record back, ordered by cmp when there is one. */
static void xsort_many_runs(graph__cmp_fn cmp)
{
	graph__mem pool = { .cap = 1 << 20 };
	graph__xsort *s = NULL;
	const void *rec;
	uint64_t x = 1, sum = 0, out_sum = 0, prev = 0, n = 0;
	int rc = 0, ordered = 1;

	CU_ASSERT_EQUAL_FATAL(graph__xsort_new(sizeof(uint64_t), cmp,
					       64 << 10, tmp, &pool, &s), 0);
	for (int i = 0; !rc && i < 2000000; i++) {
		x = x * 6364136223846793005ULL + 1442695040888963407ULL;
		sum += x;
		rc = graph__xsort_add(s, &x);
	}
	CU_ASSERT_EQUAL(rc, 0);
	CU_ASSERT(graph__xsort_runs(s) > 200);
	CU_ASSERT(pool.used > 0 && pool.used <= pool.cap);
	CU_ASSERT_EQUAL_FATAL(graph__xsort_finish(s), 0);
	while ((rc = graph__xsort_next(s, &rec)) == 1) {
		uint64_t v = *(const uint64_t *)rec;

		ordered &= n == 0 || v >= prev;
		prev = v;
		out_sum += v;
		n++;
	}
	CU_ASSERT_EQUAL(rc, 0);
	if (cmp)
		CU_ASSERT(ordered);
	CU_ASSERT_EQUAL(n, 2000000);
	CU_ASSERT_EQUAL(out_sum, sum);
	graph__xsort_free(s);
	CU_ASSERT_EQUAL(pool.used, 0);
}

static void test_xsort_many_runs(void)
{
	xsort_many_runs(cmp_u64);
}

static void test_spool_many_runs(void)
{
	xsort_many_runs(NULL);
}

/* An array of 1 MiB with a 256 KiB share: written in order and at random,
 * dropped again and again, it reads back what was written. */
static void test_marr_share(void)
{
	graph__mem pool = { .cap = 256 << 10 };
	graph__marr m;
	uint32_t n = 1 << 18, bad = 0;

	CU_ASSERT_EQUAL_FATAL(graph__marr_create(&m, tmp, NULL, &pool,
						 pool.cap), 0);
	CU_ASSERT_EQUAL_FATAL(graph__marr_resize(&m, (size_t)n * 4), 0);
	for (uint32_t i = 0; i < n; i++)
		*graph__marr_u32(&m, i) = i;
	/* the same random walk twice: every flip undone */
	for (int pass = 0; pass < 2; pass++)
		for (uint32_t i = 0, k = 7; i < 20000;
		     i++, k = k * 1103515245u + 12345u)
			*graph__marr_u32(&m, (k >> 8) % n) ^= 0x5a5a5a5a;
	CU_ASSERT(m.share <= pool.cap);
	CU_ASSERT(m.touched <= m.share);
	for (uint32_t i = 0; i < n; i++)
		bad += *graph__marr_u32(&m, i) != i;
	CU_ASSERT_EQUAL(bad, 0);
	CU_ASSERT_EQUAL(pool.used, m.share);
	graph__marr_close(&m);
	CU_ASSERT_EQUAL(pool.used, 0);
}

/* ---- the real samples ---- */

static void test_real_samples(void)
{
	const char *src = getenv("SEO_SOURCE_DIR");
	char base[4096], out[4400];
	graph_input in[8];
	graph_ingest_stats st;
	graph_index *x = NULL;
	graph_authority au;
	graph_url_row *u;
	graph_status_row *s;
	graph_outbound_row *o;
	size_t n;
	uint64_t total;
	struct stat sb;
	int cc = 0;

	snprintf(base, sizeof(base), "%s/../shared/data/crawl-samples",
		 src ? src : ".");
	if (!src || stat(base, &sb) != 0) {
		printf("\n  real samples not found, skipped ");
		return;
	}
	n = 0;
	{
		static const struct {
			graph_input_kind k;
			const char *p;
		} files[] = {
			{ GRAPH_IN_RANKS, "webgraph/cc-main-2024-feb-apr-may-domain-ranks.top1000.txt" },
			{ GRAPH_IN_TRANCO, "tranco/tranco-top1m.excerpt-top200.csv" },
			{ GRAPH_IN_CDX, "cdx/CC-MAIN-2024-30.cdx-00187.filtered-excerpt.cdxj.gz" },
			{ GRAPH_IN_WAT, "wat-warc/CC-MAIN-20140820021334-00006-ip-10-180-136-8.ec2.internal.excerpt.warc.wat" },
			{ GRAPH_IN_WAT, "wat-warc/CC-MAIN-2024-22.an-wikipedia-escopete.whirlwind.warc.wat.gz" },
			{ GRAPH_IN_WAT, "wat-warc/CC-MAIN-20200808165417-20200808195417-00395.excerpt16.warc.gz" },
		};
		static char paths[6][4400];

		for (size_t i = 0; i < 6; i++) {
			snprintf(paths[i], sizeof(paths[i]), "%s/%s", base, files[i].p);
			in[n++] = (graph_input){ files[i].k, paths[i] };
		}
	}
	snprintf(out, sizeof(out), "%s/real", tmp);
	CU_ASSERT_EQUAL_FATAL(ingest(out, in, n, 0, &st), 0);
	CU_ASSERT_EQUAL(st.malformed, 0);
	CU_ASSERT(st.domains >= 1000);
	CU_ASSERT(st.captures >= 1140);
	CU_ASSERT_EQUAL_FATAL(graph_index_open(out, &x), 0);
	CU_ASSERT_EQUAL(graph_authority_get(x, "google.com", arena, &au), 0);
	CU_ASSERT_EQUAL(au.popularity_rank, 1);
	CU_ASSERT_EQUAL(au.total_host_count, 13651);
	CU_ASSERT(au.score > 0);
	CU_ASSERT_EQUAL(graph_url_index(x, "bibliotheque.missiondefrance.fr", &P100, arena, &u, &n, &total), 0);
	CU_ASSERT(total > 0);
	/* the CDX excerpt: 1083 captures with 200 and 26 with 404 on
	 * bibliotheque.missiondefrance.fr, 31 with 200 on biodiv.mnhn.fr */
	CU_ASSERT_EQUAL(graph_status_codes(x, "missiondefrance.fr", arena, &s, &n), 0);
	CU_ASSERT_EQUAL_FATAL(n, 2);
	CU_ASSERT_EQUAL(s[0].status_code, 200);
	CU_ASSERT_EQUAL(s[0].count, 1083);
	CU_ASSERT_EQUAL(s[1].status_code, 404);
	CU_ASSERT_EQUAL(s[1].count, 26);
	CU_ASSERT_EQUAL(graph_status_codes(x, "biodiv.mnhn.fr", arena, &s, &n), 0);
	CU_ASSERT_EQUAL_FATAL(n, 1);
	CU_ASSERT_EQUAL(s[0].count, 31);
	/* the 2014 WAT: 0pointer.de links out to creativecommons.org */
	CU_ASSERT_EQUAL(graph_outbound_links(x, "0pointer.de", &P100, arena, &o, &n, &total, NULL), 0);
	for (size_t i = 0; i < n; i++)
		cc += strcmp(o[i].to_domain, "creativecommons.org") == 0;
	CU_ASSERT(cc >= 2);
	graph_index_close(x);
}

int main(void)
{
	CU_pSuite s;
	unsigned failed;

	seo_log_init("test_graph");
	/* the failures provoked on purpose would log errors */
	seo_log_min_level = SEO_LOG_ERROR + 1;
	if (CU_initialize_registry() != CUE_SUCCESS)
		return 1;
	s = CU_add_suite("ingest memory", mem_init, mem_clean);
	CU_add_test(s, "memory bounded by --mem-mb", test_memory_budget);
	CU_add_test(s, "seo-ingest --demo byte for byte", test_demo_tool);
	s = CU_add_suite("graph", hand_init, hand_clean);
	CU_add_test(s, "counts and malformed lines", test_counts);
	CU_add_test(s, "index byte for byte as recorded", test_hand_bytes);
	CU_add_test(s, "domain normalisation", test_normalize);
	CU_add_test(s, "referring domains", test_referring_domains);
	CU_add_test(s, "backlinks", test_backlinks);
	CU_add_test(s, "outbound links", test_outbound);
	CU_add_test(s, "anchor text and top pages", test_anchor_and_pages);
	CU_add_test(s, "similar domains and link intersect", test_similar_intersect);
	CU_add_test(s, "similar domains, both ways, against a brute-force count", test_similar_exact);
	CU_add_test(s, "similar domains stored at ingest, deep pages", test_precomputed);
	CU_add_test(s, "domain overlap and link gap", test_overlap);
	CU_add_test(s, "overlap, gap and intersect against the edges", test_overlap_exact);
	CU_add_test(s, "authority, rank, crawl history", test_domain_objects);
	CU_add_test(s, "status codes and url index", test_captures);
	CU_add_test(s, "every list at offsets up to UINT64_MAX", test_far_offsets);
	CU_add_test(s, "link quality and anchor type", test_enrichment);
	CU_add_test(s, "all-or-nothing ingest", test_all_or_nothing);
	CU_add_test(s, "over-long lines read and skipped", test_reader_long_lines);
	CU_add_test(s, "over-long lines malformed, never fatal", test_ingest_long_lines);
	CU_add_test(s, "domain names streamed or hashed", test_domain_names);
	CU_add_test(s, "external sort of many runs", test_xsort_many_runs);
	CU_add_test(s, "spool of many runs", test_spool_many_runs);
	CU_add_test(s, "file-backed array within its share", test_marr_share);
	CU_add_test(s, "demo crawl, in memory and spilled", test_demo);
	CU_add_test(s, "URLs and anchors past the budget", test_dict_spill);
	CU_add_test(s, "real crawl samples", test_real_samples);
	CU_basic_set_mode(CU_BRM_VERBOSE);
	CU_basic_run_tests();
	failed = CU_get_number_of_failures();
	CU_cleanup_registry();
	return failed ? 1 : 0;
}

/*
 * demo.c: a deterministic synthetic crawl written in the public formats,
 * small enough to ingest in seconds. Degrees are skewed the way real
 * graphs are: a few domains collect most referrers, many get none.
 */
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include <zlib.h>

#include <seo/errors.h>
#include <seo/log.h>

#include "internal.h"

static const char *const w1[] = {
	"alpha", "blue", "cedar", "delta", "ember", "fable", "gamma", "harbor",
	"iris", "jade", "kite", "lumen", "maple", "nova", "opal", "pixel",
	"quill", "river", "solar", "tidal", "umber", "vivid", "willow", "xenon",
	"yonder", "zephyr", "amber", "brisk", "coral", "dune",
};
static const char *const w2[] = {
	"labs", "media", "news", "shop", "works", "press", "cloud", "guide",
	"forum", "hub", "studio", "review", "bank", "travel", "foods", "tech",
	"games", "books", "health", "sports",
};
static const char *const tlds[] = { "com", "org", "net", "de", "co.uk",
				    "io", "fr" };
static const char *const registrars[] = {
	"Example Registrar, Inc.", "NameCheap Demo", "Gandi Demo SAS",
	"DENIC Demo eG", "Nominet Demo",
};
static const char *const generic[] = { "click here", "read more",
				       "website", "here" };

typedef struct rng {
	uint64_t s;
} rng;

/* splitmix64: tiny, fast and the same on every platform */
static uint64_t next(rng *r)
{
	uint64_t z = (r->s += 0x9e3779b97f4a7c15ULL);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	return z ^ (z >> 31);
}

static double unif(rng *r)
{
	return (double)(next(r) >> 11) / 9007199254740992.0;
}

typedef struct dd {
	char name[64];
	char rev[64];
	uint32_t vid;      /* id in the vertices file */
	uint32_t pop;      /* popularity position, 0 most popular */
	uint32_t *out;     /* targets (demo indices) */
	uint32_t nout;
	uint32_t indeg;
} dd;

typedef struct demo {
	dd *d;
	uint32_t n;
	uint32_t *by_pop;  /* popularity position -> demo index */
	uint32_t *by_vid;  /* vertex id -> demo index */
} demo;

static int cmp_rev(const void *a, const void *b, void *ctx)
{
	const dd *d = ctx;

	return strcmp(d[*(const uint32_t *)a].rev, d[*(const uint32_t *)b].rev);
}

static int cmp_u32(const void *a, const void *b)
{
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;

	return x < y ? -1 : x > y;
}

static int cmp_indeg(const void *a, const void *b, void *ctx)
{
	const dd *d = ctx;
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;

	if (d[x].indeg != d[y].indeg)
		return d[x].indeg > d[y].indeg ? -1 : 1;
	return x < y ? -1 : x > y;
}

/* The name of synthetic domain i: unique for every i. */
static void demo_name(uint32_t i, char *out, size_t outlen)
{
	uint32_t a = i % 30, b = (i / 30) % 20, k = i / 600;

	if (k)
		snprintf(out, outlen, "%s%s%u.%s", w1[a], w2[b], k,
			 tlds[(i * 7 + k) % 7]);
	else
		snprintf(out, outlen, "%s%s.%s", w1[a], w2[b], tlds[(i * 7) % 7]);
}

static int make_graph(demo *g, unsigned scale, rng *r)
{
	uint32_t *tmp;

	g->n = 3000 * scale;
	g->d = calloc(g->n, sizeof(dd));
	g->by_pop = malloc(g->n * sizeof(uint32_t));
	g->by_vid = malloc(g->n * sizeof(uint32_t));
	tmp = malloc(g->n * sizeof(uint32_t));
	if (!g->d || !g->by_pop || !g->by_vid || !tmp) {
		free(tmp);
		return SEO_ENOMEM;
	}
	for (uint32_t i = 0; i < g->n; i++) {
		dd *d = &g->d[i];

		demo_name(i, d->name, sizeof(d->name));
		graph__reverse_labels(d->name, strlen(d->name), d->rev);
		g->by_pop[i] = i;
	}
	/* popularity: a shuffle, so that names say nothing about it */
	for (uint32_t i = g->n - 1; i > 0; i--) {
		uint32_t j = (uint32_t)(next(r) % (i + 1)), t = g->by_pop[i];

		g->by_pop[i] = g->by_pop[j];
		g->by_pop[j] = t;
	}
	for (uint32_t p = 0; p < g->n; p++)
		g->d[g->by_pop[p]].pop = p;
	for (uint32_t i = 0; i < g->n; i++)
		g->by_vid[i] = i;
	qsort_r(g->by_vid, g->n, sizeof(uint32_t), cmp_rev, g->d);
	for (uint32_t v = 0; v < g->n; v++)
		g->d[g->by_vid[v]].vid = v;
	for (uint32_t i = 0; i < g->n; i++) {
		dd *d = &g->d[i];
		/* Pareto out-degree; a third of the domains link nowhere */
		uint32_t want = unif(r) < 0.33 ? 0 :
				(uint32_t)(8.0 / pow(unif(r) + 1e-9, 0.6));
		uint32_t m = 0;

		if (want > 1500)
			want = 1500;
		for (uint32_t k = 0; k < want; k++) {
			/* cubed uniform over popularity: power-law in-degree */
			double u = unif(r);
			uint32_t t = g->by_pop[(uint32_t)(u * u * u * g->n)];

			if (t != i)
				tmp[m++] = g->d[t].vid;
		}
		qsort(tmp, m, sizeof(uint32_t), cmp_u32);
		d->out = malloc((m ? m : 1) * sizeof(uint32_t));
		if (!d->out) {
			free(tmp);
			return SEO_ENOMEM;
		}
		for (uint32_t k = 0; k < m; k++)
			if (k == 0 || tmp[k] != tmp[k - 1]) {
				d->out[d->nout++] = g->by_vid[tmp[k]];
				g->d[g->by_vid[tmp[k]]].indeg++;
			}
	}
	free(tmp);
	return 0;
}

static void free_graph(demo *g)
{
	if (g->d)
		for (uint32_t i = 0; i < g->n; i++)
			free(g->d[i].out);
	free(g->d);
	free(g->by_pop);
	free(g->by_vid);
}

static FILE *create(const char *dir, const char *name, seo_arena *a,
		    graph_input *in, graph_input_kind kind, size_t *n)
{
	char *path = seo_arena_printf(a, "%s/%s", dir, name);
	FILE *f = path ? fopen(path, "we") : NULL;

	if (!f) {
		log_error("cannot create \"%s\": %s", path ? path : name,
			  strerror(errno));
		return NULL;
	}
	in[*n].kind = kind;
	in[*n].path = path;
	(*n)++;
	return f;
}

static int close_ok(FILE *f)
{
	int bad = ferror(f);

	return fclose(f) != 0 || bad ? SEO_EIO : 0;
}

#define RANKS_HEADER \
	"#harmonicc_pos\t#harmonicc_val\t#pr_pos\t#pr_val\t#host_rev\t#n_hosts\n"

/* One line of domain-ranks.txt for the domain at position p (0 first) by
 * in-degree: centrality values follow the in-degree, the PageRank position
 * swaps a few neighbours so that the two orders differ. */
static void rank_line(FILE *f, uint32_t p, uint32_t indeg, uint32_t n,
		      const char *rev)
{
	fprintf(f, "%u\t%.6E\t%u\t%.12f\t%s\t%u\n", p + 1, 1e5 * indeg,
		p + 1 + (p % 3 == 1) - (p % 3 == 2),
		(double)indeg / (10.0 * n), rev, 1 + indeg / 4);
}

static int write_webgraph(demo *g, const char *dir, seo_arena *a,
			  graph_input *in, size_t *n, rng *r)
{
	uint32_t *order;
	FILE *f;
	int rc;

	f = create(dir, "domain-vertices.txt", a, in, GRAPH_IN_VERTICES, n);
	if (!f)
		return SEO_EIO;
	for (uint32_t v = 0; v < g->n; v++) {
		dd *d = &g->d[g->by_vid[v]];

		fprintf(f, "%u\t%s\t%u\n", v, d->rev,
			1 + (uint32_t)(d->indeg / 4) + (uint32_t)(next(r) % 3));
	}
	if ((rc = close_ok(f)))
		return rc;
	f = create(dir, "domain-edges.txt", a, in, GRAPH_IN_EDGES, n);
	if (!f)
		return SEO_EIO;
	for (uint32_t v = 0; v < g->n; v++) {
		dd *d = &g->d[g->by_vid[v]];

		for (uint32_t k = 0; k < d->nout; k++)
			fprintf(f, "%u\t%u\n", v, g->d[d->out[k]].vid);
	}
	if ((rc = close_ok(f)))
		return rc;
	order = malloc(g->n * sizeof(uint32_t));
	if (!order)
		return SEO_ENOMEM;
	for (uint32_t i = 0; i < g->n; i++)
		order[i] = i;
	qsort_r(order, g->n, sizeof(uint32_t), cmp_indeg, g->d);
	f = create(dir, "domain-ranks.txt", a, in, GRAPH_IN_RANKS, n);
	if (!f) {
		free(order);
		return SEO_EIO;
	}
	fputs(RANKS_HEADER, f);
	/* only domains with referrers are ranked, as in the real files */
	for (uint32_t p = 0; p < g->n && g->d[order[p]].indeg > 0; p++)
		rank_line(f, p, g->d[order[p]].indeg, g->n, g->d[order[p]].rev);
	rc = close_ok(f);
	if (!rc) {
		f = create(dir, "tranco.csv", a, in, GRAPH_IN_TRANCO, n);
		if (!f)
			rc = SEO_EIO;
	}
	if (!rc) {
		/* the real list has CRLF line ends */
		for (uint32_t p = 0; p < g->n * 6 / 10; p++)
			fprintf(f, "%u,%s\r\n", p + 1, g->d[order[p]].name);
		rc = close_ok(f);
	}
	free(order);
	if (rc)
		return rc;
	f = create(dir, "whois.csv", a, in, GRAPH_IN_WHOIS, n);
	if (!f)
		return SEO_EIO;
	fprintf(f, "domain,registered_at,registrar\n");
	for (uint32_t i = 0; i < g->n; i++) {
		int y;
		unsigned m, d;

		if (next(r) % 10 >= 7)
			continue;
		/* 1995-01-01 .. 2024-06-01, a few inside the crawl's year */
		graph__civil_from_days(9131 + (int32_t)(next(r) % 10744), &y,
				       &m, &d);
		fprintf(f, "%s,%04d-%02u-%02u,%s\n", g->d[i].name, y, m, d,
			registrars[next(r) % 5]);
	}
	return close_ok(f);
}

/* Appends one WARC record as its own gzip member, as Common Crawl does. */
static int warc_member(const char *path, const char *type, const char *uri,
		       const char *date, const char *body)
{
	gzFile gz = gzopen(path, "ab");
	int rc = 0;

	if (!gz)
		return SEO_EIO;
	if (gzprintf(gz,
		     "WARC/1.0\r\nWARC-Type: %s\r\n%s%s%sWARC-Date: %s\r\n"
		     "Content-Type: application/json\r\n"
		     "Content-Length: %zu\r\n\r\n",
		     type, uri ? "WARC-Target-URI: " : "", uri ? uri : "",
		     uri ? "\r\n" : "", date, strlen(body)) <= 0 ||
	    gzputs(gz, body) < 0 || gzputs(gz, "\r\n\r\n") < 0)
		rc = SEO_EIO;
	if (gzclose(gz) != Z_OK)
		rc = SEO_EIO;
	return rc;
}

/* A WAT file in `dir` with its warcinfo record, listed in `in`. */
static int wat_create(const char *dir, const char *name, seo_arena *a,
		      graph_input *in, size_t *n, const char **path)
{
	*path = seo_arena_printf(a, "%s/%s", dir, name);
	if (!*path)
		return SEO_ENOMEM;
	in[*n].kind = GRAPH_IN_WAT;
	in[*n].path = *path;
	(*n)++;
	return warc_member(*path, "warcinfo", NULL, "2024-06-30T00:00:00Z",
			   "{\"software\": \"seo-ingest demo\"}");
}

/*
 * How a page built on each platform shows it in a WAT record, as real
 * pages do: response headers, a meta generator, a script and a preloaded
 * asset (a path is on the page's own host). Shares of the crawled domains
 * (per mille) follow the platforms' shares of the web, so counts are
 * skewed; the rest show none.
 */
static const struct demo_platform {
	unsigned share;
	const char *headers;   /* extra members of Headers, or "" */
	const char *generator; /* or NULL */
	const char *script;    /* or NULL */
	const char *preload;   /* or NULL */
} demo_platforms[] = {
	{ 380, "", "WordPress 6.5.2",
	  "/wp-includes/js/jquery/jquery.min.js?ver=3.7.1", NULL },
	{ 60, ",\"X-ShopId\":\"5813\",\"Powered-By\":\"Shopify\"", NULL,
	  "https://cdn.shopify.com/s/files/1/0581/t/4/assets/theme.js", NULL },
	{ 40, ",\"X-Wix-Request-Id\":\"1718.0123\"", "Wix.com Website Builder",
	  "https://static.parastorage.com/services/thunderbolt/main.js", NULL },
	{ 30, ",\"Server\":\"Squarespace\"", NULL,
	  "https://static1.squarespace.com/static/vta/scripts/site-bundle.js",
	  NULL },
	{ 15, "", "Webflow", "https://assets.website-files.com/js/webflow.4f9c2.js",
	  NULL },
	{ 12, "", "Starfield Technologies; GoDaddy Website Builder 8.0.0000",
	  "https://img1.wsimg.com/blobby/go/gpub/main.js", NULL },
	{ 8, "", "Framer 94b0e2c",
	  "https://framerusercontent.com/sites/3Xv/script_main.js", NULL },
	{ 8, "", NULL, "https://cdn2.editmysite.com/js/site/main.js", NULL },
	{ 6, "", "Tilda", "https://static.tildacdn.com/js/tilda-scripts-3.0.min.js",
	  NULL },
	{ 6, ",\"Set-Cookie\":\"SHOP_SESSION_TOKEN=a1b2c3; path=/; HttpOnly\"",
	  NULL, "https://cdn11.bigcommerce.com/s-abc123/stencil/theme.js", NULL },
	{ 4, "", NULL, "https://static-assets.strikinglycdn.com/webpack/site.js",
	  NULL },
	{ 4, "", NULL, "https://carrd.co/assets/widgets.js", NULL },
	{ 4, "", NULL, NULL, "https://images.ctfassets.net/space1/hero.jpg" },
	{ 3, "", NULL, NULL,
	  "https://cdn.sanity.io/images/abc123/production/hero.png" },
	{ 3, "", NULL, "https://meta-q.cdn.bubble.io/f1700/run.js", NULL },
	{ 2, "", NULL, "https://assets.softr-files.com/assets/js/softr.js", NULL },
	{ 3, "", NULL,
	  "https://kajabi-storefronts-production.kajabi-cdn.com/themes/main.js",
	  NULL },
	{ 3, "", NULL, "https://assets.thinkific.com/assets/site.js", NULL },
	{ 10, "", NULL, "https://www.paypal.com/sdk/js?client-id=demo", NULL },
};

/* The PayPal row, which also shows on the first page of some domains on
 * another platform (a shop's checkout button). */
#define DEMO_PAYPAL (sizeof(demo_platforms) / sizeof(demo_platforms[0]) - 1)
#define DEMO_PAYPAL_ALSO 8 /* percent */

/* splitmix64's finaliser: the platform of a domain comes from its name
 * index, not from the crawl's random stream, which stays as it was. */
static uint64_t mix(uint64_t z)
{
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	return z ^ (z >> 31);
}

/* JSON array items of one page's head, each with a leading comma. */
typedef struct signals {
	char hdr[256], metas[256], scripts[512], links[256];
} signals;

static void append(char *buf, size_t size, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static void append(char *buf, size_t size, const char *fmt, ...)
{
	size_t n = strlen(buf);
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(buf + n, size - n, fmt, ap);
	va_end(ap);
}

/* Adds one platform's signals for domain `name`. */
static void platform_signals(const struct demo_platform *dp,
			     const char *name, signals *sg)
{
	append(sg->hdr, sizeof(sg->hdr), "%s", dp->headers);
	if (dp->generator)
		append(sg->metas, sizeof(sg->metas),
		       ",{\"name\":\"generator\",\"content\":\"%s\"}",
		       dp->generator);
	if (dp->script)
		append(sg->scripts, sizeof(sg->scripts),
		       ",{\"path\":\"SCRIPT@/src\",\"url\":\"%s%s%s\"}",
		       dp->script[0] == '/' ? "https://www." : "",
		       dp->script[0] == '/' ? name : "", dp->script);
	if (dp->preload)
		append(sg->links, sizeof(sg->links),
		       ",{\"path\":\"LINK@/href\",\"rel\":\"preload\","
		       "\"url\":\"%s\"}", dp->preload);
}

/* The WAT signals of page p of domain number i, named `name`: the extra
 * members of Headers into `hdr`, those of Head into `head`. */
static void page_signals(uint32_t i, const char *name, uint32_t p,
			 char *hdr, size_t hlen, char *head, size_t len)
{
	uint64_t h = mix(i + 0x5eedULL);
	unsigned pm = (unsigned)(h % 1000), sum = 0;
	signals sg = { "", "", "", "" };
	size_t k;

	hdr[0] = head[0] = '\0';
	for (k = 0; k < DEMO_PAYPAL + 1; k++) {
		sum += demo_platforms[k].share;
		if (pm < sum)
			break;
	}
	if (k > DEMO_PAYPAL)
		return;
	platform_signals(&demo_platforms[k], name, &sg);
	/* a shop's checkout button, on its first page only */
	if (k != DEMO_PAYPAL && p == 0 && (h >> 32) % 100 < DEMO_PAYPAL_ALSO)
		platform_signals(&demo_platforms[DEMO_PAYPAL], name, &sg);
	snprintf(hdr, hlen, "%s", sg.hdr);
	if (sg.metas[0])
		append(head, len, ",\"Metas\":[%s]", sg.metas + 1);
	if (sg.scripts[0])
		append(head, len, ",\"Scripts\":[%s]", sg.scripts + 1);
	if (sg.links[0])
		append(head, len, ",\"Link\":[%s]", sg.links + 1);
}

/* Starts the metadata record of page p of domain number i, `name`, in
 * `body`: sets its URI and capture date (in the crawl's two months). */
static int wat_page_begin(graph__buf *body, uint32_t i, const char *name,
			  uint32_t p, char uri[160], char date[32], rng *r)
{
	char line[3072], hdr[256], head[1024];
	int y;
	unsigned mo, da;

	snprintf(uri, 160, "https://www.%s/page/%u", name, p);
	page_signals(i, name, p, hdr, sizeof(hdr), head, sizeof(head));
	graph__civil_from_days(19860 + (int32_t)(next(r) % 60), &y, &mo, &da);
	snprintf(date, 32, "%04d-%02u-%02uT%02u:%02u:00Z", y, mo, da,
		 (unsigned)(next(r) % 24), (unsigned)(next(r) % 60));
	body->len = 0;
	snprintf(line, sizeof(line),
		 "{\"Envelope\":{\"WARC-Header-Metadata\":{"
		 "\"WARC-Type\":\"response\",\"WARC-Target-URI\":"
		 "\"%s\",\"WARC-Date\":\"%s\"},\"Payload-Metadata\":"
		 "{\"HTTP-Response-Metadata\":{\"Response-Message\":"
		 "{\"Status\":\"200\"},\"Headers\":{\"Content-Type\":"
		 "\"text/html; charset=utf-8\"%s},\"HTML-Metadata\":"
		 "{\"Head\":{\"Title\":\"%s\"%s},\"Links\":["
		 "{\"path\":\"A@/href\",\"url\":\"/about\",\"text\":"
		 "\"About\"}",
		 uri, date, hdr, name, head);
	return graph__buf_put(body, line, strlen(line));
}

/* Appends link number k of the page, to domain `target`: anchors branded,
 * generic, naked or partial, some images and nofollows. */
static int wat_link(graph__buf *body, const char *target, uint32_t k, rng *r)
{
	uint32_t kind = (uint32_t)(next(r) % 10);
	char anchor[96], line[1024];
	size_t ll = strcspn(target, ".");

	if (kind < 3)
		snprintf(anchor, sizeof(anchor), "%.*s", (int)ll, target);
	else if (kind < 5)
		snprintf(anchor, sizeof(anchor), "%s", generic[next(r) % 4]);
	else if (kind < 6)
		snprintf(anchor, sizeof(anchor), "https://%s/", target);
	else
		snprintf(anchor, sizeof(anchor), "best %s tips",
			 w2[next(r) % 20]);
	if (kind == 9)
		snprintf(line, sizeof(line),
			 ",{\"path\":\"IMG@/src\",\"url\":"
			 "\"https://cdn.%s/img/%u.png\",\"alt\":\"%s\"}",
			 target, k, anchor);
	else
		snprintf(line, sizeof(line),
			 ",{\"path\":\"A@/href\",\"url\":"
			 "\"https://%s%s/%s?a=1&amp;b=%u\",\"text\":\"%s\"%s}",
			 kind % 2 ? "www." : "", target, k % 3 ? "post" : "",
			 k % 5, anchor,
			 kind == 7 ? ",\"rel\":\"nofollow\"" : "");
	return graph__buf_put(body, line, strlen(line));
}

static int wat_page_end(graph__buf *body, const char *path, const char *uri,
			const char *date)
{
	int rc = graph__buf_put(body, "]}}}}}", 7);

	return rc ? rc : warc_member(path, "metadata", uri, date, body->p);
}

static int write_wat(demo *g, const char *dir, seo_arena *a, graph_input *in,
		     size_t *n, rng *r)
{
	const char *path;
	graph__buf body = { 0 };
	int rc = wat_create(dir, "demo.warc.wat.gz", a, in, n, &path);

	for (uint32_t i = 0; !rc && i < g->n; i++) {
		dd *d = &g->d[i];
		uint32_t pages = d->nout > 0 ? 1 + d->nout / 8 : 0;

		if (pages > 4)
			pages = 4;
		for (uint32_t p = 0; !rc && p < pages; p++) {
			char uri[160], date[32];

			rc = wat_page_begin(&body, i, d->name, p, uri, date, r);
			for (uint32_t k = p; !rc && k < d->nout; k += pages)
				rc = wat_link(&body, g->d[d->out[k]].name, k, r);
			if (!rc)
				rc = wat_page_end(&body, path, uri, date);
		}
	}
	free(body.p);
	return rc;
}

static int write_cdx(demo *g, const char *dir, seo_arena *a, graph_input *in,
		     size_t *n, rng *r)
{
	char *path = seo_arena_printf(a, "%s/demo.cdxj.gz", dir);
	gzFile gz;
	int rc = 0;

	if (!path)
		return SEO_ENOMEM;
	gz = gzopen(path, "wb");
	if (!gz)
		return SEO_EIO;
	in[*n].kind = GRAPH_IN_CDX;
	in[*n].path = path;
	(*n)++;
	for (uint32_t p = 0; p < g->n / 5 && !rc; p++) {
		dd *d = &g->d[g->by_pop[p]];
		uint32_t urls = 2 + (uint32_t)(next(r) % 12);

		for (uint32_t u = 0; u < urls && !rc; u++) {
			uint32_t caps = 1 + (uint32_t)(next(r) % 3);

			for (uint32_t c = 0; c < caps; c++) {
				uint32_t roll = (uint32_t)(next(r) % 20);
				const char *status = roll < 16 ? "200" :
						     roll < 18 ? "301" :
						     roll < 19 ? "404" : "500";
				int y;
				unsigned mo, da;

				graph__civil_from_days(
					19800 + (int32_t)(next(r) % 120), &y,
					&mo, &da);
				if (gzprintf(gz,
					     "%s)/p/%u %04d%02u%02u%02u%02u%02u "
					     "{\"url\": \"https://%s/p/%u\", "
					     "\"mime\": \"text/html\", \"status\": "
					     "\"%s\", \"digest\": \"DEMO\", "
					     "\"length\": \"1000\"}\n",
					     d->rev, u, y, mo, da,
					     (unsigned)(next(r) % 24),
					     (unsigned)(next(r) % 60),
					     (unsigned)(next(r) % 60), d->name, u,
					     status) <= 0) {
					rc = SEO_EIO;
					break;
				}
			}
		}
	}
	if (gzclose(gz) != Z_OK)
		rc = SEO_EIO;
	return rc;
}

int graph_demo_write(const char *dir, unsigned scale, seo_arena *a,
		     graph_input *inputs, size_t *n_inputs)
{
	demo g = { 0 };
	rng r = { 20240601 };
	int rc;

	*n_inputs = 0;
	if (scale == 0)
		scale = 1;
	if (mkdir(dir, 0755) != 0 && errno != EEXIST) {
		log_error("cannot create \"%s\": %s", dir, strerror(errno));
		return SEO_EIO;
	}
	rc = make_graph(&g, scale, &r);
	if (!rc)
		rc = write_webgraph(&g, dir, a, inputs, n_inputs, &r);
	if (!rc)
		rc = write_wat(&g, dir, a, inputs, n_inputs, &r);
	if (!rc)
		rc = write_cdx(&g, dir, a, inputs, n_inputs, &r);
	free_graph(&g);
	return rc;
}

/* ---- a synthetic crawl of any size (the bench's) ---- */

/* Vose's alias table: draws from a discrete distribution in O(1). */
typedef struct alias {
	float *prob;
	uint32_t *other;
	uint32_t n;
} alias;

static void alias_free(alias *t)
{
	free(t->prob);
	free(t->other);
}

/* Builds the table for weights w[0..n) (not all 0). */
static int alias_build(alias *t, const float *w, uint32_t n)
{
	uint32_t *small = malloc(n * sizeof(uint32_t));
	uint32_t *large = malloc(n * sizeof(uint32_t));
	uint32_t ns = 0, nl = 0;
	double sum = 0;
	int rc = 0;

	t->n = n;
	t->prob = malloc(n * sizeof(float));
	t->other = malloc(n * sizeof(uint32_t));
	if (!small || !large || !t->prob || !t->other) {
		rc = SEO_ENOMEM;
		goto out;
	}
	for (uint32_t i = 0; i < n; i++)
		sum += w[i];
	if (sum <= 0) {
		rc = SEO_EINVAL;
		goto out;
	}
	for (uint32_t i = 0; i < n; i++) {
		t->prob[i] = (float)(w[i] * n / sum);
		t->other[i] = i;
		if (t->prob[i] < 1.0f)
			small[ns++] = i;
		else
			large[nl++] = i;
	}
	while (ns && nl) {
		uint32_t s = small[--ns], l = large[nl - 1];

		t->other[s] = l;
		t->prob[l] -= 1.0f - t->prob[s];
		if (t->prob[l] < 1.0f) {
			nl--;
			small[ns++] = l;
		}
	}
	/* what is left is 1 up to rounding */
	while (nl)
		t->prob[large[--nl]] = 1.0f;
	while (ns)
		t->prob[small[--ns]] = 1.0f;
out:
	free(small);
	free(large);
	return rc;
}

static uint32_t alias_draw(const alias *t, rng *r)
{
	uint64_t x = next(r);
	uint32_t i = (uint32_t)(((x >> 32) * t->n) >> 32);

	return (float)(x & 0xffffffffu) / 4294967296.0f < t->prob[i] ?
		       i : t->other[i];
}

typedef struct synth {
	uint32_t n;
	char *blob;        /* reversed names, NUL-terminated */
	size_t *off;       /* name index -> offset in blob */
	uint32_t *by_vid;  /* vertex id -> name index */
	uint32_t *want;    /* out-degree asked for, by vertex id */
	uint32_t *indeg;   /* by vertex id */
	float *w;          /* in-link weight, by vertex id */
	uint64_t owed;     /* edges asked for beyond the out-degrees (those cut
			    * at n / 4, rounding): owed by other vertices */
} synth;

static int cmp_synth_rev(const void *a, const void *b, void *ctx)
{
	const synth *s = ctx;

	return strcmp(s->blob + s->off[*(const uint32_t *)a],
		      s->blob + s->off[*(const uint32_t *)b]);
}

static int cmp_synth_indeg(const void *a, const void *b, void *ctx)
{
	const uint32_t *deg = ctx;
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;

	if (deg[x] != deg[y])
		return deg[x] > deg[y] ? -1 : 1;
	return x < y ? -1 : x > y;
}

static const char *synth_rev(const synth *s, uint32_t vid)
{
	return s->blob + s->off[s->by_vid[vid]];
}

/* Names in vertex-id order (the reversed names sorted, as Common Crawl
 * numbers them), link weights and out-degrees unrelated to the names. */
static int synth_make(synth *s, uint32_t n, uint64_t n_edges, rng *r)
{
	size_t len = 0;
	double sum = 0, carry = 0, scale;
	uint64_t drawn = 0;
	char name[64];

	s->n = n;
	s->off = malloc(n * sizeof(size_t));
	s->blob = malloc((size_t)n * 64);
	s->by_vid = malloc(n * sizeof(uint32_t));
	s->want = malloc(n * sizeof(uint32_t));
	s->indeg = calloc(n, sizeof(uint32_t));
	s->w = malloc(n * sizeof(float));
	if (!s->off || !s->blob || !s->by_vid || !s->want || !s->indeg || !s->w)
		return SEO_ENOMEM;
	for (uint32_t i = 0; i < n; i++) {
		size_t l;

		demo_name(i, name, sizeof(name));
		l = strlen(name);
		s->off[i] = len;
		graph__reverse_labels(name, l, s->blob + len);
		len += l + 1;
		s->by_vid[i] = i;
	}
	qsort_r(s->by_vid, n, sizeof(uint32_t), cmp_synth_rev, s);
	/*
	 * In-links: 40 % of the domains are never linked to, the others get
	 * a Pareto(1.1) weight, which gives the in-degree tail of web graphs
	 * (exponent about 2.1). Out-degrees: a third link nowhere, the rest
	 * Pareto(1.67), scaled to n_edges draws in all and capped at n / 4.
	 */
	for (uint32_t v = 0; v < n; v++) {
		double u = unif(r), x = unif(r);
		double y = unif(r), z = unif(r);

		s->w[v] = u < 0.4 ? 0.0f : (float)pow(1.0 - x, -1.0 / 1.1);
		/* the out weight waits in indeg, zeroed below */
		s->indeg[v] = y < 1.0 / 3 ? 0 :
			(uint32_t)fmin(1000.0 * pow(1.0 - z, -0.6), 4e9);
		sum += s->indeg[v];
	}
	scale = sum > 0 ? (double)n_edges / sum : 0;
	for (uint32_t v = 0; v < n; v++) {
		double d = s->indeg[v] * scale + carry;
		uint32_t k = (uint32_t)d;

		carry = d - k;
		s->want[v] = k < n / 4 ? k : n / 4;
		s->indeg[v] = 0;
		drawn += s->want[v];
	}
	s->owed = n_edges > drawn ? n_edges - drawn : 0;
	return 0;
}

static void synth_free(synth *s)
{
	free(s->off);
	free(s->blob);
	free(s->by_vid);
	free(s->want);
	free(s->indeg);
	free(s->w);
}

/* Every 16th domain with out-links gets one WAT page linking to up to
 * 32 of its targets, spread over the list: the URL-level links. */
static int synth_page(const synth *s, uint32_t v, const uint32_t *out,
		      uint32_t m, const char *wat, graph__buf *body, rng *r)
{
	char name[64], target[64], uri[160], date[32];
	uint32_t step = m / 32 + 1;
	int rc;

	if (m == 0 || next(r) % 16 != 0)
		return 0;
	demo_name(s->by_vid[v], name, sizeof(name));
	rc = wat_page_begin(body, s->by_vid[v], name, 0, uri, date, r);
	for (uint32_t k = 0; !rc && k < m; k += step) {
		demo_name(s->by_vid[out[k]], target, sizeof(target));
		rc = wat_link(body, target, k, r);
	}
	return rc ? rc : wat_page_end(body, wat, uri, date);
}

/* Draws the targets of each vertex in turn (self-links and repeats
 * dropped, redrawn twice) and writes them, with some as URL-level links
 * to `wat`; counts in-degrees. What a vertex could not draw (repeats of
 * the heaviest targets) is owed by the next linking vertices, each taking
 * at most its own number again, so that the graph has the edges asked
 * for. */
static int synth_edges(synth *s, FILE *f, const char *wat, rng *r)
{
	graph__buf body = { 0 };
	alias t = { 0 };
	uint32_t *tmp = malloc(((size_t)s->n / 4 + 1) * sizeof(uint32_t));
	int rc = tmp ? alias_build(&t, s->w, s->n) : SEO_ENOMEM;
	uint64_t owed = s->owed;

	for (uint32_t v = 0; !rc && v < s->n; v++) {
		uint64_t more = owed < s->want[v] ? owed : s->want[v];
		uint32_t m = 0, goal = (uint32_t)(s->want[v] + more);

		if (goal > s->n / 4)
			goal = s->n / 4;
		for (int round = 0; round < 3 && m < goal; round++) {
			uint32_t k = m;

			/* bounded: v may be the only domain with weight */
			for (uint64_t tries = 4ull * goal; k < goal && tries > 0;
			     tries--) {
				uint32_t d = alias_draw(&t, r);

				if (d != v)
					tmp[k++] = d;
			}
			qsort(tmp, k, sizeof(uint32_t), cmp_u32);
			m = 0;
			for (uint32_t i = 0; i < k; i++)
				if (i == 0 || tmp[i] != tmp[i - 1])
					tmp[m++] = tmp[i];
		}
		owed += s->want[v];
		owed -= m < owed ? m : owed;
		for (uint32_t i = 0; i < m; i++) {
			s->indeg[tmp[i]]++;
			fprintf(f, "%u\t%u\n", v, tmp[i]);
		}
		rc = synth_page(s, v, tmp, m, wat, &body, r);
	}
	free(body.p);
	alias_free(&t);
	free(tmp);
	return rc;
}

static int synth_ranks(synth *s, FILE *f)
{
	uint32_t *order = malloc(s->n * sizeof(uint32_t));

	if (!order)
		return SEO_ENOMEM;
	for (uint32_t v = 0; v < s->n; v++)
		order[v] = v;
	qsort_r(order, s->n, sizeof(uint32_t), cmp_synth_indeg, s->indeg);
	fputs(RANKS_HEADER, f);
	for (uint32_t p = 0; p < s->n && s->indeg[order[p]] > 0; p++)
		rank_line(f, p, s->indeg[order[p]], s->n,
			  synth_rev(s, order[p]));
	free(order);
	return 0;
}

int graph_synth_write(const char *dir, uint32_t n_domains, uint64_t n_edges,
		      uint64_t seed, seo_arena *a, graph_input *inputs,
		      size_t *n_inputs)
{
	synth s = { 0 };
	rng r = { seed };
	const char *wat;
	FILE *f = NULL;
	int rc;

	*n_inputs = 0;
	if (n_domains < 2)
		return SEO_EINVAL;
	if (mkdir(dir, 0755) != 0 && errno != EEXIST) {
		log_error("cannot create \"%s\": %s", dir, strerror(errno));
		return SEO_EIO;
	}
	rc = synth_make(&s, n_domains, n_edges, &r);
	if (!rc)
		rc = wat_create(dir, "synth.warc.wat.gz", a, inputs, n_inputs,
				&wat);
	if (rc)
		goto out;
	f = create(dir, "domain-edges.txt", a, inputs, GRAPH_IN_EDGES, n_inputs);
	rc = f ? synth_edges(&s, f, wat, &r) : SEO_EIO;
	if (f && close_ok(f) && !rc)
		rc = SEO_EIO;
	if (rc)
		goto out;
	/* host counts follow the in-degree loosely, as in the demo */
	f = create(dir, "domain-vertices.txt", a, inputs, GRAPH_IN_VERTICES,
		   n_inputs);
	if (!f) {
		rc = SEO_EIO;
		goto out;
	}
	for (uint32_t v = 0; v < s.n; v++)
		fprintf(f, "%u\t%s\t%u\n", v, synth_rev(&s, v),
			1 + s.indeg[v] / 16 + (uint32_t)(next(&r) % 3));
	if ((rc = close_ok(f)))
		goto out;
	f = create(dir, "domain-ranks.txt", a, inputs, GRAPH_IN_RANKS, n_inputs);
	rc = f ? synth_ranks(&s, f) : SEO_EIO;
	if (f && close_ok(f) && !rc)
		rc = SEO_EIO;
out:
	synth_free(&s);
	return rc;
}

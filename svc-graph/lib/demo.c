/*
 * demo.c: a deterministic synthetic crawl written in the public formats,
 * small enough to ingest in seconds. Degrees are skewed the way real
 * graphs are: a few domains collect most referrers, many get none.
 */
#include <errno.h>
#include <math.h>
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
		uint32_t a = i % 30, b = (i / 30) % 20, k = i / 600;
		dd *d = &g->d[i];

		if (k)
			snprintf(d->name, sizeof(d->name), "%s%s%u.%s", w1[a],
				 w2[b], k, tlds[(i * 7 + k) % 7]);
		else
			snprintf(d->name, sizeof(d->name), "%s%s.%s", w1[a],
				 w2[b], tlds[(i * 7) % 7]);
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
	fprintf(f, "#harmonicc_pos\t#harmonicc_val\t#pr_pos\t#pr_val\t"
		   "#host_rev\t#n_hosts\n");
	/* only domains with referrers are ranked, as in the real files */
	for (uint32_t p = 0; p < g->n && g->d[order[p]].indeg > 0; p++) {
		dd *d = &g->d[order[p]];

		fprintf(f, "%u\t%.6E\t%u\t%.12f\t%s\t%u\n", p + 1,
			1e5 * d->indeg, p + 1 + (p % 3 == 1) - (p % 3 == 2),
			(double)d->indeg / (10.0 * g->n), d->rev,
			1 + d->indeg / 4);
	}
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

static int write_wat(demo *g, const char *dir, seo_arena *a, graph_input *in,
		     size_t *n, rng *r)
{
	char *path = seo_arena_printf(a, "%s/demo.warc.wat.gz", dir);
	graph__buf body = { 0 };
	int rc = 0;

	if (!path)
		return SEO_ENOMEM;
	in[*n].kind = GRAPH_IN_WAT;
	in[*n].path = path;
	(*n)++;
	rc = warc_member(path, "warcinfo", NULL, "2024-06-30T00:00:00Z",
			 "{\"software\": \"seo-ingest demo\"}");
	for (uint32_t i = 0; !rc && i < g->n; i++) {
		dd *d = &g->d[i];
		uint32_t pages = d->nout > 0 ? 1 + d->nout / 8 : 0;

		if (pages > 4)
			pages = 4;
		for (uint32_t p = 0; !rc && p < pages; p++) {
			char uri[160], date[32], line[1024];
			int y;
			unsigned mo, da;

			snprintf(uri, sizeof(uri), "https://www.%s/page/%u",
				 d->name, p);
			graph__civil_from_days(19860 + (int32_t)(next(r) % 60),
					       &y, &mo, &da);
			snprintf(date, sizeof(date),
				 "%04d-%02u-%02uT%02u:%02u:00Z", y, mo, da,
				 (unsigned)(next(r) % 24),
				 (unsigned)(next(r) % 60));
			body.len = 0;
			snprintf(line, sizeof(line),
				 "{\"Envelope\":{\"WARC-Header-Metadata\":{"
				 "\"WARC-Type\":\"response\",\"WARC-Target-URI\":"
				 "\"%s\",\"WARC-Date\":\"%s\"},\"Payload-Metadata\":"
				 "{\"HTTP-Response-Metadata\":{\"Response-Message\":"
				 "{\"Status\":\"200\"},\"Headers\":{\"Content-Type\":"
				 "\"text/html; charset=utf-8\"},\"HTML-Metadata\":"
				 "{\"Head\":{\"Title\":\"%s\"},\"Links\":["
				 "{\"path\":\"A@/href\",\"url\":\"/about\",\"text\":"
				 "\"About\"}",
				 uri, date, d->name);
			rc = graph__buf_put(&body, line, strlen(line));
			for (uint32_t k = p; !rc && k < d->nout; k += pages) {
				dd *t = &g->d[d->out[k]];
				uint32_t kind = (uint32_t)(next(r) % 10);
				char anchor[96];
				size_t ll = strcspn(t->name, ".");

				if (kind < 3)
					snprintf(anchor, sizeof(anchor), "%.*s",
						 (int)ll, t->name);
				else if (kind < 5)
					snprintf(anchor, sizeof(anchor), "%s",
						 generic[next(r) % 4]);
				else if (kind < 6)
					snprintf(anchor, sizeof(anchor),
						 "https://%s/", t->name);
				else
					snprintf(anchor, sizeof(anchor),
						 "best %s tips", w2[next(r) % 20]);
				if (kind == 9)
					snprintf(line, sizeof(line),
						 ",{\"path\":\"IMG@/src\",\"url\":"
						 "\"https://cdn.%s/img/%u.png\","
						 "\"alt\":\"%s\"}",
						 t->name, k, anchor);
				else
					snprintf(line, sizeof(line),
						 ",{\"path\":\"A@/href\",\"url\":"
						 "\"https://%s%s/%s?a=1&amp;b=%u\","
						 "\"text\":\"%s\"%s}",
						 kind % 2 ? "www." : "", t->name,
						 k % 3 ? "post" : "", k % 5, anchor,
						 kind == 7 ? ",\"rel\":\"nofollow\"" :
							     "");
				rc = graph__buf_put(&body, line, strlen(line));
			}
			if (!rc)
				rc = graph__buf_put(&body, "]}}}}}", 7);
			if (!rc)
				rc = warc_member(path, "metadata", uri, date,
						 body.p);
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

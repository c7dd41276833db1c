/*
 * demo.c: the demo crawl, written in the public formats, small enough to
 * ingest in seconds. Degrees are skewed the way real graphs are: a few
 * domains collect most referrers, many get none.
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

#include "gen.h"

static const char *const registrars[] = {
	"Example Registrar, Inc.", "NameCheap Demo", "Gandi Demo SAS",
	"DENIC Demo eG", "Nominet Demo",
};
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
		dd *d = &g->d[i];

		crawlgen__demo_name(i, d->name, sizeof(d->name));
		graph_reverse_labels(d->name, strlen(d->name), d->rev);
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

static int write_webgraph(demo *g, const char *dir, seo_arena *a,
			  graph_input *in, size_t *n, rng *r)
{
	uint32_t *order;
	FILE *f;
	int rc;

	f = crawlgen__create(dir, "domain-vertices.txt", a, in,
			     GRAPH_IN_VERTICES, n);
	if (!f)
		return SEO_EIO;
	for (uint32_t v = 0; v < g->n; v++) {
		dd *d = &g->d[g->by_vid[v]];

		fprintf(f, "%u\t%s\t%u\n", v, d->rev,
			1 + (uint32_t)(d->indeg / 4) + (uint32_t)(next(r) % 3));
	}
	if ((rc = crawlgen__close_ok(f)))
		return rc;
	f = crawlgen__create(dir, "domain-edges.txt", a, in, GRAPH_IN_EDGES, n);
	if (!f)
		return SEO_EIO;
	for (uint32_t v = 0; v < g->n; v++) {
		dd *d = &g->d[g->by_vid[v]];

		for (uint32_t k = 0; k < d->nout; k++)
			fprintf(f, "%u\t%u\n", v, g->d[d->out[k]].vid);
	}
	if ((rc = crawlgen__close_ok(f)))
		return rc;
	order = malloc(g->n * sizeof(uint32_t));
	if (!order)
		return SEO_ENOMEM;
	for (uint32_t i = 0; i < g->n; i++)
		order[i] = i;
	qsort_r(order, g->n, sizeof(uint32_t), cmp_indeg, g->d);
	f = crawlgen__create(dir, "domain-ranks.txt", a, in, GRAPH_IN_RANKS, n);
	if (!f) {
		free(order);
		return SEO_EIO;
	}
	fputs(RANKS_HEADER, f);
	/* only domains with referrers are ranked, as in the real files */
	for (uint32_t p = 0; p < g->n && g->d[order[p]].indeg > 0; p++)
		crawlgen__rank_line(f, p, g->d[order[p]].indeg, g->n,
				    g->d[order[p]].rev);
	rc = crawlgen__close_ok(f);
	if (!rc) {
		f = crawlgen__create(dir, "tranco.csv", a, in, GRAPH_IN_TRANCO,
				     n);
		if (!f)
			rc = SEO_EIO;
	}
	if (!rc) {
		/* the real list has CRLF line ends */
		for (uint32_t p = 0; p < g->n * 6 / 10; p++)
			fprintf(f, "%u,%s\r\n", p + 1, g->d[order[p]].name);
		rc = crawlgen__close_ok(f);
	}
	free(order);
	if (rc)
		return rc;
	f = crawlgen__create(dir, "whois.csv", a, in, GRAPH_IN_WHOIS, n);
	if (!f)
		return SEO_EIO;
	fprintf(f, "domain,registered_at,registrar\n");
	for (uint32_t i = 0; i < g->n; i++) {
		int y;
		unsigned m, d;

		if (next(r) % 10 >= 7)
			continue;
		/* 1995-01-01 .. 2024-06-01, a few inside the crawl's year */
		graph_civil_from_days(9131 + (int32_t)(next(r) % 10744), &y,
				      &m, &d);
		fprintf(f, "%s,%04d-%02u-%02u,%s\n", g->d[i].name, y, m, d,
			registrars[next(r) % 5]);
	}
	return crawlgen__close_ok(f);
}
static int write_wat(demo *g, const char *dir, seo_arena *a, graph_input *in,
		     size_t *n, rng *r)
{
	const char *path;
	crawlgen__body body = { 0 };
	int rc = crawlgen__wat_create(dir, "demo.warc.wat.gz", a, in, n, &path);

	for (uint32_t i = 0; !rc && i < g->n; i++) {
		dd *d = &g->d[i];
		uint32_t pages = d->nout > 0 ? 1 + d->nout / 8 : 0;

		if (pages > 4)
			pages = 4;
		for (uint32_t p = 0; !rc && p < pages; p++) {
			char uri[160], date[32];

			rc = crawlgen__wat_page_begin(&body, i, d->name, p, uri,
						      date, r);
			for (uint32_t k = p; !rc && k < d->nout; k += pages)
				rc = crawlgen__wat_link(&body,
							g->d[d->out[k]].name, k, r);
			if (!rc)
				rc = crawlgen__wat_page_end(&body, path, uri,
							    date);
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

				graph_civil_from_days(
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

int crawlgen_demo_write(const char *dir, unsigned scale, seo_arena *a,
			graph_input *inputs, size_t *n_inputs)
{
	demo g = { 0 };
	rng r = { 20240601 };
	int rc;

	*n_inputs = 0;
	if (scale == 0)
		scale = 1;
	if (mkdir(dir, 0755) != 0 && errno != EEXIST) {
		log_error("cannot crawlgen__create \"%s\": %s", dir,
			  strerror(errno));
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

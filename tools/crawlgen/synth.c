/*
 * synth.c: a deterministic synthetic crawl of any size (the bench's and
 * the memory-budget test's): a domain graph with web-like skew and the WAT
 * links of a share of its domains.
 */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include <seo/errors.h>
#include <seo/log.h>

#include "gen.h"

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

		crawlgen__demo_name(i, name, sizeof(name));
		l = strlen(name);
		s->off[i] = len;
		graph_reverse_labels(name, l, s->blob + len);
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
		      uint32_t m, const char *wat, crawlgen__body *body, rng *r)
{
	char name[64], target[64], uri[160], date[32];
	uint32_t step = m / 32 + 1;
	int rc;

	if (m == 0 || next(r) % 16 != 0)
		return 0;
	crawlgen__demo_name(s->by_vid[v], name, sizeof(name));
	rc = crawlgen__wat_page_begin(body, s->by_vid[v], name, 0, uri, date,
				      r);
	for (uint32_t k = 0; !rc && k < m; k += step) {
		crawlgen__demo_name(s->by_vid[out[k]], target, sizeof(target));
		rc = crawlgen__wat_link(body, target, k, r);
	}
	return rc ? rc : crawlgen__wat_page_end(body, wat, uri, date);
}

/* Draws the targets of each vertex in turn (self-links and repeats
 * dropped, redrawn twice) and writes them, with some as URL-level links
 * to `wat`; counts in-degrees. What a vertex could not draw (repeats of
 * the heaviest targets) is owed by the next linking vertices, each taking
 * at most its own number again, so that the graph has the edges asked
 * for. */
static int synth_edges(synth *s, FILE *f, const char *wat, rng *r)
{
	crawlgen__body body = { 0 };
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
		crawlgen__rank_line(f, p, s->indeg[order[p]], s->n,
				    synth_rev(s, order[p]));
	free(order);
	return 0;
}

int crawlgen_synth_write(const char *dir, uint32_t n_domains,
			 uint64_t n_edges, uint64_t seed, seo_arena *a,
			 graph_input *inputs, size_t *n_inputs)
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
		log_error("cannot crawlgen__create \"%s\": %s", dir,
			  strerror(errno));
		return SEO_EIO;
	}
	rc = synth_make(&s, n_domains, n_edges, &r);
	if (!rc)
		rc = crawlgen__wat_create(dir, "synth.warc.wat.gz", a, inputs,
					  n_inputs,
					  &wat);
	if (rc)
		goto out;
	f = crawlgen__create(dir, "domain-edges.txt", a, inputs, GRAPH_IN_EDGES,
			     n_inputs);
	rc = f ? synth_edges(&s, f, wat, &r) : SEO_EIO;
	if (f && crawlgen__close_ok(f) && !rc)
		rc = SEO_EIO;
	if (rc)
		goto out;
	/* host counts follow the in-degree loosely, as in the demo */
	f = crawlgen__create(dir, "domain-vertices.txt", a, inputs,
			     GRAPH_IN_VERTICES,
			     n_inputs);
	if (!f) {
		rc = SEO_EIO;
		goto out;
	}
	for (uint32_t v = 0; v < s.n; v++)
		fprintf(f, "%u\t%s\t%u\n", v, synth_rev(&s, v),
			1 + s.indeg[v] / 16 + (uint32_t)(next(&r) % 3));
	if ((rc = crawlgen__close_ok(f)))
		goto out;
	f = crawlgen__create(dir, "domain-ranks.txt", a, inputs, GRAPH_IN_RANKS,
			     n_inputs);
	rc = f ? synth_ranks(&s, f) : SEO_EIO;
	if (f && crawlgen__close_ok(f) && !rc)
		rc = SEO_EIO;
out:
	synth_free(&s);
	return rc;
}

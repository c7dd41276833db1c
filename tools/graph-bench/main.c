/*
 * graph-bench: the C half of bench/graph.sh (docs/benchmarks.md).
 *
 *   graph-bench synth --out DIR --domains N --edges E [--seed S]
 *   graph-bench query --index DIR [--pg URL] [--reps N] [--budget-ms B]
 *               LABEL=DOMAIN...
 *
 * `synth` writes a synthetic crawl (graph_synth_write). `query` times the
 * single-domain queries on the library, and with --pg the same questions
 * as prepared SQL statements on the bench's tables, for each domain; it
 * prints one tab-separated line per (domain, query): label, query, the
 * library's total (rows of the whole result; referring domains for
 * domain-authority and domain-rank), our p50 and p99, PostgreSQL's p50 and p99 (microseconds; "-" when that side
 * has no equivalent).
 */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <libpq-fe.h>

#include <seo/arena.h>
#include <seo/errors.h>

#include "graph.h"

#define MAX_REPS 100000

static double now_us(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec * 1e6 + (double)ts.tv_nsec / 1e3;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

/* The library's queries, each as one call with the API's first page. */
typedef enum query {
	Q_REFDOMAINS,
	Q_BACKLINKS,
	Q_ANCHORS,
	Q_TOPPAGES,
	Q_AUTHORITY,
	Q_RANK,
	Q_OUTBOUND,
	Q_SIMILAR,
	Q_COUNT,
} query;

static const char *const qnames[Q_COUNT] = {
	"referring-domains", "backlinks", "anchor-text", "top-pages",
	"domain-authority", "domain-rank", "outbound-links", "similar-domains",
};

/*
 * The same questions on the tables of bench/graph.sh: domains(id, rev,
 * n_hosts), edges(src, dst) with btree (dst, src) and (src, dst), and
 * counts(id, rd, outd, hosts_sum). NULL: no URL-level tables, so no
 * equivalent.
 */
static const char *const qsql[Q_COUNT] = {
	[Q_REFDOMAINS] =
		"SELECT d.rev, c.rd FROM domains t JOIN edges e ON e.dst = t.id"
		" JOIN counts c ON c.id = e.src JOIN domains d ON d.id = e.src"
		" WHERE t.rev = $1 ORDER BY c.rd DESC, e.src LIMIT 100",
	[Q_AUTHORITY] =
		"SELECT c.rd, c.hosts_sum, d.n_hosts FROM domains d"
		" JOIN counts c ON c.id = d.id WHERE d.rev = $1",
	[Q_RANK] =
		"SELECT c.rd, c.hosts_sum::float8 / greatest(c.rd, 1)"
		" FROM domains d JOIN counts c ON c.id = d.id WHERE d.rev = $1",
	[Q_SIMILAR] =
		"SELECT e2.dst, count(*) FROM domains t"
		" JOIN edges e1 ON e1.dst = t.id JOIN edges e2 ON e2.src = e1.src"
		" WHERE t.rev = $1 AND e2.dst <> t.id GROUP BY e2.dst"
		" ORDER BY count(*) DESC, e2.dst LIMIT 100",
};

/* Runs query q; *total: the rows of the whole result, or the referring
 * domains for the single-object queries (a check that it did the work). */
static int run_library(const graph_index *ix, query q, const char *domain,
		       seo_arena *a, uint64_t *total)
{
	graph_page pg = { .limit = 100, .offset = 0 };
	size_t n;
	int rc;

	switch (q) {
	case Q_REFDOMAINS: {
		graph_refdomain_row *rows;

		return graph_referring_domains(ix, domain, &pg, a, &rows, &n,
					       total);
	}
	case Q_BACKLINKS: {
		graph_backlink_row *rows;

		return graph_backlinks(ix, domain, GRAPH_SORT_IMPORTANCE, NULL,
				       &pg, a, &rows, &n, total);
	}
	case Q_ANCHORS: {
		graph_anchor_row *rows;

		return graph_anchor_text(ix, domain, &pg, a, &rows, &n, total);
	}
	case Q_TOPPAGES: {
		graph_top_page_row *rows;

		return graph_top_pages(ix, domain, &pg, a, &rows, &n, total);
	}
	case Q_AUTHORITY: {
		graph_authority au;

		rc = graph_authority_get(ix, domain, a, &au);
		*total = au.referring_domains;
		return rc;
	}
	case Q_RANK: {
		graph_domain_rank dr;

		rc = graph_domain_rank_get(ix, domain, &dr);
		*total = dr.unique_domains;
		return rc;
	}
	case Q_OUTBOUND: {
		graph_outbound_row *rows;
		graph_outbound_summary sum;

		return graph_outbound_links(ix, domain, &pg, a, &rows, &n,
					    total, &sum);
	}
	case Q_SIMILAR: {
		graph_similar_row *rows;

		return graph_similar_domains(ix, domain, &pg, a, &rows, &n,
					     total);
	}
	case Q_COUNT:
		break;
	}
	return SEO_EINVAL;
}

/* One timed execution of a prepared statement; 0 or SEO_EIO. */
static int run_sql(PGconn *pg, query q, const char *rev)
{
	PGresult *res = PQexecPrepared(pg, qnames[q], 1, &rev, NULL, NULL, 0);
	int rc = PQresultStatus(res) == PGRES_TUPLES_OK ? 0 : SEO_EIO;

	if (rc)
		fprintf(stderr, "graph-bench: %s: %s", qnames[q],
			PQerrorMessage(pg));
	PQclear(res);
	return rc;
}

typedef struct timing {
	double p50, p99;
	uint64_t total; /* the library's; 0 for SQL */
} timing;

/*
 * Runs one query `reps` times after one untimed warm-up, or fewer when
 * `budget_ms` is spent (at least 3 timed runs); the percentiles are of the
 * runs made. `pg` NULL: the library.
 */
static int measure(const graph_index *ix, PGconn *pg, query q,
		   const char *domain, const char *rev, unsigned reps,
		   double budget_ms, double *samples, timing *out)
{
	unsigned done = 0;
	double spent = 0;
	int rc = 0;

	out->total = 0;

	for (unsigned i = 0; !rc && i <= reps; i++) {
		seo_arena *a = seo_arena_new(64 * 1024);
		double t0;

		if (!a)
			return SEO_ENOMEM;
		t0 = now_us();
		rc = pg ? run_sql(pg, q, rev) :
			  run_library(ix, q, domain, a, &out->total);
		t0 = now_us() - t0;
		seo_arena_free(a);
		if (i == 0)
			continue;
		samples[done++] = t0;
		spent += t0 / 1e3;
		if (done >= 3 && spent > budget_ms)
			break;
	}
	if (rc)
		return rc;
	qsort(samples, done, sizeof(double), cmp_double);
	out->p50 = samples[(done - 1) / 2];
	out->p99 = samples[(size_t)((done - 1) * 0.99 + 0.5)];
	return 0;
}

/* example.co.uk -> uk.co.example, as the bench's domains table holds it */
static void reverse_name(const char *name, char *out, size_t outlen)
{
	size_t len = strlen(name), o = 0;

	while (len > 0 && o + 1 < outlen) {
		const char *dot = memrchr(name, '.', len);
		size_t start = dot ? (size_t)(dot - name) + 1 : 0;
		size_t l = len - start;

		if (o && o + 1 < outlen)
			out[o++] = '.';
		if (o + l >= outlen)
			l = outlen - o - 1;
		memcpy(out + o, name + start, l);
		o += l;
		len = start ? start - 1 : 0;
	}
	out[o] = '\0';
}

static int prepare_all(PGconn *pg)
{
	for (int q = 0; q < Q_COUNT; q++) {
		PGresult *res;
		int ok;

		if (!qsql[q])
			continue;
		res = PQprepare(pg, qnames[q], qsql[q], 1, NULL);
		ok = PQresultStatus(res) == PGRES_COMMAND_OK;
		PQclear(res);
		if (!ok) {
			fprintf(stderr, "graph-bench: prepare %s: %s",
				qnames[q], PQerrorMessage(pg));
			return SEO_EIO;
		}
	}
	return 0;
}

static int cmd_query(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "index", required_argument, NULL, 'i' },
		{ "pg", required_argument, NULL, 'p' },
		{ "reps", required_argument, NULL, 'n' },
		{ "budget-ms", required_argument, NULL, 'b' },
		{ NULL, 0, NULL, 0 },
	};
	const char *dir = NULL, *url = NULL;
	unsigned reps = 200;
	double budget_ms = 5000, *samples = NULL;
	graph_index *ix = NULL;
	PGconn *pg = NULL;
	int c, rc = SEO_EINVAL;

	while ((c = getopt_long(argc, argv, "", longopts, NULL)) != -1) {
		switch (c) {
		case 'i': dir = optarg; break;
		case 'p': url = optarg; break;
		case 'n': reps = (unsigned)strtoul(optarg, NULL, 10); break;
		case 'b': budget_ms = strtod(optarg, NULL); break;
		default: goto out;
		}
	}
	if (!dir || optind >= argc || reps < 3 || reps > MAX_REPS) {
		fprintf(stderr, "usage: graph-bench query --index DIR [--pg URL]"
				" [--reps 3..%d] [--budget-ms B] LABEL=DOMAIN...\n",
			MAX_REPS);
		goto out;
	}
	samples = malloc((MAX_REPS + 1) * sizeof(double));
	if (!samples) {
		rc = SEO_ENOMEM;
		goto out;
	}
	if ((rc = graph_index_open(dir, &ix))) {
		fprintf(stderr, "graph-bench: cannot open the index %s: %s\n",
			dir, seo_strerror(rc));
		goto out;
	}
	if (url) {
		pg = PQconnectdb(url);
		if (PQstatus(pg) != CONNECTION_OK) {
			fprintf(stderr, "graph-bench: %s", PQerrorMessage(pg));
			rc = SEO_EIO;
			goto out;
		}
		if ((rc = prepare_all(pg)))
			goto out;
	}
	for (int i = optind; i < argc; i++) {
		const char *eq = strchr(argv[i], '=');
		char label[64], rev[GRAPH_DOMAIN_MAX + 1];

		if (!eq || (size_t)(eq - argv[i]) >= sizeof(label)) {
			fprintf(stderr, "graph-bench: expected LABEL=DOMAIN: %s\n",
				argv[i]);
			rc = SEO_EINVAL;
			goto out;
		}
		snprintf(label, sizeof(label), "%.*s", (int)(eq - argv[i]),
			 argv[i]);
		reverse_name(eq + 1, rev, sizeof(rev));
		for (int q = 0; q < Q_COUNT; q++) {
			timing ours, theirs;

			rc = measure(ix, NULL, (query)q, eq + 1, rev, reps,
				     budget_ms, samples, &ours);
			if (!rc && pg && qsql[q])
				rc = measure(ix, pg, (query)q, eq + 1, rev, reps,
					     budget_ms, samples, &theirs);
			if (rc)
				goto out;
			printf("%s\t%s\t%llu\t%.1f\t%.1f", label, qnames[q],
			       (unsigned long long)ours.total, ours.p50,
			       ours.p99);
			if (pg && qsql[q])
				printf("\t%.1f\t%.1f\n", theirs.p50, theirs.p99);
			else
				printf("\t-\t-\n");
			fflush(stdout);
		}
	}
out:
	PQfinish(pg);
	graph_index_close(ix);
	free(samples);
	return rc;
}

static int cmd_synth(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "out", required_argument, NULL, 'o' },
		{ "domains", required_argument, NULL, 'd' },
		{ "edges", required_argument, NULL, 'e' },
		{ "seed", required_argument, NULL, 's' },
		{ NULL, 0, NULL, 0 },
	};
	const char *dir = NULL;
	unsigned long long domains = 0, edges = 0, seed = 1;
	graph_input inputs[8];
	size_t n = 0;
	seo_arena *a = NULL;
	int c, rc = SEO_EINVAL;

	while ((c = getopt_long(argc, argv, "", longopts, NULL)) != -1) {
		switch (c) {
		case 'o': dir = optarg; break;
		case 'd': domains = strtoull(optarg, NULL, 10); break;
		case 'e': edges = strtoull(optarg, NULL, 10); break;
		case 's': seed = strtoull(optarg, NULL, 10); break;
		default: goto out;
		}
	}
	if (!dir || domains < 2 || domains > UINT32_MAX - 1 || optind < argc) {
		fprintf(stderr, "usage: graph-bench synth --out DIR --domains N"
				" --edges E [--seed S]\n");
		goto out;
	}
	a = seo_arena_new(4096);
	if (!a) {
		rc = SEO_ENOMEM;
		goto out;
	}
	rc = graph_synth_write(dir, (uint32_t)domains, edges, seed, a, inputs,
			       &n);
	if (rc)
		fprintf(stderr, "graph-bench: synth: %s\n", seo_strerror(rc));
out:
	seo_arena_free(a);
	return rc;
}

int main(int argc, char **argv)
{
	int rc = SEO_EINVAL;

	if (argc >= 2 && strcmp(argv[1], "synth") == 0)
		rc = cmd_synth(argc - 1, argv + 1);
	else if (argc >= 2 && strcmp(argv[1], "query") == 0)
		rc = cmd_query(argc - 1, argv + 1);
	else
		fprintf(stderr, "usage: graph-bench synth|query ...\n");
	return rc ? 1 : 0;
}

/*
 * graph-bench: the C half of bench/graph.sh (docs/benchmarks.md).
 *
 *   graph-bench synth --out DIR --domains N --edges E [--seed S]
 *   graph-bench query --index DIR [--pg URL] [--reps N] [--budget-ms B]
 *               LABEL=DOMAIN...
 *   graph-bench grpc --addr HOST:PORT [--reps N] [--budget-ms B] LABEL=DOMAIN...
 *   graph-bench http --addr HOST:PORT --key KEY [--reps N] [--budget-ms B]
 *               LABEL=DOMAIN...
 *
 * `synth` writes a synthetic crawl (graph_synth_write). `query` times the
 * single-domain queries on the library, and with --pg the same questions
 * as prepared SQL statements on the bench's tables, for each domain; it
 * prints one tab-separated line per (domain, query): label, query, the
 * library's total (rows of the whole result; referring domains for
 * domain-authority and domain-rank), our p50 and p99, PostgreSQL's p50 and
 * p99 (microseconds; "-" when that side has no equivalent).
 *
 * `grpc` times the same queries as calls to svc-graph, one after the other
 * on one HTTP/2 connection; `http` as GET requests to the gateway with an
 * API key, one after the other on one HTTP/1.1 keep-alive connection. Both
 * print label, query, p50 and p99 (microseconds), in the order of `query`.
 *
 * svc-graph keeps similar-domains answers in its result cache: its
 * "similar-domains" row is timed with `cache-control: no-cache` (computed
 * every time), and a "similar-domains, cached" row times the cache's
 * answer at the service and through the gateway. A side without a figure
 * for a row prints "-".
 */
#include <getopt.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include <event2/event.h>
#include <libpq-fe.h>

#include <seo/arena.h>
#include <seo/errors.h>
#include <seo/rpc.h>

#include "graph.h"
#include "seo/graph/v1/graph.pb-c.h"

#define MAX_REPS 100000
#define CALL_TIMEOUT_MS 60000

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
	Q_SIMILAR_CACHED,
	Q_COUNT,
} query;

static const char *const qnames[Q_COUNT] = {
	"referring-domains", "backlinks", "anchor-text", "top-pages",
	"domain-authority", "domain-rank", "outbound-links", "similar-domains",
	"similar-domains, cached",
};

/* The gateway route of each query. */
static const char *const qroutes[Q_COUNT] = {
	"referring-domains", "backlinks", "anchor-text", "top-pages",
	"domain-authority", "domain-rank", "outbound-links", "similar-domains",
	"similar-domains",
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

/* A domain measured: its label, its name and its reversed name (the key
 * of the bench's domains table). */
typedef struct target {
	char label[64];
	const char *domain;
	char rev[GRAPH_DOMAIN_MAX + 1];
} target;

/*
 * A side answering the queries: one run of query q for t, with `a` for
 * its allocations. *total: the rows of the whole result, or the referring
 * domains for the single-object queries (a check that it did the work);
 * set by the library only.
 */
typedef struct side {
	int (*run)(void *ctx, query q, const target *t, seo_arena *a,
		   uint64_t *total);
	void *ctx;
	query skip; /* the row this side has no figure for; Q_COUNT: none */
} side;

static int run_library(void *ctx, query q, const target *t, seo_arena *a,
		       uint64_t *total)
{
	const graph_index *ix = ctx;
	const char *domain = t->domain;
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
	case Q_SIMILAR_CACHED: /* the library has no cache */
	case Q_COUNT:
		break;
	}
	return SEO_EINVAL;
}

/* A prepared statement (prepare_all); 0 or SEO_EIO. */
static int run_sql(void *ctx, query q, const target *t, seo_arena *a,
		   uint64_t *total)
{
	PGconn *pg = ctx;
	const char *rev = t->rev;
	PGresult *res = PQexecPrepared(pg, qnames[q], 1, &rev, NULL, NULL, 0);
	int rc = PQresultStatus(res) == PGRES_TUPLES_OK ? 0 : SEO_EIO;

	(void)a;
	(void)total;
	if (rc)
		fprintf(stderr, "graph-bench: %s: %s", qnames[q],
			PQerrorMessage(pg));
	PQclear(res);
	return rc;
}

/* ---- svc-graph over gRPC ----------------------------------------------- */

#define RESP(t) (&seo__graph__v1__##t##_response__descriptor)

static const struct grpc_method {
	const char *path;
	const ProtobufCMessageDescriptor *resp;
} grpc_methods[Q_COUNT] = {
	[Q_REFDOMAINS] = { "/seo.graph.v1.Graph/ReferringDomains",
			   RESP(referring_domains) },
	[Q_BACKLINKS] = { "/seo.graph.v1.Graph/Backlinks", RESP(backlinks) },
	[Q_ANCHORS] = { "/seo.graph.v1.Graph/AnchorText", RESP(anchor_text) },
	[Q_TOPPAGES] = { "/seo.graph.v1.Graph/TopPages", RESP(top_pages) },
	[Q_AUTHORITY] = { "/seo.graph.v1.Graph/DomainAuthority",
			  RESP(domain_authority) },
	[Q_RANK] = { "/seo.graph.v1.Graph/DomainRank", RESP(domain_rank) },
	[Q_OUTBOUND] = { "/seo.graph.v1.Graph/OutboundLinks",
			 RESP(outbound_links) },
	[Q_SIMILAR] = { "/seo.graph.v1.Graph/SimilarDomains",
			RESP(similar_domains) },
	[Q_SIMILAR_CACHED] = { "/seo.graph.v1.Graph/SimilarDomains",
			       RESP(similar_domains) },
};

/* One client kept for the whole run, so that a call costs no connect. */
typedef struct grpc_side {
	struct event_base *base;
	rpc_client *client;
	int done, status;
} grpc_side;

static void grpc_done(const rpc_result *res, void *ud)
{
	grpc_side *g = ud;

	g->status = res->grpc_status;
	if (res->grpc_status != SEO_GRPC_OK)
		fprintf(stderr, "graph-bench: grpc status %d: %s %s\n",
			res->grpc_status, res->code ? res->code : "",
			res->message);
	g->done = 1;
}

static int run_grpc(void *ctx, query q, const target *t, seo_arena *a,
		    uint64_t *total)
{
	grpc_side *g = ctx;
	Seo__Graph__V1__DomainPageRequest page =
		SEO__GRAPH__V1__DOMAIN_PAGE_REQUEST__INIT;
	Seo__Graph__V1__DomainRequest one = SEO__GRAPH__V1__DOMAIN_REQUEST__INIT;
	Seo__Graph__V1__BacklinksRequest bl =
		SEO__GRAPH__V1__BACKLINKS_REQUEST__INIT;
	const ProtobufCMessage *req = &page.base;
	/* the work itself, not svc-graph's result cache, except where the
	 * cache is what is timed */
	static const rpc_meta fresh = { "cache-control", "no-cache" };
	ProtobufCAllocator alloc;

	(void)total;
	/* The library's first page: 100 rows, importance order. */
	page.domain = one.domain = bl.domain = (char *)t->domain;
	page.has_limit = bl.has_limit = 1;
	page.limit = bl.limit = 100;
	if (q == Q_BACKLINKS)
		req = &bl.base;
	else if (q == Q_AUTHORITY || q == Q_RANK)
		req = &one.base;
	seo_arena_pb_allocator(a, &alloc);
	g->done = 0;
	if (rpc_client_call(g->client, grpc_methods[q].path, req,
			    grpc_methods[q].resp, &alloc, CALL_TIMEOUT_MS,
			    &fresh, q != Q_SIMILAR_CACHED, grpc_done, g))
		return SEO_ENOMEM;
	while (!g->done && event_base_loop(g->base, EVLOOP_ONCE) == 0)
		;
	return g->done && g->status == SEO_GRPC_OK ? 0 : SEO_EUPSTREAM;
}

/* ---- the gateway over HTTP/1.1 ------------------------------------------ */

/* One keep-alive connection kept for the whole run; `buf` holds an
 * answer. */
typedef struct http_side {
	int fd;
	const char *addr, *key;
	char *buf;
	size_t cap;
} http_side;

/* Connects to "host:port" with Nagle off (requests are small writes). */
static int http_connect(http_side *h)
{
	const char *colon = strrchr(h->addr, ':');
	struct addrinfo hints = { .ai_socktype = SOCK_STREAM }, *ai = NULL;
	char host[256];
	int one = 1;

	if (!colon || (size_t)(colon - h->addr) >= sizeof(host))
		return SEO_EINVAL;
	snprintf(host, sizeof(host), "%.*s", (int)(colon - h->addr), h->addr);
	if (getaddrinfo(host, colon + 1, &hints, &ai) != 0)
		return SEO_EINVAL;
	h->fd = socket(ai->ai_family, ai->ai_socktype, ai->ai_protocol);
	if (h->fd < 0 || connect(h->fd, ai->ai_addr, ai->ai_addrlen) != 0 ||
	    setsockopt(h->fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one))) {
		freeaddrinfo(ai);
		perror("graph-bench: connect");
		return SEO_EIO;
	}
	freeaddrinfo(ai);
	return 0;
}

/* Reads one answer (the gateway always frames it with Content-Length);
 * 0 when its status is 200. */
static int http_read(http_side *h)
{
	size_t len = 0, head = 0, body = 0;

	while (!head || len < head + body) {
		ssize_t r;

		if (len + 4096 > h->cap) {
			char *nb = realloc(h->buf, h->cap * 2);

			if (!nb)
				return SEO_ENOMEM;
			h->buf = nb;
			h->cap *= 2;
		}
		r = read(h->fd, h->buf + len, h->cap - len - 1);
		if (r <= 0) {
			fprintf(stderr, "graph-bench: the gateway closed the"
					" connection\n");
			return SEO_EIO;
		}
		len += (size_t)r;
		h->buf[len] = '\0';
		if (!head) {
			const char *end = strstr(h->buf, "\r\n\r\n");
			const char *cl;

			if (!end)
				continue;
			head = (size_t)(end - h->buf) + 4;
			cl = strcasestr(h->buf, "\r\nContent-Length:");
			if (!cl || cl > end)
				return SEO_EIO;
			body = strtoull(cl + 17, NULL, 10);
		}
	}
	if (len != head + body || strncmp(h->buf, "HTTP/1.1 200 ", 13)) {
		fprintf(stderr, "graph-bench: unexpected answer: %.300s\n",
			h->buf);
		return SEO_EUPSTREAM;
	}
	return 0;
}

static int run_http(void *ctx, query q, const target *t, seo_arena *a,
		    uint64_t *total)
{
	http_side *h = ctx;
	char req[1024];
	int n;

	(void)a;
	(void)total;
	/* The route's defaults are the library's first page (limit 100,
	 * importance order). The bench's names need no escaping (cmd_time). */
	n = snprintf(req, sizeof(req),
		     "GET /v1/%s?domain=%s HTTP/1.1\r\nHost: %s\r\n"
		     "X-API-Key: %s\r\n\r\n",
		     qroutes[q], t->domain, h->addr, h->key);
	if (n < 0 || (size_t)n >= sizeof(req))
		return SEO_EINVAL;
	for (int off = 0; off < n;) {
		ssize_t w = write(h->fd, req + off, (size_t)(n - off));

		if (w <= 0)
			return SEO_EIO;
		off += (int)w;
	}
	return http_read(h);
}

/* ---- timing ------------------------------------------------------------- */

typedef struct timing {
	double p50, p99;
	uint64_t total; /* the library's; 0 elsewhere */
} timing;

/*
 * Runs one query `reps` times after one untimed warm-up, or fewer when
 * `budget_ms` is spent (at least 3 timed runs); the percentiles are of the
 * runs made.
 */
static int measure(const side *s, query q, const target *t, unsigned reps,
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
		rc = s->run(s->ctx, q, t, a, &out->total);
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

/* LABEL=DOMAIN; for http, a name that needs no escaping in a URL. */
static int parse_target(const char *arg, int http, target *t)
{
	const char *eq = strchr(arg, '=');

	if (!eq || (size_t)(eq - arg) >= sizeof(t->label) ||
	    (http && strspn(eq + 1, "abcdefghijklmnopqrstuvwxyz"
				    "ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789.-") !=
			     strlen(eq + 1))) {
		fprintf(stderr, "graph-bench: expected LABEL=DOMAIN: %s\n",
			arg);
		return SEO_EINVAL;
	}
	snprintf(t->label, sizeof(t->label), "%.*s", (int)(eq - arg), arg);
	t->domain = eq + 1;
	reverse_name(t->domain, t->rev, sizeof(t->rev));
	return 0;
}

typedef enum mode { M_QUERY, M_GRPC, M_HTTP } mode;

/* query, grpc and http: the same targets, queries, runs and percentiles
 * on the library (and PostgreSQL), svc-graph, or the gateway. */
static int cmd_time(mode m, int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "index", required_argument, NULL, 'i' },
		{ "pg", required_argument, NULL, 'p' },
		{ "addr", required_argument, NULL, 'a' },
		{ "key", required_argument, NULL, 'k' },
		{ "reps", required_argument, NULL, 'n' },
		{ "budget-ms", required_argument, NULL, 'b' },
		{ NULL, 0, NULL, 0 },
	};
	static const char *const usage[] = {
		[M_QUERY] = "query --index DIR [--pg URL]",
		[M_GRPC] = "grpc --addr HOST:PORT",
		[M_HTTP] = "http --addr HOST:PORT --key KEY",
	};
	const char *dir = NULL, *url = NULL, *addr = NULL, *key = NULL;
	unsigned reps = 200;
	double budget_ms = 5000, *samples = NULL;
	graph_index *ix = NULL;
	PGconn *pg = NULL;
	grpc_side g = { 0 };
	http_side h = { .fd = -1 };
	side ours = { 0 }, sql = { run_sql, NULL, Q_COUNT };
	int c, rc = SEO_EINVAL;

	while ((c = getopt_long(argc, argv, "", longopts, NULL)) != -1) {
		switch (c) {
		case 'i': dir = optarg; break;
		case 'p': url = optarg; break;
		case 'a': addr = optarg; break;
		case 'k': key = optarg; break;
		case 'n': reps = (unsigned)strtoul(optarg, NULL, 10); break;
		case 'b': budget_ms = strtod(optarg, NULL); break;
		default: goto usage;
		}
	}
	if ((m == M_QUERY) != (dir != NULL) || (m == M_QUERY) == (addr != NULL) ||
	    (m == M_HTTP) != (key != NULL) || (url && m != M_QUERY) ||
	    optind >= argc || reps < 3 || reps > MAX_REPS)
		goto usage;
	samples = malloc((MAX_REPS + 1) * sizeof(double));
	if (!samples) {
		rc = SEO_ENOMEM;
		goto out;
	}
	switch (m) {
	case M_QUERY:
		if ((rc = graph_index_open(dir, &ix))) {
			fprintf(stderr, "graph-bench: cannot open the index %s:"
					" %s\n", dir, seo_strerror(rc));
			goto out;
		}
		ours = (side){ run_library, ix, Q_SIMILAR_CACHED };
		break;
	case M_GRPC:
		g.base = event_base_new();
		if (!g.base) {
			rc = SEO_ENOMEM;
			goto out;
		}
		if ((rc = rpc_client_new(g.base, addr, &g.client)))
			goto out;
		ours = (side){ run_grpc, &g, Q_COUNT };
		break;
	case M_HTTP:
		h.addr = addr;
		h.key = key;
		h.cap = 64 * 1024;
		h.buf = malloc(h.cap);
		if (!h.buf) {
			rc = SEO_ENOMEM;
			goto out;
		}
		if ((rc = http_connect(&h)))
			goto out;
		/* the gateway cannot ask past the cache: only the cached row */
		ours = (side){ run_http, &h, Q_SIMILAR };
		break;
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
		sql.ctx = pg;
	}
	for (int i = optind; i < argc; i++) {
		target t;

		if ((rc = parse_target(argv[i], m == M_HTTP, &t)))
			goto out;
		for (int q = 0; q < Q_COUNT; q++) {
			int have = ours.skip != (query)q;
			timing a = { 0 }, b;

			rc = have ? measure(&ours, (query)q, &t, reps,
					    budget_ms, samples, &a) : 0;
			if (!rc && pg && qsql[q])
				rc = measure(&sql, (query)q, &t, reps,
					     budget_ms, samples, &b);
			if (rc) {
				fprintf(stderr, "graph-bench: %s %s failed:"
						" %s\n", t.label, qnames[q],
					seo_strerror(rc));
				goto out;
			}
			printf("%s\t%s", t.label, qnames[q]);
			if (m == M_QUERY && have)
				printf("\t%llu", (unsigned long long)a.total);
			else if (m == M_QUERY)
				printf("\t-");
			if (have)
				printf("\t%.1f\t%.1f", a.p50, a.p99);
			else
				printf("\t-\t-");
			if (pg && qsql[q])
				printf("\t%.1f\t%.1f", b.p50, b.p99);
			else if (m == M_QUERY)
				printf("\t-\t-");
			printf("\n");
			fflush(stdout);
		}
	}
	goto out;
usage:
	fprintf(stderr, "usage: graph-bench %s [--reps 3..%d] [--budget-ms B]"
			" LABEL=DOMAIN...\n", usage[m], MAX_REPS);
	rc = SEO_EINVAL;
out:
	PQfinish(pg);
	graph_index_close(ix);
	rpc_client_free(g.client);
	if (g.base)
		event_base_free(g.base);
	if (h.fd >= 0)
		close(h.fd);
	free(h.buf);
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
		rc = cmd_time(M_QUERY, argc - 1, argv + 1);
	else if (argc >= 2 && strcmp(argv[1], "grpc") == 0)
		rc = cmd_time(M_GRPC, argc - 1, argv + 1);
	else if (argc >= 2 && strcmp(argv[1], "http") == 0)
		rc = cmd_time(M_HTTP, argc - 1, argv + 1);
	else
		fprintf(stderr, "usage: graph-bench synth|query|grpc|http ...\n");
	return rc ? 1 : 0;
}

/*
 * graph-bench: the C half of bench/graph.sh (docs/benchmarks.md).
 *
 *   graph-bench synth --out DIR --domains N --edges E [--seed S]
 *   graph-bench dump --index DIR --vertices FILE --out DIR
 *   graph-bench query --index DIR [--pg URL [--baseline strict|computed]]
 *               [--reps N] [--budget-ms B] TARGET...
 *   graph-bench check --index DIR --pg URL TARGET...
 *   graph-bench grpc --addr HOST:PORT [--reps N] [--budget-ms B] TARGET...
 *   graph-bench http --addr HOST:PORT --key KEY [--reps N] [--budget-ms B]
 *               TARGET...
 *   graph-bench load --pg URL --addr HOST:PORT --key KEY --conns N
 *               --seconds S [--computed LABEL,...] TARGET...
 *
 * A TARGET is LABEL=DOMAIN, timed with every single-domain query, or
 * LABEL=A,B, timed with the two-domain ones: link-intersect (domain_a A,
 * domain_b B), domain-overlap (A and B) and link-gap (B yours, A the
 * competitor).
 *
 * `synth` writes a synthetic crawl (crawlgen_synth_write). `dump` walks an
 * index through the library and writes what it serves as COPY text for
 * the bench's PostgreSQL tables (cmd_dump). `query` times every query on
 * the library, and with --pg the same question as prepared SQL statements
 * on those tables; the untimed first run of each side is compared, total
 * and rows, and a difference fails the run. `query` prints one
 * tab-separated line per (domain, query), the first one the null round
 * trip (`SELECT 1`) timed alone: label, query, the library's total (rows
 * of the whole result; see qtab), our p50 and p99, PostgreSQL's p50 and
 * p99, and the p50 and p99 of PostgreSQL's null timed beside that row
 * (microseconds; "-" when that side has no figure).
 *
 * PostgreSQL answers on two baselines (enum baseline): strict, reading
 * what our index precomputes from aggregate tables, and computed, the
 * same answers computed at query time from the base tables (issue 14's
 * measurement). `query --baseline computed` times only the rows whose
 * computed statements differ, in the same format. `check` only compares,
 * every difference, on both baselines, and prints label, query, baseline
 * and "same", "differs" or "-" (nothing to compare).
 *
 * `grpc` times the same queries as calls to svc-graph, one after the
 * other on one HTTP/2 connection (its null round trip:
 * grpc.health.v1.Health/Check); `http` as GET requests to the gateway
 * with an API key, one after the other on one HTTP/1.1 keep-alive
 * connection (its null round trip: a path no route matches, answered 404
 * from the route table). Both print label, query, p50 and p99, and the
 * p50 and p99 of the null timed beside that row (microseconds), in the
 * order of `query`.
 *
 * `load` times the gateway's rows under concurrency beside the same
 * question on PostgreSQL (cmd_load): label, query, then requests per
 * second, p50 and p99 of the gateway and of PostgreSQL, then those of
 * PostgreSQL's computed baseline for the targets labelled in --computed
 * ("-" for the others) and whether that row has statements of its own
 * ("own") or its strict ones serve both ("same").
 *
 * A transport's round trip moves with where the scheduler puts client
 * and server, from one minute to the next: each row's null is timed
 * beside it, a null call before each of its calls (measure), so that the
 * row's latency minus its own null is the work.
 *
 * svc-graph keeps similar-domains and link-audit answers in its result
 * cache: their rows are timed at the service with `cache-control:
 * no-cache` (computed every time), and a ", cached" row each times the
 * cache's answer at the service and through the gateway.
 */
#include <getopt.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <event2/event.h>
#include <libpq-fe.h>

#include <seo/arena.h>
#include <seo/errors.h>
#include <seo/rpc.h>

#include "crawlgen.h"
#include "graph.h"
#include "grpc/health/v1/health.pb-c.h"
#include "seo/graph/v1/graph.pb-c.h"

#define MAX_REPS 100000
/* The library's runs at least (within the budget): a call of a
 * microsecond has a p99 of 200 runs decided by one interrupt. */
#define LIB_REPS 1000
#define CALL_TIMEOUT_MS 60000
/* The API's first page. */
#define PAGE 100
/* Untimed runs before the timed ones, on every side alike: the first
 * touches of a fresh process's mappings and caches are not the steady
 * state measured. */
#define WARMUP 10
/* link-audit's reach and lists (docs/metrics.md, svc-graph's service.c). */
#define AUDIT_REFERRERS 10000
#define AUDIT_LIST 10

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

/* ---- answers as text ----------------------------------------------------- */

/* A growing string; `oom` once an append failed. Freed with free(p). */
typedef struct text {
	char *p;
	size_t len, cap;
	int oom;
} text;

static void tx_printf(text *t, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

static void tx_printf(text *t, const char *fmt, ...)
{
	va_list ap;
	int n;

	while (!t->oom) {
		size_t room = t->cap - t->len;
		char *np;

		va_start(ap, fmt);
		n = vsnprintf(t->p ? t->p + t->len : NULL, room, fmt, ap);
		va_end(ap);
		if (n >= 0 && (size_t)n < room) {
			t->len += (size_t)n;
			return;
		}
		np = n < 0 ? NULL : realloc(t->p, (t->len + (size_t)n + 1) * 2);
		if (!np) {
			t->oom = 1;
			return;
		}
		t->p = np;
		t->cap = (t->len + (size_t)n + 1) * 2;
	}
}

/* NULL as COPY and the SQL side's text show it. */
static const char *nul(const char *s)
{
	return s ? s : "\\N";
}

/* The shortest text that reads back as `v`: how PostgreSQL prints a
 * float8, so that both sides print the same double alike. */
static const char *shortest(double v, char buf[32])
{
	for (int p = 1; p <= 17; p++) {
		snprintf(buf, 32, "%.*g", p, v);
		if (strtod(buf, NULL) == v)
			break;
	}
	return buf;
}

/* Risk flags in bit order, comma-separated ("" when none). */
static const char *flags_text(unsigned flags, char buf[128])
{
	size_t o = 0;

	buf[0] = '\0';
	for (unsigned bit = 1; bit <= GRAPH_RISK_LOW_AUTHORITY; bit <<= 1)
		if (flags & bit)
			o += (size_t)snprintf(buf + o, 128 - o, "%s%s",
					      o ? "," : "",
					      graph_risk_flag_name(bit));
	return buf;
}

/*
 * One run's answer. `total` is the library's (see qtab); `out`, when not
 * NULL, receives the answer as text: for each statement of the SQL side,
 * its total on a line of its own when it has one, then a line per row,
 * fields separated by tabs, NULL as \N. Both sides print alike.
 */
typedef struct answer {
	uint64_t total;
	text *out;
} answer;

/* ---- the queries ---------------------------------------------------------- */

typedef enum query {
	Q_NULL,
	Q_REFDOMAINS,
	Q_BACKLINKS,
	Q_ANCHORS,
	Q_TOPPAGES,
	Q_AUTHORITY,
	Q_RANK,
	Q_HISTORY,
	Q_OUTBOUND,
	Q_URLINDEX,
	Q_STATUS,
	Q_SIMILAR,
	Q_SIMILAR_CACHED,
	Q_EXPLORER,
	Q_AUDIT,
	Q_AUDIT_CACHED,
	Q_INTERSECT,
	Q_OVERLAP,
	Q_GAP,
	Q_COUNT,
} query;

/* The request message each RPC and route takes. */
typedef enum req_kind {
	R_HEALTH,
	R_PAGE,      /* DomainPageRequest, limit 100 */
	R_ONE,       /* DomainRequest */
	R_BACKLINKS, /* BacklinksRequest, limit 100, importance order */
	R_INTERSECT,
	R_OVERLAP,
	R_GAP,
} req_kind;

/* Where a row has a figure. */
enum {
	ON_LIB = 1,
	ON_GRPC = 2,
	ON_HTTP = 4,
	ON_ALL = ON_LIB | ON_GRPC | ON_HTTP,
	PAIR = 8,    /* a two-domain query */
	CACHED = 16, /* svc-graph's cached answer: no cache-control */
};

/* The SQL statements (stmts below); S_NONE ends a row's list. */
typedef enum stmt_id {
	S_NONE,
	S_NULL,
	S_REFDOMAINS,
	S_BACKLINKS,
	S_ANCHORS,
	S_TOPPAGES,
	S_AUTHORITY,
	S_RANK,
	S_HISTORY,
	S_OUTBOUND,
	S_URLINDEX,
	S_STATUS,
	S_SIMILAR,
	S_AUDIT,
	S_INTERSECT,
	S_OVERLAP,
	S_GAP,
	/* the baseline: the same answers computed at query time
	 * from the base tables, no aggregate table or count of dom read */
	S_REFDOMAINS_C,
	S_BACKLINKS_C,
	S_ANCHORS_C,
	S_TOPPAGES_C,
	S_AUTHORITY_C,
	S_RANK_C,
	S_OUTBOUND_C,
	S_AUDIT_C,
	S_COUNT,
} stmt_id;

/*
 * PostgreSQL's two baselines (docs/benchmarks.md): strict, where it reads
 * what our index precomputes from aggregate tables and dom's figures, and
 * computed (issue 14's), its best indexes over the base tables and no
 * materialised answer. A row whose strict statements already compute at
 * query time has one list serving both.
 */
typedef enum baseline { B_STRICT, B_COMPUTED, B__COUNT } baseline;

/* Their names, as --baseline takes them and check prints them. */
static const char *const baseline_names[B__COUNT] = {
	[B_STRICT] = "strict", [B_COMPUTED] = "computed",
};

/* The baseline named `name`, or B__COUNT when none is. */
static baseline baseline_named(const char *name)
{
	baseline b = B_STRICT;

	while (b < B__COUNT && strcmp(baseline_names[b], name) != 0)
		b++;
	return b;
}

#define MAX_STMTS 4
#define RESP(t) (&seo__graph__v1__##t##_response__descriptor)
#define RPC(m) "/seo.graph.v1.Graph/" m

/*
 * Every row of the bench. `total` printed for a row is the library's
 * count of the whole result's rows, except: domain-authority and
 * domain-rank, the referring domains; crawl-history, the URLs;
 * status-codes, its rows; site-explorer, backlinks_total; link-audit,
 * the backlinks it read. `sql`: the statements of PostgreSQL's answer,
 * several run as one pipeline; none for the cached rows. `computed`:
 * those of the computed baseline where they differ, else empty.
 */
static const struct qdesc {
	const char *name;
	const char *route; /* GET /v1/<route> */
	const char *rpc;
	const ProtobufCMessageDescriptor *resp;
	req_kind req;
	unsigned flags;
	stmt_id sql[MAX_STMTS + 1];
	stmt_id computed[MAX_STMTS + 1];
} qtab[Q_COUNT] = {
	/* over HTTP, a path no route matches: the gateway's 404 touches no
	 * service, where /healthz asks every one */
	[Q_NULL] = { "null round trip", "null", "/grpc.health.v1.Health/Check",
		     &grpc__health__v1__health_check_response__descriptor,
		     R_HEALTH, ON_GRPC | ON_HTTP, { S_NULL } },
	[Q_REFDOMAINS] = { "referring-domains", "referring-domains",
			   RPC("ReferringDomains"), RESP(referring_domains),
			   R_PAGE, ON_ALL, { S_REFDOMAINS },
			   { S_REFDOMAINS_C } },
	[Q_BACKLINKS] = { "backlinks", "backlinks", RPC("Backlinks"),
			  RESP(backlinks), R_BACKLINKS, ON_ALL,
			  { S_BACKLINKS }, { S_BACKLINKS_C } },
	[Q_ANCHORS] = { "anchor-text", "anchor-text", RPC("AnchorText"),
			RESP(anchor_text), R_PAGE, ON_ALL, { S_ANCHORS },
			{ S_ANCHORS_C } },
	[Q_TOPPAGES] = { "top-pages", "top-pages", RPC("TopPages"),
			 RESP(top_pages), R_PAGE, ON_ALL, { S_TOPPAGES },
			 { S_TOPPAGES_C } },
	[Q_AUTHORITY] = { "domain-authority", "domain-authority",
			  RPC("DomainAuthority"), RESP(domain_authority),
			  R_ONE, ON_ALL, { S_AUTHORITY }, { S_AUTHORITY_C } },
	[Q_RANK] = { "domain-rank", "domain-rank", RPC("DomainRank"),
		     RESP(domain_rank), R_ONE, ON_ALL, { S_RANK },
		     { S_RANK_C } },
	[Q_HISTORY] = { "crawl-history", "crawl-history", RPC("CrawlHistory"),
			RESP(crawl_history), R_ONE, ON_ALL, { S_HISTORY } },
	[Q_OUTBOUND] = { "outbound-links", "outbound-links",
			 RPC("OutboundLinks"), RESP(outbound_links), R_PAGE,
			 ON_ALL, { S_OUTBOUND }, { S_OUTBOUND_C } },
	[Q_URLINDEX] = { "url-index", "url-index", RPC("UrlIndex"),
			 RESP(url_index), R_PAGE, ON_ALL, { S_URLINDEX } },
	[Q_STATUS] = { "status-codes", "status-codes", RPC("StatusCodes"),
		       RESP(status_codes), R_ONE, ON_ALL, { S_STATUS } },
	/* the gateway cannot ask past the cache: only the cached row */
	[Q_SIMILAR] = { "similar-domains", NULL, RPC("SimilarDomains"),
			RESP(similar_domains), R_PAGE, ON_LIB | ON_GRPC,
			{ S_SIMILAR } },
	[Q_SIMILAR_CACHED] = { "similar-domains, cached", "similar-domains",
			       RPC("SimilarDomains"), RESP(similar_domains),
			       R_PAGE, ON_GRPC | ON_HTTP | CACHED, { S_NONE } },
	[Q_EXPLORER] = { "site-explorer", "site-explorer", RPC("SiteExplorer"),
			 RESP(site_explorer), R_ONE, ON_ALL,
			 { S_BACKLINKS, S_AUTHORITY, S_TOPPAGES, S_ANCHORS },
			 { S_BACKLINKS_C, S_AUTHORITY_C, S_TOPPAGES_C,
			   S_ANCHORS_C } },
	[Q_AUDIT] = { "link-audit", NULL, RPC("LinkAudit"), RESP(link_audit),
		      R_ONE, ON_LIB | ON_GRPC, { S_AUDIT }, { S_AUDIT_C } },
	[Q_AUDIT_CACHED] = { "link-audit, cached", "link-audit",
			     RPC("LinkAudit"), RESP(link_audit), R_ONE,
			     ON_GRPC | ON_HTTP | CACHED, { S_NONE } },
	[Q_INTERSECT] = { "link-intersect", "link-intersect",
			  RPC("LinkIntersect"), RESP(link_intersect),
			  R_INTERSECT, ON_ALL | PAIR, { S_INTERSECT } },
	[Q_OVERLAP] = { "domain-overlap", "domain-overlap",
			RPC("DomainOverlap"), RESP(domain_overlap), R_OVERLAP,
			ON_ALL | PAIR, { S_OVERLAP } },
	[Q_GAP] = { "link-gap", "link-gap", RPC("LinkGap"), RESP(link_gap),
		    R_GAP, ON_ALL | PAIR, { S_GAP } },
};

/* Whether q has statements of its own on the computed baseline. */
static int has_computed(query q)
{
	return qtab[q].computed[0] != S_NONE;
}

/* The statements answering q on baseline b. */
static const stmt_id *qstmts(query q, baseline b)
{
	return b == B_COMPUTED && has_computed(q) ? qtab[q].computed :
						     qtab[q].sql;
}

/* How many statements a row has (on either baseline: the same). */
static size_t qstmt_count(query q)
{
	size_t n = 0;

	while (qtab[q].sql[n] != S_NONE)
		n++;
	return n;
}

/* ---- the same questions in SQL -------------------------------------------- */

/*
 * On the tables of bench/graph.sh (docs/benchmarks.md): dom (one row per
 * domain: id, name, rank = importance position, and the per-domain
 * figures), edges(src, dst) in importance positions with btree (dst, src)
 * and (src, dst), links (URL-level, by target id, source position and
 * `seq`, its place in our newest-first order), urls and anchors (the
 * index's dictionaries), the aggregates anchor_agg, page_agg and out_agg,
 * captures, status and meta. $1 is the domain's name; for the pairs $1
 * is A and $2 B. The queried domain's figures come from scalar subqueries
 * (DOM_SQL), so that the planner drives each query by the ordered index
 * scan of its rows and stops at the page; joins come after the LIMIT.
 */

/* Column `col` of the domain named $n. */
#define DOM_SQL(col, n) "(SELECT " col " FROM dom WHERE name = $" #n ")"

/* A domain row `d`'s young flag: registered less than 365 days before
 * the crawl's latest capture. */
#define YOUNG_SQL \
	" CROSS JOIN meta m CROSS JOIN LATERAL (SELECT d.registered IS NOT NULL" \
	" AND m.as_of > 0 AND m.as_of / 86400 - (d.registered - DATE" \
	" '1970-01-01') < 365 AS young) y"

/* health_score and risk_flags of `d` (docs/metrics.md). */
#define HEALTH_SQL \
	"greatest(0, 100 - CASE WHEN y.young THEN 20 ELSE 0 END" \
	" - CASE WHEN y.young AND d.score >= 40 THEN 30 ELSE 0 END" \
	" - CASE WHEN d.tranco IS NULL THEN 10 ELSE 0 END" \
	" - CASE WHEN d.score < 20 THEN 20 ELSE 0 END)," \
	" concat_ws(',', CASE WHEN y.young THEN 'new_domain' END," \
	" CASE WHEN y.young AND d.score >= 40 THEN" \
	" 'high_authority_new_domain' END," \
	" CASE WHEN d.tranco IS NULL THEN 'no_tranco_presence' END," \
	" CASE WHEN d.score < 20 THEN 'low_authority' END)"

/* The anchor type of a backlink (graph_anchor_type) with anchor text
 * a.anchor (COLLATE "C": lower() folds ASCII only, as strcasecmp). */
#define ANCHOR_TYPE_SQL \
	"CASE WHEN b.link_type = 'image' THEN 'image'" \
	" WHEN coalesce(a.anchor, '') = '' OR lower(a.anchor) IN" \
	" ('click here', 'here', 'read more', 'more', 'link', 'website'," \
	" 'this', 'visit', 'learn more', 'home', 'source', 'continue')" \
	" THEN 'generic'" \
	" WHEN lower(a.anchor) LIKE 'http://%' OR lower(a.anchor) LIKE" \
	" 'https://%' OR strpos(lower(a.anchor), $1) > 0 THEN 'naked'" \
	" WHEN strpos(lower(a.anchor), split_part($1, '.', 1)) > 0" \
	" THEN 'branded' ELSE 'partial' END"

/* Domains x.src (importance positions), in order: total, first page,
 * each row with the columns `more`. */
#define PAIR_PAGE_SQL(more) \
	" SELECT (SELECT count(*) FROM x), d.name, d.score" more " FROM" \
	" (SELECT src FROM x ORDER BY src LIMIT 100) p JOIN dom d ON" \
	" d.rank = p.src ORDER BY p.src"

/* referring-domains with its total `total`. */
#define REFDOMAINS_SQL(total) \
	"SELECT " total ", s.name, greatest((SELECT" \
	" count(*) FROM links l WHERE l.dst = " DOM_SQL("id", 1) \
	" AND l.src_rank = e.src), 1), s.score" \
	" FROM edges e JOIN dom s ON s.rank = e.src" \
	" WHERE e.dst = " DOM_SQL("rank", 1) \
	" ORDER BY e.src LIMIT 100"

/* backlinks, one row per referrer (its first link in our order, the
 * newest), with its total `total`. */
#define BACKLINKS_SQL(total) \
	"SELECT " total ", s.name, fu.url," \
	" tu.url, a.anchor, b.rel, b.link_type, s.hosts, b.crawled_at," \
	" s.score FROM (SELECT DISTINCT ON (l.src_rank) l.src_rank," \
	" l.from_url, l.to_url, l.anchor, l.rel, l.link_type," \
	" l.crawled_at FROM links l WHERE l.dst = " DOM_SQL("id", 1) \
	" ORDER BY l.src_rank, l.seq LIMIT 100) b" \
	" JOIN dom s ON s.rank = b.src_rank" \
	" JOIN urls fu ON fu.id = b.from_url" \
	" JOIN urls tu ON tu.id = b.to_url" \
	" LEFT JOIN anchors a ON a.id = b.anchor ORDER BY b.src_rank"

/* anchor-text and top-pages computed: the target's links grouped by the
 * dictionary id in `col` (one id per text), then named from `dict`. */
#define LINK_GROUPS_SQL(col, dict, text) \
	"SELECT count(*) OVER (), t." text ", g.links, g.domains FROM" \
	" (SELECT l." col " AS id, count(*) AS links," \
	" count(DISTINCT l.src_rank) AS domains FROM links l" \
	" WHERE l.dst = " DOM_SQL("id", 1) " AND l." col " IS NOT NULL" \
	" GROUP BY l." col ") g JOIN " dict " t ON t.id = g.id" \
	" ORDER BY g.domains DESC, g.links DESC, t." text " LIMIT 100"

/* domain-authority of the row d, `rd` its referring domains. */
#define AUTHORITY_SQL(rd) \
	"SELECT d.score, " rd ", d.hosts, d.registered, d.registrar," \
	" d.tranco, " HEALTH_SQL " FROM dom d" YOUNG_SQL \
	" WHERE d.name = $1"

/* The referring domains of the row d, counted. */
#define RD_COUNT_SQL "(SELECT count(*) FROM edges x WHERE x.dst = d.rank)"

/*
 * link-audit, all of it in one statement, the outbound summary (out
 * degree, name of the top destination, its share of the links out) in
 * the columns `out` over the joins `out_from`: one row of health, flags,
 * quality counts, anchor profile, top and risk lists
 * (name:score:type:quality), outbound summary.
 */
#define AUDIT_SQL(out, out_from) \
	"WITH b AS (SELECT DISTINCT ON (l.src_rank) l.src_rank," \
	" l.anchor, l.link_type FROM links l WHERE l.dst = " \
	DOM_SQL("id", 1) " ORDER BY l.src_rank, l.seq LIMIT 10000)," \
	" r AS (SELECT b.src_rank, s.name, s.score," \
	" CASE WHEN s.score >= 50 THEN 'high' WHEN s.score >= 20" \
	" THEN 'medium' ELSE 'low' END AS quality, " \
	ANCHOR_TYPE_SQL " AS kind FROM b" \
	" JOIN dom s ON s.rank = b.src_rank" \
	" LEFT JOIN anchors a ON a.id = b.anchor)," \
	" q AS (SELECT count(*) FILTER (WHERE quality = 'high') AS high," \
	" count(*) FILTER (WHERE quality = 'medium') AS medium," \
	" count(*) FILTER (WHERE quality = 'low') AS low," \
	" count(*) AS n," \
	" count(*) FILTER (WHERE kind = 'branded') AS branded," \
	" count(*) FILTER (WHERE kind = 'partial') AS partial," \
	" count(*) FILTER (WHERE kind = 'generic') AS generic," \
	" count(*) FILTER (WHERE kind = 'naked') AS naked," \
	" count(*) FILTER (WHERE kind = 'image') AS image FROM r)" \
	" SELECT " HEALTH_SQL ", q.high, q.medium, q.low, q.n," \
	" CASE WHEN q.n > 0 THEN q.branded::float8 / q.n ELSE 0 END," \
	" CASE WHEN q.n > 0 THEN q.partial::float8 / q.n ELSE 0 END," \
	" CASE WHEN q.n > 0 THEN q.generic::float8 / q.n ELSE 0 END," \
	" CASE WHEN q.n > 0 THEN q.naked::float8 / q.n ELSE 0 END," \
	" CASE WHEN q.n > 0 THEN q.image::float8 / q.n ELSE 0 END," \
	" (SELECT string_agg(x.name || ':' || x.score || ':' || x.kind" \
	" || ':' || x.quality, ',' ORDER BY x.src_rank) FROM" \
	" (SELECT * FROM r ORDER BY src_rank LIMIT 10) x)," \
	" (SELECT string_agg(x.name || ':' || x.score || ':' || x.kind" \
	" || ':' || x.quality, ',' ORDER BY x.src_rank DESC) FROM" \
	" (SELECT * FROM r WHERE quality = 'low'" \
	" ORDER BY src_rank DESC LIMIT 10) x), " out \
	" FROM dom d" YOUNG_SQL " CROSS JOIN q" out_from \
	" WHERE d.name = $1"

/* Referrers of A that do not link to B, nor are B. */
#define NOT_B_SQL \
	"WITH x AS (SELECT e.src FROM edges e WHERE e.dst = " \
	DOM_SQL("rank", 1) " AND e.src <> " DOM_SQL("rank", 2) \
	" AND NOT EXISTS (SELECT 1 FROM edges f WHERE f.dst = " \
	DOM_SQL("rank", 2) " AND f.src = e.src))"

static const struct stmt {
	const char *name;
	int n_params;
	int has_total; /* the first column is the total */
	const char *sql;
} stmts[S_COUNT] = {
	[S_NULL] = { "null", 0, 0, "SELECT 1" },
	[S_REFDOMAINS] = { "referring-domains", 1, 1,
		REFDOMAINS_SQL(DOM_SQL("rd", 1)) },
	[S_BACKLINKS] = { "backlinks", 1, 1,
		BACKLINKS_SQL(DOM_SQL("url_referrers", 1)) },
	[S_ANCHORS] = { "anchor-text", 1, 1,
		"SELECT " DOM_SQL("n_anchors", 1) ", g.anchor, g.links,"
		" g.domains FROM anchor_agg g WHERE g.dst = " DOM_SQL("id", 1)
		" ORDER BY g.domains DESC, g.links DESC, g.anchor LIMIT 100" },
	[S_TOPPAGES] = { "top-pages", 1, 1,
		"SELECT " DOM_SQL("n_pages", 1) ", g.url, g.links, g.domains"
		" FROM page_agg g WHERE g.dst = " DOM_SQL("id", 1)
		" ORDER BY g.domains DESC, g.links DESC, g.url LIMIT 100" },
	[S_AUTHORITY] = { "domain-authority", 1, 0, AUTHORITY_SQL("d.rd") },
	[S_RANK] = { "domain-rank", 1, 0,
		"SELECT d.inbound_links + greatest(d.rd - d.url_referrers, 0),"
		" d.rd, CASE WHEN d.rd > 0 THEN d.hosts_sum::float8 / d.rd"
		" ELSE 0 END FROM dom d WHERE d.name = $1" },
	[S_HISTORY] = { "crawl-history", 1, 0,
		"SELECT d.first_seen, d.last_seen, d.total_urls FROM dom d"
		" WHERE d.name = $1" },
	[S_OUTBOUND] = { "outbound-links", 1, 1,
		"SELECT " DOM_SQL("n_outbound", 1) ", d.name, u.url, a.anchor,"
		" o.link_type, o.n FROM (SELECT * FROM out_agg WHERE src = "
		DOM_SQL("id", 1) " ORDER BY n DESC, dst, to_url, anchor,"
		" link_type LIMIT 100) o JOIN dom d ON d.id = o.dst"
		" JOIN urls u ON u.id = o.to_url"
		" LEFT JOIN anchors a ON a.id = o.anchor"
		" ORDER BY o.n DESC, o.dst, o.to_url, o.anchor, o.link_type" },
	[S_URLINDEX] = { "url-index", 1, 1,
		"SELECT " DOM_SQL("total_urls", 1) ", c.url, c.status, c.mime,"
		" c.crawled_at FROM captures c WHERE c.dom = " DOM_SQL("id", 1)
		" ORDER BY c.url LIMIT 100" },
	[S_STATUS] = { "status-codes", 1, 0,
		"SELECT s.status, s.n FROM status s WHERE s.dom = "
		DOM_SQL("id", 1) " ORDER BY s.status" },
	/* the stored first rows where our index stores them (sim_top),
	 * else counted, the count's scan gated off by a one-time test; names
	 * looked up per row of the page (a fenced lateral lookup: joined,
	 * the planner may hash all of dom for 100 rows) */
	[S_SIMILAR] = { "similar-domains", 1, 1,
		"SELECT u.total, d.name, u.n FROM ("
		"SELECT t.total, s.shared AS n,"
		" (SELECT rank FROM dom WHERE id = s.sim) AS r"
		" FROM sim_top s JOIN sim_total t ON t.dom = s.dom"
		" WHERE s.dom = " DOM_SQL("id", 1) " AND s.pos < 100"
		" UNION ALL SELECT c.total, c.n, c.dst FROM"
		" (SELECT e2.dst, count(*) AS n, count(*) OVER () AS total"
		" FROM edges e1 JOIN edges e2 ON e2.src = e1.src WHERE e1.dst = "
		DOM_SQL("rank", 1) " AND e2.dst <> " DOM_SQL("rank", 1)
		" AND NOT EXISTS (SELECT 1 FROM sim_total WHERE dom = "
		DOM_SQL("id", 1) ") GROUP BY e2.dst"
		" ORDER BY count(*) DESC, e2.dst LIMIT 100) c) u"
		" CROSS JOIN LATERAL (SELECT name FROM dom WHERE rank = u.r"
		" OFFSET 0) d ORDER BY u.n DESC, u.r" },
	[S_AUDIT] = { "link-audit", 1, 0,
		AUDIT_SQL("d.outd, o.name, CASE WHEN d.out_links > 0 THEN"
			  " d.top_out_links::float8 / d.out_links ELSE 0 END",
			  " LEFT JOIN dom o ON o.id = d.top_out") },
	[S_INTERSECT] = { "link-intersect", 2, 1, NOT_B_SQL PAIR_PAGE_SQL("") },
	[S_OVERLAP] = { "domain-overlap", 2, 1,
		"WITH x AS (SELECT e.src FROM edges e JOIN edges f"
		" ON f.src = e.src WHERE e.dst = " DOM_SQL("rank", 1)
		" AND f.dst = " DOM_SQL("rank", 2) " AND e.src <> "
		DOM_SQL("rank", 1) " AND e.src <> " DOM_SQL("rank", 2) ")"
		PAIR_PAGE_SQL("") },
	/* the competitor's referrers that do not link to you: links_to is
	 * the competitor */
	[S_GAP] = { "link-gap", 2, 1, NOT_B_SQL PAIR_PAGE_SQL(", $1::text") },
	[S_REFDOMAINS_C] = { "referring-domains/computed", 1, 1,
		REFDOMAINS_SQL("(SELECT count(*) FROM edges WHERE dst = "
			       DOM_SQL("rank", 1) ")") },
	[S_BACKLINKS_C] = { "backlinks/computed", 1, 1,
		BACKLINKS_SQL("(SELECT count(DISTINCT src_rank) FROM links"
			      " WHERE dst = " DOM_SQL("id", 1) ")") },
	[S_ANCHORS_C] = { "anchor-text/computed", 1, 1,
		LINK_GROUPS_SQL("anchor", "anchors", "anchor") },
	[S_TOPPAGES_C] = { "top-pages/computed", 1, 1,
		LINK_GROUPS_SQL("to_url", "urls", "url") },
	[S_AUTHORITY_C] = { "domain-authority/computed", 1, 0,
		AUTHORITY_SQL(RD_COUNT_SQL) },
	/* the referrers' host counts summed over their rows */
	[S_RANK_C] = { "domain-rank/computed", 1, 0,
		"SELECT li.n + greatest(e.rd - li.refs, 0), e.rd,"
		" CASE WHEN e.rd > 0 THEN e.hosts_sum::float8 / e.rd ELSE 0 END"
		" FROM dom d CROSS JOIN LATERAL (SELECT count(*) AS rd,"
		" sum(s.hosts) AS hosts_sum FROM edges x JOIN dom s"
		" ON s.rank = x.src WHERE x.dst = d.rank) e"
		" CROSS JOIN LATERAL (SELECT count(*) AS n,"
		" count(DISTINCT l.src_rank) AS refs FROM links l"
		" WHERE l.dst = d.id) li WHERE d.name = $1" },
	/* the source's links (links_src) grouped as out_agg */
	[S_OUTBOUND_C] = { "outbound-links/computed", 1, 1,
		"SELECT o.total, d.name, u.url, a.anchor, o.link_type, o.n FROM"
		" (SELECT l.dst, l.to_url, l.anchor, l.link_type, count(*) AS n,"
		" count(*) OVER () AS total FROM links l WHERE l.src_rank = "
		DOM_SQL("rank", 1) " GROUP BY l.dst, l.to_url, l.anchor,"
		" l.link_type ORDER BY n DESC, l.dst, l.to_url, l.anchor,"
		" l.link_type LIMIT 100) o JOIN dom d ON d.id = o.dst"
		" JOIN urls u ON u.id = o.to_url"
		" LEFT JOIN anchors a ON a.id = o.anchor"
		" ORDER BY o.n DESC, o.dst, o.to_url, o.anchor, o.link_type" },
	/* the out-degree counted, the links out grouped by destination */
	[S_AUDIT_C] = { "link-audit/computed", 1, 0,
		AUDIT_SQL("(SELECT count(*) FROM edges x WHERE x.src = d.rank),"
			  " o.name, CASE WHEN t.out_links > 0 THEN"
			  " t.top_links::float8 / t.out_links::float8 ELSE 0"
			  " END",
			  " LEFT JOIN LATERAL (SELECT l.dst, count(*) AS"
			  " top_links, sum(count(*)) OVER () AS out_links"
			  " FROM links l WHERE l.src_rank = d.rank"
			  " GROUP BY l.dst ORDER BY count(*) DESC, l.dst"
			  " LIMIT 1) t ON true LEFT JOIN dom o ON o.id = t.dst") },
};

/* ---- the targets and the sides answering ---------------------------------- */

/* A domain measured, or a pair (b not NULL). */
typedef struct target {
	char label[64];
	const char *a, *b;
} target;

/*
 * A side answering the queries: one run of query q for t, with `a` for
 * its allocations; fills *ans (see answer).
 */
typedef struct side {
	int (*run)(void *ctx, query q, const target *t, seo_arena *a,
		   answer *ans);
	void *ctx;
} side;

/* ---- the library ------------------------------------------------------------ */

static const graph_page first_page = { PAGE, 0 };

typedef int (*lib_fn)(const graph_index *ix, const target *t, seo_arena *a,
		      answer *ans);

static int lib_refdomains(const graph_index *ix, const target *t,
			  seo_arena *a, answer *ans)
{
	graph_refdomain_row *r;
	size_t n;
	int rc = graph_referring_domains(ix, t->a, &first_page, a, &r, &n,
					 &ans->total);

	if (rc || !ans->out)
		return rc;
	tx_printf(ans->out, "%llu\n", (unsigned long long)ans->total);
	for (size_t i = 0; i < n; i++)
		tx_printf(ans->out, "%s\t%u\t%u\n", r[i].from_domain,
			  r[i].total_links, r[i].from_domain_score);
	return 0;
}

static int lib_backlinks(const graph_index *ix, const target *t,
			 seo_arena *a, answer *ans)
{
	graph_backlink_row *r;
	size_t n;
	int rc = graph_backlinks(ix, t->a, GRAPH_SORT_IMPORTANCE, NULL,
				 &first_page, a, &r, &n, &ans->total);

	if (rc || !ans->out)
		return rc;
	tx_printf(ans->out, "%llu\n", (unsigned long long)ans->total);
	for (size_t i = 0; i < n; i++)
		tx_printf(ans->out, "%s\t%s\t%s\t%s\t%s\t%s\t%u\t%lld\t%u\n",
			  r[i].from_domain, r[i].from_url, r[i].to_url,
			  nul(r[i].anchor_text), nul(r[i].rel), r[i].link_type,
			  r[i].domain_host_count, (long long)r[i].crawled_at,
			  r[i].from_domain_score);
	return 0;
}

static int lib_anchors(const graph_index *ix, const target *t, seo_arena *a,
		       answer *ans)
{
	graph_anchor_row *r;
	size_t n;
	int rc = graph_anchor_text(ix, t->a, &first_page, a, &r, &n,
				   &ans->total);

	if (rc || !ans->out)
		return rc;
	tx_printf(ans->out, "%llu\n", (unsigned long long)ans->total);
	for (size_t i = 0; i < n; i++)
		tx_printf(ans->out, "%s\t%u\t%u\n", r[i].anchor_text,
			  r[i].link_count, r[i].domain_count);
	return 0;
}

static int lib_toppages(const graph_index *ix, const target *t, seo_arena *a,
			answer *ans)
{
	graph_top_page_row *r;
	size_t n;
	int rc = graph_top_pages(ix, t->a, &first_page, a, &r, &n,
				 &ans->total);

	if (rc || !ans->out)
		return rc;
	tx_printf(ans->out, "%llu\n", (unsigned long long)ans->total);
	for (size_t i = 0; i < n; i++)
		tx_printf(ans->out, "%s\t%u\t%u\n", r[i].url,
			  r[i].inbound_links, r[i].referring_domains);
	return 0;
}

static int lib_authority(const graph_index *ix, const target *t,
			 seo_arena *a, answer *ans)
{
	graph_authority au;
	char tranco[16], flags[128];
	int rc = graph_authority_get(ix, t->a, a, &au);

	if (rc)
		return rc;
	ans->total = au.referring_domains;
	if (!ans->out)
		return 0;
	snprintf(tranco, sizeof(tranco), "%u", au.popularity_rank);
	tx_printf(ans->out, "%u\t%llu\t%llu\t%s\t%s\t%s\t%u\t%s\n", au.score,
		  (unsigned long long)au.referring_domains,
		  (unsigned long long)au.total_host_count,
		  nul(au.registered_at), nul(au.registrar),
		  au.popularity_rank ? tranco : nul(NULL), au.health_score,
		  flags_text(au.risk_flags, flags));
	return 0;
}

static int lib_rank(const graph_index *ix, const target *t, seo_arena *a,
		    answer *ans)
{
	graph_domain_rank dr;
	char avg[32];
	int rc = graph_domain_rank_get(ix, t->a, &dr);

	(void)a;
	if (rc)
		return rc;
	ans->total = dr.unique_domains;
	if (!ans->out)
		return 0;
	tx_printf(ans->out, "%llu\t%llu\t%s\n",
		  (unsigned long long)dr.inbound_edges,
		  (unsigned long long)dr.unique_domains,
		  shortest(dr.avg_linking_host_count, avg));
	return 0;
}

static int lib_history(const graph_index *ix, const target *t, seo_arena *a,
		       answer *ans)
{
	graph_crawl_history h;
	int rc = graph_crawl_history_get(ix, t->a, &h);

	(void)a;
	if (rc)
		return rc;
	ans->total = h.total_urls;
	if (!ans->out)
		return 0;
	tx_printf(ans->out, "%lld\t%lld\t%llu\n", (long long)h.first_seen,
		  (long long)h.last_seen, (unsigned long long)h.total_urls);
	return 0;
}

static int lib_outbound(const graph_index *ix, const target *t, seo_arena *a,
			answer *ans)
{
	graph_outbound_row *r;
	size_t n;
	int rc = graph_outbound_links(ix, t->a, &first_page, a, &r, &n,
				      &ans->total, NULL);

	if (rc || !ans->out)
		return rc;
	tx_printf(ans->out, "%llu\n", (unsigned long long)ans->total);
	for (size_t i = 0; i < n; i++)
		tx_printf(ans->out, "%s\t%s\t%s\t%s\t%u\n", r[i].to_domain,
			  r[i].to_url, nul(r[i].anchor_text), r[i].link_type,
			  r[i].edge_count);
	return 0;
}

static int lib_urlindex(const graph_index *ix, const target *t, seo_arena *a,
			answer *ans)
{
	graph_url_row *r;
	size_t n;
	int rc = graph_url_index(ix, t->a, &first_page, a, &r, &n,
				 &ans->total);

	if (rc || !ans->out)
		return rc;
	tx_printf(ans->out, "%llu\n", (unsigned long long)ans->total);
	for (size_t i = 0; i < n; i++)
		tx_printf(ans->out, "%s\t%u\t%s\t%lld\n", r[i].url,
			  r[i].status_code, nul(r[i].mime),
			  (long long)r[i].crawled_at);
	return 0;
}

static int lib_status(const graph_index *ix, const target *t, seo_arena *a,
		      answer *ans)
{
	graph_status_row *r;
	size_t n;
	int rc = graph_status_codes(ix, t->a, a, &r, &n);

	if (rc)
		return rc;
	ans->total = n;
	if (!ans->out)
		return 0;
	for (size_t i = 0; i < n; i++)
		tx_printf(ans->out, "%u\t%u\n", r[i].status_code, r[i].count);
	return 0;
}

static int lib_similar(const graph_index *ix, const target *t, seo_arena *a,
		       answer *ans)
{
	graph_similar_row *r;
	size_t n;
	int rc = graph_similar_domains(ix, t->a, &first_page, a, &r, &n,
				       &ans->total);

	if (rc || !ans->out)
		return rc;
	tx_printf(ans->out, "%llu\n", (unsigned long long)ans->total);
	for (size_t i = 0; i < n; i++)
		tx_printf(ans->out, "%s\t%u\n", r[i].similar_domain,
			  r[i].shared_linkers);
	return 0;
}

/* The library calls of svc-graph's SiteExplorer, in its order. */
static int lib_explorer(const graph_index *ix, const target *t, seo_arena *a,
			answer *ans)
{
	uint64_t backlinks;
	int rc = lib_backlinks(ix, t, a, ans);

	backlinks = ans->total;
	if (!rc)
		rc = lib_authority(ix, t, a, ans);
	if (!rc)
		rc = lib_toppages(ix, t, a, ans);
	if (!rc)
		rc = lib_anchors(ix, t, a, ans);
	ans->total = backlinks;
	return rc;
}

/* An audit list: "name:score:type:quality" of rows[at[0..n)] (of
 * rows[0..n) when `at` is NULL), comma-separated; \N when empty. */
static void audit_list(text *o, const graph_backlink_row *rows,
		       const size_t *at, size_t n, const char *domain)
{
	if (!n)
		tx_printf(o, "\t%s", nul(NULL));
	for (size_t i = 0; i < n; i++) {
		const graph_backlink_row *r = &rows[at ? at[i] : i];

		tx_printf(o, "%s%s:%u:%s:%s", i ? "," : "\t", r->from_domain,
			  r->from_domain_score,
			  graph_anchor_type(r->anchor_text, r->link_type,
					    domain),
			  graph_link_quality(r->from_domain_score));
	}
}

/*
 * The library calls of svc-graph's LinkAudit and the same sums: the
 * strongest AUDIT_REFERRERS backlinks (one per referrer), their quality
 * and anchor types, the authority and the outbound summary.
 */
static int lib_audit(const graph_index *ix, const target *t, seo_arena *a,
		     answer *ans)
{
	static const char *const types[] = { "branded", "partial", "generic",
					     "naked", "image" };
	static const char *const qualities[] = { "high", "medium", "low" };
	graph_backlink_row *rows = seo_arena_alloc(a, AUDIT_REFERRERS *
							      sizeof(*rows));
	const graph_page one = { 1, 0 };
	uint64_t nt[5] = { 0 }, nq[3] = { 0 }, total;
	graph_outbound_summary os;
	graph_outbound_row *orow;
	graph_authority au;
	char buf[32], flags[128];
	size_t n = 0, m, k, risk[AUDIT_LIST], nrisk = 0;
	int rc;

	if (!rows)
		return SEO_ENOMEM;
	while (n < AUDIT_REFERRERS) {
		graph_page part = { GRAPH_LIMIT_MAX, n };
		graph_backlink_row *got;

		rc = graph_backlinks(ix, t->a, GRAPH_SORT_IMPORTANCE, NULL,
				     &part, a, &got, &m, &total);
		if (rc)
			return rc;
		memcpy(rows + n, got, m * sizeof(*got));
		n += m;
		if (m < GRAPH_LIMIT_MAX)
			break;
	}
	for (size_t i = 0; i < n; i++) {
		const char *ty = graph_anchor_type(rows[i].anchor_text,
						   rows[i].link_type, t->a);
		const char *qu = graph_link_quality(rows[i].from_domain_score);

		for (k = 0; k < 5; k++)
			nt[k] += strcmp(ty, types[k]) == 0;
		for (k = 0; k < 3; k++)
			nq[k] += strcmp(qu, qualities[k]) == 0;
	}
	if ((rc = graph_authority_get(ix, t->a, a, &au)) ||
	    (rc = graph_outbound_links(ix, t->a, &one, a, &orow, &m, &total,
				       &os)))
		return rc;
	ans->total = n;
	if (!ans->out)
		return 0;
	tx_printf(ans->out, "%u\t%s\t%llu\t%llu\t%llu\t%zu", au.health_score,
		  flags_text(au.risk_flags, flags), (unsigned long long)nq[0],
		  (unsigned long long)nq[1], (unsigned long long)nq[2], n);
	for (k = 0; k < 5; k++)
		tx_printf(ans->out, "\t%s",
			  shortest(n ? (double)nt[k] / (double)n : 0.0, buf));
	/* the strongest first; the weakest of low quality, weakest first */
	audit_list(ans->out, rows, NULL, n < AUDIT_LIST ? n : AUDIT_LIST,
		   t->a);
	for (size_t i = n; i-- > 0 && nrisk < AUDIT_LIST;)
		if (strcmp(graph_link_quality(rows[i].from_domain_score),
			   "low") == 0)
			risk[nrisk++] = i;
	audit_list(ans->out, rows, risk, nrisk, t->a);
	tx_printf(ans->out, "\t%llu\t%s\t%s\n",
		  (unsigned long long)os.unique_destinations,
		  nul(os.top_domain),
		  shortest(os.top_domain_concentration, buf));
	return 0;
}

/* Rows of the two-domain queries: domain, score[, links_to]. */
static void pair_rows(answer *ans, const graph_overlap_row *r, size_t n,
		      const char *links_to)
{
	tx_printf(ans->out, "%llu\n", (unsigned long long)ans->total);
	for (size_t i = 0; i < n; i++)
		tx_printf(ans->out, "%s\t%u%s%s\n", r[i].domain,
			  r[i].domain_score, links_to ? "\t" : "",
			  links_to && (r[i].links_to & 1) ? links_to : "");
}

static int lib_intersect(const graph_index *ix, const target *t,
			 seo_arena *a, answer *ans)
{
	graph_intersect_row *r;
	size_t n;
	int rc = graph_link_intersect(ix, t->a, t->b, &first_page, a, &r, &n,
				      &ans->total);

	if (rc || !ans->out)
		return rc;
	tx_printf(ans->out, "%llu\n", (unsigned long long)ans->total);
	for (size_t i = 0; i < n; i++)
		tx_printf(ans->out, "%s\t%u\n", r[i].domain,
			  r[i].domain_score);
	return 0;
}

static int lib_overlap(const graph_index *ix, const target *t, seo_arena *a,
		       answer *ans)
{
	const char *both[] = { t->a, t->b };
	graph_overlap_row *r;
	size_t n;
	int rc = graph_domain_overlap(ix, both, 2, 2, NULL, &first_page, a,
				      &r, &n, &ans->total);

	if (!rc && ans->out)
		pair_rows(ans, r, n, NULL);
	return rc;
}

static int lib_gap(const graph_index *ix, const target *t, seo_arena *a,
		   answer *ans)
{
	graph_overlap_row *r;
	size_t n;
	int rc = graph_domain_overlap(ix, &t->a, 1, 1, t->b, &first_page, a,
				      &r, &n, &ans->total);

	if (!rc && ans->out)
		pair_rows(ans, r, n, t->a);
	return rc;
}

static const lib_fn lib_runs[Q_COUNT] = {
	[Q_REFDOMAINS] = lib_refdomains, [Q_BACKLINKS] = lib_backlinks,
	[Q_ANCHORS] = lib_anchors,       [Q_TOPPAGES] = lib_toppages,
	[Q_AUTHORITY] = lib_authority,   [Q_RANK] = lib_rank,
	[Q_HISTORY] = lib_history,       [Q_OUTBOUND] = lib_outbound,
	[Q_URLINDEX] = lib_urlindex,     [Q_STATUS] = lib_status,
	[Q_SIMILAR] = lib_similar,       [Q_EXPLORER] = lib_explorer,
	[Q_AUDIT] = lib_audit,           [Q_INTERSECT] = lib_intersect,
	[Q_OVERLAP] = lib_overlap,       [Q_GAP] = lib_gap,
};

static int run_library(void *ctx, query q, const target *t, seo_arena *a,
		       answer *ans)
{
	return lib_runs[q] ? lib_runs[q](ctx, t, a, ans) : SEO_EINVAL;
}

/* ---- PostgreSQL ----------------------------------------------------------- */

/* One statement's result as answer text. */
static void sql_text(const PGresult *res, int has_total, text *o)
{
	int rows = PQntuples(res), cols = PQnfields(res);

	if (has_total)
		tx_printf(o, "%s\n", rows ? PQgetvalue(res, 0, 0) : "0");
	for (int r = 0; r < rows; r++)
		for (int c = has_total; c < cols; c++)
			tx_printf(o, "%s%c",
				  PQgetisnull(res, r, c) ? "\\N" :
							   PQgetvalue(res, r, c),
				  c + 1 < cols ? '\t' : '\n');
}

/* A libpq session answering on one baseline (sessions may be shared
 * by two of these). */
typedef struct pg_side {
	PGconn *pg;
	baseline b;
} pg_side;

/*
 * The row's statements on the side's baseline (prepare_all), one by
 * itself or several as one pipeline (a single sync, as one round trip);
 * 0 or SEO_EIO.
 */
static int run_sql(void *ctx, query q, const target *t, seo_arena *a,
		   answer *ans)
{
	const pg_side *ps = ctx;
	PGconn *pg = ps->pg;
	const char *params[2] = { t->a, t->b };
	const stmt_id *s = qstmts(q, ps->b);
	size_t n = qstmt_count(q), nulls = 0, got = 0;
	int rc = 0;

	(void)a;
	if (n == 1) {
		const struct stmt *st = &stmts[s[0]];
		PGresult *res = PQexecPrepared(pg, st->name, st->n_params,
					       params, NULL, NULL, 0);

		rc = PQresultStatus(res) == PGRES_TUPLES_OK ? 0 : SEO_EIO;
		if (!rc && ans->out)
			sql_text(res, st->has_total, ans->out);
		PQclear(res);
		goto out;
	}
	if (PQenterPipelineMode(pg) != 1)
		return SEO_EIO;
	for (size_t i = 0; i < n; i++)
		if (!PQsendQueryPrepared(pg, stmts[s[i]].name,
					 stmts[s[i]].n_params, params, NULL,
					 NULL, 0))
			rc = SEO_EIO;
	if (!rc && !PQpipelineSync(pg))
		rc = SEO_EIO;
	/* each statement's result then a NULL, then the sync; read up to
	 * the sync even after an error, so that the pipeline can end */
	for (;;) {
		PGresult *res = PQgetResult(pg);
		ExecStatusType st;

		if (!res) {
			if (++nulls > n) {
				rc = SEO_EIO;
				break;
			}
			continue;
		}
		st = PQresultStatus(res);
		if (st == PGRES_PIPELINE_SYNC) {
			PQclear(res);
			break;
		}
		if (st != PGRES_TUPLES_OK || got >= n)
			rc = SEO_EIO;
		else if (!rc && ans->out)
			sql_text(res, stmts[s[got]].has_total, ans->out);
		got++;
		PQclear(res);
	}
	if (PQexitPipelineMode(pg) != 1 && !rc)
		rc = SEO_EIO;
out:
	if (rc)
		fprintf(stderr, "graph-bench: %s: %s", qtab[q].name,
			PQerrorMessage(pg));
	return rc;
}

static int prepare_all(PGconn *pg)
{
	for (int s = S_NONE + 1; s < S_COUNT; s++) {
		PGresult *res = PQprepare(pg, stmts[s].name, stmts[s].sql,
					  stmts[s].n_params, NULL);
		int ok = PQresultStatus(res) == PGRES_COMMAND_OK;

		PQclear(res);
		if (!ok) {
			fprintf(stderr, "graph-bench: prepare %s: %s",
				stmts[s].name, PQerrorMessage(pg));
			return SEO_EIO;
		}
	}
	return 0;
}

/* ---- svc-graph over gRPC --------------------------------------------------- */

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
		    answer *ans)
{
	grpc_side *g = ctx;
	Grpc__Health__V1__HealthCheckRequest health =
		GRPC__HEALTH__V1__HEALTH_CHECK_REQUEST__INIT;
	Seo__Graph__V1__DomainPageRequest page =
		SEO__GRAPH__V1__DOMAIN_PAGE_REQUEST__INIT;
	Seo__Graph__V1__DomainRequest one = SEO__GRAPH__V1__DOMAIN_REQUEST__INIT;
	Seo__Graph__V1__BacklinksRequest bl =
		SEO__GRAPH__V1__BACKLINKS_REQUEST__INIT;
	Seo__Graph__V1__LinkIntersectRequest li =
		SEO__GRAPH__V1__LINK_INTERSECT_REQUEST__INIT;
	Seo__Graph__V1__DomainOverlapRequest ov =
		SEO__GRAPH__V1__DOMAIN_OVERLAP_REQUEST__INIT;
	Seo__Graph__V1__LinkGapRequest gap = SEO__GRAPH__V1__LINK_GAP_REQUEST__INIT;
	char *pair[2] = { (char *)t->a, (char *)t->b };
	ProtobufCMessage *reqs[] = {
		[R_HEALTH] = &health.base, [R_PAGE] = &page.base,
		[R_ONE] = &one.base,       [R_BACKLINKS] = &bl.base,
		[R_INTERSECT] = &li.base,  [R_OVERLAP] = &ov.base,
		[R_GAP] = &gap.base,
	};
	/* the work itself, not svc-graph's result cache, except where the
	 * cache is what is timed */
	static const rpc_meta fresh = { "cache-control", "no-cache" };
	ProtobufCAllocator alloc;

	(void)ans;
	/* The library's first page: 100 rows, importance order. */
	page.domain = one.domain = bl.domain = pair[0];
	li.domain_a = pair[0];
	li.domain_b = pair[1];
	ov.domains = pair;
	ov.n_domains = 2;
	gap.domain = pair[1];
	gap.competitors = pair;
	gap.n_competitors = 1;
	page.has_limit = bl.has_limit = li.has_limit = ov.has_limit =
		gap.has_limit = 1;
	page.limit = bl.limit = li.limit = ov.limit = gap.limit = PAGE;
	seo_arena_pb_allocator(a, &alloc);
	g->done = 0;
	if (rpc_client_call(g->client, qtab[q].rpc, reqs[qtab[q].req],
			    qtab[q].resp, &alloc, CALL_TIMEOUT_MS, &fresh,
			    !(qtab[q].flags & CACHED), grpc_done, g))
		return SEO_ENOMEM;
	while (!g->done && event_base_loop(g->base, EVLOOP_ONCE) == 0)
		;
	return g->done && g->status == SEO_GRPC_OK ? 0 : SEO_EUPSTREAM;
}

/* ---- the gateway over HTTP/1.1 ----------------------------------------------- */

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
 * 0 when its status is `status`, SEO_ECLOSED when the connection was
 * closed before its first byte. */
static int http_read(http_side *h, int status)
{
	size_t len = 0, head = 0, body = 0;
	char line[16];

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
		if (r <= 0 && len == 0)
			return SEO_ECLOSED;
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
	snprintf(line, sizeof(line), "HTTP/1.1 %d ", status);
	if (len != head + body || strncmp(h->buf, line, strlen(line))) {
		fprintf(stderr, "graph-bench: unexpected answer: %.300s\n",
			h->buf);
		return SEO_EUPSTREAM;
	}
	return 0;
}

static int run_http(void *ctx, query q, const target *t, seo_arena *a,
		    answer *ans)
{
	http_side *h = ctx;
	char path[640], req[1024];
	int n;

	(void)a;
	(void)ans;
	/* The routes' defaults are the library's first page (limit 100,
	 * importance order). The bench's names need no escaping
	 * (parse_target). */
	switch (qtab[q].req) {
	case R_HEALTH:
		n = snprintf(path, sizeof(path), "%s", qtab[q].route);
		break;
	case R_INTERSECT:
		n = snprintf(path, sizeof(path),
			     "link-intersect?domain_a=%s&domain_b=%s", t->a,
			     t->b);
		break;
	case R_OVERLAP:
		n = snprintf(path, sizeof(path), "domain-overlap?domains=%s,%s",
			     t->a, t->b);
		break;
	case R_GAP:
		n = snprintf(path, sizeof(path),
			     "link-gap?domain=%s&competitors=%s", t->b, t->a);
		break;
	default:
		n = snprintf(path, sizeof(path), "%s?domain=%s", qtab[q].route,
			     t->a);
		break;
	}
	if (n < 0 || (size_t)n >= sizeof(path))
		return SEO_EINVAL;
	n = snprintf(req, sizeof(req),
		     "GET /v1/%s HTTP/1.1\r\nHost: %s\r\nX-API-Key: %s\r\n\r\n",
		     path, h->addr, h->key);
	if (n < 0 || (size_t)n >= sizeof(req))
		return SEO_EINVAL;
	/* A connection the gateway closed while it sat idle (its keep-alive
	 * timeout, while the other side of a slow row ran) is opened again
	 * once, as any keep-alive client does. */
	for (int tries = 0; tries < 2; tries++) {
		int rc = 0;

		if (tries > 0) {
			close(h->fd);
			if ((rc = http_connect(h)))
				return rc;
		}
		for (int off = 0; off < n && rc == 0;) {
			ssize_t w = send(h->fd, req + off, (size_t)(n - off),
					 MSG_NOSIGNAL);

			if (w <= 0)
				rc = SEO_ECLOSED;
			else
				off += (int)w;
		}
		if (rc == 0)
			rc = http_read(h, qtab[q].req == R_HEALTH ? 404 : 200);
		if (rc != SEO_ECLOSED)
			return rc;
	}
	fprintf(stderr, "graph-bench: the gateway closed the connection\n");
	return SEO_EIO;
}

/* ---- timing ------------------------------------------------------------- */

typedef struct timing {
	double p50, p99;
	double null_p50, null_p99; /* of the nulls beside it, if any */
	uint64_t total;            /* of the warm-up */
} timing;

/* p50 and p99 of samples[0..n), n > 0; sorts them. */
static void percentiles(double *samples, unsigned n, double *p50,
			double *p99)
{
	qsort(samples, n, sizeof(double), cmp_double);
	*p50 = samples[(n - 1) / 2];
	*p99 = samples[(size_t)((n - 1) * 0.99 + 0.5)];
}

/* One run of q on side s, its time in microseconds to *us. */
static int timed_run(const side *s, query q, const target *t, answer *ans,
		     double *us)
{
	seo_arena *a = seo_arena_new(64 * 1024);
	int rc;

	if (!a)
		return SEO_ENOMEM;
	*us = now_us();
	rc = s->run(s->ctx, q, t, a, ans);
	*us = now_us() - *us;
	seo_arena_free(a);
	return rc;
}

/*
 * Runs one query `reps` times after WARMUP untimed runs, or fewer when
 * `budget_ms` is spent (at least 3 timed runs; the query's time counts,
 * not the nulls'); the percentiles are of the runs made. With `nulls`
 * (NULL: none), every run, warm-up included, follows one call of the
 * side's null round trip (Q_NULL), timed into `nulls`; their percentiles
 * go to out->null_p50 and null_p99. The warm-up's answer goes to `warm`
 * when not NULL.
 */
static int measure(const side *s, query q, const target *t, unsigned reps,
		   double budget_ms, double *samples, double *nulls,
		   text *warm, timing *out)
{
	unsigned done = 0;
	double spent = 0;
	int rc = 0;

	for (unsigned i = 0; !rc && i < reps + WARMUP; i++) {
		answer ans = { 0, i == 0 ? warm : NULL }, none = { 0, NULL };
		double us = 0, null_us = 0;

		if (nulls && (rc = timed_run(s, Q_NULL, t, &none, &null_us)))
			break;
		rc = timed_run(s, q, t, &ans, &us);
		if (i == 0)
			out->total = ans.total;
		if (i < WARMUP)
			continue;
		if (nulls)
			nulls[done] = null_us;
		samples[done++] = us;
		spent += us / 1e3;
		if (done >= 3 && spent > budget_ms)
			break;
	}
	if (rc || done == 0)
		return rc;
	percentiles(samples, done, &out->p50, &out->p99);
	if (nulls)
		percentiles(nulls, done, &out->null_p50, &out->null_p99);
	return 0;
}

/* 0 when the two answers are the same text; else says where they part. */
static int same_answer(const target *t, query q, baseline b,
		       const text *ours, const text *sql)
{
	size_t i = 0, line = 1, start = 0;

	if (ours->oom || sql->oom)
		return SEO_ENOMEM;
	while (i < ours->len && i < sql->len && ours->p[i] == sql->p[i])
		if (ours->p[i++] == '\n') {
			line++;
			start = i;
		}
	if (i == ours->len && i == sql->len)
		return 0;
	fprintf(stderr, "graph-bench: %s %s: the SQL answer (%s baseline)"
			" differs from the library's at line %zu\n"
			"  library: %.*s\n  SQL:     %.*s\n",
		t->label, qtab[q].name,
		baseline_names[b], line,
		(int)strcspn(ours->p + start, "\n"), ours->p + start,
		(int)strcspn(sql->p + start, "\n"), sql->p + start);
	return SEO_EINVAL;
}

/* LABEL=DOMAIN or LABEL=A,B; for http, names that need no escaping in a
 * URL. */
static int parse_target(char *arg, int http, target *t)
{
	static const char name_chars[] = "abcdefghijklmnopqrstuvwxyz"
					 "ABCDEFGHIJKLMNOPQRSTUVWXYZ"
					 "0123456789.-";
	char *eq = strchr(arg, '='), *comma;

	if (!eq || (size_t)(eq - arg) >= sizeof(t->label))
		goto bad;
	snprintf(t->label, sizeof(t->label), "%.*s", (int)(eq - arg), arg);
	t->a = eq + 1;
	t->b = NULL;
	comma = strchr(t->a, ',');
	if (comma) {
		*comma = '\0';
		t->b = comma + 1;
	}
	if (!*t->a || (t->b && (!*t->b || strchr(t->b, ','))))
		goto bad;
	if (http && (strspn(t->a, name_chars) != strlen(t->a) ||
		     (t->b && strspn(t->b, name_chars) != strlen(t->b))))
		goto bad;
	return 0;
bad:
	fprintf(stderr, "graph-bench: expected LABEL=DOMAIN or LABEL=A,B: %s\n",
		arg);
	return SEO_EINVAL;
}

typedef enum mode { M_QUERY, M_CHECK, M_GRPC, M_HTTP } mode;

/* The side of each mode's rows (ON_LIB, ON_GRPC, ON_HTTP). */
static const unsigned mode_side[] = {
	[M_QUERY] = ON_LIB, [M_CHECK] = ON_LIB, [M_GRPC] = ON_GRPC,
	[M_HTTP] = ON_HTTP,
};

/* What one mode's run holds. */
typedef struct run {
	mode m;
	unsigned reps;
	double budget_ms, *samples, *nulls;
	side ours, sql; /* sql.ctx NULL: no PostgreSQL, else &ps */
	pg_side ps;     /* its session and the baseline of the rows */
	text a, b;      /* the warm-up answers compared */
	int differ;     /* answers that differed (check) */
} run;

/* p50 and p99 of a side, or "-" when it has none. */
static void print_pair(int have, double p50, double p99)
{
	if (have)
		printf("\t%.1f\t%.1f", p50, p99);
	else
		printf("\t-\t-");
}

/*
 * Times (or, for check, compares) query q for t and prints its line. Every
 * row but the null's own is timed beside its side's null round trip,
 * where the side has one (the library has none).
 */
static int one_row(run *r, query q, const target *t)
{
	int ours = (qtab[q].flags & mode_side[r->m]) != 0;
	int sql = r->sql.ctx && qstmt_count(q) > 0;
	int compare = ours && sql;
	int paired = r->m != M_CHECK && q != Q_NULL;
	int ours_null = paired && (qtab[Q_NULL].flags & mode_side[r->m]);
	unsigned reps = r->m == M_CHECK ? 0 : r->reps;
	unsigned ours_reps = reps;
	timing a = { 0 }, b = { 0 };
	int rc = 0;

	if (r->m == M_QUERY && ours_reps < LIB_REPS)
		ours_reps = LIB_REPS;
	r->a.len = r->b.len = 0;
	if (ours)
		rc = measure(&r->ours, q, t, ours_reps, r->budget_ms, r->samples,
			     ours_null ? r->nulls : NULL,
			     compare ? &r->a : NULL, &a);
	if (!rc && sql)
		rc = measure(&r->sql, q, t, reps, r->budget_ms, r->samples,
			     paired ? r->nulls : NULL,
			     compare ? &r->b : NULL, &b);
	if (rc) {
		fprintf(stderr, "graph-bench: %s %s failed: %s\n", t->label,
			qtab[q].name, seo_strerror(rc));
		return rc;
	}
	if (compare && (rc = same_answer(t, q, r->ps.b, &r->a, &r->b))) {
		if (r->m != M_CHECK || rc != SEO_EINVAL)
			return rc;
		r->differ++;
	}
	printf("%s\t%s", t->label, qtab[q].name);
	if (r->m == M_CHECK) {
		printf("\t%s\t%s\n", baseline_names[r->ps.b],
		       !compare ? "-" : rc ? "differs" : "same");
		return 0;
	}
	if (r->m == M_QUERY && ours)
		printf("\t%llu", (unsigned long long)a.total);
	else if (r->m == M_QUERY)
		printf("\t-");
	print_pair(ours, a.p50, a.p99);
	if (r->m == M_QUERY) {
		print_pair(sql, b.p50, b.p99);
		print_pair(sql && paired, b.null_p50, b.null_p99);
	} else {
		print_pair(ours && ours_null, a.null_p50, a.null_p99);
	}
	printf("\n");
	fflush(stdout);
	return 0;
}

/* query, check, grpc and http: the same rows, runs and percentiles on the
 * library (and PostgreSQL), svc-graph, or the gateway. */
static int cmd_time(mode m, int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "index", required_argument, NULL, 'i' },
		{ "pg", required_argument, NULL, 'p' },
		{ "addr", required_argument, NULL, 'a' },
		{ "key", required_argument, NULL, 'k' },
		{ "reps", required_argument, NULL, 'n' },
		{ "budget-ms", required_argument, NULL, 'b' },
		{ "baseline", required_argument, NULL, 'B' },
		{ NULL, 0, NULL, 0 },
	};
	static const char *const usage[] = {
		[M_QUERY] = "query --index DIR [--pg URL"
			    " [--baseline strict|computed]]",
		[M_CHECK] = "check --index DIR --pg URL",
		[M_GRPC] = "grpc --addr HOST:PORT",
		[M_HTTP] = "http --addr HOST:PORT --key KEY",
	};
	const char *dir = NULL, *url = NULL, *addr = NULL, *key = NULL;
	int lib = m == M_QUERY || m == M_CHECK;
	target *targets = NULL;
	graph_index *ix = NULL;
	PGconn *pg = NULL;
	grpc_side g = { 0 };
	http_side h = { .fd = -1 };
	run r = { .m = m, .reps = 200, .budget_ms = 5000,
		  .sql = { run_sql, NULL } };
	target null_row = { "null", "", NULL };
	const char *base = NULL;
	/* check compares both baselines, query times the one asked */
	baseline first, last;
	int c, rc = SEO_EINVAL;

	while ((c = getopt_long(argc, argv, "", longopts, NULL)) != -1) {
		switch (c) {
		case 'i': dir = optarg; break;
		case 'p': url = optarg; break;
		case 'a': addr = optarg; break;
		case 'k': key = optarg; break;
		case 'n': r.reps = (unsigned)strtoul(optarg, NULL, 10); break;
		case 'b': r.budget_ms = strtod(optarg, NULL); break;
		case 'B': base = optarg; break;
		default: goto usage;
		}
	}
	if (lib != (dir != NULL) || lib == (addr != NULL) ||
	    (m == M_HTTP) != (key != NULL) || (url && !lib) ||
	    (m == M_CHECK && !url) || optind >= argc || r.reps < 3 ||
	    r.reps > MAX_REPS || (base && (m != M_QUERY || !url)) ||
	    (base && baseline_named(base) == B__COUNT))
		goto usage;
	first = base ? baseline_named(base) : B_STRICT;
	last = m == M_CHECK ? B_COMPUTED : first;
	r.samples = malloc((MAX_REPS + 1) * sizeof(double));
	r.nulls = malloc((MAX_REPS + 1) * sizeof(double));
	targets = calloc((size_t)(argc - optind), sizeof(*targets));
	if (!r.samples || !r.nulls || !targets) {
		rc = SEO_ENOMEM;
		goto out;
	}
	for (int i = optind; i < argc; i++)
		if ((rc = parse_target(argv[i], m == M_HTTP,
				       &targets[i - optind])))
			goto out;
	switch (m) {
	case M_QUERY:
	case M_CHECK:
		if ((rc = graph_index_open(dir, &ix))) {
			fprintf(stderr, "graph-bench: cannot open the index %s:"
					" %s\n", dir, seo_strerror(rc));
			goto out;
		}
		r.ours = (side){ run_library, ix };
		break;
	case M_GRPC:
		g.base = event_base_new();
		if (!g.base) {
			rc = SEO_ENOMEM;
			goto out;
		}
		if ((rc = rpc_client_new(g.base, addr, &g.client)))
			goto out;
		r.ours = (side){ run_grpc, &g };
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
		r.ours = (side){ run_http, &h };
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
		r.ps.pg = pg;
		r.sql.ctx = &r.ps;
	}
	/* the computed baseline's run: only its own statements' rows */
	if (first == B_STRICT && (rc = one_row(&r, Q_NULL, &null_row)))
		goto out;
	for (int i = 0; i < argc - optind; i++)
		for (int q = Q_NULL + 1; q < Q_COUNT; q++)
			for (baseline b = first; b <= last; b++) {
				if (!(qtab[q].flags & PAIR) != !targets[i].b ||
				    (b == B_COMPUTED && !has_computed((query)q)))
					continue;
				r.ps.b = b;
				if ((rc = one_row(&r, (query)q, &targets[i])))
					goto out;
			}
	if (r.differ) {
		fprintf(stderr, "graph-bench: %d SQL answers differ from the"
				" library's\n", r.differ);
		rc = SEO_EINVAL;
	}
	goto out;
usage:
	fprintf(stderr, "usage: graph-bench %s [--reps 3..%d] [--budget-ms B]"
			" LABEL=DOMAIN|LABEL=A,B...\n", usage[m], MAX_REPS);
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
	free(r.samples);
	free(r.nulls);
	free(r.a.p);
	free(r.b.p);
	free(targets);
	return rc;
}

/* ---- load: many connections at once --------------------------------------- */

/*
 * `load` times the gateway's rows under concurrency, each beside the same
 * question on PostgreSQL, in the same minute: N connections to each (one
 * thread and one keep-alive connection or libpq session each, prepared
 * statements), every thread asking the row's question again as soon as
 * it has its answer, for S seconds in LOAD_SLICES slices, the gateway's
 * and PostgreSQL's alternated; each figure is its side's median slice.
 * The cached rows (the gateway cannot ask past svc-graph's cache) stand
 * beside the SQL of their computed row.
 */

/* The row whose statements answer q on PostgreSQL: q's own, else the
 * computed row of the same RPC. */
static query sql_row(query q)
{
	if (qstmt_count(q) > 0)
		return q;
	for (int r = Q_NULL; r < Q_COUNT; r++)
		if (qstmt_count((query)r) > 0 && qtab[r].rpc == qtab[q].rpc)
			return (query)r;
	return q;
}

/* One connection's thread: its side, and the latencies it measured. */
typedef struct loader {
	pthread_t thread;
	side s;
	query q;
	const target *t;
	atomic_int *stop;
	double *samples, end_us;
	size_t n, cap;
	int rc;
} loader;

static void *loader_main(void *arg)
{
	loader *l = arg;
	answer none = { 0, NULL };

	while (!atomic_load(l->stop)) {
		double us;

		if ((l->rc = timed_run(&l->s, l->q, l->t, &none, &us)))
			break;
		if (l->n == l->cap) {
			size_t cap = l->cap ? l->cap * 2 : 4096;
			double *ns = realloc(l->samples, cap * sizeof(double));

			if (!ns) {
				l->rc = SEO_ENOMEM;
				break;
			}
			l->samples = ns;
			l->cap = cap;
		}
		l->samples[l->n++] = us;
	}
	l->end_us = now_us();
	return NULL;
}

/* Untimed runs on each connection before a load row: its session and
 * the row's first touches warm (WARMUP each would take minutes at 64
 * connections). */
#define LOAD_WARMUP 2

/* Each row's time is cut in this many slices, the gateway's and
 * PostgreSQL's alternated, and each figure is the median of its side's
 * slices: a stall of the shared machine (another process's I/O, a
 * checkpoint) then spoils one slice of one side, not the row's ratio. */
#define LOAD_SLICES 3

/* Requests per second, p50 and p99 (microseconds) of q for t on the
 * sides of `ls[0..n)` for `secs` seconds, after LOAD_WARMUP untimed runs
 * on each connection when `warm`. */
static int load_side(loader *ls, size_t n, query q, const target *t,
		     unsigned secs, int warm, double *rps, double *p50,
		     double *p99)
{
	atomic_int stop = 0;
	double start, end = 0, *all;
	size_t total = 0, at = 0, started = 0;
	answer none = { 0, NULL };
	int rc = 0;

	for (size_t i = 0; warm && i < n && !rc; i++)
		for (int w = 0; w < LOAD_WARMUP && !rc; w++) {
			double us;

			rc = timed_run(&ls[i].s, q, t, &none, &us);
		}
	if (rc)
		return rc;
	start = now_us();
	for (; started < n; started++) {
		ls[started].q = q;
		ls[started].t = t;
		ls[started].stop = &stop;
		ls[started].n = 0;
		ls[started].rc = 0;
		if (pthread_create(&ls[started].thread, NULL, loader_main,
				   &ls[started])) {
			rc = SEO_ENOMEM;
			break;
		}
	}
	if (!rc)
		sleep(secs);
	atomic_store(&stop, 1);
	for (size_t i = 0; i < started; i++) {
		pthread_join(ls[i].thread, NULL);
		if (ls[i].rc && !rc)
			rc = ls[i].rc;
		if (ls[i].end_us > end)
			end = ls[i].end_us;
		total += ls[i].n;
	}
	if (rc || total == 0)
		return rc ? rc : SEO_EIO;
	if (!(all = malloc(total * sizeof(double))))
		return SEO_ENOMEM;
	for (size_t i = 0; i < n; i++) {
		memcpy(all + at, ls[i].samples, ls[i].n * sizeof(double));
		at += ls[i].n;
	}
	*rps = (double)total / ((end - start) / 1e6);
	percentiles(all, (unsigned)total, p50, p99);
	free(all);
	return 0;
}

/* Whether `label` is one of the comma-separated `list` (NULL: none). */
static int label_in(const char *list, const char *label)
{
	size_t n = strlen(label);

	for (const char *p = list; p && *p; p += strcspn(p, ",")) {
		p += *p == ',';
		if (strncmp(p, label, n) == 0 && (p[n] == ',' || !p[n]))
			return 1;
	}
	return 0;
}

/* The sides of a load row, in the order their slices alternate. */
enum { L_GATEWAY, L_STRICT, L_COMPUTED, L__N };

/* load --pg URL --addr HOST:PORT --key KEY --conns N --seconds S
 * [--computed LABEL,...]: one line per row of the gateway: label, query,
 * the gateway's requests/s, p50 and p99 (microseconds), then
 * PostgreSQL's strict baseline's, then its computed baseline's and
 * "own" or "same" (see the top of this file). */
static int cmd_load(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "pg", required_argument, NULL, 'p' },
		{ "addr", required_argument, NULL, 'a' },
		{ "key", required_argument, NULL, 'k' },
		{ "conns", required_argument, NULL, 'c' },
		{ "seconds", required_argument, NULL, 's' },
		{ "computed", required_argument, NULL, 'C' },
		{ NULL, 0, NULL, 0 },
	};
	const char *url = NULL, *addr = NULL, *key = NULL, *computed = NULL;
	unsigned long conns = 0, secs = 0;
	target *targets = NULL, null_row = { "null", "", NULL };
	loader *ls[L__N] = { NULL };
	pg_side *ps = NULL; /* conns strict, then conns computed */
	http_side *hs = NULL;
	int c, rc = SEO_EINVAL, nt;

	while ((c = getopt_long(argc, argv, "", longopts, NULL)) != -1) {
		switch (c) {
		case 'p': url = optarg; break;
		case 'a': addr = optarg; break;
		case 'k': key = optarg; break;
		case 'c': conns = strtoul(optarg, NULL, 10); break;
		case 's': secs = strtoul(optarg, NULL, 10); break;
		case 'C': computed = optarg; break;
		default: goto usage;
		}
	}
	if (!url || !addr || !key || conns < 1 || conns > 1024 || secs < 1 ||
	    secs > 3600 || optind >= argc)
		goto usage;
	nt = argc - optind;
	targets = calloc((size_t)nt, sizeof(*targets));
	for (int k = 0; k < L__N; k++)
		ls[k] = calloc(conns, sizeof(loader));
	ps = calloc(2 * conns, sizeof(*ps));
	hs = calloc(conns, sizeof(*hs));
	if (!targets || !ls[L_GATEWAY] || !ls[L_STRICT] || !ls[L_COMPUTED] ||
	    !ps || !hs) {
		rc = SEO_ENOMEM;
		goto out;
	}
	for (size_t i = 0; i < conns; i++)
		hs[i].fd = -1;
	for (int i = 0; i < nt; i++)
		if ((rc = parse_target(argv[optind + i], 1, &targets[i])))
			goto out;
	for (size_t i = 0; i < conns; i++) {
		PGconn *conn;

		hs[i] = (http_side){ .fd = -1, .addr = addr, .key = key,
				     .cap = 64 * 1024 };
		if (!(hs[i].buf = malloc(hs[i].cap))) {
			rc = SEO_ENOMEM;
			goto out;
		}
		if ((rc = http_connect(&hs[i])))
			goto out;
		ls[L_GATEWAY][i].s = (side){ run_http, &hs[i] };
		conn = PQconnectdb(url);
		ps[i] = (pg_side){ conn, B_STRICT };
		ps[conns + i] = (pg_side){ conn, B_COMPUTED };
		ls[L_STRICT][i].s = (side){ run_sql, &ps[i] };
		ls[L_COMPUTED][i].s = (side){ run_sql, &ps[conns + i] };
		if (PQstatus(conn) != CONNECTION_OK) {
			fprintf(stderr, "graph-bench: %s", PQerrorMessage(conn));
			rc = SEO_EIO;
			goto out;
		}
		if ((rc = prepare_all(conn)))
			goto out;
	}
	for (int i = -1; i < nt; i++) {
		const target *t = i < 0 ? &null_row : &targets[i];
		int on_computed = i >= 0 && label_in(computed, t->label);

		for (int q = Q_NULL; q < Q_COUNT; q++) {
			/* [side][requests/s, p50, p99][slice] */
			double f[L__N][3][LOAD_SLICES];
			unsigned slice = secs > LOAD_SLICES ?
						 (unsigned)secs / LOAD_SLICES : 1;
			int own = on_computed && has_computed(sql_row((query)q));
			int sides = own ? L__N : L_COMPUTED;

			if (!(qtab[q].flags & ON_HTTP) ||
			    (i < 0) != (q == Q_NULL) ||
			    (i >= 0 && !(qtab[q].flags & PAIR) != !t->b))
				continue;
			for (int k = 0; k < LOAD_SLICES && !rc; k++)
				for (int sd = 0; sd < sides && !rc; sd++)
					rc = load_side(ls[sd], conns,
						       sd == L_GATEWAY ?
							       (query)q :
							       sql_row((query)q),
						       t, slice, k == 0,
						       &f[sd][0][k], &f[sd][1][k],
						       &f[sd][2][k]);
			if (rc) {
				fprintf(stderr, "graph-bench: load %s %s"
						" failed: %s\n", t->label,
					qtab[q].name, seo_strerror(rc));
				goto out;
			}
			for (int sd = 0; sd < sides; sd++)
				for (int m = 0; m < 3; m++)
					qsort(f[sd][m], LOAD_SLICES,
					      sizeof(double), cmp_double);
			printf("%s\t%s", t->label, qtab[q].name);
			for (int sd = 0; sd < L__N; sd++) {
				/* a row whose strict statements serve both
				 * repeats them */
				int from = sd == L_COMPUTED && !own ? L_STRICT : sd;

				if (sd == L_COMPUTED && !on_computed)
					printf("\t-\t-\t-\t-");
				else
					printf("\t%.0f\t%.1f\t%.1f",
					       f[from][0][LOAD_SLICES / 2],
					       f[from][1][LOAD_SLICES / 2],
					       f[from][2][LOAD_SLICES / 2]);
			}
			if (on_computed)
				printf("\t%s", own ? "own" : "same");
			printf("\n");
			fflush(stdout);
		}
	}
	rc = 0;
	goto out;
usage:
	fprintf(stderr, "usage: graph-bench load --pg URL --addr HOST:PORT"
			" --key KEY --conns 1..1024 --seconds S"
			" [--computed LABEL,...] LABEL=DOMAIN|LABEL=A,B...\n");
out:
	for (size_t i = 0; ps && hs && i < conns; i++) {
		PQfinish(ps[i].pg);
		if (hs[i].fd >= 0)
			close(hs[i].fd);
		free(hs[i].buf);
	}
	for (int k = 0; k < L__N; k++) {
		for (size_t i = 0; ls[k] && i < conns; i++)
			free(ls[k][i].samples);
		free(ls[k]);
	}
	free(targets);
	free(ps);
	free(hs);
	return rc;
}

/* ---- dump: what the index serves, for PostgreSQL ---------------------------- */

/* example.co.uk <-> uk.co.example */
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

/* The crawl's vertices file: reversed names by id, to find the id of a
 * domain a row names. Owns its two arrays. */
typedef struct vertices {
	char *names;  /* NUL-terminated, in id order */
	size_t *off;
	size_t n;
} vertices;

/* Reads "id<TAB>reversed name[<TAB>...]" lines numbered 0, 1, 2... in
 * byte order of the names, as the bench's crawl writes them. */
static int vertices_read(const char *path, vertices *v)
{
	FILE *f = fopen(path, "r");
	char *line = NULL;
	size_t cap = 0, len = 0, size = 0, ocap = 0;
	int rc = 0;

	if (!f) {
		perror(path);
		return SEO_ENOTFOUND;
	}
	while (!rc && getline(&line, &cap, f) > 0) {
		char *name = strchr(line, '\t');
		size_t l = name ? strcspn(++name, "\t\n") : 0;

		if (len + l + 1 > size) {
			char *nn = realloc(v->names, (size + l + 1) * 2);

			if (!nn) {
				rc = SEO_ENOMEM;
				break;
			}
			v->names = nn;
			size = (size + l + 1) * 2;
		}
		if (v->n == ocap) {
			size_t *no = realloc(v->off, (ocap * 2 + 16) *
							     sizeof(*no));

			if (!no) {
				rc = SEO_ENOMEM;
				break;
			}
			v->off = no;
			ocap = ocap * 2 + 16;
		}
		if (name) {
			memcpy(v->names + len, name, l);
			v->names[len + l] = '\0';
		}
		if (!name || !l || strtoull(line, NULL, 10) != v->n ||
		    (v->n && strcmp(v->names + v->off[v->n - 1],
				    v->names + len) >= 0)) {
			fprintf(stderr, "graph-bench: %s:%zu: expected id %zu and"
					" names in byte order\n", path,
				v->n + 1, v->n);
			rc = SEO_EINVAL;
			break;
		}
		v->off[v->n++] = len;
		len += l + 1;
	}
	free(line);
	fclose(f);
	return rc;
}

static int vertex_id(const vertices *v, const char *domain, uint32_t *id)
{
	char rev[GRAPH_DOMAIN_MAX + 1];
	size_t lo = 0, hi = v->n;

	reverse_name(domain, rev, sizeof(rev));
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		int c = strcmp(v->names + v->off[mid], rev);

		if (c == 0) {
			*id = (uint32_t)mid;
			return 0;
		}
		if (c < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	fprintf(stderr, "graph-bench: %s is not in the vertices file\n", domain);
	return SEO_ENOTFOUND;
}

/* `s` as a field of PostgreSQL's COPY text format; NULL is \N. */
static void copy_field(FILE *f, const char *s)
{
	if (!s) {
		fputs("\\N", f);
		return;
	}
	for (; *s; s++) {
		switch (*s) {
		case '\\': fputs("\\\\", f); break;
		case '\t': fputs("\\t", f); break;
		case '\n': fputs("\\n", f); break;
		case '\r': fputs("\\r", f); break;
		default: putc(*s, f); break;
		}
	}
}

/* One URL-level link, its strings in the index mapping. */
typedef struct dlink {
	const char *from_url, *to_url, *anchor, *rel, *type;
	int64_t ts;
	uint32_t dst, seq, src;
} dlink;

/*
 * The dictionary ids of a set of strings of one index dictionary. Its
 * strings lie in the mapping in id order (docs/index-format.md: `urls.*`,
 * `anchors.*`), so the order of their addresses is the order of their
 * ids; the ids here are dense ranks in it. Owns `p`.
 */
typedef struct dict {
	const char **p;
	size_t n, cap;
} dict;

static int dict_add(dict *d, const char *s)
{
	if (!s)
		return 0;
	if (d->n == d->cap) {
		size_t cap = d->cap * 2 + 1024;
		const char **np = realloc(d->p, cap * sizeof(*np));

		if (!np)
			return SEO_ENOMEM;
		d->p = np;
		d->cap = cap;
	}
	d->p[d->n++] = s;
	return 0;
}

static int cmp_addr(const void *a, const void *b)
{
	uintptr_t x = (uintptr_t) * (const char *const *)a;
	uintptr_t y = (uintptr_t) * (const char *const *)b;

	return x < y ? -1 : x > y;
}

/* Sorts and deduplicates, then writes "id<TAB>string" lines. */
static void dict_write(dict *d, FILE *f)
{
	size_t m = 0;

	qsort(d->p, d->n, sizeof(*d->p), cmp_addr);
	for (size_t i = 0; i < d->n; i++)
		if (m == 0 || d->p[m - 1] != d->p[i])
			d->p[m++] = d->p[i];
	d->n = m;
	for (size_t i = 0; i < d->n; i++) {
		fprintf(f, "%zu\t", i);
		copy_field(f, d->p[i]);
		putc('\n', f);
	}
}

/* The id of `s` (dict_write done), or \N for NULL. */
static void dict_field(const dict *d, FILE *f, const char *s)
{
	const char **hit = s ? bsearch(&s, d->p, d->n, sizeof(*d->p),
				       cmp_addr) :
			       NULL;

	if (hit)
		fprintf(f, "%zu", (size_t)(hit - d->p));
	else
		fputs("\\N", f);
}

/* The files of a dump, in the order of dump_files. */
enum { F_FACTS, F_LINKS, F_URLS, F_ANCHORS, F_CAPTURES, F_STATUS,
       F_SIMILAR, F_SIMTOTAL, F__N };
static const char *const dump_files[F__N] = {
	"facts.tsv", "links.tsv", "urls.tsv", "anchors.tsv", "captures.tsv",
	"status.tsv", "similar.tsv", "simtotal.tsv",
};

/* What the dump has met so far. */
typedef struct dump {
	const graph_index *ix;
	const vertices *v;
	FILE *f[F__N];
	dlink *links;
	size_t n_links, cap_links;
	uint64_t captures, similar;
	dict urls, anchors;
} dump;

/* The similar domains the index stores for domain `id` (its heaviest
 * domains'): rows (id, position, similar domain id, shared linkers) and
 * the total, the same precomputation our index holds. */
static int dump_similar(dump *d, uint32_t id, const char *name, seo_arena *a)
{
	graph_similar_row *r;
	uint64_t stored, total;
	size_t n;
	int rc;

	if ((rc = graph_similar_stored(d->ix, name, &stored)) || stored == 0)
		return rc;
	{
		graph_page pg = { (uint32_t)stored, 0 };

		if ((rc = graph_similar_domains(d->ix, name, &pg, a, &r, &n,
						&total)))
			return rc;
	}
	for (size_t i = 0; i < n; i++) {
		uint32_t sim;

		if ((rc = vertex_id(d->v, r[i].similar_domain, &sim)))
			return rc;
		fprintf(d->f[F_SIMILAR], "%u\t%zu\t%u\t%u\n", id, i, sim,
			r[i].shared_linkers);
	}
	fprintf(d->f[F_SIMTOTAL], "%u\t%llu\n", id, (unsigned long long)total);
	d->similar++;
	return 0;
}

/* Domain `id`: its facts, captures, status counts and inbound links. */
static int dump_domain(dump *d, uint32_t id, const char *name, seo_arena *a)
{
	graph_authority au;
	graph_crawl_history h;
	graph_status_row *st;
	size_t n, i;
	uint64_t total, seq = 0;
	int rc;

	if ((rc = graph_authority_get(d->ix, name, a, &au)) ||
	    (rc = graph_crawl_history_get(d->ix, name, &h)) ||
	    (rc = graph_status_codes(d->ix, name, a, &st, &n)))
		return rc;
	fprintf(d->f[F_FACTS], "%u\t%s\t%llu\t%u\t", id, name,
		(unsigned long long)au.total_host_count, au.score);
	if (au.popularity_rank)
		fprintf(d->f[F_FACTS], "%u", au.popularity_rank);
	else
		fputs("\\N", d->f[F_FACTS]);
	fprintf(d->f[F_FACTS], "\t%s\t", nul(au.registered_at));
	copy_field(d->f[F_FACTS], au.registrar);
	fprintf(d->f[F_FACTS], "\t%lld\t%lld\t%llu\n", (long long)h.first_seen,
		(long long)h.last_seen, (unsigned long long)h.total_urls);
	for (i = 0; i < n; i++)
		fprintf(d->f[F_STATUS], "%u\t%u\t%u\n", id, st[i].status_code,
			st[i].count);
	for (graph_page pg = { GRAPH_LIMIT_MAX, 0 };; pg.offset += n) {
		graph_url_row *u;

		if ((rc = graph_url_index(d->ix, name, &pg, a, &u, &n, &total)))
			return rc;
		for (i = 0; i < n; i++) {
			fprintf(d->f[F_CAPTURES], "%u\t", id);
			copy_field(d->f[F_CAPTURES], u[i].url);
			fprintf(d->f[F_CAPTURES], "\t%u\t", u[i].status_code);
			copy_field(d->f[F_CAPTURES], u[i].mime);
			fprintf(d->f[F_CAPTURES], "\t%lld\n",
				(long long)u[i].crawled_at);
		}
		d->captures += n;
		if (n < GRAPH_LIMIT_MAX)
			break;
	}
	/* every link, newest first: `seq` is its place in that order, the
	 * tie-break of links of one referrer crawled in the same second */
	for (graph_page pg = { GRAPH_LIMIT_MAX, 0 };; pg.offset += n) {
		graph_backlink_row *r;

		if ((rc = graph_backlinks(d->ix, name, GRAPH_SORT_RECENT, NULL,
					  &pg, a, &r, &n, &total)))
			return rc;
		for (i = 0; i < n; i++) {
			dlink *l;

			if (d->n_links == d->cap_links) {
				size_t cap = d->cap_links * 2 + 4096;
				dlink *nl = realloc(d->links, cap * sizeof(*nl));

				if (!nl)
					return SEO_ENOMEM;
				d->links = nl;
				d->cap_links = cap;
			}
			l = &d->links[d->n_links++];
			*l = (dlink){ r[i].from_url, r[i].to_url,
				      r[i].anchor_text, r[i].rel, r[i].link_type,
				      r[i].crawled_at, id, (uint32_t)seq++, 0 };
			if ((rc = vertex_id(d->v, r[i].from_domain, &l->src)) ||
			    (rc = dict_add(&d->urls, l->from_url)) ||
			    (rc = dict_add(&d->urls, l->to_url)) ||
			    (rc = dict_add(&d->anchors, l->anchor)))
				return rc;
		}
		if (n < GRAPH_LIMIT_MAX)
			break;
	}
	return dump_similar(d, id, name, a);
}

/*
 * Walks every domain of the vertices file through the library and writes
 * COPY text files into `out`: facts (per domain: id, name, hosts, score,
 * Tranco rank, registration, registrar, first and last seen, URLs),
 * links (target id, seq, source id, URL ids, anchor id, rel, type, crawl
 * time), urls and anchors (id, string), captures (domain id, URL, status,
 * MIME type, time: url-index's rows), status (domain id, status,
 * captures), and the stored similar domains (dump_similar()). The row strings of these calls point into the index mapping
 * (graph.h allows it; the index does it), so they outlive each domain's
 * arena. Prints the counts as JSON.
 */
static int cmd_dump(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "index", required_argument, NULL, 'i' },
		{ "vertices", required_argument, NULL, 'v' },
		{ "out", required_argument, NULL, 'o' },
		{ NULL, 0, NULL, 0 },
	};
	const char *dir = NULL, *vpath = NULL, *out = NULL;
	graph_index *ix = NULL;
	vertices v = { 0 };
	dump d = { 0 };
	char path[4096];
	int c, rc = SEO_EINVAL;

	while ((c = getopt_long(argc, argv, "", longopts, NULL)) != -1) {
		switch (c) {
		case 'i': dir = optarg; break;
		case 'v': vpath = optarg; break;
		case 'o': out = optarg; break;
		default: goto usage;
		}
	}
	if (!dir || !vpath || !out || optind < argc)
		goto usage;
	if ((rc = vertices_read(vpath, &v)))
		goto out;
	if ((rc = graph_index_open(dir, &ix))) {
		fprintf(stderr, "graph-bench: cannot open the index %s: %s\n",
			dir, seo_strerror(rc));
		goto out;
	}
	d.ix = ix;
	d.v = &v;
	if (mkdir(out, 0755) != 0 && errno != EEXIST) {
		perror(out);
		rc = SEO_EIO;
		goto out;
	}
	for (int i = 0; i < F__N; i++) {
		snprintf(path, sizeof(path), "%s/%s", out, dump_files[i]);
		if (!(d.f[i] = fopen(path, "w"))) {
			perror(path);
			rc = SEO_EIO;
			goto out;
		}
	}
	for (size_t id = 0; !rc && id < v.n; id++) {
		char name[GRAPH_DOMAIN_MAX + 1];
		seo_arena *a = seo_arena_new(64 * 1024);

		if (!a) {
			rc = SEO_ENOMEM;
			break;
		}
		reverse_name(v.names + v.off[id], name, sizeof(name));
		rc = dump_domain(&d, (uint32_t)id, name, a);
		seo_arena_free(a);
	}
	if (rc)
		goto out;
	dict_write(&d.urls, d.f[F_URLS]);
	dict_write(&d.anchors, d.f[F_ANCHORS]);
	for (size_t i = 0; i < d.n_links; i++) {
		const dlink *l = &d.links[i];
		FILE *f = d.f[F_LINKS];

		fprintf(f, "%u\t%u\t%u\t", l->dst, l->seq, l->src);
		dict_field(&d.urls, f, l->from_url);
		putc('\t', f);
		dict_field(&d.urls, f, l->to_url);
		putc('\t', f);
		dict_field(&d.anchors, f, l->anchor);
		putc('\t', f);
		copy_field(f, l->rel);
		fprintf(f, "\t%s\t%lld\n", l->type, (long long)l->ts);
	}
	printf("{\"domains\": %zu, \"links\": %zu, \"urls\": %zu,"
	       " \"anchors\": %zu, \"captures\": %llu, \"similar\": %llu}\n",
	       v.n, d.n_links, d.urls.n, d.anchors.n,
	       (unsigned long long)d.captures, (unsigned long long)d.similar);
	goto out;
usage:
	fprintf(stderr, "usage: graph-bench dump --index DIR --vertices FILE"
			" --out DIR\n");
	rc = SEO_EINVAL;
out:
	for (int i = 0; i < F__N; i++)
		if (d.f[i] && (ferror(d.f[i]) | fclose(d.f[i])) && !rc) {
			fprintf(stderr, "graph-bench: cannot write %s/%s\n", out,
				dump_files[i]);
			rc = SEO_EIO;
		}
	free(d.links);
	free(d.urls.p);
	free(d.anchors.p);
	free(v.names);
	free(v.off);
	graph_index_close(ix);
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
	rc = crawlgen_synth_write(dir, (uint32_t)domains, edges, seed, a, inputs,
				  &n);
	if (rc)
		fprintf(stderr, "graph-bench: synth: %s\n", seo_strerror(rc));
out:
	seo_arena_free(a);
	return rc;
}

int main(int argc, char **argv)
{
	static const struct {
		const char *name;
		mode m;
	} timed[] = {
		{ "query", M_QUERY }, { "check", M_CHECK },
		{ "grpc", M_GRPC },   { "http", M_HTTP },
	};
	const char *cmd = argc >= 2 ? argv[1] : "";

	/* a server gone away is an error to report, not a signal */
	signal(SIGPIPE, SIG_IGN);
	if (strcmp(cmd, "synth") == 0)
		return cmd_synth(argc - 1, argv + 1) ? 1 : 0;
	if (strcmp(cmd, "dump") == 0)
		return cmd_dump(argc - 1, argv + 1) ? 1 : 0;
	if (strcmp(cmd, "load") == 0)
		return cmd_load(argc - 1, argv + 1) ? 1 : 0;
	for (size_t i = 0; i < sizeof(timed) / sizeof(timed[0]); i++)
		if (strcmp(cmd, timed[i].name) == 0)
			return cmd_time(timed[i].m, argc - 1, argv + 1) ? 1 : 0;
	fprintf(stderr, "usage: graph-bench synth|dump|query|check|grpc|http|load"
			" ...\n");
	return 1;
}

/*
 * service.c: the seo.graph.v1.Graph methods, each a graph.h query turned
 * into its response message on the call's arena, and the refcounted index
 * they run on (see graph_service.h).
 */
#include "graph_service.h"

#include <limits.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include "cache.h"
#include "graph.h"
#include "platforms.h"
#include "seo/errors.h"
#include "seo/graph/v1/graph.pb-c.h"
#include "seo/log.h"
#include "seo/pb.h"

#define T(name) Seo__Graph__V1__##name
#define D(name) (&seo__graph__v1__##name##__descriptor)
#define N(a) (sizeof(a) / sizeof((a)[0]))

#define PAGE_DEFAULT 100
#define SIMILAR_LIMIT_MAX 100
#define BATCH_MAX 50
/* The link audit reads the strongest referrers only, so that its cost is
 * bounded whatever the domain (docs/metrics.md). */
#define AUDIT_REFERRERS_MAX 10000
#define AUDIT_LIST 10
/* The result cache of each loaded release (cache.h): similar-domains and
 * link-audit answers, the two that can take milliseconds. */
#define CACHE_BYTES ((size_t)64 << 20)
/* Similar-domains rows computed and kept per domain: a page ending within
 * them is cut from the cached ranking. */
#define SIMILAR_CACHE_ROWS GRAPH_LIMIT_MAX

/* One loaded release. The service holds one reference, each call one. */
typedef struct release {
	graph_index *ix;
	graph__cache *cache; /* answers on ix, gone with it */
	atomic_int refs;
} release;

/* Which manifest.json a release was opened from. */
typedef struct identity {
	dev_t dev;
	ino_t ino;
	struct timespec mtime;
	int valid;
} identity;

struct graph_service {
	pthread_mutex_t mu; /* guards cur */
	release *cur;
	identity tried;     /* the last directory opened, well or not */
	char dir[PATH_MAX];
};

/* ---- the served release ------------------------------------------------ */

static release *acquire(graph_service *s)
{
	release *r;

	pthread_mutex_lock(&s->mu);
	r = s->cur;
	if (r != NULL)
		atomic_fetch_add(&r->refs, 1);
	pthread_mutex_unlock(&s->mu);
	return r;
}

static void put(release *r)
{
	if (r == NULL || atomic_fetch_sub(&r->refs, 1) != 1)
		return;
	graph__cache_free(r->cache);
	graph_index_close(r->ix);
	free(r);
}

static int manifest_identity(const graph_service *s, identity *id)
{
	char path[PATH_MAX + 16];
	struct stat st;

	snprintf(path, sizeof(path), "%s/manifest.json", s->dir);
	if (stat(path, &st) != 0)
		return SEO_ENOTFOUND;
	*id = (identity){st.st_dev, st.st_ino, st.st_mtim, 1};
	return 0;
}

static int same_identity(const identity *a, const identity *b)
{
	return a->valid && b->valid && a->dev == b->dev && a->ino == b->ino &&
	       a->mtime.tv_sec == b->mtime.tv_sec &&
	       a->mtime.tv_nsec == b->mtime.tv_nsec;
}

int graph_service_reload(graph_service *s)
{
	identity now;
	graph_index *ix = NULL;
	release *r, *old;
	int rc;

	/* The identity is read before opening: if the directory is swapped
	 * in between, the next check sees a new identity and opens again,
	 * rather than never. */
	rc = manifest_identity(s, &now);
	if (rc != 0 || same_identity(&now, &s->tried))
		return rc == SEO_ENOTFOUND ? SEO_ENOTFOUND : 0;
	s->tried = now;
	rc = graph_index_open(s->dir, &ix);
	if (rc != 0) {
		log_warn("cannot open the crawl index at %s: %s", s->dir,
			 seo_strerror(rc));
		return rc;
	}
	r = malloc(sizeof(*r));
	if (r == NULL || graph__cache_new(CACHE_BYTES, &r->cache) != 0) {
		free(r);
		graph_index_close(ix);
		s->tried.valid = 0;
		return SEO_ENOMEM;
	}
	r->ix = ix;
	atomic_init(&r->refs, 1);
	pthread_mutex_lock(&s->mu);
	old = s->cur;
	s->cur = r;
	pthread_mutex_unlock(&s->mu);
	put(old);
	log_info("serving crawl release %s from %s (%llu domains, %llu edges)",
		 graph_index_release(ix), s->dir,
		 (unsigned long long)graph_index_domain_count(ix),
		 (unsigned long long)graph_index_edge_count(ix));
	return 1;
}

int graph_service_new(const char *data_dir, graph_service **out)
{
	graph_service *s;

	*out = NULL;
	if (strlen(data_dir) >= sizeof(s->dir))
		return SEO_EINVAL;
	s = calloc(1, sizeof(*s));
	if (s == NULL)
		return SEO_ENOMEM;
	pthread_mutex_init(&s->mu, NULL);
	strcpy(s->dir, data_dir);
	if (graph_service_reload(s) == SEO_ENOTFOUND)
		log_warn("no crawl index at %s; graph calls answer "
			 "service_unavailable until one is there", data_dir);
	*out = s;
	return 0;
}

void graph_service_free(graph_service *s)
{
	if (s == NULL)
		return;
	put(s->cur);
	pthread_mutex_destroy(&s->mu);
	free(s);
}

/* ---- helpers ------------------------------------------------------------ */

typedef struct gcall {
	const graph_index *ix;
	graph__cache *cache; /* the release's */
	int fresh;           /* not to be answered from the cache */
	seo_arena *a;
	graph_fail *err;
} gcall;

static int fail(gcall *c, const char *code, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static int fail(gcall *c, const char *code, const char *fmt, ...)
{
	va_list ap;

	c->err->code = code;
	va_start(ap, fmt);
	vsnprintf(c->err->message, sizeof(c->err->message), fmt, ap);
	va_end(ap);
	return SEO_EINVAL;
}

/* A query's result: the domains were checked before, so any failure left
 * is ours. */
static int query_rc(gcall *c, int rc)
{
	if (rc == 0)
		return 0;
	if (rc == SEO_ENOMEM)
		return fail(c, "internal_error", "out of memory");
	return fail(c, "internal_error", "graph query failed: %s",
		    seo_strerror(rc));
}

static int oom(gcall *c)
{
	return fail(c, "internal_error", "out of memory");
}

static void *msg_new(gcall *c, const ProtobufCMessageDescriptor *d)
{
	ProtobufCMessage *m = seo_arena_alloc(c->a, d->sizeof_message);

	if (m != NULL)
		protobuf_c_message_init(d, m);
	return m;
}

/* An array of n message pointers, each a new message of type d. */
static void *msgs_new(gcall *c, const ProtobufCMessageDescriptor *d, size_t n)
{
	void **v = seo_arena_alloc(c->a, (n ? n : 1) * sizeof(*v));

	for (size_t i = 0; v != NULL && i < n; i++)
		if ((v[i] = msg_new(c, d)) == NULL)
			return NULL;
	return v;
}

/* Strings are copied out of the index mapping: see graph_service.h. A
 * NULL stays NULL (an unset optional field). */
static char *str(gcall *c, const char *s, int *ok)
{
	char *copy;

	if (s == NULL)
		return NULL;
	copy = seo_arena_strdup(c->a, s);
	if (copy == NULL)
		*ok = 0;
	return copy;
}

/* Unix seconds as ISO 8601 UTC; NULL for 0 (never). */
static char *iso_time(gcall *c, int64_t t, int *ok)
{
	char buf[32];
	time_t tt = (time_t)t;
	struct tm tm;

	if (t == 0)
		return NULL;
	gmtime_r(&tt, &tm);
	strftime(buf, sizeof(buf), "%Y-%m-%dT%H:%M:%SZ", &tm);
	return str(c, buf, ok);
}

/* Normalises a domain argument into the arena; fails invalid_domain. */
static int domain_arg(gcall *c, const char *in, char **out)
{
	char buf[GRAPH_DOMAIN_MAX + 1];

	if (graph_normalize_domain(in, buf, sizeof(buf)) != 0)
		return fail(c, "invalid_domain", "invalid domain: \"%.200s\"",
			    in ? in : "");
	*out = seo_arena_strdup(c->a, buf);
	return *out != NULL ? 0 : oom(c);
}

/* Where field `name` of m is stored; the field must exist. */
static const char *field_at(const ProtobufCMessage *m, const char *name,
			    const ProtobufCFieldDescriptor **fd)
{
	*fd = protobuf_c_message_descriptor_get_field_by_name(m->descriptor,
							      name);
	return (const char *)m + (*fd)->offset;
}

/* The optional int64 field `name` of m, or `def` when unset. */
static int64_t opt_int(const ProtobufCMessage *m, const char *name,
		       int64_t def)
{
	const ProtobufCFieldDescriptor *fd;
	const char *at = field_at(m, name, &fd);
	protobuf_c_boolean has;
	int64_t v;

	memcpy(&has, (const char *)m + fd->quantifier_offset, sizeof(has));
	if (!has)
		return def;
	memcpy(&v, at, sizeof(v));
	return v;
}

/* The request's limit (1..max, default 100) and offset (>= 0, default
 * 0). */
static int page_arg(gcall *c, const ProtobufCMessage *req, int64_t max,
		    graph_page *pg)
{
	int64_t limit = opt_int(req, "limit", PAGE_DEFAULT);
	int64_t offset = opt_int(req, "offset", 0);

	if (limit < 1 || limit > max)
		return fail(c, "invalid_parameter",
			    "limit must be between 1 and %lld", (long long)max);
	if (offset < 0)
		return fail(c, "invalid_parameter", "offset must be at least 0");
	pg->limit = (uint32_t)limit;
	pg->offset = (uint64_t)offset;
	return 0;
}

/* A repeated domain argument `what` holds min..max domains. */
static int count_arg(gcall *c, const char *what, size_t n, size_t min,
		     size_t max)
{
	if (n < min || n > max)
		return fail(c, "invalid_parameter",
			    "%s must name between %zu and %zu domains", what,
			    min, max);
	return 0;
}

/* Normalises n domains (de-duplication is the query's business). */
static int domains_arg(gcall *c, char *const *in, size_t n, char ***out)
{
	char **v = seo_arena_alloc(c->a, (n ? n : 1) * sizeof(*v));

	if (v == NULL)
		return oom(c);
	for (size_t i = 0; i < n; i++)
		if (domain_arg(c, in[i], &v[i]) != 0)
			return SEO_EINVAL;
	*out = v;
	return 0;
}

/* The names of the risk flag bits set in `flags`. */
static char **risk_flags(gcall *c, unsigned flags, size_t *n)
{
	char **v = seo_arena_alloc(c->a, 8 * sizeof(*v));

	*n = 0;
	for (unsigned bit = 1; v != NULL && bit <= GRAPH_RISK_LOW_AUTHORITY;
	     bit <<= 1)
		if (flags & bit)
			v[(*n)++] = (char *)graph_risk_flag_name(bit);
	return v;
}

/* Sets field `name` of m, when m has one, to the `size` bytes at v; a
 * repeated field also gets its count n. Returns 1 when m has the field. */
static int set_field(ProtobufCMessage *m, const char *name, const void *v,
		     size_t size, size_t n)
{
	const ProtobufCFieldDescriptor *fd =
		protobuf_c_message_descriptor_get_field_by_name(m->descriptor,
								name);

	if (fd == NULL)
		return 0;
	memcpy((char *)m + fd->offset, v, size);
	if (fd->label == PROTOBUF_C_LABEL_REPEATED)
		memcpy((char *)m + fd->quantifier_offset, &n, sizeof(n));
	return 1;
}

/* ---- list methods ------------------------------------------------------- */

/*
 * One call of a list method: its normalised arguments, then what its query
 * found. Every list method is the same steps (arguments, paging, query,
 * rows, envelope) with its own arguments, query and row copy.
 */
typedef struct listing {
	const ProtobufCMessage *req;
	char *domain;   /* "domain", or LinkIntersect's domain_a */
	char *domain_b; /* LinkIntersect's */
	char **domains; /* DomainOverlap's domains, LinkGap's competitors */
	size_t n_domains;
	graph_sort sort;             /* Backlinks */
	graph_backlink_filter filter; /* Backlinks */
	int score;                   /* Backlinks: anchor_type, link_quality */
	graph_page pg;
	union {
		graph_backlink_row *backlink;
		graph_refdomain_row *refdomain;
		graph_outbound_row *outbound;
		graph_anchor_row *anchor;
		graph_top_page_row *top_page;
		graph_similar_row *similar;
		graph_intersect_row *intersect;
		graph_overlap_row *overlap;
		graph_url_row *url;
		graph_status_row *status;
	} rows;
	size_t n;
	uint64_t total;
	int cached; /* the rows came from the result cache */
} listing;

/* Copies row i of the listing into the row message `row`; clears *ok when
 * out of memory. */
typedef void (*row_copy)(gcall *c, const listing *l, size_t i, void *row,
			 int *ok);

typedef struct list_method {
	/* Parses the arguments but paging, in the order of their errors. */
	int (*args)(gcall *c, listing *l);
	int64_t limit_max; /* 0: not paged */
	int (*query)(gcall *c, listing *l); /* a graph.h result code */
	const ProtobufCMessageDescriptor *resp, *row;
	row_copy copy;
} list_method;

/* The listing's rows as row messages of type d. */
static void *rows_copy(gcall *c, const ProtobufCMessageDescriptor *d,
		       row_copy copy, const listing *l)
{
	void **v = msgs_new(c, d, l->n);
	int ok = v != NULL;

	for (size_t i = 0; ok && i < l->n; i++)
		copy(c, l, i, v[i], &ok);
	return ok ? v : NULL;
}

/* Fills the envelope fields the response `out` has from the listing. */
static int envelope(gcall *c, ProtobufCMessage *out, const listing *l,
		    void *data)
{
	const int64_t total = (int64_t)l->total, limit = l->pg.limit,
		      offset = (int64_t)l->pg.offset;
	const protobuf_c_boolean cached = l->cached;
	char *release;
	int ok = 1;

	set_field(out, "data", &data, sizeof(data), l->n);
	set_field(out, "domain", &l->domain, sizeof(l->domain), 0);
	set_field(out, "domain_a", &l->domain, sizeof(l->domain), 0);
	set_field(out, "domain_b", &l->domain_b, sizeof(l->domain_b), 0);
	set_field(out, "domains", &l->domains, sizeof(l->domains),
		  l->n_domains);
	set_field(out, "competitors", &l->domains, sizeof(l->domains),
		  l->n_domains);
	set_field(out, "total", &total, sizeof(total), 0);
	set_field(out, "limit", &limit, sizeof(limit), 0);
	set_field(out, "offset", &offset, sizeof(offset), 0);
	set_field(out, "cached", &cached, sizeof(cached), 0);
	if (protobuf_c_message_descriptor_get_field_by_name(
		    out->descriptor, "crawl_release") != NULL) {
		release = str(c, graph_index_release(c->ix), &ok);
		set_field(out, "crawl_release", &release, sizeof(release), 0);
	}
	return ok ? 0 : SEO_ENOMEM;
}

static int list_call(gcall *c, const list_method *lm,
		     const ProtobufCMessage *req, ProtobufCMessage **resp)
{
	listing l = {.req = req};
	ProtobufCMessage *out;
	void *data;

	if (lm->args(c, &l) != 0 ||
	    (lm->limit_max > 0 && page_arg(c, req, lm->limit_max, &l.pg) != 0) ||
	    query_rc(c, lm->query(c, &l)) != 0)
		return SEO_EINVAL;
	out = msg_new(c, lm->resp);
	data = rows_copy(c, lm->row, lm->copy, &l);
	if (out == NULL || data == NULL || envelope(c, out, &l, data) != 0)
		return oom(c);
	*resp = out;
	return 0;
}

/* -- arguments -- */

/* The request's "domain". */
static int args_domain(gcall *c, listing *l)
{
	const ProtobufCFieldDescriptor *fd;
	const char *in;

	memcpy(&in, field_at(l->req, "domain", &fd), sizeof(in));
	return domain_arg(c, in, &l->domain);
}

static int args_backlinks(gcall *c, listing *l)
{
	const T(BacklinksRequest) *req = (const void *)l->req;
	char *from;

	l->sort = req->sort == SEO__GRAPH__V1__SORT__SORT_RECENT
			  ? GRAPH_SORT_RECENT
			  : GRAPH_SORT_IMPORTANCE;
	l->score = req->score;
	if (req->link_type != NULL && *req->link_type != '\0')
		l->filter.link_type = req->link_type;
	if (args_domain(c, l) != 0)
		return SEO_EINVAL;
	if (req->from_domain == NULL || *req->from_domain == '\0')
		return 0;
	if (domain_arg(c, req->from_domain, &from) != 0)
		return SEO_EINVAL;
	l->filter.from_domain = from;
	return 0;
}

static int args_intersect(gcall *c, listing *l)
{
	const T(LinkIntersectRequest) *req = (const void *)l->req;

	if (domain_arg(c, req->domain_a, &l->domain) != 0)
		return SEO_EINVAL;
	return domain_arg(c, req->domain_b, &l->domain_b);
}

static int args_overlap(gcall *c, listing *l)
{
	const T(DomainOverlapRequest) *req = (const void *)l->req;

	l->n_domains = req->n_domains;
	if (count_arg(c, "domains", l->n_domains, 2, GRAPH_OVERLAP_MAX) != 0)
		return SEO_EINVAL;
	return domains_arg(c, req->domains, l->n_domains, &l->domains);
}

static int args_gap(gcall *c, listing *l)
{
	const T(LinkGapRequest) *req = (const void *)l->req;

	l->n_domains = req->n_competitors;
	if (count_arg(c, "competitors", l->n_domains, 1,
		      GRAPH_OVERLAP_MAX) != 0 ||
	    args_domain(c, l) != 0)
		return SEO_EINVAL;
	return domains_arg(c, req->competitors, l->n_domains, &l->domains);
}

/* -- queries -- */

static int query_backlinks(gcall *c, listing *l)
{
	return graph_backlinks(c->ix, l->domain, l->sort, &l->filter, &l->pg,
			       c->a, &l->rows.backlink, &l->n, &l->total);
}

static int query_referring_domains(gcall *c, listing *l)
{
	return graph_referring_domains(c->ix, l->domain, &l->pg, c->a,
				       &l->rows.refdomain, &l->n, &l->total);
}

static int query_outbound_links(gcall *c, listing *l)
{
	return graph_outbound_links(c->ix, l->domain, &l->pg, c->a,
				    &l->rows.outbound, &l->n, &l->total, NULL);
}

static int query_anchor_text(gcall *c, listing *l)
{
	return graph_anchor_text(c->ix, l->domain, &l->pg, c->a,
				 &l->rows.anchor, &l->n, &l->total);
}

static int query_top_pages(gcall *c, listing *l)
{
	return graph_top_pages(c->ix, l->domain, &l->pg, c->a,
			       &l->rows.top_page, &l->n, &l->total);
}

/* The listing's page of a ranking whose first n rows are `rows`. */
static void similar_page(listing *l, graph_similar_row *rows, size_t n)
{
	uint64_t from = l->pg.offset < n ? l->pg.offset : n;

	l->rows.similar = rows + from;
	l->n = n - from < l->pg.limit ? (size_t)(n - from) : l->pg.limit;
}

/*
 * A cached ranking is the total (8 bytes), the number of rows (4), then
 * each row's shared linkers (4) and domain (with its NUL). Returns 1 and
 * fills the listing's page when the cache holds enough rows for it.
 */
static int similar_cached(gcall *c, const char *key, listing *l)
{
	uint64_t total, end = l->pg.offset + l->pg.limit;
	graph_similar_row *rows;
	const char *p, *e;
	uint32_t n;
	size_t len;
	void *v;

	if (graph__cache_get(c->cache, key, strlen(key), c->a, &v, &len) != 0 ||
	    len < 12)
		return 0;
	p = v;
	e = p + len;
	memcpy(&total, p, 8);
	memcpy(&n, p + 8, 4);
	if (n < end && n < total)
		return 0;
	rows = seo_arena_alloc(c->a, (n ? n : 1) * sizeof(*rows));
	if (rows == NULL)
		return 0;
	p += 12;
	for (uint32_t i = 0; i < n; i++) {
		const char *nul = NULL;

		if (e - p > 4)
			nul = memchr(p + 4, '\0', (size_t)(e - p - 4));
		if (nul == NULL)
			return 0;
		memcpy(&rows[i].shared_linkers, p, 4);
		rows[i].similar_domain = p + 4;
		p = nul + 1;
	}
	l->total = total;
	l->cached = 1;
	similar_page(l, rows, n);
	return 1;
}

static void similar_store(gcall *c, const char *key,
			  const graph_similar_row *rows, size_t n,
			  uint64_t total)
{
	size_t len = 12, at = 12;
	uint32_t n32 = (uint32_t)n;
	char *v;

	for (size_t i = 0; i < n; i++)
		len += 4 + strlen(rows[i].similar_domain) + 1;
	v = seo_arena_alloc(c->a, len);
	if (v == NULL)
		return;
	memcpy(v, &total, 8);
	memcpy(v + 8, &n32, 4);
	for (size_t i = 0; i < n; i++) {
		size_t sl = strlen(rows[i].similar_domain) + 1;

		memcpy(v + at, &rows[i].shared_linkers, 4);
		memcpy(v + at + 4, rows[i].similar_domain, sl);
		at += 4 + sl;
	}
	/* not kept (no memory): the next call counts again */
	graph__cache_put(c->cache, key, strlen(key), v, len);
}

/* A page within the first SIMILAR_CACHE_ROWS rows comes from the cache,
 * or is counted with the rest of its hundred rows and kept there. */
static int query_similar_domains(gcall *c, listing *l)
{
	uint64_t end = l->pg.offset + l->pg.limit;
	graph_page first = {0, 0};
	graph_similar_row *rows;
	char *key;
	size_t n;
	int rc;

	if (end > SIMILAR_CACHE_ROWS)
		return graph_similar_domains(c->ix, l->domain, &l->pg, c->a,
					     &l->rows.similar, &l->n,
					     &l->total);
	key = seo_arena_printf(c->a, "SimilarDomains %s", l->domain);
	if (key == NULL)
		return SEO_ENOMEM;
	if (!c->fresh && similar_cached(c, key, l))
		return 0;
	first.limit = (uint32_t)((end + SIMILAR_LIMIT_MAX - 1) /
				 SIMILAR_LIMIT_MAX * SIMILAR_LIMIT_MAX);
	rc = graph_similar_domains(c->ix, l->domain, &first, c->a, &rows, &n,
				   &l->total);
	if (rc != 0)
		return rc;
	similar_store(c, key, rows, n, l->total);
	similar_page(l, rows, n);
	return 0;
}

static int query_link_intersect(gcall *c, listing *l)
{
	return graph_link_intersect(c->ix, l->domain, l->domain_b, &l->pg,
				    c->a, &l->rows.intersect, &l->n,
				    &l->total);
}

static int query_domain_overlap(gcall *c, listing *l)
{
	return graph_domain_overlap(c->ix, (const char *const *)l->domains,
				    l->n_domains, (unsigned)l->n_domains, NULL,
				    &l->pg, c->a, &l->rows.overlap, &l->n,
				    &l->total);
}

/* Referring domains of at least one competitor that skip the domain. */
static int query_link_gap(gcall *c, listing *l)
{
	return graph_domain_overlap(c->ix, (const char *const *)l->domains,
				    l->n_domains, 1, l->domain, &l->pg, c->a,
				    &l->rows.overlap, &l->n, &l->total);
}

static int query_url_index(gcall *c, listing *l)
{
	return graph_url_index(c->ix, l->domain, &l->pg, c->a, &l->rows.url,
			       &l->n, &l->total);
}

static int query_status_codes(gcall *c, listing *l)
{
	return graph_status_codes(c->ix, l->domain, c->a, &l->rows.status,
				  &l->n);
}

/* -- rows -- */

static void copy_backlink(gcall *c, const listing *l, size_t i, void *row,
			  int *ok)
{
	const graph_backlink_row *r = &l->rows.backlink[i];
	T(BacklinkRow) *m = row;

	m->from_domain = str(c, r->from_domain, ok);
	m->from_url = str(c, r->from_url, ok);
	m->to_url = str(c, r->to_url, ok);
	m->anchor_text = str(c, r->anchor_text, ok);
	m->rel = str(c, r->rel, ok);
	m->link_type = str(c, r->link_type, ok);
	/* 0 hosts means the domain graph did not list the source */
	m->has_domain_host_count = r->domain_host_count > 0;
	m->domain_host_count = r->domain_host_count;
	m->crawled_at = iso_time(c, r->crawled_at, ok);
	if (m->crawled_at == NULL)
		m->crawled_at = "";
	m->has_from_domain_score = 1;
	m->from_domain_score = r->from_domain_score;
	if (l->score) {
		m->anchor_type = (char *)graph_anchor_type(
			r->anchor_text, r->link_type, l->domain);
		m->link_quality =
			(char *)graph_link_quality(r->from_domain_score);
	}
}

static void copy_referring_domain(gcall *c, const listing *l, size_t i,
				  void *row, int *ok)
{
	const graph_refdomain_row *r = &l->rows.refdomain[i];
	T(ReferringDomainRow) *m = row;

	m->from_domain = str(c, r->from_domain, ok);
	m->total_links = r->total_links;
	m->has_from_domain_score = 1;
	m->from_domain_score = r->from_domain_score;
}

static void copy_outbound_link(gcall *c, const listing *l, size_t i,
			       void *row, int *ok)
{
	const graph_outbound_row *r = &l->rows.outbound[i];
	T(OutboundLinkRow) *m = row;

	m->to_domain = str(c, r->to_domain, ok);
	m->to_url = str(c, r->to_url, ok);
	m->anchor_text = str(c, r->anchor_text, ok);
	m->link_type = str(c, r->link_type, ok);
	m->edge_count = r->edge_count;
}

static void copy_anchor_text(gcall *c, const listing *l, size_t i,
			     void *row, int *ok)
{
	T(AnchorTextRow) *m = row;

	m->anchor_text = str(c, l->rows.anchor[i].anchor_text, ok);
	m->link_count = l->rows.anchor[i].link_count;
	m->domain_count = l->rows.anchor[i].domain_count;
}

static void copy_top_page(gcall *c, const listing *l, size_t i, void *row,
			  int *ok)
{
	T(TopPageRow) *m = row;

	m->url = str(c, l->rows.top_page[i].url, ok);
	m->inbound_links = l->rows.top_page[i].inbound_links;
	m->referring_domains = l->rows.top_page[i].referring_domains;
}

static void copy_similar_domain(gcall *c, const listing *l, size_t i,
				void *row, int *ok)
{
	T(SimilarDomainRow) *m = row;

	m->similar_domain = str(c, l->rows.similar[i].similar_domain, ok);
	m->shared_linkers = l->rows.similar[i].shared_linkers;
}

static void copy_intersect(gcall *c, const listing *l, size_t i, void *row,
			   int *ok)
{
	T(LinkingDomainRow) *m = row;

	m->from_domain = str(c, l->rows.intersect[i].domain, ok);
	m->from_domain_score = l->rows.intersect[i].domain_score;
}

static void copy_overlap(gcall *c, const listing *l, size_t i, void *row,
			 int *ok)
{
	T(LinkingDomainRow) *m = row;

	m->from_domain = str(c, l->rows.overlap[i].domain, ok);
	m->from_domain_score = l->rows.overlap[i].domain_score;
}

/* A gap row also names the competitors the referrer links to. */
static void copy_gap(gcall *c, const listing *l, size_t i, void *row,
		     int *ok)
{
	const graph_overlap_row *r = &l->rows.overlap[i];
	T(LinkGapRow) *m = row;
	char **to = seo_arena_alloc(c->a, l->n_domains * sizeof(*to));

	if (to == NULL) {
		*ok = 0;
		return;
	}
	m->from_domain = str(c, r->domain, ok);
	m->from_domain_score = r->domain_score;
	m->links_to = to;
	for (size_t k = 0; k < l->n_domains; k++)
		if (r->links_to & (1u << k))
			to[m->n_links_to++] = l->domains[k];
}

static void copy_url(gcall *c, const listing *l, size_t i, void *row,
		     int *ok)
{
	const graph_url_row *r = &l->rows.url[i];
	T(UrlIndexRow) *m = row;

	m->url = str(c, r->url, ok);
	m->status_code = r->status_code;
	m->mime = r->mime ? str(c, r->mime, ok) : "";
	m->crawled_at = iso_time(c, r->crawled_at, ok);
	if (m->crawled_at == NULL)
		m->crawled_at = "";
}

static void copy_status(gcall *c, const listing *l, size_t i, void *row,
			int *ok)
{
	T(StatusCodeRow) *m = row;

	(void)c;
	(void)ok;
	m->status_code = l->rows.status[i].status_code;
	m->count = l->rows.status[i].count;
}

/* Defines method `fn` of a kind ("list" or "object"): its spec and the
 * query function that runs the kind's driver on it. */
#define METHOD(kind, fn, ...)                                                \
	static const kind##_method kind##_##fn = {__VA_ARGS__};              \
	static int q_##fn(gcall *c, const ProtobufCMessage *m,               \
			  ProtobufCMessage **resp)                           \
	{                                                                    \
		return kind##_call(c, &kind##_##fn, m, resp);                \
	}

#define LIST(fn, args, limit_max, resp, row, copy) \
	METHOD(list, fn, args, limit_max, query_##fn, D(resp), D(row), copy)

LIST(backlinks, args_backlinks, GRAPH_LIMIT_MAX, backlinks_response,
     backlink_row, copy_backlink)
LIST(referring_domains, args_domain, GRAPH_LIMIT_MAX,
     referring_domains_response, referring_domain_row, copy_referring_domain)
LIST(outbound_links, args_domain, GRAPH_LIMIT_MAX, outbound_links_response,
     outbound_link_row, copy_outbound_link)
LIST(anchor_text, args_domain, GRAPH_LIMIT_MAX, anchor_text_response,
     anchor_text_row, copy_anchor_text)
LIST(top_pages, args_domain, GRAPH_LIMIT_MAX, top_pages_response,
     top_page_row, copy_top_page)
LIST(similar_domains, args_domain, SIMILAR_LIMIT_MAX,
     similar_domains_response, similar_domain_row, copy_similar_domain)
LIST(link_intersect, args_intersect, GRAPH_LIMIT_MAX, link_intersect_response,
     linking_domain_row, copy_intersect)
LIST(domain_overlap, args_overlap, GRAPH_LIMIT_MAX, domain_overlap_response,
     linking_domain_row, copy_overlap)
LIST(link_gap, args_gap, GRAPH_LIMIT_MAX, link_gap_response, link_gap_row,
     copy_gap)
LIST(url_index, args_domain, GRAPH_LIMIT_MAX, url_index_response,
     url_index_row, copy_url)
LIST(status_codes, args_domain, 0, status_codes_response, status_code_row,
     copy_status)

/* ---- one-domain methods ------------------------------------------------- */

/* A method answering one `data` message about the request's domain. */
typedef struct object_method {
	const ProtobufCMessageDescriptor *resp, *data;
	/* Queries the domain into `data`: 0, or SEO_EINVAL with c->err. */
	int (*fill)(gcall *c, const char *domain, void *data);
} object_method;

static int object_call(gcall *c, const object_method *om,
		       const ProtobufCMessage *req, ProtobufCMessage **resp)
{
	listing l = {.req = req};
	ProtobufCMessage *out, *data;

	if (args_domain(c, &l) != 0)
		return SEO_EINVAL;
	out = msg_new(c, om->resp);
	data = msg_new(c, om->data);
	if (out == NULL || data == NULL)
		return oom(c);
	if (om->fill(c, l.domain, data) != 0)
		return SEO_EINVAL;
	set_field(out, "data", &data, sizeof(data), 0);
	set_field(out, "domain", &l.domain, sizeof(l.domain), 0);
	*resp = out;
	return 0;
}

static int fill_domain_authority(gcall *c, const char *domain, void *data)
{
	T(DomainAuthority) *d = data;
	graph_authority au;
	int ok = 1;

	if (query_rc(c, graph_authority_get(c->ix, domain, c->a, &au)) != 0)
		return SEO_EINVAL;
	d->score = au.score;
	d->referring_domains = (int64_t)au.referring_domains;
	d->total_host_count = (double)au.total_host_count;
	d->registered_at = str(c, au.registered_at, &ok);
	d->registrar = str(c, au.registrar, &ok);
	d->has_popularity_rank = au.popularity_rank > 0;
	d->popularity_rank = au.popularity_rank;
	d->health_score = au.health_score;
	d->risk_flags = risk_flags(c, au.risk_flags, &d->n_risk_flags);
	return ok && d->risk_flags != NULL ? 0 : oom(c);
}

static int fill_domain_rank(gcall *c, const char *domain, void *data)
{
	T(DomainRank) *d = data;
	graph_domain_rank dr;

	if (query_rc(c, graph_domain_rank_get(c->ix, domain, &dr)) != 0)
		return SEO_EINVAL;
	d->inbound_edges = (int64_t)dr.inbound_edges;
	d->unique_domains = (int64_t)dr.unique_domains;
	d->avg_linking_host_count = dr.avg_linking_host_count;
	return 0;
}

static int fill_crawl_history(gcall *c, const char *domain, void *data)
{
	T(CrawlHistory) *d = data;
	graph_crawl_history h;
	int ok = 1;

	if (query_rc(c, graph_crawl_history_get(c->ix, domain, &h)) != 0)
		return SEO_EINVAL;
	d->first_seen = iso_time(c, h.first_seen, &ok);
	d->last_seen = iso_time(c, h.last_seen, &ok);
	d->total_urls = (int64_t)h.total_urls;
	return ok ? 0 : oom(c);
}

#define OBJECT(fn, resp, data) \
	METHOD(object, fn, D(resp), D(data), fill_##fn)

OBJECT(domain_authority, domain_authority_response, domain_authority)
OBJECT(domain_rank, domain_rank_response, domain_rank)
OBJECT(crawl_history, crawl_history_response, crawl_history)

/* ---- site explorer ------------------------------------------------------ */

/* The first page of backlinks with the defaults of GET /v1/backlinks
 * (importance order), as site-explorer and batch give it. */
static int default_backlinks(gcall *c, char *domain, T(BacklinkRow) ***out,
			     size_t *n, uint64_t *total)
{
	listing l = {.domain = domain, .sort = GRAPH_SORT_IMPORTANCE,
		     .pg = {PAGE_DEFAULT, 0}};

	if (query_rc(c, query_backlinks(c, &l)) != 0)
		return SEO_EINVAL;
	*n = l.n;
	*total = l.total;
	*out = rows_copy(c, D(backlink_row), copy_backlink, &l);
	return *out != NULL ? 0 : oom(c);
}

static int q_site_explorer(gcall *c, const ProtobufCMessage *m,
			   ProtobufCMessage **resp)
{
	listing l = {.req = m, .pg = {PAGE_DEFAULT, 0}}, pages, anchors;
	T(SiteExplorerResponse) *out;
	T(SiteExplorer) *d;
	T(SiteAuthority) *au;
	graph_authority ga;
	uint64_t total;

	out = msg_new(c, D(site_explorer_response));
	d = msg_new(c, D(site_explorer));
	au = msg_new(c, D(site_authority));
	if (out == NULL || d == NULL || au == NULL)
		return oom(c);
	if (args_domain(c, &l) != 0)
		return SEO_EINVAL;
	pages = anchors = l;
	if (default_backlinks(c, l.domain, &d->backlinks, &d->n_backlinks,
			      &total) != 0 ||
	    query_rc(c, graph_authority_get(c->ix, l.domain, c->a, &ga)) != 0 ||
	    query_rc(c, query_top_pages(c, &pages)) != 0 ||
	    query_rc(c, query_anchor_text(c, &anchors)) != 0)
		return SEO_EINVAL;
	d->backlinks_total = (int64_t)total;
	au->score = ga.score;
	au->referring_domains = (int64_t)ga.referring_domains;
	au->total_host_count = (double)ga.total_host_count;
	d->authority = au;
	d->top_pages = rows_copy(c, D(top_page_row), copy_top_page, &pages);
	d->n_top_pages = pages.n;
	d->anchor_text = rows_copy(c, D(anchor_text_row), copy_anchor_text,
				   &anchors);
	d->n_anchor_text = anchors.n;
	if (d->top_pages == NULL || d->anchor_text == NULL)
		return oom(c);
	out->data = d;
	*resp = &out->base;
	return 0;
}

/* ---- link audit --------------------------------------------------------- */

/* Anchor types in the order of the anchor_profile fields. */
static const char *const anchor_types[] = {"branded", "partial", "generic",
					   "naked", "image"};

static T(AuditBacklink) *audit_row(gcall *c, const graph_backlink_row *r,
				   const char *domain)
{
	T(AuditBacklink) *m = msg_new(c, D(audit_backlink));
	int ok = m != NULL;

	if (!ok)
		return NULL;
	m->from_domain = str(c, r->from_domain, &ok);
	m->from_domain_score = r->from_domain_score;
	m->anchor_type = (char *)graph_anchor_type(r->anchor_text, r->link_type,
						   domain);
	m->link_quality = (char *)graph_link_quality(r->from_domain_score);
	return ok ? m : NULL;
}

/*
 * Reads the strongest referrers (one backlink each, importance order) and
 * fills the quality counts, the anchor profile and the top and risk lists:
 * the top are the first AUDIT_LIST, the risks the weakest AUDIT_LIST of
 * low quality, weakest first.
 */
static int audit_links(gcall *c, const char *domain, T(LinkAuditResponse) *o)
{
	double anchors[N(anchor_types)] = {0};
	graph_backlink_row *rows;
	uint64_t total;
	size_t n, i, k;
	double *prof[N(anchor_types)] = {
		&o->anchor_profile->branded, &o->anchor_profile->partial,
		&o->anchor_profile->generic, &o->anchor_profile->naked,
		&o->anchor_profile->image};

	/* a query page holds at most GRAPH_LIMIT_MAX rows */
	rows = seo_arena_alloc(c->a, AUDIT_REFERRERS_MAX * sizeof(*rows));
	if (rows == NULL)
		return oom(c);
	for (n = 0; n < AUDIT_REFERRERS_MAX;) {
		graph_page part = {GRAPH_LIMIT_MAX, n};
		graph_backlink_row *got;
		size_t m;

		if (query_rc(c, graph_backlinks(c->ix, domain,
						GRAPH_SORT_IMPORTANCE, NULL,
						&part, c->a, &got, &m,
						&total)) != 0)
			return SEO_EINVAL;
		memcpy(rows + n, got, m * sizeof(*got));
		n += m;
		if (m < GRAPH_LIMIT_MAX)
			break;
	}
	o->top_backlinks = seo_arena_alloc(c->a, AUDIT_LIST * sizeof(void *));
	o->risk_backlinks = seo_arena_alloc(c->a, AUDIT_LIST * sizeof(void *));
	if (o->top_backlinks == NULL || o->risk_backlinks == NULL)
		return oom(c);
	for (i = 0; i < n; i++) {
		const char *q = graph_link_quality(rows[i].from_domain_score);
		const char *t = graph_anchor_type(rows[i].anchor_text,
						  rows[i].link_type, domain);

		o->link_quality->high += strcmp(q, "high") == 0;
		o->link_quality->medium += strcmp(q, "medium") == 0;
		o->link_quality->low += strcmp(q, "low") == 0;
		for (k = 0; k < N(anchor_types); k++)
			anchors[k] += strcmp(t, anchor_types[k]) == 0;
		if (i < AUDIT_LIST &&
		    (o->top_backlinks[o->n_top_backlinks++] =
			     audit_row(c, &rows[i], domain)) == NULL)
			return oom(c);
	}
	o->link_quality->total = (int64_t)n;
	for (k = 0; k < N(anchor_types); k++)
		*prof[k] = n ? anchors[k] / (double)n : 0.0;
	for (i = n; i-- > 0 && o->n_risk_backlinks < AUDIT_LIST;)
		if (strcmp(graph_link_quality(rows[i].from_domain_score),
			   "low") == 0 &&
		    (o->risk_backlinks[o->n_risk_backlinks++] =
			     audit_row(c, &rows[i], domain)) == NULL)
			return oom(c);
	return 0;
}

/* The answer kept under `key`, unpacked on the call's arena; NULL on a
 * miss (or when the caller asked for a fresh one). */
static ProtobufCMessage *answer_cached(gcall *c, const char *key,
				       const ProtobufCMessageDescriptor *d)
{
	ProtobufCAllocator alloc;
	size_t len;
	void *v;

	if (c->fresh ||
	    graph__cache_get(c->cache, key, strlen(key), c->a, &v, &len) != 0)
		return NULL;
	seo_arena_pb_allocator(c->a, &alloc);
	return protobuf_c_message_unpack(d, &alloc, len, v);
}

static void answer_store(gcall *c, const char *key, ProtobufCMessage *m)
{
	size_t len;
	uint8_t *v;

	seo_pb_fill(m);
	len = protobuf_c_message_get_packed_size(m);
	v = seo_arena_alloc(c->a, len ? len : 1);

	/* not kept (no memory): the next call computes it again */
	if (v != NULL)
		graph__cache_put(c->cache, key, strlen(key), v,
				 protobuf_c_message_pack(m, v));
}

static int q_link_audit(gcall *c, const ProtobufCMessage *m,
			ProtobufCMessage **resp)
{
	const T(DomainRequest) *req = (const void *)m;
	const graph_page one = {1, 0};
	T(LinkAuditResponse) *out = msg_new(c, D(link_audit_response));
	T(OutboundSummary) *os = msg_new(c, D(outbound_summary));
	graph_outbound_summary gs;
	graph_outbound_row *ignored_rows;
	graph_authority au;
	uint64_t ignored_total;
	size_t ignored_n;
	char *domain, *key;
	T(LinkAuditResponse) *hit;
	int ok = 1;

	if (out == NULL || os == NULL)
		return oom(c);
	out->link_quality = msg_new(c, D(link_quality_counts));
	out->anchor_profile = msg_new(c, D(anchor_profile));
	if (out->link_quality == NULL || out->anchor_profile == NULL)
		return oom(c);
	if (domain_arg(c, req->domain, &domain) != 0)
		return SEO_EINVAL;
	key = seo_arena_printf(c->a, "LinkAudit %s", domain);
	if (key == NULL)
		return oom(c);
	hit = (void *)answer_cached(c, key, D(link_audit_response));
	if (hit != NULL) {
		hit->cached = 1;
		*resp = &hit->base;
		return 0;
	}
	if (query_rc(c, graph_authority_get(c->ix, domain, c->a, &au)) != 0 ||
	    audit_links(c, domain, out) != 0 ||
	    query_rc(c, graph_outbound_links(c->ix, domain, &one, c->a,
					     &ignored_rows, &ignored_n,
					     &ignored_total, &gs)) != 0)
		return SEO_EINVAL;
	out->domain = domain;
	out->health_score = au.health_score;
	out->risk_flags = risk_flags(c, au.risk_flags, &out->n_risk_flags);
	os->unique_destinations = (int64_t)gs.unique_destinations;
	os->top_domain = str(c, gs.top_domain, &ok);
	os->top_domain_concentration = gs.top_domain_concentration;
	out->outbound_summary = os;
	out->crawl_release = str(c, graph_index_release(c->ix), &ok);
	out->cached = 0;
	if (!ok || out->risk_flags == NULL)
		return oom(c);
	answer_store(c, key, &out->base);
	*resp = &out->base;
	return 0;
}

/* ---- batch -------------------------------------------------------------- */

static int q_batch(gcall *c, const ProtobufCMessage *m,
		   ProtobufCMessage **resp)
{
	const T(BatchRequest) *req = (const void *)m;
	T(BatchResponse) *out = msg_new(c, D(batch_response));
	T(BatchEntry) **v;
	graph_fail entry_err;
	gcall entry = *c;

	if (count_arg(c, "domains", req->n_domains, 1, BATCH_MAX) != 0)
		return SEO_EINVAL;
	v = msgs_new(c, D(batch_entry), req->n_domains);
	if (out == NULL || v == NULL)
		return oom(c);
	/* A malformed domain fails its entry only (and is not billed). */
	entry.err = &entry_err;
	for (size_t i = 0; i < req->n_domains; i++) {
		uint64_t total;
		char *domain;

		if (domain_arg(&entry, req->domains[i], &domain) != 0) {
			if (strcmp(entry_err.code, "invalid_domain") != 0)
				return fail(c, entry_err.code, "%s",
					    entry_err.message);
			v[i]->domain = req->domains[i];
			v[i]->error = (char *)entry_err.code;
			continue;
		}
		if (default_backlinks(c, domain, &v[i]->data, &v[i]->n_data,
				      &total) != 0)
			return SEO_EINVAL;
		v[i]->domain = domain;
		v[i]->success = 1;
		v[i]->total = (int64_t)total;
		out->succeeded++;
	}
	out->data = v;
	out->n_data = req->n_domains;
	*resp = &out->base;
	return 0;
}

/* ---- platforms (platforms.c) --------------------------------------------- */

static int q_platform_trends(gcall *c, const ProtobufCMessage *m,
			     ProtobufCMessage **resp)
{
	return graph__platform_trends_call(c->ix, c->a, m, resp, c->err);
}

static int q_platform_domains(gcall *c, const ProtobufCMessage *m,
			      ProtobufCMessage **resp)
{
	return graph__platform_domains_call(c->ix, c->a, m, resp, c->err);
}

/* ---- method table ------------------------------------------------------- */

typedef int (*query_fn)(gcall *c, const ProtobufCMessage *req,
			ProtobufCMessage **resp);

/* Runs fn on the served release, holding it for the call; `fresh`: not
 * answered from the result cache. */
static int serve(graph_service *s, query_fn fn, const ProtobufCMessage *req,
		 int fresh, seo_arena *a, ProtobufCMessage **resp,
		 graph_fail *err)
{
	release *r = acquire(s);
	gcall c = {NULL, NULL, fresh, a, err};
	int rc;

	if (r == NULL)
		return fail(&c, "service_unavailable",
			    "no crawl index is loaded");
	c.ix = r->ix;
	c.cache = r->cache;
	rc = fn(&c, req, resp);
	put(r);
	return rc;
}

static int rpc_serve(rpc_ctx *ctx, query_fn fn, const ProtobufCMessage *req,
		     ProtobufCMessage **resp)
{
	const char *cc = rpc_ctx_meta(ctx, "cache-control");
	graph_fail err;

	/* "no-cache", as in HTTP: computed afresh (the bench's way to time
	 * the work, docs/benchmarks.md); the answer is still kept */
	if (serve(rpc_ctx_service(ctx), fn, req,
		  cc != NULL && strstr(cc, "no-cache") != NULL,
		  rpc_ctx_arena(ctx), resp, &err) == 0)
		return 0;
	if (strcmp(err.code, "internal_error") == 0)
		log_error("%s", err.message);
	return rpc_ctx_fail(ctx, err.code, "%s", err.message);
}

/* Name, query function, request and response message of every method. */
#define GRAPH_METHODS(X)                                                     \
	X(Backlinks, backlinks, backlinks_request, backlinks_response)        \
	X(ReferringDomains, referring_domains, domain_page_request,           \
	  referring_domains_response)                                         \
	X(OutboundLinks, outbound_links, domain_page_request,                 \
	  outbound_links_response)                                            \
	X(AnchorText, anchor_text, domain_page_request, anchor_text_response) \
	X(TopPages, top_pages, domain_page_request, top_pages_response)       \
	X(DomainAuthority, domain_authority, domain_request,                  \
	  domain_authority_response)                                          \
	X(DomainRank, domain_rank, domain_request, domain_rank_response)      \
	X(CrawlHistory, crawl_history, domain_request, crawl_history_response) \
	X(SimilarDomains, similar_domains, domain_page_request,               \
	  similar_domains_response)                                           \
	X(LinkIntersect, link_intersect, link_intersect_request,              \
	  link_intersect_response)                                            \
	X(DomainOverlap, domain_overlap, domain_overlap_request,              \
	  domain_overlap_response)                                            \
	X(LinkGap, link_gap, link_gap_request, link_gap_response)             \
	X(SiteExplorer, site_explorer, domain_request, site_explorer_response) \
	X(LinkAudit, link_audit, domain_request, link_audit_response)         \
	X(Batch, batch, batch_request, batch_response)                        \
	X(UrlIndex, url_index, domain_page_request, url_index_response)       \
	X(StatusCodes, status_codes, domain_request, status_codes_response)  \
	X(PlatformTrends, platform_trends, platform_trends_request,           \
	  platform_trends_response)                                           \
	X(PlatformDomains, platform_domains, platform_domains_request,        \
	  platform_domains_response)

#define RPC_HANDLER(Name, fn, in, out)                                       \
	static int rpc_##fn(rpc_ctx *ctx, const ProtobufCMessage *req,        \
			    ProtobufCMessage **resp)                          \
	{                                                                     \
		return rpc_serve(ctx, q_##fn, req, resp);                     \
	}
GRAPH_METHODS(RPC_HANDLER)

#define RPC_ROW(Name, fn, in, out) \
	{"/seo.graph.v1.Graph/" #Name, D(in), D(out), rpc_##fn},
const rpc_method graph_rpc_methods[] = {GRAPH_METHODS(RPC_ROW)};
const size_t graph_rpc_n_methods = N(graph_rpc_methods);

#define QUERY_ROW(Name, fn, in, out) {#Name, D(in), q_##fn},
static const struct {
	const char *name;
	const ProtobufCMessageDescriptor *input;
	query_fn fn;
} queries[] = {GRAPH_METHODS(QUERY_ROW)};

int graph_service_call(graph_service *s, const char *method,
		       const ProtobufCMessage *req, seo_arena *a,
		       ProtobufCMessage **resp, graph_fail *err)
{
	for (size_t i = 0; i < N(queries); i++)
		if (strcmp(queries[i].name, method) == 0 &&
		    req->descriptor == queries[i].input)
			return serve(s, queries[i].fn, req, 0, a, resp, err);
	return SEO_ENOTFOUND;
}

/* Backlinks walk the target's links up to the page: unfiltered and near
 * the top they are a page of a precomputed order; a filter counts every
 * link of the target for its total. */
#define INLINE_BACKLINKS_OFFSET 10000

static int backlinks_bounded(const ProtobufCMessage *msg)
{
	const T(BacklinksRequest) *req = (const void *)msg;

	return (req->from_domain == NULL || req->from_domain[0] == '\0') &&
	       (req->link_type == NULL || req->link_type[0] == '\0') &&
	       (!req->has_offset || req->offset <= INLINE_BACKLINKS_OFFSET);
}

/* Answered on the loop thread: a constant or one page of a precomputed
 * order, microseconds on the mapped index, less than the hand-off to a
 * worker and back (12 us on the bench VM: two thread wake-ups). So is
 * site-explorer, four such pages. The methods that walk whole lists
 * (similar-domains, intersect, overlap, gap, link-audit) and batch (50
 * pages) keep to the workers. */
const rpc_inline graph_rpc_inline[] = {
	{"/seo.graph.v1.Graph/ReferringDomains", NULL},
	{"/seo.graph.v1.Graph/Backlinks", backlinks_bounded},
	{"/seo.graph.v1.Graph/OutboundLinks", NULL},
	{"/seo.graph.v1.Graph/AnchorText", NULL},
	{"/seo.graph.v1.Graph/TopPages", NULL},
	{"/seo.graph.v1.Graph/DomainAuthority", NULL},
	{"/seo.graph.v1.Graph/DomainRank", NULL},
	{"/seo.graph.v1.Graph/CrawlHistory", NULL},
	{"/seo.graph.v1.Graph/UrlIndex", NULL},
	{"/seo.graph.v1.Graph/StatusCodes", NULL},
	{"/seo.graph.v1.Graph/SiteExplorer", NULL},
	{NULL, NULL},
};

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

#include "graph.h"
#include "seo/errors.h"
#include "seo/graph/v1/graph.pb-c.h"
#include "seo/log.h"

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

/* One loaded release. The service holds one reference, each call one. */
typedef struct release {
	graph_index *ix;
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
	if (r == NULL) {
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

/* limit (1..max, default 100) and offset (>= 0, default 0). */
static int page_arg(gcall *c, int has_limit, int64_t limit, int has_offset,
		    int64_t offset, int64_t max, graph_page *pg)
{
	if (!has_limit)
		limit = PAGE_DEFAULT;
	if (!has_offset)
		offset = 0;
	if (limit < 1 || limit > max)
		return fail(c, "invalid_parameter",
			    "limit must be between 1 and %lld", (long long)max);
	if (offset < 0)
		return fail(c, "invalid_parameter", "offset must be at least 0");
	pg->limit = (uint32_t)limit;
	pg->offset = (uint64_t)offset;
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

/* ---- row messages ------------------------------------------------------- */

static T(BacklinkRow) **backlink_rows(gcall *c, const graph_backlink_row *r,
				     size_t n, const char *to_domain,
				     int score)
{
	T(BacklinkRow) **v = msgs_new(c, D(backlink_row), n);
	int ok = v != NULL;

	for (size_t i = 0; ok && i < n; i++) {
		T(BacklinkRow) *m = v[i];

		m->from_domain = str(c, r[i].from_domain, &ok);
		m->from_url = str(c, r[i].from_url, &ok);
		m->to_url = str(c, r[i].to_url, &ok);
		m->anchor_text = str(c, r[i].anchor_text, &ok);
		m->rel = str(c, r[i].rel, &ok);
		m->link_type = str(c, r[i].link_type, &ok);
		/* 0 hosts means the domain graph did not list the source */
		m->has_domain_host_count = r[i].domain_host_count > 0;
		m->domain_host_count = r[i].domain_host_count;
		m->crawled_at = iso_time(c, r[i].crawled_at, &ok);
		if (m->crawled_at == NULL)
			m->crawled_at = "";
		m->has_from_domain_score = 1;
		m->from_domain_score = r[i].from_domain_score;
		if (score) {
			m->anchor_type = (char *)graph_anchor_type(
				r[i].anchor_text, r[i].link_type, to_domain);
			m->link_quality = (char *)graph_link_quality(
				r[i].from_domain_score);
		}
	}
	return ok ? v : NULL;
}

static T(TopPageRow) **top_page_rows(gcall *c, const graph_top_page_row *r,
				     size_t n)
{
	T(TopPageRow) **v = msgs_new(c, D(top_page_row), n);
	int ok = v != NULL;

	for (size_t i = 0; ok && i < n; i++) {
		v[i]->url = str(c, r[i].url, &ok);
		v[i]->inbound_links = r[i].inbound_links;
		v[i]->referring_domains = r[i].referring_domains;
	}
	return ok ? v : NULL;
}

static T(AnchorTextRow) **anchor_rows(gcall *c, const graph_anchor_row *r,
				      size_t n)
{
	T(AnchorTextRow) **v = msgs_new(c, D(anchor_text_row), n);
	int ok = v != NULL;

	for (size_t i = 0; ok && i < n; i++) {
		v[i]->anchor_text = str(c, r[i].anchor_text, &ok);
		v[i]->link_count = r[i].link_count;
		v[i]->domain_count = r[i].domain_count;
	}
	return ok ? v : NULL;
}

static T(LinkingDomainRow) **linking_rows(gcall *c, size_t n)
{
	return msgs_new(c, D(linking_domain_row), n);
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

/* ---- the methods -------------------------------------------------------- */

static int q_backlinks(gcall *c, const ProtobufCMessage *m,
		       ProtobufCMessage **resp)
{
	const T(BacklinksRequest) *req = (const void *)m;
	T(BacklinksResponse) *out;
	graph_backlink_filter filter = {0};
	graph_backlink_row *rows;
	graph_page pg;
	uint64_t total;
	size_t n;
	char *domain, *from = NULL;

	if (domain_arg(c, req->domain, &domain) != 0 ||
	    (req->from_domain != NULL && *req->from_domain != '\0' &&
	     domain_arg(c, req->from_domain, &from) != 0) ||
	    page_arg(c, req->has_limit, req->limit, req->has_offset,
		     req->offset, GRAPH_LIMIT_MAX, &pg) != 0)
		return SEO_EINVAL;
	filter.from_domain = from;
	if (req->link_type != NULL && *req->link_type != '\0')
		filter.link_type = req->link_type;
	if (query_rc(c, graph_backlinks(c->ix, domain,
					req->sort == SEO__GRAPH__V1__SORT__SORT_RECENT
						? GRAPH_SORT_RECENT
						: GRAPH_SORT_IMPORTANCE,
					&filter, &pg, c->a, &rows, &n,
					&total)) != 0)
		return SEO_EINVAL;
	out = msg_new(c, D(backlinks_response));
	if (out == NULL ||
	    (out->data = backlink_rows(c, rows, n, domain, req->score)) == NULL)
		return oom(c);
	out->n_data = n;
	out->domain = domain;
	out->total = (int64_t)total;
	out->limit = pg.limit;
	out->offset = (int64_t)pg.offset;
	*resp = &out->base;
	return 0;
}

static int q_referring_domains(gcall *c, const ProtobufCMessage *m,
			       ProtobufCMessage **resp)
{
	const T(DomainPageRequest) *req = (const void *)m;
	T(ReferringDomainsResponse) *out;
	T(ReferringDomainRow) **v;
	graph_refdomain_row *rows;
	graph_page pg;
	uint64_t total;
	size_t n;
	char *domain;
	int ok;

	if (domain_arg(c, req->domain, &domain) != 0 ||
	    page_arg(c, req->has_limit, req->limit, req->has_offset,
		     req->offset, GRAPH_LIMIT_MAX, &pg) != 0 ||
	    query_rc(c, graph_referring_domains(c->ix, domain, &pg, c->a,
						&rows, &n, &total)) != 0)
		return SEO_EINVAL;
	out = msg_new(c, D(referring_domains_response));
	v = msgs_new(c, D(referring_domain_row), n);
	ok = out != NULL && v != NULL;
	for (size_t i = 0; ok && i < n; i++) {
		v[i]->from_domain = str(c, rows[i].from_domain, &ok);
		v[i]->total_links = rows[i].total_links;
		v[i]->has_from_domain_score = 1;
		v[i]->from_domain_score = rows[i].from_domain_score;
	}
	if (!ok)
		return oom(c);
	out->data = v;
	out->n_data = n;
	out->domain = domain;
	out->total = (int64_t)total;
	*resp = &out->base;
	return 0;
}

static int q_outbound_links(gcall *c, const ProtobufCMessage *m,
			    ProtobufCMessage **resp)
{
	const T(DomainPageRequest) *req = (const void *)m;
	T(OutboundLinksResponse) *out;
	T(OutboundLinkRow) **v;
	graph_outbound_row *rows;
	graph_page pg;
	uint64_t total;
	size_t n;
	char *domain;
	int ok;

	if (domain_arg(c, req->domain, &domain) != 0 ||
	    page_arg(c, req->has_limit, req->limit, req->has_offset,
		     req->offset, GRAPH_LIMIT_MAX, &pg) != 0 ||
	    query_rc(c, graph_outbound_links(c->ix, domain, &pg, c->a, &rows,
					     &n, &total, NULL)) != 0)
		return SEO_EINVAL;
	out = msg_new(c, D(outbound_links_response));
	v = msgs_new(c, D(outbound_link_row), n);
	ok = out != NULL && v != NULL;
	for (size_t i = 0; ok && i < n; i++) {
		v[i]->to_domain = str(c, rows[i].to_domain, &ok);
		v[i]->to_url = str(c, rows[i].to_url, &ok);
		v[i]->anchor_text = str(c, rows[i].anchor_text, &ok);
		v[i]->link_type = str(c, rows[i].link_type, &ok);
		v[i]->edge_count = rows[i].edge_count;
	}
	if (!ok)
		return oom(c);
	out->data = v;
	out->n_data = n;
	*resp = &out->base;
	return 0;
}

static int q_anchor_text(gcall *c, const ProtobufCMessage *m,
			 ProtobufCMessage **resp)
{
	const T(DomainPageRequest) *req = (const void *)m;
	T(AnchorTextResponse) *out;
	graph_anchor_row *rows;
	graph_page pg;
	uint64_t total;
	size_t n;
	char *domain;

	if (domain_arg(c, req->domain, &domain) != 0 ||
	    page_arg(c, req->has_limit, req->limit, req->has_offset,
		     req->offset, GRAPH_LIMIT_MAX, &pg) != 0 ||
	    query_rc(c, graph_anchor_text(c->ix, domain, &pg, c->a, &rows, &n,
					  &total)) != 0)
		return SEO_EINVAL;
	out = msg_new(c, D(anchor_text_response));
	if (out == NULL || (out->data = anchor_rows(c, rows, n)) == NULL)
		return oom(c);
	out->n_data = n;
	out->domain = domain;
	out->total = (int64_t)total;
	out->limit = pg.limit;
	out->offset = (int64_t)pg.offset;
	*resp = &out->base;
	return 0;
}

static int q_top_pages(gcall *c, const ProtobufCMessage *m,
		       ProtobufCMessage **resp)
{
	const T(DomainPageRequest) *req = (const void *)m;
	T(TopPagesResponse) *out;
	graph_top_page_row *rows;
	graph_page pg;
	uint64_t total;
	size_t n;
	char *domain;

	if (domain_arg(c, req->domain, &domain) != 0 ||
	    page_arg(c, req->has_limit, req->limit, req->has_offset,
		     req->offset, GRAPH_LIMIT_MAX, &pg) != 0 ||
	    query_rc(c, graph_top_pages(c->ix, domain, &pg, c->a, &rows, &n,
					&total)) != 0)
		return SEO_EINVAL;
	out = msg_new(c, D(top_pages_response));
	if (out == NULL || (out->data = top_page_rows(c, rows, n)) == NULL)
		return oom(c);
	out->n_data = n;
	out->domain = domain;
	out->total = (int64_t)total;
	out->limit = pg.limit;
	out->offset = (int64_t)pg.offset;
	*resp = &out->base;
	return 0;
}

static int q_domain_authority(gcall *c, const ProtobufCMessage *m,
			      ProtobufCMessage **resp)
{
	const T(DomainRequest) *req = (const void *)m;
	T(DomainAuthorityResponse) *out;
	T(DomainAuthority) *d;
	graph_authority au;
	char *domain;
	int ok = 1;

	if (domain_arg(c, req->domain, &domain) != 0 ||
	    query_rc(c, graph_authority_get(c->ix, domain, c->a, &au)) != 0)
		return SEO_EINVAL;
	out = msg_new(c, D(domain_authority_response));
	d = msg_new(c, D(domain_authority));
	if (out == NULL || d == NULL)
		return oom(c);
	d->score = au.score;
	d->referring_domains = (int64_t)au.referring_domains;
	d->total_host_count = (double)au.total_host_count;
	d->registered_at = str(c, au.registered_at, &ok);
	d->registrar = str(c, au.registrar, &ok);
	d->has_popularity_rank = au.popularity_rank > 0;
	d->popularity_rank = au.popularity_rank;
	d->health_score = au.health_score;
	d->risk_flags = risk_flags(c, au.risk_flags, &d->n_risk_flags);
	if (!ok || d->risk_flags == NULL)
		return oom(c);
	out->data = d;
	out->domain = domain;
	*resp = &out->base;
	return 0;
}

static int q_domain_rank(gcall *c, const ProtobufCMessage *m,
			 ProtobufCMessage **resp)
{
	const T(DomainRequest) *req = (const void *)m;
	T(DomainRankResponse) *out;
	T(DomainRank) *d;
	graph_domain_rank dr;
	char *domain;

	if (domain_arg(c, req->domain, &domain) != 0 ||
	    query_rc(c, graph_domain_rank_get(c->ix, domain, &dr)) != 0)
		return SEO_EINVAL;
	out = msg_new(c, D(domain_rank_response));
	d = msg_new(c, D(domain_rank));
	if (out == NULL || d == NULL)
		return oom(c);
	d->inbound_edges = (int64_t)dr.inbound_edges;
	d->unique_domains = (int64_t)dr.unique_domains;
	d->avg_linking_host_count = dr.avg_linking_host_count;
	out->data = d;
	out->domain = domain;
	*resp = &out->base;
	return 0;
}

static int q_crawl_history(gcall *c, const ProtobufCMessage *m,
			   ProtobufCMessage **resp)
{
	const T(DomainRequest) *req = (const void *)m;
	T(CrawlHistoryResponse) *out;
	T(CrawlHistory) *d;
	graph_crawl_history h;
	char *domain;
	int ok = 1;

	if (domain_arg(c, req->domain, &domain) != 0 ||
	    query_rc(c, graph_crawl_history_get(c->ix, domain, &h)) != 0)
		return SEO_EINVAL;
	out = msg_new(c, D(crawl_history_response));
	d = msg_new(c, D(crawl_history));
	if (out == NULL || d == NULL)
		return oom(c);
	d->first_seen = iso_time(c, h.first_seen, &ok);
	d->last_seen = iso_time(c, h.last_seen, &ok);
	d->total_urls = (int64_t)h.total_urls;
	if (!ok)
		return oom(c);
	out->data = d;
	out->domain = domain;
	*resp = &out->base;
	return 0;
}

static int q_similar_domains(gcall *c, const ProtobufCMessage *m,
			     ProtobufCMessage **resp)
{
	const T(DomainPageRequest) *req = (const void *)m;
	T(SimilarDomainsResponse) *out;
	T(SimilarDomainRow) **v;
	graph_similar_row *rows;
	graph_page pg;
	uint64_t total;
	size_t n;
	char *domain;
	int ok;

	if (domain_arg(c, req->domain, &domain) != 0 ||
	    page_arg(c, req->has_limit, req->limit, req->has_offset,
		     req->offset, SIMILAR_LIMIT_MAX, &pg) != 0 ||
	    query_rc(c, graph_similar_domains(c->ix, domain, &pg, c->a, &rows,
					      &n, &total)) != 0)
		return SEO_EINVAL;
	out = msg_new(c, D(similar_domains_response));
	v = msgs_new(c, D(similar_domain_row), n);
	ok = out != NULL && v != NULL;
	for (size_t i = 0; ok && i < n; i++) {
		v[i]->similar_domain = str(c, rows[i].similar_domain, &ok);
		v[i]->shared_linkers = rows[i].shared_linkers;
	}
	if (!ok || (out->crawl_release = str(c, graph_index_release(c->ix),
					     &ok)) == NULL)
		return oom(c);
	out->data = v;
	out->n_data = n;
	out->total = (int64_t)total;
	out->limit = pg.limit;
	out->offset = (int64_t)pg.offset;
	out->cached = 0;
	*resp = &out->base;
	return 0;
}

static int q_link_intersect(gcall *c, const ProtobufCMessage *m,
			    ProtobufCMessage **resp)
{
	const T(LinkIntersectRequest) *req = (const void *)m;
	T(LinkIntersectResponse) *out;
	T(LinkingDomainRow) **v;
	graph_intersect_row *rows;
	graph_page pg;
	uint64_t total;
	size_t n;
	char *da, *db;
	int ok;

	if (domain_arg(c, req->domain_a, &da) != 0 ||
	    domain_arg(c, req->domain_b, &db) != 0 ||
	    page_arg(c, req->has_limit, req->limit, req->has_offset,
		     req->offset, GRAPH_LIMIT_MAX, &pg) != 0 ||
	    query_rc(c, graph_link_intersect(c->ix, da, db, &pg, c->a, &rows,
					     &n, &total)) != 0)
		return SEO_EINVAL;
	out = msg_new(c, D(link_intersect_response));
	v = linking_rows(c, n);
	ok = out != NULL && v != NULL;
	for (size_t i = 0; ok && i < n; i++) {
		v[i]->from_domain = str(c, rows[i].domain, &ok);
		v[i]->from_domain_score = rows[i].domain_score;
	}
	if (!ok)
		return oom(c);
	out->data = v;
	out->n_data = n;
	out->domain_a = da;
	out->domain_b = db;
	out->total = (int64_t)total;
	out->limit = pg.limit;
	out->offset = (int64_t)pg.offset;
	*resp = &out->base;
	return 0;
}

static int q_domain_overlap(gcall *c, const ProtobufCMessage *m,
			    ProtobufCMessage **resp)
{
	const T(DomainOverlapRequest) *req = (const void *)m;
	T(DomainOverlapResponse) *out;
	T(LinkingDomainRow) **v;
	graph_overlap_row *rows;
	graph_page pg;
	uint64_t total;
	size_t n;
	char **domains = NULL;
	int ok;

	if (req->n_domains < 2 || req->n_domains > GRAPH_OVERLAP_MAX)
		return fail(c, "invalid_parameter",
			    "domains must name between 2 and %d domains",
			    GRAPH_OVERLAP_MAX);
	if (domains_arg(c, req->domains, req->n_domains, &domains) != 0 ||
	    page_arg(c, req->has_limit, req->limit, req->has_offset,
		     req->offset, GRAPH_LIMIT_MAX, &pg) != 0 ||
	    query_rc(c, graph_domain_overlap(c->ix,
					     (const char *const *)domains,
					     req->n_domains,
					     (unsigned)req->n_domains, NULL,
					     &pg, c->a, &rows, &n,
					     &total)) != 0)
		return SEO_EINVAL;
	out = msg_new(c, D(domain_overlap_response));
	v = linking_rows(c, n);
	ok = out != NULL && v != NULL;
	for (size_t i = 0; ok && i < n; i++) {
		v[i]->from_domain = str(c, rows[i].domain, &ok);
		v[i]->from_domain_score = rows[i].domain_score;
	}
	if (!ok)
		return oom(c);
	out->data = v;
	out->n_data = n;
	out->domains = domains;
	out->n_domains = req->n_domains;
	out->total = (int64_t)total;
	out->limit = pg.limit;
	out->offset = (int64_t)pg.offset;
	*resp = &out->base;
	return 0;
}

static int q_link_gap(gcall *c, const ProtobufCMessage *m,
		      ProtobufCMessage **resp)
{
	const T(LinkGapRequest) *req = (const void *)m;
	T(LinkGapResponse) *out;
	T(LinkGapRow) **v;
	graph_overlap_row *rows;
	graph_page pg;
	uint64_t total;
	size_t n, nc = req->n_competitors;
	char *domain, **comp = NULL;
	int ok;

	if (nc < 1 || nc > GRAPH_OVERLAP_MAX)
		return fail(c, "invalid_parameter",
			    "competitors must name between 1 and %d domains",
			    GRAPH_OVERLAP_MAX);
	if (domain_arg(c, req->domain, &domain) != 0 ||
	    domains_arg(c, req->competitors, nc, &comp) != 0 ||
	    page_arg(c, req->has_limit, req->limit, req->has_offset,
		     req->offset, GRAPH_LIMIT_MAX, &pg) != 0 ||
	    query_rc(c, graph_domain_overlap(c->ix, (const char *const *)comp,
					     nc, 1, domain, &pg, c->a, &rows,
					     &n, &total)) != 0)
		return SEO_EINVAL;
	out = msg_new(c, D(link_gap_response));
	v = msgs_new(c, D(link_gap_row), n);
	ok = out != NULL && v != NULL;
	for (size_t i = 0; ok && i < n; i++) {
		char **to = seo_arena_alloc(c->a, nc * sizeof(*to));

		ok = to != NULL;
		v[i]->from_domain = str(c, rows[i].domain, &ok);
		v[i]->from_domain_score = rows[i].domain_score;
		v[i]->links_to = to;
		for (size_t k = 0; ok && k < nc; k++)
			if (rows[i].links_to & (1u << k))
				to[v[i]->n_links_to++] = comp[k];
	}
	if (!ok)
		return oom(c);
	out->data = v;
	out->n_data = n;
	out->domain = domain;
	out->competitors = comp;
	out->n_competitors = nc;
	out->total = (int64_t)total;
	out->limit = pg.limit;
	out->offset = (int64_t)pg.offset;
	*resp = &out->base;
	return 0;
}

/* The first page of backlinks with the defaults of GET /v1/backlinks
 * (importance order), as site-explorer and batch give it. */
static int default_backlinks(gcall *c, const char *domain,
			     T(BacklinkRow) ***out, size_t *n, uint64_t *total)
{
	const graph_page pg = {PAGE_DEFAULT, 0};
	graph_backlink_row *rows;

	if (query_rc(c, graph_backlinks(c->ix, domain, GRAPH_SORT_IMPORTANCE,
					NULL, &pg, c->a, &rows, n,
					total)) != 0)
		return SEO_EINVAL;
	*out = backlink_rows(c, rows, *n, domain, 0);
	return *out != NULL ? 0 : oom(c);
}

static int q_site_explorer(gcall *c, const ProtobufCMessage *m,
			   ProtobufCMessage **resp)
{
	const T(DomainRequest) *req = (const void *)m;
	const graph_page pg = {PAGE_DEFAULT, 0};
	T(SiteExplorerResponse) *out;
	T(SiteExplorer) *d;
	T(SiteAuthority) *au;
	graph_authority ga;
	graph_top_page_row *pages;
	graph_anchor_row *anchors;
	uint64_t total, ignored;
	size_t np, na;
	char *domain;

	out = msg_new(c, D(site_explorer_response));
	d = msg_new(c, D(site_explorer));
	au = msg_new(c, D(site_authority));
	if (out == NULL || d == NULL || au == NULL)
		return oom(c);
	if (domain_arg(c, req->domain, &domain) != 0 ||
	    default_backlinks(c, domain, &d->backlinks, &d->n_backlinks,
			      &total) != 0 ||
	    query_rc(c, graph_authority_get(c->ix, domain, c->a, &ga)) != 0 ||
	    query_rc(c, graph_top_pages(c->ix, domain, &pg, c->a, &pages, &np,
					&ignored)) != 0 ||
	    query_rc(c, graph_anchor_text(c->ix, domain, &pg, c->a, &anchors,
					  &na, &ignored)) != 0)
		return SEO_EINVAL;
	d->backlinks_total = (int64_t)total;
	au->score = ga.score;
	au->referring_domains = (int64_t)ga.referring_domains;
	au->total_host_count = (double)ga.total_host_count;
	d->authority = au;
	d->top_pages = top_page_rows(c, pages, np);
	d->n_top_pages = np;
	d->anchor_text = anchor_rows(c, anchors, na);
	d->n_anchor_text = na;
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
	char *domain;
	int ok = 1;

	if (out == NULL || os == NULL)
		return oom(c);
	out->link_quality = msg_new(c, D(link_quality_counts));
	out->anchor_profile = msg_new(c, D(anchor_profile));
	if (out->link_quality == NULL || out->anchor_profile == NULL)
		return oom(c);
	if (domain_arg(c, req->domain, &domain) != 0 ||
	    query_rc(c, graph_authority_get(c->ix, domain, c->a, &au)) != 0 ||
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
	*resp = &out->base;
	return 0;
}

/* ---- batch, URL index, status codes ------------------------------------- */

static int q_batch(gcall *c, const ProtobufCMessage *m,
		   ProtobufCMessage **resp)
{
	const T(BatchRequest) *req = (const void *)m;
	T(BatchResponse) *out = msg_new(c, D(batch_response));
	T(BatchEntry) **v;
	graph_fail entry_err;
	gcall entry = *c;

	if (req->n_domains < 1 || req->n_domains > BATCH_MAX)
		return fail(c, "invalid_parameter",
			    "domains must name between 1 and %d domains",
			    BATCH_MAX);
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

static int q_url_index(gcall *c, const ProtobufCMessage *m,
		       ProtobufCMessage **resp)
{
	const T(DomainPageRequest) *req = (const void *)m;
	T(UrlIndexResponse) *out;
	T(UrlIndexRow) **v;
	graph_url_row *rows;
	graph_page pg;
	uint64_t total;
	size_t n;
	char *domain;
	int ok;

	if (domain_arg(c, req->domain, &domain) != 0 ||
	    page_arg(c, req->has_limit, req->limit, req->has_offset,
		     req->offset, GRAPH_LIMIT_MAX, &pg) != 0 ||
	    query_rc(c, graph_url_index(c->ix, domain, &pg, c->a, &rows, &n,
					&total)) != 0)
		return SEO_EINVAL;
	out = msg_new(c, D(url_index_response));
	v = msgs_new(c, D(url_index_row), n);
	ok = out != NULL && v != NULL;
	for (size_t i = 0; ok && i < n; i++) {
		v[i]->url = str(c, rows[i].url, &ok);
		v[i]->status_code = rows[i].status_code;
		v[i]->mime = rows[i].mime ? str(c, rows[i].mime, &ok) : "";
		v[i]->crawled_at = iso_time(c, rows[i].crawled_at, &ok);
		if (v[i]->crawled_at == NULL)
			v[i]->crawled_at = "";
	}
	if (!ok)
		return oom(c);
	out->data = v;
	out->n_data = n;
	*resp = &out->base;
	return 0;
}

static int q_status_codes(gcall *c, const ProtobufCMessage *m,
			  ProtobufCMessage **resp)
{
	const T(DomainRequest) *req = (const void *)m;
	T(StatusCodesResponse) *out;
	T(StatusCodeRow) **v;
	graph_status_row *rows;
	size_t n;
	char *domain;

	if (domain_arg(c, req->domain, &domain) != 0 ||
	    query_rc(c, graph_status_codes(c->ix, domain, c->a, &rows,
					   &n)) != 0)
		return SEO_EINVAL;
	out = msg_new(c, D(status_codes_response));
	v = msgs_new(c, D(status_code_row), n);
	if (out == NULL || v == NULL)
		return oom(c);
	for (size_t i = 0; i < n; i++) {
		v[i]->status_code = rows[i].status_code;
		v[i]->count = rows[i].count;
	}
	out->data = v;
	out->n_data = n;
	*resp = &out->base;
	return 0;
}

/* ---- method table ------------------------------------------------------- */

typedef int (*query_fn)(gcall *c, const ProtobufCMessage *req,
			ProtobufCMessage **resp);

/* Runs fn on the served release, holding it for the call. */
static int serve(graph_service *s, query_fn fn, const ProtobufCMessage *req,
		 seo_arena *a, ProtobufCMessage **resp, graph_fail *err)
{
	release *r = acquire(s);
	gcall c = {NULL, a, err};
	int rc;

	if (r == NULL)
		return fail(&c, "service_unavailable",
			    "no crawl index is loaded");
	c.ix = r->ix;
	rc = fn(&c, req, resp);
	put(r);
	return rc;
}

static int rpc_serve(rpc_ctx *ctx, query_fn fn, const ProtobufCMessage *req,
		     ProtobufCMessage **resp)
{
	graph_fail err;

	if (serve(rpc_ctx_service(ctx), fn, req, rpc_ctx_arena(ctx), resp,
		  &err) == 0)
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
	X(StatusCodes, status_codes, domain_request, status_codes_response)

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
			return serve(s, queries[i].fn, req, a, resp, err);
	return SEO_ENOTFOUND;
}

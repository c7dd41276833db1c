/*
 * platforms.c: the PlatformTrends and PlatformDomains methods of
 * seo.graph.v1.Graph (platforms.h), on the index's platform section
 * (graph.h: graph_platform_trends, graph_platform_domains).
 */
#include "platforms.h"

#include <ctype.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "seo/errors.h"
#include "seo/graph/v1/graph.pb-c.h"

#define T(name) Seo__Graph__V1__##name
#define D(name) (&seo__graph__v1__##name##__descriptor)

#define LIMIT_DEFAULT 100
#define DA_MAX 100

static int fail(graph_fail *err, const char *code, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static int fail(graph_fail *err, const char *code, const char *fmt, ...)
{
	va_list ap;

	err->code = code;
	va_start(ap, fmt);
	vsnprintf(err->message, sizeof(err->message), fmt, ap);
	va_end(ap);
	return SEO_EINVAL;
}

static int oom(graph_fail *err)
{
	return fail(err, "internal_error", "out of memory");
}

static void *msg_new(seo_arena *a, const ProtobufCMessageDescriptor *d)
{
	ProtobufCMessage *m = seo_arena_alloc(a, d->sizeof_message);

	if (m != NULL)
		protobuf_c_message_init(d, m);
	return m;
}

int graph__platform_trends_call(const graph_index *ix, seo_arena *a,
				const ProtobufCMessage *req,
				ProtobufCMessage **resp, graph_fail *err)
{
	graph_platform_count counts[GRAPH_PLATFORM_COUNT];
	T(PlatformTrendsResponse) *out = msg_new(a, D(platform_trends_response));
	T(PlatformTrendRow) **rows =
		seo_arena_alloc(a, GRAPH_PLATFORM_COUNT * sizeof(*rows));

	(void)req;
	if (out == NULL || rows == NULL)
		return oom(err);
	graph_platform_trends(ix, counts);
	for (size_t i = 0; i < GRAPH_PLATFORM_COUNT; i++) {
		const graph_platform *p = counts[i].platform;

		if ((rows[i] = msg_new(a, D(platform_trend_row))) == NULL)
			return oom(err);
		/* the table's strings are static: nothing to copy */
		rows[i]->platform = (char *)p->name;
		rows[i]->platform_slug = (char *)p->slug;
		rows[i]->category = (char *)p->category;
		rows[i]->count = (int64_t)counts[i].count;
	}
	out->data = rows;
	out->n_data = GRAPH_PLATFORM_COUNT;
	*resp = &out->base;
	return 0;
}

/* An authority bound of the request into *v; out of 0..100 fails. */
static int da_arg(graph_fail *err, const char *name, int has, int64_t in,
		  uint8_t *v)
{
	if (!has)
		return 0;
	if (in < 0 || in > DA_MAX)
		return fail(err, "invalid_parameter",
			    "%s must be between 0 and %d", name, DA_MAX);
	*v = (uint8_t)in;
	return 0;
}

/* The request's tld as it is compared: lowercase, no leading dot; NULL
 * when absent or empty. */
static char *tld_arg(seo_arena *a, const char *in, int *ok)
{
	char *t;

	while (in != NULL && *in == '.')
		in++;
	if (in == NULL || *in == '\0')
		return NULL;
	if ((t = seo_arena_strdup(a, in)) == NULL) {
		*ok = 0;
		return NULL;
	}
	for (char *c = t; *c; c++)
		*c = (char)tolower((unsigned char)*c);
	return t;
}

static graph_platform_sort sort_arg(const T(PlatformDomainsRequest) *r)
{
	if (!r->has_sort)
		return GRAPH_PSORT_DA_DESC;
	switch (r->sort) {
	case SEO__GRAPH__V1__PLATFORM_SORT__PLATFORM_SORT_DA_ASC:
		return GRAPH_PSORT_DA_ASC;
	case SEO__GRAPH__V1__PLATFORM_SORT__PLATFORM_SORT_DOMAIN_ASC:
		return GRAPH_PSORT_DOMAIN_ASC;
	default:
		return GRAPH_PSORT_DA_DESC;
	}
}

/* The filters in effect, echoed: null where not given. */
static T(PlatformFilters) *filters(seo_arena *a,
				   const T(PlatformDomainsRequest) *r,
				   const graph_platform_query *q)
{
	T(PlatformFilters) *f = msg_new(a, D(platform_filters));

	if (f == NULL)
		return NULL;
	f->has_min_da = r->has_min_da;
	f->min_da = q->min_da;
	f->has_max_da = r->has_max_da;
	f->max_da = q->max_da;
	f->tld = (char *)q->tld;
	return f;
}

int graph__platform_domains_call(const graph_index *ix, seo_arena *a,
				 const ProtobufCMessage *req,
				 ProtobufCMessage **resp, graph_fail *err)
{
	const T(PlatformDomainsRequest) *r = (const void *)req;
	graph_platform_query q = {.max_da = DA_MAX, .limit = LIMIT_DEFAULT};
	T(PlatformDomainsResponse) *out;
	T(PlatformDomains) *d;
	graph_platform_row *rows;
	const graph_platform *all;
	uint64_t total;
	size_t n, np;
	int ok = 1, rc;

	if (r->platform == NULL || r->platform[0] == '\0')
		return fail(err, "missing_platform",
			    "platform is required; supported: %s",
			    graph_platform_slugs());
	if (graph_platform_find(r->platform, &q.platform) != 0)
		return fail(err, "unknown_platform",
			    "unknown platform \"%.40s\"; supported: %s",
			    r->platform, graph_platform_slugs());
	if (da_arg(err, "min_da", r->has_min_da, r->min_da, &q.min_da) != 0 ||
	    da_arg(err, "max_da", r->has_max_da, r->max_da, &q.max_da) != 0)
		return SEO_EINVAL;
	/* the spec clamps the page size silently */
	if (r->has_limit)
		q.limit = r->limit < 1 ? 1 : r->limit > GRAPH_LIMIT_MAX
						     ? GRAPH_LIMIT_MAX
						     : (uint32_t)r->limit;
	q.sort = sort_arg(r);
	q.tld = tld_arg(a, r->tld, &ok);
	if (!ok)
		return oom(err);
	rc = graph_platform_domains(ix, &q, a, &rows, &n, &total);
	if (rc != 0)
		return rc == SEO_ENOMEM
			       ? oom(err)
			       : fail(err, "internal_error",
				      "platform query failed: %s",
				      seo_strerror(rc));
	all = graph_platforms(&np);
	out = msg_new(a, D(platform_domains_response));
	d = msg_new(a, D(platform_domains));
	if (out == NULL || d == NULL ||
	    (d->filters_applied = filters(a, r, &q)) == NULL ||
	    (d->domains = seo_arena_alloc(a, (n + 1) * sizeof(*d->domains))) ==
		    NULL)
		return oom(err);
	for (size_t i = 0; i < n; i++) {
		T(PlatformDomain) *m = msg_new(a, D(platform_domain));

		if (m == NULL)
			return oom(err);
		/* out of the mapping: the reply may outlive the release */
		m->domain = seo_arena_strdup(a, rows[i].domain);
		m->tld = seo_arena_strdup(a, rows[i].tld);
		m->da_score = rows[i].da_score;
		if (m->domain == NULL || m->tld == NULL)
			return oom(err);
		d->domains[i] = m;
	}
	d->n_domains = n;
	d->platform = (char *)all[q.platform].name;
	d->platform_slug = (char *)all[q.platform].slug;
	d->total_count = (int64_t)total;
	d->returned = (int64_t)n;
	/* the route's price, 1 credit per domain returned */
	d->credits_used = (int64_t)n;
	out->data = d;
	out->returned = (int64_t)n;
	*resp = &out->base;
	return 0;
}

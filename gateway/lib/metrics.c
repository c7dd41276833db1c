#include "metrics.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_STATUSES 24

/* Upper bounds in seconds; the exposition adds +Inf. */
static const double latency_buckets[] = {
	0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05,
	0.1, 0.25, 0.5, 1, 2.5, 5, 10,
};
#define N_BUCKETS (sizeof(latency_buckets) / sizeof(latency_buckets[0]))

struct route_stats {
	int statuses[MAX_STATUSES];
	uint64_t status_counts[MAX_STATUSES];
	size_t n_statuses;
	uint64_t buckets[N_BUCKETS + 1];
	uint64_t count;
	double sum_s;
};

struct gw_metrics {
	const gw_route *routes;
	size_t n_routes;
	struct route_stats *stats; /* n_routes + 1: the last is unmatched */
	long long credits_charged, credits_refunded;
	/* Authorize calls sent; calls whose rate was counted here; grants
	 * asked ahead. */
	unsigned long long authorize, rate_local, rate_ask;
};

gw_metrics *gw_metrics_new(const gw_route *routes, size_t n_routes)
{
	gw_metrics *m = calloc(1, sizeof(*m));

	if (m == NULL)
		return NULL;
	m->stats = calloc(n_routes + 1, sizeof(*m->stats));
	if (m->stats == NULL) {
		free(m);
		return NULL;
	}
	m->routes = routes;
	m->n_routes = n_routes;
	return m;
}

void gw_metrics_free(gw_metrics *m)
{
	if (m == NULL)
		return;
	free(m->stats);
	free(m);
}

void gw_metrics_observe(gw_metrics *m, const gw_route *route, int status,
			int64_t latency_us)
{
	size_t idx = route ? (size_t)(route - m->routes) : m->n_routes;
	struct route_stats *s = &m->stats[idx < m->n_routes ? idx : m->n_routes];
	double secs = (double)latency_us / 1e6;
	size_t i;

	for (i = 0; i < s->n_statuses && s->statuses[i] != status; i++)
		;
	if (i == s->n_statuses && i < MAX_STATUSES) {
		s->statuses[i] = status;
		s->n_statuses++;
	}
	if (i < MAX_STATUSES)
		s->status_counts[i]++;
	for (i = 0; i < N_BUCKETS && secs > latency_buckets[i]; i++)
		;
	s->buckets[i]++;
	s->count++;
	s->sum_s += secs;
}

void gw_metrics_credits(gw_metrics *m, long long charged, long long refunded)
{
	m->credits_charged += charged;
	m->credits_refunded += refunded;
}

void gw_metrics_authorize(gw_metrics *m)
{
	m->authorize++;
}

void gw_metrics_rate_local(gw_metrics *m)
{
	m->rate_local++;
}

void gw_metrics_rate_ask(gw_metrics *m)
{
	m->rate_ask++;
}

struct out {
	char *buf;
	size_t len, cap;
	int failed;
};

__attribute__((format(printf, 2, 3)))
static void put(struct out *o, const char *fmt, ...)
{
	va_list ap;
	int n;

	if (o->failed)
		return;
	for (;;) {
		va_start(ap, fmt);
		n = vsnprintf(o->buf + o->len, o->cap - o->len, fmt, ap);
		va_end(ap);
		if (n < 0) {
			o->failed = 1;
			return;
		}
		if ((size_t)n < o->cap - o->len) {
			o->len += (size_t)n;
			return;
		}
		char *nb = realloc(o->buf, o->cap * 2 + (size_t)n);
		if (nb == NULL) {
			o->failed = 1;
			return;
		}
		o->buf = nb;
		o->cap = o->cap * 2 + (size_t)n;
	}
}

static void route_labels(const gw_metrics *m, size_t i, const char **method,
			 const char **pattern)
{
	*method = i < m->n_routes ? m->routes[i].method : "";
	*pattern = i < m->n_routes ? m->routes[i].pattern : "unmatched";
}

char *gw_metrics_render(const gw_metrics *m, size_t *len)
{
	struct out o = {.buf = malloc(16384), .cap = 16384};
	const char *method, *pattern;

	if (o.buf == NULL)
		return NULL;
	/* The row's stages, so that dashboards can group routes by them. */
	put(&o, "# HELP seo_route_info The stages of each route of the table.\n"
		"# TYPE seo_route_info gauge\n");
	for (size_t i = 0; i < m->n_routes; i++) {
		const gw_route *r = &m->routes[i];

		put(&o, "seo_route_info{method=\"%s\",route=\"%s\",key=\"%s\","
			"billing=\"%s\",quota=\"%s\",output=\"%s\"} 1\n",
		    r->method, r->pattern, gw_key_name(r->auth.key),
		    gw_bill_name(r->bill.kind), gw_quota_name(r->quota),
		    gw_output_name(r->out.kind));
	}
	put(&o, "# HELP seo_http_requests_total HTTP requests by route and status.\n"
		"# TYPE seo_http_requests_total counter\n");
	for (size_t i = 0; i <= m->n_routes; i++) {
		const struct route_stats *s = &m->stats[i];
		route_labels(m, i, &method, &pattern);
		for (size_t j = 0; j < s->n_statuses; j++)
			put(&o, "seo_http_requests_total{method=\"%s\",route=\"%s\",status=\"%d\"} %llu\n",
			    method, pattern, s->statuses[j],
			    (unsigned long long)s->status_counts[j]);
	}
	put(&o, "# HELP seo_http_request_duration_seconds Request latency by route.\n"
		"# TYPE seo_http_request_duration_seconds histogram\n");
	for (size_t i = 0; i <= m->n_routes; i++) {
		const struct route_stats *s = &m->stats[i];
		uint64_t cum = 0;

		if (s->count == 0)
			continue;
		route_labels(m, i, &method, &pattern);
		for (size_t b = 0; b < N_BUCKETS; b++) {
			cum += s->buckets[b];
			put(&o, "seo_http_request_duration_seconds_bucket{method=\"%s\",route=\"%s\",le=\"%g\"} %llu\n",
			    method, pattern, latency_buckets[b],
			    (unsigned long long)cum);
		}
		put(&o, "seo_http_request_duration_seconds_bucket{method=\"%s\",route=\"%s\",le=\"+Inf\"} %llu\n",
		    method, pattern, (unsigned long long)s->count);
		put(&o, "seo_http_request_duration_seconds_sum{method=\"%s\",route=\"%s\"} %.6f\n",
		    method, pattern, s->sum_s);
		put(&o, "seo_http_request_duration_seconds_count{method=\"%s\",route=\"%s\"} %llu\n",
		    method, pattern, (unsigned long long)s->count);
	}
	put(&o, "# HELP seo_credits_charged_total Credits debited by billed calls.\n"
		"# TYPE seo_credits_charged_total counter\n"
		"seo_credits_charged_total %lld\n"
		"# HELP seo_credits_refunded_total Credits given back to failed calls.\n"
		"# TYPE seo_credits_refunded_total counter\n"
		"seo_credits_refunded_total %lld\n",
	    m->credits_charged, m->credits_refunded);
	put(&o, "# HELP seo_account_authorize_total Authorize calls sent to "
		"svc-account.\n"
		"# TYPE seo_account_authorize_total counter\n"
		"seo_account_authorize_total %llu\n"
		"# HELP seo_rate_local_total Calls whose key rate was counted "
		"from tokens this gateway holds.\n"
		"# TYPE seo_rate_local_total counter\n"
		"seo_rate_local_total %llu\n"
		"# HELP seo_rate_ask_total Authorize calls that only asked "
		"ahead for a key's rate tokens (counted in "
		"seo_account_authorize_total too).\n"
		"# TYPE seo_rate_ask_total counter\n"
		"seo_rate_ask_total %llu\n",
	    m->authorize, m->rate_local, m->rate_ask);
	if (o.failed) {
		free(o.buf);
		return NULL;
	}
	*len = o.len;
	return o.buf;
}

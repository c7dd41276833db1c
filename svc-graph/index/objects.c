/*
 * objects.c: what is read of one domain at once: its captures (status
 * codes, URL index), authority, rank and crawl history, and the per-row
 * enrichment of docs/metrics.md.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <seo/errors.h>

#include "index.h"

/* ---- captures ---- */

int graph_status_codes(const graph_index *ix, const char *domain,
		       seo_arena *a, graph_status_row **rows, size_t *n)
{
	const uint64_t *off = ARR(ix, F_STATUS_OFF, uint64_t);
	const graph__status *st = ARR(ix, F_STATUS, graph__status);
	uint32_t id;
	int rc = graph__query_start(ix, domain, &id, n, NULL);

	*rows = NULL;
	if (rc <= 0)
		return rc;
	*n = (size_t)(off[id + 1] - off[id]);
	*rows = graph__rows_alloc(a, *n, sizeof(**rows));
	if (!*rows)
		return SEO_ENOMEM;
	for (size_t i = 0; i < *n; i++) {
		(*rows)[i].status_code = (uint16_t)st[off[id] + i].status;
		(*rows)[i].count = st[off[id] + i].count;
	}
	return 0;
}

int graph_url_index(const graph_index *ix, const char *domain,
		    const graph_page *pg, seo_arena *a, graph_url_row **rows,
		    size_t *n, uint64_t *total)
{
	const uint64_t *off = ARR(ix, F_URLIDX_OFF, uint64_t);
	const graph__cap *c = ARR(ix, F_URLIDX, graph__cap);
	uint32_t id, limit = graph__page_limit(pg);
	int rc = graph__query_start(ix, domain, &id, n, total);

	*rows = NULL;
	if (rc <= 0)
		return rc;
	*total = off[id + 1] - off[id];
	*rows = graph__rows_alloc(a, limit, sizeof(**rows));
	if (!*rows)
		return SEO_ENOMEM;
	for (uint64_t k = off[id] + graph__page_skip(pg, *total);
	     k < off[id + 1] && *n < limit; k++) {
		graph_url_row *row = &(*rows)[(*n)++];

		row->url = graph__url_str(ix, c[k].url);
		row->status_code = (uint16_t)c[k].status;
		row->mime = graph__small_str(ix, c[k].mime);
		row->crawled_at = c[k].ts;
	}
	return 0;
}

/* ---- single objects ---- */

const char *graph_risk_flag_name(unsigned flag)
{
	switch (flag) {
	case GRAPH_RISK_NEW_DOMAIN:
		return "new_domain";
	case GRAPH_RISK_HIGH_AUTHORITY_NEW_DOMAIN:
		return "high_authority_new_domain";
	case GRAPH_RISK_NO_TRANCO_PRESENCE:
		return "no_tranco_presence";
	case GRAPH_RISK_LOW_AUTHORITY:
		return "low_authority";
	default:
		return NULL;
	}
}

int graph_authority_get(const graph_index *ix, const char *domain,
			seo_arena *a, graph_authority *out)
{
	const graph__dom *d = NULL;
	int health = 100;
	int rc = graph__dom_start(ix, domain, out, sizeof(*out), &d);

	if (rc < 0)
		return rc;
	if (rc == 0) {
		/* no data at all: nothing vouches for the domain */
		out->risk_flags = GRAPH_RISK_NO_TRANCO_PRESENCE |
				  GRAPH_RISK_LOW_AUTHORITY;
		out->health_score = 70;
		return 0;
	}
	out->score = d->score;
	out->referring_domains = d->ref_domains;
	out->total_host_count = d->hosts;
	out->registrar = graph__small_str(ix, d->registrar);
	out->popularity_rank = d->tranco;
	if (d->registered_day != INT32_MIN) {
		int y;
		unsigned m, day;

		graph_civil_from_days(d->registered_day, &y, &m, &day);
		out->registered_at = seo_arena_printf(a, "%04d-%02u-%02u", y,
						      m, day);
		if (!out->registered_at)
			return SEO_ENOMEM;
		/* "new" against the crawl's own clock, not the wall clock:
		 * the same index answers the same way every day */
		if (ix->meta->as_of &&
		    (int64_t)ix->meta->as_of / 86400 - d->registered_day < 365) {
			out->risk_flags |= GRAPH_RISK_NEW_DOMAIN;
			health -= 20;
			if (d->score >= 40) {
				out->risk_flags |=
					GRAPH_RISK_HIGH_AUTHORITY_NEW_DOMAIN;
				health -= 30;
			}
		}
	}
	if (d->tranco == 0) {
		out->risk_flags |= GRAPH_RISK_NO_TRANCO_PRESENCE;
		health -= 10;
	}
	if (d->score < 20) {
		out->risk_flags |= GRAPH_RISK_LOW_AUTHORITY;
		health -= 20;
	}
	out->health_score = (uint8_t)(health < 0 ? 0 : health);
	return 0;
}

int graph_domain_rank_get(const graph_index *ix, const char *domain,
			  graph_domain_rank *out)
{
	const graph__dom *d = NULL;
	int rc = graph__dom_start(ix, domain, out, sizeof(*out), &d);

	if (rc <= 0)
		return rc;
	out->unique_domains = d->ref_domains;
	/* URL-level links where seen, one edge per referrer known only
	 * from the domain graph */
	out->inbound_edges = d->inbound_links +
			     (d->ref_domains > d->url_referrers ?
				      d->ref_domains - d->url_referrers : 0);
	out->avg_linking_host_count =
		d->ref_domains ? (double)d->linking_hosts / d->ref_domains : 0;
	return 0;
}

int graph_crawl_history_get(const graph_index *ix, const char *domain,
			    graph_crawl_history *out)
{
	const graph__dom *d = NULL;
	int rc = graph__dom_start(ix, domain, out, sizeof(*out), &d);

	if (rc <= 0)
		return rc;
	out->first_seen = d->first_seen;
	out->last_seen = d->last_seen;
	out->total_urls = d->total_urls;
	return 0;
}

/* ---- enrichment ---- */

const char *graph_link_quality(uint8_t score)
{
	return score >= 50 ? "high" : score >= 20 ? "medium" : "low";
}

const char *graph_anchor_type(const char *anchor, const char *link_type,
			      const char *to_domain)
{
	static const char *const generic[] = {
		"click here", "here", "read more", "more", "link", "website",
		"this", "visit", "learn more", "home", "source", "continue",
	};
	char label[GRAPH_DOMAIN_MAX + 1];
	size_t ll;

	if (link_type && strcmp(link_type, "image") == 0)
		return "image";
	if (!anchor || !*anchor)
		return "generic";
	for (size_t i = 0; i < sizeof(generic) / sizeof(generic[0]); i++)
		if (strcasecmp(anchor, generic[i]) == 0)
			return "generic";
	if (strncasecmp(anchor, "http://", 7) == 0 ||
	    strncasecmp(anchor, "https://", 8) == 0 ||
	    (to_domain && strcasestr(anchor, to_domain)))
		return "naked";
	/* the brand is the label left of the public suffix */
	ll = to_domain ? strcspn(to_domain, ".") : 0;
	if (ll > 0 && ll < sizeof(label)) {
		memcpy(label, to_domain, ll);
		label[ll] = '\0';
		if (strcasestr(anchor, label))
			return "branded";
	}
	return "partial";
}

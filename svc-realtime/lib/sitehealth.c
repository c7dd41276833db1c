/*
 * sitehealth.c: rt_site_health(), the site health object from the
 * probes the service fetched. Pure: no network.
 */
#include "rt.h"

#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "seo/errors.h"

/* A probe that got an answer, of any status. */
static int answered(const seo_fetch_result *r)
{
	return r != NULL && r->error == SEO_FETCH_OK;
}

static int ok_2xx(const seo_fetch_result *r)
{
	return answered(r) && r->status >= 200 && r->status < 300;
}

static const char *header_or_empty(const seo_fetch_result *r, const char *name)
{
	const char *v = answered(r) ? seo_fetch_header(r, name) : NULL;

	return v != NULL ? v : "";
}

/* The host of r's final URL, or NULL. */
static const char *final_host(const seo_fetch_result *r, seo_arena *a)
{
	seo_url u;

	if (!answered(r) || seo_url_parse(r->final_url, a, &u) != 0)
		return NULL;
	return u.host;
}

/* max-age of a Strict-Transport-Security value (directives split by
 * ';', names in any case, the value may be quoted); 0 when it has none. */
static long long hsts_max_age(const char *v)
{
	while (*v != '\0') {
		v += strspn(v, " \t");
		if (strncasecmp(v, "max-age", 7) == 0) {
			const char *p = v + 7 + strspn(v + 7, " \t");

			if (*p == '=') {
				long long n;

				p++;
				p += strspn(p, " \t\"");
				n = strtoll(p, NULL, 10);
				return n > 0 ? n : 0;
			}
		}
		v += strcspn(v, ";");
		v += *v == ';';
	}
	return 0;
}

static json_t *check_json(const seo_fetch_result *r)
{
	return json_pack("{s:s,s:o,s:s,s:I}", "url", r->url,
			 "status", answered(r) ? json_integer(r->status) : json_null(),
			 "content_type", header_or_empty(r, "content-type"),
			 "response_time_ms", (json_int_t)r->response_time_ms);
}

/* The robots_txt facts: a 2xx robots.txt parsed, else none. */
static int robots_json(const seo_fetch_result *r, seo_arena *a, json_t **out)
{
	rt_robots robots;
	int rc;

	if (!ok_2xx(r))
		return rt_robots_facts(NULL, out);
	rc = rt_robots_parse(r->body, r->body_len, a, &robots);
	if (rc != 0)
		return rc;
	return rt_robots_facts(&robots, out);
}

int rt_site_health(const char *domain, const char *apex,
		   const rt_site_probes *p, seo_arena *a, json_t **out)
{
	const char *sts = header_or_empty(p->home, "strict-transport-security");
	const char *http_to = final_host(p->http, a), *www_to = final_host(p->www, a);
	int enforced = http_to != NULL && strncmp(p->http->final_url, "https:", 6) == 0;
	int www = www_to != NULL && strcmp(www_to, apex) == 0;
	long long max_age = ok_2xx(p->home) &&
		strncmp(p->home->final_url, "https:", 6) == 0 ? hsts_max_age(sts) : 0;
	json_t *robots = NULL;
	int rc = robots_json(p->robots, a, &robots);

	if (rc != 0)
		return rc;
	*out = json_pack("{s:s,s:{s:b,s:b,s:I},s:{s:b,s:o},s:[o,o,o],"
			 "s:{s:s,s:s,s:b,s:s,s:s},s:o}",
			 "domain", domain,
			 "https", "enforced", enforced, "hsts", max_age > 0,
			 "hsts_max_age", (json_int_t)max_age,
			 "www_redirect", "enabled", www,
			 "target", answered(p->www) && p->www->n_hops > 1
				   ? json_string(p->www->final_url) : json_null(),
			 "checks", check_json(p->home), check_json(p->robots),
			 check_json(p->sitemap),
			 "security_headers",
			 "x_frame_options", header_or_empty(p->home, "x-frame-options"),
			 "x_content_type_options",
			 header_or_empty(p->home, "x-content-type-options"),
			 "content_security_policy",
			 answered(p->home) &&
				 seo_fetch_header(p->home, "content-security-policy") != NULL,
			 "strict_transport_security", sts,
			 "referrer_policy", header_or_empty(p->home, "referrer-policy"),
			 "robots_txt", robots);
	return *out != NULL ? 0 : SEO_ENOMEM;
}

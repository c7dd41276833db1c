/*
 * Page performance: the PageSpeed Insights v5 call (runPagespeed through
 * the provider client, seo/provider.h) and the mapping of its answer onto the spec's Page performance
 * object. No state: the cache and the quotas are the service's
 * (psi_service.c).
 */
#include "rt.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "seo/errors.h"
#include "seo/log.h"
#include "seo/provider.h"

/* The API path under SEO_PAGESPEED_URL. */
#define PSI_PATH "/pagespeedonline/v5/runPagespeed"
/* A run's answer carries screenshots: a few MB at most. */
#define PSI_MAX_BODY ((size_t)32 * 1024 * 1024)
#define PSI_CONNECT_TIMEOUT_MS 10000

/* The three scores of the object, by Lighthouse category id. */
static const struct {
	const char *field;
	const char *category;
} scores[] = {
	{"performance_score", "performance"},
	{"accessibility_score", "accessibility"},
	{"seo_score", "seo"},
};

/* Core Web Vitals, by the Lighthouse audit whose numericValue they are. */
static const struct {
	const char *field;
	const char *audit;
} vitals[] = {
	{"lcp_ms", "largest-contentful-paint"},
	{"cls", "cumulative-layout-shift"},
	{"inp_ms", "interaction-to-next-paint"},
	{"fcp_ms", "first-contentful-paint"},
	{"ttfb_ms", "server-response-time"},
};

#define N(a) (sizeof(a) / sizeof((a)[0]))

const char *rt_psi_strategy(const char *given)
{
	return given != NULL && strcmp(given, "desktop") == 0 ? "desktop"
							       : "mobile";
}

/* A category's score (a number 0..1, or null when it could not be
 * computed) as an integer 0..100; 0 when absent or not a number. */
static json_int_t score_of(const json_t *categories, const char *id)
{
	const json_t *s = json_object_get(json_object_get(categories, id), "score");
	double v;

	if (!json_is_number(s))
		return 0;
	v = round(json_number_value(s) * 100.0);
	return v < 0 ? 0 : v > 100 ? 100 : (json_int_t)v;
}

/* An audit's numericValue, or null. */
static json_t *vital_of(const json_t *audits, const char *id)
{
	const json_t *v = json_object_get(json_object_get(audits, id),
					  "numericValue");

	return json_is_number(v) ? json_real(json_number_value(v)) : json_null();
}

/* Field data: loadingExperience.metrics holds at least one metric. */
static int has_field_data(const json_t *root)
{
	const json_t *m = json_object_get(json_object_get(root, "loadingExperience"),
					  "metrics");

	return json_is_object(m) && json_object_size(m) > 0;
}

int rt_psi_map(const json_t *root, const char *url, const char *strategy,
	       json_t **out, const char **why)
{
	const json_t *lh, *err;
	json_t *obj = NULL, *cwv;
	const char *code;
	int rc = SEO_ENOMEM;

	*out = NULL;
	*why = "the answer is not json";
	if (root == NULL)
		return SEO_EINVAL;
	rc = SEO_EINVAL;
	lh = json_object_get(root, "lighthouseResult");
	if (!json_is_object(lh)) {
		*why = "the answer has no lighthouseResult";
		goto out;
	}
	/* Lighthouse could not load the page: no measurement to report. */
	err = json_object_get(lh, "runtimeError");
	code = json_string_value(json_object_get(err, "code"));
	if (code != NULL && strcmp(code, "NO_ERROR") != 0) {
		*why = "lighthouse reported a runtime error";
		goto out;
	}
	rc = SEO_ENOMEM;
	obj = json_object();
	cwv = json_object();
	if (obj == NULL || json_object_set_new(obj, "core_web_vitals", cwv) != 0 ||
	    json_object_set_new(obj, "url", json_string(url)) != 0)
		goto out;
	for (size_t i = 0; i < N(scores); i++)
		if (json_object_set_new(obj, scores[i].field,
					json_integer(score_of(json_object_get(lh, "categories"),
							      scores[i].category))) != 0)
			goto out;
	for (size_t i = 0; i < N(vitals); i++)
		if (json_object_set_new(cwv, vitals[i].field,
					vital_of(json_object_get(lh, "audits"),
						 vitals[i].audit)) != 0)
			goto out;
	if (json_object_set_new(obj, "crux_data",
				json_boolean(has_field_data(root))) != 0 ||
	    json_object_set_new(obj, "strategy", json_string(strategy)) != 0)
		goto out;
	*out = obj;
	obj = NULL;
	rc = 0;
out:
	json_decref(obj);
	return rc;
}

/* ---- the upstream call ------------------------------------------------------ */

int rt_psi_run(const char *base, const char *key, const char *url,
	       const char *strategy, long timeout_ms, json_t **out, char *why,
	       size_t why_len)
{
	const seo_provider psi = {
		.name = "pagespeed",
		.base_url = base,
		.auth = SEO_AUTH_QUERY,
		.key = key,
		.key_name = "key",
		.connect_timeout_ms = PSI_CONNECT_TIMEOUT_MS,
		.max_body = PSI_MAX_BODY,
	};
	const seo_param query[] = {
		{"url", url},
		{"strategy", strcmp(strategy, "desktop") == 0 ? "DESKTOP" : "MOBILE"},
		{"category", "PERFORMANCE"},
		{"category", "ACCESSIBILITY"},
		{"category", "SEO"},
	};
	/* Not retried: each run is one of the day's counted attempts. */
	const seo_provider_call call = {
		.path = PSI_PATH,
		.query = query,
		.n_query = sizeof(query) / sizeof(query[0]),
		.timeout_ms = timeout_ms <= 0 || timeout_ms > RT_PSI_TIMEOUT_MS
				      ? RT_PSI_TIMEOUT_MS : timeout_ms,
	};
	seo_provider_answer ans;
	const char *bad;
	int rc;

	*out = NULL;
	rc = seo_provider_do(&psi, &call, &ans, why, why_len);
	if (rc != 0)
		return rc == SEO_ENOMEM ? SEO_ENOMEM : SEO_EUPSTREAM;
	if (ans.status != 200) {
		/* The body is for our log only: `why` reaches the caller. */
		log_warn("pagespeed answered http %ld: %.300s", ans.status, ans.body);
		snprintf(why, why_len, "http %ld", ans.status);
		rc = SEO_EUPSTREAM;
	} else {
		rc = rt_psi_map(ans.json, url, strategy, out, &bad);
		if (rc == SEO_EINVAL) {
			snprintf(why, why_len, "%s", bad);
			rc = SEO_EUPSTREAM;
		} else if (rc != 0) {
			snprintf(why, why_len, "out of memory");
		}
	}
	seo_provider_answer_free(&ans);
	return rc;
}

/* ---- days ---------------------------------------------------------------------- */

void rt_utc_day(int64_t now_ms, char day[11], int64_t *to_midnight_s)
{
	time_t t = (time_t)(now_ms / 1000);
	struct tm tm;
	int64_t into;

	gmtime_r(&t, &tm);
	strftime(day, 11, "%Y-%m-%d", &tm);
	into = (int64_t)tm.tm_hour * 3600 + tm.tm_min * 60 + tm.tm_sec;
	*to_midnight_s = 86400 - into;
}

void rt_iso8601(int64_t ms, char out[21])
{
	time_t t = (time_t)(ms / 1000);
	struct tm tm;

	gmtime_r(&t, &tm);
	strftime(out, 21, "%Y-%m-%dT%H:%M:%SZ", &tm);
}

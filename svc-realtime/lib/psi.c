/*
 * Page performance: the PageSpeed Insights v5 client (runPagespeed over
 * libcurl) and the mapping of its answer onto the spec's Page performance
 * object. No state: the cache and the quotas are the service's
 * (psi_service.c).
 */
#include "rt.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <curl/curl.h>

#include "seo/errors.h"
#include "seo/log.h"

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

int rt_psi_map(const char *body, size_t len, const char *url,
	       const char *strategy, json_t **out, const char **why)
{
	json_t *root, *lh, *err, *obj = NULL, *cwv;
	const char *code;
	int rc = SEO_ENOMEM;

	*out = NULL;
	*why = "the answer is not json";
	root = json_loadb(body, len, 0, NULL);
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
	json_decref(root);
	return rc;
}

/* ---- the upstream call ------------------------------------------------------ */

typedef struct body_buf {
	char *data;
	size_t len, cap;
	int too_big;
} body_buf;

static size_t collect(char *ptr, size_t size, size_t n, void *ud)
{
	body_buf *b = ud;
	size_t add = size * n;

	if (b->len + add > PSI_MAX_BODY) {
		b->too_big = 1;
		return 0;
	}
	if (b->len + add + 1 > b->cap) {
		size_t cap = b->cap ? b->cap : 64 * 1024;
		char *p;

		while (cap < b->len + add + 1)
			cap *= 2;
		p = realloc(b->data, cap);
		if (p == NULL)
			return 0;
		b->data = p;
		b->cap = cap;
	}
	memcpy(b->data + b->len, ptr, add);
	b->len += add;
	b->data[b->len] = '\0';
	return add;
}

/* The request URL, malloc'd: the parameters escaped, the enum values as
 * the API names them. */
static char *request_url(CURL *curl, const char *base, const char *key,
			 const char *url, const char *strategy)
{
	size_t blen = strlen(base);
	char *eurl = curl_easy_escape(curl, url, 0);
	char *ekey = key[0] != '\0' ? curl_easy_escape(curl, key, 0) : NULL;
	char *out = NULL;

	while (blen > 0 && base[blen - 1] == '/')
		blen--;
	if (eurl != NULL && (key[0] == '\0' || ekey != NULL) &&
	    asprintf(&out, "%.*s" PSI_PATH "?url=%s&strategy=%s"
		     "&category=PERFORMANCE&category=ACCESSIBILITY&category=SEO%s%s",
		     (int)blen, base, eurl,
		     strcmp(strategy, "desktop") == 0 ? "DESKTOP" : "MOBILE",
		     ekey != NULL ? "&key=" : "", ekey != NULL ? ekey : "") < 0)
		out = NULL;
	curl_free(eurl);
	curl_free(ekey);
	return out;
}

int rt_psi_run(const char *base, const char *key, const char *url,
	       const char *strategy, long timeout_ms, json_t **out, char *why,
	       size_t why_len)
{
	char errbuf[CURL_ERROR_SIZE] = "";
	body_buf body = {0};
	const char *bad;
	char *endpoint = NULL;
	CURL *curl;
	CURLcode cc;
	long status = 0;
	int rc = SEO_ENOMEM;

	*out = NULL;
	snprintf(why, why_len, "out of memory");
	if (timeout_ms <= 0 || timeout_ms > RT_PSI_TIMEOUT_MS)
		timeout_ms = RT_PSI_TIMEOUT_MS;
	if (curl_global_init(CURL_GLOBAL_DEFAULT) != CURLE_OK)
		return SEO_ENOMEM;
	curl = curl_easy_init();
	if (curl == NULL)
		return SEO_ENOMEM;
	endpoint = request_url(curl, base, key, url, strategy);
	if (endpoint == NULL)
		goto out;
	curl_easy_setopt(curl, CURLOPT_URL, endpoint);
	curl_easy_setopt(curl, CURLOPT_PROTOCOLS_STR, "http,https");
	curl_easy_setopt(curl, CURLOPT_WRITEFUNCTION, collect);
	curl_easy_setopt(curl, CURLOPT_WRITEDATA, &body);
	curl_easy_setopt(curl, CURLOPT_ERRORBUFFER, errbuf);
	curl_easy_setopt(curl, CURLOPT_ACCEPT_ENCODING, "");
	curl_easy_setopt(curl, CURLOPT_CONNECTTIMEOUT_MS,
			 timeout_ms < PSI_CONNECT_TIMEOUT_MS ? timeout_ms
							     : PSI_CONNECT_TIMEOUT_MS);
	curl_easy_setopt(curl, CURLOPT_TIMEOUT_MS, timeout_ms);
	/* Handlers run on worker threads: no SIGALRM-based resolver timeout. */
	curl_easy_setopt(curl, CURLOPT_NOSIGNAL, 1L);

	rc = SEO_EUPSTREAM;
	cc = curl_easy_perform(curl);
	if (cc != CURLE_OK) {
		snprintf(why, why_len, "%s", body.too_big ? "the answer is too large"
				  : errbuf[0] ? errbuf : curl_easy_strerror(cc));
		goto out;
	}
	curl_easy_getinfo(curl, CURLINFO_RESPONSE_CODE, &status);
	if (status != 200) {
		/* The body is for our log only: `why` reaches the caller. */
		log_warn("pagespeed answered http %ld: %.300s", status,
			 body.data != NULL ? body.data : "");
		snprintf(why, why_len, "http %ld", status);
		goto out;
	}
	rc = rt_psi_map(body.data != NULL ? body.data : "", body.len, url,
			strategy, out, &bad);
	if (rc == SEO_EINVAL) {
		snprintf(why, why_len, "%s", bad);
		rc = SEO_EUPSTREAM;
	} else if (rc != 0) {
		snprintf(why, why_len, "out of memory");
	}
out:
	curl_easy_cleanup(curl);
	free(endpoint);
	free(body.data);
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

/*
 * provider.c: calls to external providers' HTTP APIs over libcurl's easy
 * interface (see seo/provider.h).
 */
#include "seo/provider.h"

#include "body.h"
#include "seo/errors.h"
#include "seo/log.h"
#include "seo/util.h"

#include <curl/curl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define DEFAULT_TIMEOUT_MS 10000
#define DEFAULT_CONNECT_MS 5000
#define DEFAULT_MAX_BODY ((size_t)1024 * 1024)
#define DEFAULT_BACKOFF_MS 250

static pthread_once_t curl_once = PTHREAD_ONCE_INIT;
static CURLcode curl_init_rc;

/* Once per process: libcurl's global state stays until exit. */
static void curl_init(void)
{
	curl_init_rc = curl_global_init(CURL_GLOBAL_DEFAULT);
}

/* Appends "name=value" pairs to `f`, both percent-encoded, each after
 * *sep, which becomes "&" after the first. */
static int pairs_put(CURL *curl, FILE *f, const char **sep,
		     const seo_param *p, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		char *name = curl_easy_escape(curl, p[i].name, 0);
		char *value = curl_easy_escape(curl, p[i].value, 0);
		int bad = name == NULL || value == NULL ||
			  fprintf(f, "%s%s=%s", *sep, name, value) < 0;

		curl_free(name);
		curl_free(value);
		if (bad)
			return SEO_ENOMEM;
		*sep = "&";
	}
	return 0;
}

/* Writes `n` pairs into *out (malloc'd), a URL `head` first, the pairs
 * after `sep`. */
static int pairs_text(CURL *curl, const char *head, size_t head_len,
		      const char *sep, const seo_param *p, size_t n,
		      const seo_param *extra, char **out)
{
	size_t size;
	FILE *f = open_memstream(out, &size);
	int rc;

	if (f == NULL)
		return SEO_ENOMEM;
	rc = fwrite(head, 1, head_len, f) == head_len ? 0 : SEO_ENOMEM;
	if (rc == 0)
		rc = pairs_put(curl, f, &sep, p, n);
	if (rc == 0 && extra != NULL)
		rc = pairs_put(curl, f, &sep, extra, 1);
	if (fclose(f) != 0 && rc == 0)
		rc = SEO_ENOMEM;
	if (rc != 0) {
		free(*out);
		*out = NULL;
	}
	return rc;
}

/* The call's URL (malloc'd): base, path, query and a query key. */
static int call_url(CURL *curl, const seo_provider *p,
		    const seo_provider_call *c, char **out)
{
	seo_param key = {p->key_name, p->key};
	size_t blen = strlen(p->base_url);
	char *head;
	int rc;

	while (blen > 0 && p->base_url[blen - 1] == '/')
		blen--;
	if (asprintf(&head, "%.*s%s", (int)blen, p->base_url,
		     c->path != NULL ? c->path : "") < 0)
		return SEO_ENOMEM;
	rc = pairs_text(curl, head, strlen(head), "?", c->query, c->n_query,
			p->auth == SEO_AUTH_QUERY && p->key != NULL && p->key[0]
				? &key : NULL,
			out);
	free(head);
	return rc;
}

/* The request's headers: the key, the body's type, JSON wanted. */
static int call_headers(const seo_provider *p, const seo_provider_call *c,
			struct curl_slist **out)
{
	const char *type = c->n_form > 0 ? "Content-Type: application/x-www-form-urlencoded"
		       : c->json != NULL ? "Content-Type: application/json" : NULL;
	struct curl_slist *h = NULL, *n;
	char *auth = NULL;
	int have_key = p->key != NULL && p->key[0] != '\0';

	*out = NULL;
	if (have_key && p->auth == SEO_AUTH_BEARER &&
	    asprintf(&auth, "Authorization: Bearer %s", p->key) < 0)
		return SEO_ENOMEM;
	if (have_key && p->auth == SEO_AUTH_HEADER &&
	    asprintf(&auth, "%s: %s", p->key_name, p->key) < 0)
		return SEO_ENOMEM;
	n = h = curl_slist_append(NULL, "Accept: application/json");
	if (n != NULL && auth != NULL)
		n = curl_slist_append(h, auth);
	if (n != NULL && type != NULL)
		n = curl_slist_append(h, type);
	free(auth);
	if (n == NULL) {
		curl_slist_free_all(h);
		return SEO_ENOMEM;
	}
	*out = h;
	return 0;
}

/* The wait before attempt `attempt` + 1: the backoff doubled per retry. */
static long backoff_of(const seo_provider *p, int attempt)
{
	long ms = p->backoff_ms > 0 ? p->backoff_ms : DEFAULT_BACKOFF_MS;

	for (int i = 1; i < attempt && ms < 60000; i++)
		ms *= 2;
	return ms;
}

static void pause_ms(long ms)
{
	struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};

	while (nanosleep(&ts, &ts) != 0)
		;
}

/* Sets the options every attempt shares. */
static void call_setup(CURL *curl, const seo_provider_call *c, const char *url,
		       struct curl_slist *headers, const char *payload,
		       seo__body *body, char *errbuf)
{
	const char *method = c->method != NULL ? c->method : "GET";

	curl_easy_setopt(curl, CURLOPT_URL, url);
	curl_easy_setopt(curl, CURLOPT_PROTOCOLS_STR, "http,https");
	curl_easy_setopt(curl, CURLOPT_PROXY, ""); /* never the environment's */
	curl_easy_setopt(curl, CURLOPT_FOLLOWLOCATION, 0L);
	curl_easy_setopt(curl, CURLOPT_HTTPHEADER, headers);
	curl_easy_setopt(curl, CURLOPT_ACCEPT_ENCODING, "");
	curl_easy_setopt(curl, CURLOPT_MAXFILESIZE_LARGE, (curl_off_t)body->max);
	curl_easy_setopt(curl, CURLOPT_WRITEFUNCTION, seo__body_write);
	curl_easy_setopt(curl, CURLOPT_WRITEDATA, body);
	curl_easy_setopt(curl, CURLOPT_ERRORBUFFER, errbuf);
	/* worker threads: no SIGALRM-based resolver timeout */
	curl_easy_setopt(curl, CURLOPT_NOSIGNAL, 1L);
	if (payload != NULL || strcmp(method, "POST") == 0) {
		curl_easy_setopt(curl, CURLOPT_POSTFIELDS, payload ? payload : "");
		curl_easy_setopt(curl, CURLOPT_POSTFIELDSIZE_LARGE,
				 (curl_off_t)(payload ? strlen(payload) : 0));
	}
	if (strcmp(method, "GET") != 0 && strcmp(method, "POST") != 0)
		curl_easy_setopt(curl, CURLOPT_CUSTOMREQUEST, method);
}

/* Runs the attempts within the budget; the last one's code and status. */
static CURLcode attempts_run(CURL *curl, const seo_provider *p,
			     const seo_provider_call *c, seo__body *body,
			     char *errbuf, long *status, int *attempts)
{
	long timeout = c->timeout_ms > 0 ? c->timeout_ms
		     : p->timeout_ms > 0 ? p->timeout_ms : DEFAULT_TIMEOUT_MS;
	long connect = p->connect_timeout_ms > 0 ? p->connect_timeout_ms
						 : DEFAULT_CONNECT_MS;
	int64_t deadline = seo_mono_ms() + timeout;
	CURLcode cc;

	for (*attempts = 1;; ++*attempts) {
		int64_t left = deadline - seo_mono_ms();
		long wait;

		seo__body_reset(body);
		errbuf[0] = '\0';
		*status = 0;
		curl_easy_setopt(curl, CURLOPT_TIMEOUT_MS, (long)(left > 0 ? left : 1));
		curl_easy_setopt(curl, CURLOPT_CONNECTTIMEOUT_MS,
				 left < connect ? (long)(left > 0 ? left : 1) : connect);
		cc = curl_easy_perform(curl);
		if (cc == CURLE_OK)
			curl_easy_getinfo(curl, CURLINFO_RESPONSE_CODE, status);
		if (body->too_large || cc == CURLE_FILESIZE_EXCEEDED ||
		    (cc == CURLE_OK && *status != 429 && *status < 500) ||
		    *attempts > c->retries)
			return cc;
		wait = backoff_of(p, *attempts);
		if (seo_mono_ms() + wait >= deadline)
			return cc;
		log_info("%s: attempt %d %s; again in %ld ms", p->name, *attempts,
			 cc == CURLE_OK ? "answered an error status" : "had no answer",
			 wait);
		pause_ms(wait);
	}
}

int seo_provider_do(const seo_provider *p, const seo_provider_call *c,
		    seo_provider_answer *out, char *why, size_t why_len)
{
	char errbuf[CURL_ERROR_SIZE] = "";
	seo__body body = {0};
	struct curl_slist *headers = NULL;
	char *url = NULL, *payload = NULL;
	CURL *curl = NULL;
	CURLcode cc;
	int rc = SEO_ENOMEM;

	memset(out, 0, sizeof(*out));
	snprintf(why, why_len, "out of memory");
	if (c->n_form > 0 && c->json != NULL) {
		snprintf(why, why_len, "a form and a json body together");
		return SEO_EINVAL;
	}
	if (p->base_url == NULL || p->base_url[0] == '\0') {
		snprintf(why, why_len, "%s is not configured", p->name);
		return SEO_EUPSTREAM;
	}
	pthread_once(&curl_once, curl_init);
	if (curl_init_rc != CURLE_OK || (curl = curl_easy_init()) == NULL)
		return SEO_ENOMEM;
	if (call_url(curl, p, c, &url) != 0 || call_headers(p, c, &headers) != 0)
		goto out;
	if (c->n_form > 0 &&
	    pairs_text(curl, "", 0, "", c->form, c->n_form, NULL, &payload) != 0)
		goto out;
	if (c->json != NULL && (payload = json_dumps(c->json, JSON_COMPACT)) == NULL)
		goto out;
	body.max = p->max_body > 0 ? p->max_body : DEFAULT_MAX_BODY;
	call_setup(curl, c, url, headers, payload, &body, errbuf);
	cc = attempts_run(curl, p, c, &body, errbuf, &out->status, &out->attempts);
	if (cc != CURLE_OK) {
		snprintf(why, why_len, "%s",
			 body.too_large || cc == CURLE_FILESIZE_EXCEEDED
				 ? "the answer is too large"
				 : errbuf[0] ? errbuf : curl_easy_strerror(cc));
		rc = SEO_EUPSTREAM;
		goto out;
	}
	if (body.data == NULL && (body.data = strdup("")) == NULL)
		goto out;
	out->body = body.data;
	out->body_len = body.len;
	body.data = NULL;
	out->json = out->body_len > 0 ? json_loadb(out->body, out->body_len, 0, NULL)
				      : NULL;
	rc = 0;
out:
	curl_easy_cleanup(curl);
	curl_slist_free_all(headers);
	free(url);
	free(payload);
	seo__body_free(&body);
	if (rc != 0)
		seo_provider_answer_free(out);
	return rc;
}

void seo_provider_answer_free(seo_provider_answer *a)
{
	if (a == NULL)
		return;
	free(a->body);
	json_decref(a->json);
	memset(a, 0, sizeof(*a));
}

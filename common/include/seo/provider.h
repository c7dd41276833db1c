/*
 * seo/provider.h: the one client of external providers' HTTP APIs
 * (payments, page speed, and every provider to come): a query string, a
 * JSON or form-encoded body in, JSON out; bearer, header or query-key
 * authentication; one time budget for the whole call; a cap on the
 * answer; retries with backoff where the call allows them; never a proxy
 * from the environment; http and https only; no redirects followed.
 *
 * Calls block (libcurl easy): services make them on worker threads. A
 * provider's base URL comes from the operator's configuration; a user's
 * URL handed to a provider as a parameter passes seo_resolve_checked()
 * (seo/fetch.h) first. All functions returning int return 0 or a negative
 * SEO_E* code (seo/errors.h).
 */
#ifndef SEO_PROVIDER_H
#define SEO_PROVIDER_H

#include <stddef.h>

#include <jansson.h>

enum seo_provider_auth {
	SEO_AUTH_NONE = 0,
	SEO_AUTH_BEARER, /* Authorization: Bearer <key> */
	SEO_AUTH_HEADER, /* <key_name>: <key> */
	SEO_AUTH_QUERY,  /* <key_name>=<key> added to the query */
};

/* A provider as configured; the strings are borrowed for each call. */
typedef struct seo_provider {
	const char *name;          /* for logs: "pagespeed" */
	const char *base_url;      /* "https://api.example.com"; trailing '/'
				      dropped */
	int auth;                  /* enum seo_provider_auth */
	const char *key;           /* NULL or "": sent without */
	const char *key_name;      /* the header or parameter of the key */
	long timeout_ms;           /* a call, every attempt and wait; 0: 10 s */
	long connect_timeout_ms;   /* an attempt's connection; 0: 5 s */
	size_t max_body;           /* answer bytes at most; 0: 1 MiB */
	long backoff_ms;           /* wait before the first retry, doubled for
				      each further one; 0: 250 ms */
} seo_provider;

/* A name and value, percent-encoded when sent. */
typedef struct seo_param {
	const char *name;
	const char *value;
} seo_param;

/* One call. Everything is borrowed. */
typedef struct seo_provider_call {
	const char *method;        /* "GET" (NULL too), "POST", "PUT", ... */
	const char *path;          /* appended to base_url: "/v1/sessions" */
	const seo_param *query;    /* names may repeat */
	size_t n_query;
	const seo_param *form;     /* a form-encoded body */
	size_t n_form;
	const json_t *json;        /* a JSON body; not beside form */
	int retries;               /* further attempts after no answer, a 429
				      or a 5xx; 0 for calls that must not be
				      repeated (not idempotent, or charged
				      per attempt upstream) */
	long timeout_ms;           /* 0: the provider's */
} seo_provider_call;

/* An answer; free with seo_provider_answer_free(). */
typedef struct seo_provider_answer {
	long status;               /* HTTP status of the last attempt */
	char *body;                /* malloc'd, NUL-terminated, never NULL */
	size_t body_len;
	json_t *json;              /* the body parsed when it is JSON, else
				      NULL; owned by the answer */
	int attempts;
} seo_provider_answer;

/*
 * Calls provider `p`. Returns 0 when it answered, whatever the status
 * (read out->status); SEO_EUPSTREAM when no answer came within the budget
 * (unreachable, too slow, an answer over max_body, a base URL not set),
 * after the retries the call allows; SEO_EINVAL (form and json together);
 * SEO_ENOMEM. On every failure `why` (why_len bytes) says how in a few
 * words fit for logs, and *out holds nothing to free.
 */
int seo_provider_do(const seo_provider *p, const seo_provider_call *c,
		    seo_provider_answer *out, char *why, size_t why_len);

/* Frees what an answer holds and zeroes it. NULL is allowed. */
void seo_provider_answer_free(seo_provider_answer *a);

#endif

/*
 * indexnow.h: IndexNow, as the other parts of svc-agent use it: the URL
 * rules POST /v1/indexnow and IndexNow proposals share, the website that
 * owns a host, the keys, and a submission (key-file verification, the
 * upstream, the indexnow.submitted event), which the proposal worker runs
 * for an approved proposal. The routes themselves are indexnow_rpc.c.
 *
 * Functions returning int return 0 or a negative SEO_E* code
 * (seo/errors.h).
 */
#ifndef AGENT_INDEXNOW_H
#define AGENT_INDEXNOW_H

#include <stddef.h>
#include <stdint.h>

#include <libpq-fe.h>

#include "agent_int.h"

/* The specification's limits of one submission. */
#define AGENT_INOW_MAX_URLS 1000
#define AGENT_INOW_MAX_URL_CHARS 2048

/* Why agent_indexnow_check_urls() refused a list; each caller maps it to
 * its own code (agent_indexnow_reason_code() gives POST /v1/indexnow's). */
enum agent_inow_reason {
	AGENT_INOW_URLS_OK = 0,
	AGENT_INOW_URLS_NONE,     /* no URL at all */
	AGENT_INOW_URLS_TOO_MANY, /* more than AGENT_INOW_MAX_URLS */
	AGENT_INOW_URLS_INVALID,  /* not an absolute http(s) URL: credentials,
				   * a fragment, whitespace, a bad host */
	AGENT_INOW_URLS_PRIVATE,  /* a private, reserved or local host */
	AGENT_INOW_URLS_TOO_LONG, /* over AGENT_INOW_MAX_URL_CHARS characters */
	AGENT_INOW_URLS_PORT,     /* an explicit port, even the default one */
	AGENT_INOW_URLS_HOSTS,    /* not all on one host */
};

/* A list that passed: every URL canonical (scheme and host lowercased,
 * IDN hosts in punycode), in the order given, duplicates kept. */
typedef struct agent_inow_urls {
	const char *host;         /* the one host */
	const char **urls;        /* n canonical URLs */
	size_t n;
} agent_inow_urls;

/*
 * Checks `n` URLs as the specification's IndexNow rules read them: 1 to
 * AGENT_INOW_MAX_URLS absolute public http(s) URLs of at most
 * AGENT_INOW_MAX_URL_CHARS characters, no explicit port, one host. The
 * count is checked first, then each URL in order, then the hosts. An IP
 * literal host is refused as private unless an allow-net of `cfg` (may be
 * NULL) exempts it. *out's strings live on `a`.
 * Returns 0; SEO_EINVAL with *reason (enum agent_inow_reason) and *bad,
 * the index of the URL at fault (0 for NONE and TOO_MANY); SEO_ENOMEM.
 */
int agent_indexnow_check_urls(const seo_fetch_config *cfg,
			      const char *const *urls, size_t n, seo_arena *a,
			      agent_inow_urls *out, int *reason, size_t *bad);

/* POST /v1/indexnow's public code for `reason` ("indexnow_invalid_url",
 * "indexnow_too_many_urls", "indexnow_host_mismatch"), and a few words
 * of why for messages ("an explicit port"). Static strings. */
const char *agent_indexnow_reason_code(int reason);
const char *agent_indexnow_reason_text(int reason);

/* ---- websites ---------------------------------------------------------------- */

/* A workspace website (Account/ListSites); strings on the call's arena. */
typedef struct agent_site {
	const char *id;
	const char *host;
	const char *indexnow_policy; /* "automatic" or "approval" */
} agent_site;

/*
 * The website of `call`'s workspace whose host is `host` or, with
 * `subdomains`, whose host `host` is a subdomain of (the longest such).
 * Asks svc-account (Account/ListSites) on behalf of `call`, which needs
 * its ctx. Returns 0 with *out; SEO_ENOTFOUND when no website matches;
 * otherwise fails with *err set (service_unavailable, or svc-account's
 * own code) and returns that failure.
 */
int agent_indexnow_site_of(const agent_call *call, const char *host,
			   int subdomains, agent_site *out, agent_err *err);

/* ---- keys -------------------------------------------------------------------- */

/* A host's key; strings on the arena given. */
typedef struct agent_inow_key {
	const char *host;
	const char *key;          /* 32 lowercase hexadecimal characters */
	const char *key_location; /* https://<host>/<key>.txt */
	int verified;             /* the file was confirmed in the last 24 h */
} agent_inow_key;

/*
 * The key of `host` in `workspace_id`, read on `pg`, into *out (may be
 * NULL: whether there is one), with `now_ms` deciding `verified`.
 * Returns 0, SEO_ENOTFOUND (no key: indexnow_key_not_found), SEO_EDB or
 * SEO_ENOMEM.
 */
int agent_indexnow_key_get(PGconn *pg, const char *workspace_id,
			   const char *host, int64_t now_ms, seo_arena *a,
			   agent_inow_key *out);

/* ---- a submission ------------------------------------------------------------- */

/* What to submit: URLs that passed agent_indexnow_check_urls(), of a
 * host whose website the caller has found. Everything is borrowed. */
typedef struct agent_inow_submit {
	const char *workspace_id;
	const char *site_id;      /* the website owning `host`: the event's */
	const char *host;
	const char *const *urls;
	size_t n_urls;
} agent_inow_submit;

/* What the upstream accepted (a proposal's result: host, url_count,
 * key_location); strings on the arena given. */
typedef struct agent_inow_result {
	const char *host;
	int64_t url_count;
	const char *key_location;
} agent_inow_result;

/*
 * Runs the checks that follow the URLs and the website, in the
 * specification's order: the key lookup, the key-file verification
 * (https://<host>/<key>.txt through the shared fetcher, 30 s, HTTP 200,
 * the trimmed body equal to the key, over 4 KB is not a key file; a
 * success is remembered 24 hours), then the upstream (SEO_INDEXNOW_URL,
 * the protocol's JSON). On acceptance (upstream HTTP 200 or 202) records
 * the client-visible indexnow.submitted event and returns 0 with *out.
 * Blocks: up to 30 s for the file, then the upstream's time. Charges
 * nothing: the caller bills. Uses connections of `svc`'s pool, none held
 * across the fetch or the upstream call.
 * Returns 0, or a negative code with *err holding the public code:
 * indexnow_key_not_found, indexnow_key_not_verified,
 * indexnow_invalid_request (upstream 400), indexnow_key_rejected (403;
 * the verification is forgotten, so the next submission checks the file
 * again), indexnow_url_mismatch (422), indexnow_rate_limited (429),
 * indexnow_unavailable (any other status, or no answer),
 * service_unavailable (the database), internal_error (out of memory).
 */
int agent_indexnow_submit(agent_svc *svc, const agent_inow_submit *in,
			  seo_arena *a, agent_inow_result *out,
			  agent_err *err);

#endif

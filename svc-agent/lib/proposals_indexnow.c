/*
 * The IndexNow kind of proposals (proposals_int.h): its prepare checks the
 * URLs, the website and the key with the indexnow part's rules
 * (indexnow.h), and its run submits through that part.
 */
#include "indexnow.h"
#include "proposals_int.h"

#include <stdlib.h>
#include <string.h>

#include "seo/errors.h"
#include "seo/json_text.h"
#include "seo/util.h"

/* The stored list's cap: about 1.9 MB of URLs. */
#define URLS_MAX_BYTES 1900000

#define INVALID "invalid_proposal_input"

static int by_text(const void *a, const void *b)
{
	return strcmp(*(const char *const *)a, *(const char *const *)b);
}

/* `v` as JSON text on `arena`, then frees `v`; NULL when out of memory. */
static char *json_text(seo_arena *arena, json_t *v)
{
	char *s = v != NULL ? seo_json_dumps(v, JSON_COMPACT | JSON_SORT_KEYS,
					     NULL)
			    : NULL;
	char *out = s != NULL ? seo_arena_strdup(arena, s) : NULL;

	free(s);
	json_decref(v);
	return out;
}

int agent__indexnow_draft(seo_arena *arena, const char *site_id,
			  int automatic, const char *host,
			  const char *const *urls, size_t n,
			  agent_proposal_draft *out)
{
	const char **v = seo_arena_alloc(arena, (n + 1) * sizeof(*v));
	json_t *list = json_array(), *payload;
	char hash[65];
	size_t m = 0;

	if (v == NULL || list == NULL) {
		json_decref(list);
		return SEO_ENOMEM;
	}
	memcpy(v, urls, n * sizeof(*v));
	qsort(v, n, sizeof(*v), by_text);
	for (size_t i = 0; i < n; i++)
		if (m == 0 || strcmp(v[m - 1], v[i]) != 0)
			v[m++] = v[i];
	for (size_t i = 0; i < m; i++)
		if (json_array_append_new(list, json_string(v[i])) != 0) {
			json_decref(list);
			return SEO_ENOMEM;
		}
	payload = json_pack("{s:s, s:o}", "host", host, "urls", list);
	memset(out, 0, sizeof(*out));
	out->payload_json = json_text(arena, payload);
	if (out->payload_json == NULL)
		return SEO_ENOMEM;
	/* the payload is canonical: equal text, equal content */
	seo_sha256_hex(out->payload_json, strlen(out->payload_json), hash);
	out->dedupe_key = seo_arena_strdup(arena, hash);
	out->title = seo_arena_printf(arena, "Submit %zu URL%s of %s to IndexNow",
				      m, m == 1 ? "" : "s", host);
	out->site_id = site_id;
	out->automatic = automatic;
	return out->dedupe_key != NULL && out->title != NULL ? 0 : SEO_ENOMEM;
}

int agent__indexnow_prepare(agent_call *c, PGconn *pg,
			    const Seo__Agent__V1__CreateProposalRequest *req,
			    Seo__Account__V1__Site *const *sites, size_t n_sites,
			    agent_proposal_draft *out, agent_err *err)
{
	agent_inow_urls u;
	agent_site site;
	size_t bytes = 0, bad;
	int reason, rc;

	(void)sites;
	(void)n_sites;
	if (req->campaign_name != NULL || req->campaign_id != NULL ||
	    req->n_contacts > 0)
		return agent__err(err, SEO_EINVAL, INVALID,
				  "campaign_name, campaign_id and contacts "
				  "belong to outreach_send");
	for (size_t i = 0; i < req->n_urls; i++)
		bytes += strlen(req->urls[i]);
	if (bytes > URLS_MAX_BYTES)
		return agent__err(err, SEO_EINVAL, INVALID,
				  "urls exceed about 1.9 MB");
	rc = agent_indexnow_check_urls(c->svc->fetch,
				       (const char *const *)req->urls,
				       req->n_urls, c->arena, &u, &reason, &bad);
	if (rc == SEO_ENOMEM)
		return agent__err(err, rc, "internal_error", "out of memory");
	if (rc != 0 && (reason == AGENT_INOW_URLS_NONE ||
			reason == AGENT_INOW_URLS_TOO_MANY ||
			reason == AGENT_INOW_URLS_HOSTS))
		return agent__err(err, rc, INVALID, "urls: %s",
				  agent_indexnow_reason_text(reason));
	if (rc != 0)
		return agent__err(err, rc, INVALID, "urls[%zu]: %s", bad,
				  agent_indexnow_reason_text(reason));
	rc = agent_indexnow_site_of(c, u.host, 1, &site, err);
	if (rc == SEO_ENOTFOUND)
		return agent__err(err, SEO_EINVAL, INVALID,
				  "the urls' host %s is not a website of the "
				  "workspace", u.host);
	if (rc != 0)
		return rc;
	if (req->site_id != NULL && strcmp(req->site_id, site.id) != 0)
		return agent__err(err, SEO_EINVAL, INVALID,
				  "site_id is not the website of the urls' host");
	rc = agent_indexnow_key_get(pg, c->workspace_id, u.host, seo_now_ms(),
				    c->arena, NULL);
	if (rc == SEO_ENOTFOUND)
		return agent__err(err, rc, "indexnow_key_not_found",
				  "%s has no indexnow key: create one first",
				  u.host);
	if (rc != 0)
		return agent__err(err, rc, "service_unavailable",
				  "the indexnow keys are unavailable");
	if (agent__indexnow_draft(c->arena, site.id,
				  strcmp(site.indexnow_policy, "automatic") == 0,
				  u.host, u.urls, u.n, out) != 0)
		return agent__err(err, SEO_ENOMEM, "internal_error", "out of memory");
	return 0;
}

/* Failures that pass: the upstream's rate limit or absence, ours. */
static int passing(const char *code)
{
	static const char *const codes[] = {"indexnow_rate_limited",
					    "indexnow_unavailable",
					    "service_unavailable"};

	for (size_t i = 0; i < sizeof(codes) / sizeof(codes[0]); i++)
		if (strcmp(code, codes[i]) == 0)
			return 1;
	return 0;
}

int agent__indexnow_run(const agent_proposal_run *r, PGconn *pg,
			agent_proposal_outcome *out)
{
	json_t *payload = json_loads(r->payload_json, 0, NULL);
	json_t *urls = json_object_get(payload, "urls");
	const char *host = json_string_value(json_object_get(payload, "host"));
	size_t n = json_array_size(urls);
	const char **v = seo_arena_alloc(r->arena, (n + 1) * sizeof(*v));
	agent_inow_submit in = {r->workspace_id, r->site_id, host, v, n};
	agent_inow_result res;
	int rc;

	(void)pg;
	memset(out, 0, sizeof(*out));
	if (host == NULL || n == 0 || v == NULL) {
		json_decref(payload);
		return SEO_ENOMEM;
	}
	for (size_t i = 0; i < n; i++)
		v[i] = json_string_value(json_array_get(urls, i));
	rc = agent_indexnow_submit(r->svc, &in, r->arena, &res, &out->err);
	json_decref(payload);
	if (rc != 0) {
		out->status = "failed";
		out->retry = passing(out->err.code);
		return 0;
	}
	out->status = "succeeded";
	out->result_json = json_text(r->arena,
				     json_pack("{s:s, s:I, s:s}", "host", res.host,
					       "url_count", (json_int_t)res.url_count,
					       "key_location", res.key_location));
	return out->result_json != NULL ? 0 : SEO_ENOMEM;
}

/*
 * A submission once the URLs and the website have passed: the key, its
 * hosted file, the upstream (SEO_INDEXNOW_URL) and the event (indexnow.h).
 */
#include "indexnow_int.h"

#include <stdlib.h>

#include <jansson.h>

#include "seo/config.h"
#include "seo/errors.h"
#include "seo/json_text.h"
#include "seo/log.h"
#include "seo/provider.h"
#include "seo/util.h"

/* The upstream's time: it answers at once or not at all. */
#define UPSTREAM_TIMEOUT_MS 15000
#define UPSTREAM_MAX_BODY (64 * 1024)

/* The protocol's statuses and what each means for the caller; any other
 * status, or none, is indexnow_unavailable. */
static const struct {
	long status;
	const char *code; /* NULL: accepted */
	const char *message;
} answers[] = {
	{200, NULL, NULL},
	{202, NULL, NULL},
	{400, "indexnow_invalid_request", "IndexNow rejected the request as malformed"},
	{403, "indexnow_key_rejected", "IndexNow rejected the key; the key file is checked again on the next submission"},
	{422, "indexnow_url_mismatch", "IndexNow rejected the URLs: they do not belong to the host, or the key does not match"},
	{429, "indexnow_rate_limited", "IndexNow is rate limiting submissions; try again later"},
};

static int db_fail(agent_err *err)
{
	return agent__err(err, SEO_EDB, "service_unavailable",
			  "the indexnow store is unavailable");
}

/* The key, confirmed by its hosted file within the last 24 hours or now. */
static int key_ready(agent_svc *svc, const agent_inow_submit *in,
		     int64_t now, seo_arena *a, agent_inow_key *key,
		     agent_err *err)
{
	char why[512];
	seo_pg_conn *c;
	int rc;

	if (agent__db_get(svc, &c) != 0)
		return db_fail(err);
	rc = agent_indexnow_key_get(c->pg, in->workspace_id, in->host, now, a, key);
	agent__db_put(svc, c);
	if (rc == SEO_ENOTFOUND)
		return agent__err(err, rc, "indexnow_key_not_found",
				  "no IndexNow key for %s: create one with "
				  "POST /v1/indexnow/key", in->host);
	if (rc == SEO_ENOMEM)
		return agent__err(err, rc, "internal_error", "out of memory");
	if (rc != 0)
		return db_fail(err);
	if (key->verified)
		return 0;
	if (!agent__inow_file_check(svc->fetch, key->key_location, key->key, why,
				    sizeof(why)))
		return agent__err(err, SEO_EDENIED, "indexnow_key_not_verified",
				  "%s", why);
	/* Not remembering it only costs a check more next time. */
	if (agent__db_get(svc, &c) == 0) {
		agent__inow_key_verified(c->pg, in->workspace_id, in->host,
					 key->key, now);
		agent__db_put(svc, c);
	}
	return 0;
}

/* The protocol's body: {host, key, keyLocation, urlList}. */
static json_t *body_of(const agent_inow_submit *in, const agent_inow_key *key)
{
	json_t *list = json_array();

	for (size_t i = 0; list != NULL && i < in->n_urls; i++)
		if (json_array_append_new(list, json_string(in->urls[i])) != 0) {
			json_decref(list);
			list = NULL;
		}
	if (list == NULL)
		return NULL;
	return json_pack("{s:s, s:s, s:s, s:o}", "host", in->host, "key", key->key,
			 "keyLocation", key->key_location, "urlList", list);
}

/* Submits to the upstream; 0 when it accepted. */
static int upstream(agent_svc *svc, const agent_inow_submit *in,
		    const agent_inow_key *key, agent_err *err)
{
	const seo_provider p = {
		.name = "indexnow",
		.base_url = seo_config(SEO_CFG_INDEXNOW_URL),
		.timeout_ms = UPSTREAM_TIMEOUT_MS,
		.max_body = UPSTREAM_MAX_BODY,
	};
	seo_provider_call call = {.method = "POST"};
	seo_provider_answer ans;
	char why[256];
	json_t *body = body_of(in, key);
	int rc;

	if (body == NULL)
		return agent__err(err, SEO_ENOMEM, "internal_error", "out of memory");
	call.json = body;
	rc = seo_provider_do(&p, &call, &ans, why, sizeof(why));
	json_decref(body);
	if (rc == SEO_ENOMEM)
		return agent__err(err, rc, "internal_error", "out of memory");
	if (rc != 0) {
		log_warn("indexnow upstream: %s", why);
		return agent__err(err, SEO_EUPSTREAM, "indexnow_unavailable",
				  "IndexNow did not answer");
	}
	for (size_t i = 0; i < sizeof(answers) / sizeof(answers[0]); i++) {
		if (answers[i].status != ans.status)
			continue;
		seo_provider_answer_free(&ans);
		if (answers[i].code == NULL)
			return 0;
		if (answers[i].status == 403) {
			seo_pg_conn *c;

			if (agent__db_get(svc, &c) == 0) {
				agent__inow_key_forget(c->pg, in->workspace_id,
						       in->host);
				agent__db_put(svc, c);
			}
		}
		return agent__err(err, SEO_EUPSTREAM, answers[i].code, "%s",
				  answers[i].message);
	}
	log_warn("indexnow upstream answered http %ld: %.300s", ans.status,
		 ans.body);
	rc = agent__err(err, SEO_EUPSTREAM, "indexnow_unavailable",
			"IndexNow answered an unexpected status (%ld)", ans.status);
	seo_provider_answer_free(&ans);
	return rc;
}

/* The client-visible event; the submission stands without it. */
static void record(agent_svc *svc, const agent_inow_submit *in, int64_t now)
{
	json_t *p = json_pack("{s:I, s:s}", "url_count", (json_int_t)in->n_urls,
			      "host", in->host);
	char *params = p != NULL ? seo_json_dumps(p, JSON_COMPACT, NULL) : NULL;
	agent_event e = {
		.workspace_id = in->workspace_id,
		.site_id = in->site_id,
		.verb = "indexnow.submitted",
		.params = params,
		.visible = 1,
		.occurred_at_ms = now,
	};
	seo_pg_conn *c = NULL;
	int rc = params != NULL ? agent__db_get(svc, &c) : SEO_ENOMEM;

	json_decref(p);
	if (rc == 0) {
		rc = agent__event_add(c->pg, &e, NULL);
		agent__db_put(svc, c);
	}
	if (rc != 0)
		log_error("indexnow.submitted for %s not recorded", in->host);
	free(params);
}

int agent_indexnow_submit(agent_svc *svc, const agent_inow_submit *in,
			  seo_arena *a, agent_inow_result *out, agent_err *err)
{
	int64_t now = seo_now_ms();
	agent_inow_key key;
	int rc;

	rc = key_ready(svc, in, now, a, &key, err);
	if (rc == 0)
		rc = upstream(svc, in, &key, err);
	if (rc != 0)
		return rc;
	record(svc, in, now);
	out->host = key.host;
	out->url_count = (int64_t)in->n_urls;
	out->key_location = key.key_location;
	return 0;
}

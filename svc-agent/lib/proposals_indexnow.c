/*
 * The IndexNow kind of proposals (proposals_int.h): the draft of a list of
 * URLs; its prepare and run arrive with the indexnow part.
 */
#include "proposals_int.h"

#include <stdlib.h>
#include <string.h>

#include "seo/errors.h"
#include "seo/json_text.h"
#include "seo/util.h"


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
	(void)c;
	(void)pg;
	(void)req;
	(void)sites;
	(void)n_sites;
	(void)out;
	return agent__err(err, SEO_EIO, "internal_error",
			  "indexnow proposals arrive with the indexnow part");
}

int agent__indexnow_run(const agent_proposal_run *r, PGconn *pg,
			agent_proposal_outcome *out)
{
	(void)r;
	(void)pg;
	memset(out, 0, sizeof(*out));
	out->status = "failed";
	agent__err(&out->err, SEO_EIO, "internal_error",
		   "indexnow proposals arrive with the indexnow part");
	return 0;
}

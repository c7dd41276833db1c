/*
 * The IndexNow routes: POST /v1/indexnow/key and POST /v1/indexnow
 * (parts.h). The gateway bills the submission (1 credit, refunded on
 * failure and when `billed` is 0).
 */
#include "indexnow_int.h"
#include "parts.h"
#include "proposals.h"

#include <stdio.h>
#include <string.h>

#include "seo/agent/v1/agent.pb-c.h"
#include "seo/domain.h"
#include "seo/errors.h"
#include "seo/util.h"

#define INSTRUCTIONS \
	"Host a UTF-8 text file at %s containing exactly the key %s " \
	"(surrounding whitespace is ignored) and keep it there. Submissions " \
	"check it on the first call and at most once a day afterwards."

static void *msg_new(rpc_ctx *ctx, const ProtobufCMessageDescriptor *d)
{
	void *m = seo_arena_alloc(rpc_ctx_arena(ctx), d->sizeof_message);

	if (m != NULL)
		protobuf_c_message_init(d, m);
	return m;
}

static int oom(rpc_ctx *ctx)
{
	return rpc_ctx_fail(ctx, "internal_error", "out of memory");
}

static int unavailable(rpc_ctx *ctx)
{
	return rpc_ctx_fail(ctx, "service_unavailable",
			    "the indexnow store is unavailable");
}

/* The website owning `host`, or the call failed. */
static int website(agent_call *call, const char *host, agent_site *site)
{
	agent_err err;
	int rc = agent_indexnow_site_of(call, host, 1, site, &err);

	if (rc == SEO_ENOTFOUND)
		return rpc_ctx_fail(call->ctx, "indexnow_host_not_a_website",
				    "%s is not a website of this workspace or a "
				    "subdomain of one", host);
	return rc == 0 ? 0 : agent__fail(call->ctx, &err);
}

int agent__rpc_indexnow_key(rpc_ctx *ctx, const ProtobufCMessage *req,
			    ProtobufCMessage **resp)
{
	const Seo__Agent__V1__IndexNowKeyRequest *r = (const void *)req;
	Seo__Agent__V1__IndexNowKey *out;
	char host[SEO_DOMAIN_MAX + 1];
	agent_inow_key key;
	agent_call call;
	agent_site site;
	seo_pg_conn *c;
	int created, rc;

	if (agent__call_of(ctx, &call) != 0)
		return -1;
	if (r->domain == NULL ||
	    seo_domain_normalize(r->domain, 0, host, sizeof(host)) != 0)
		return rpc_ctx_fail(ctx, "invalid_domain",
				    "domain must be a host name such as "
				    "www.example.com, or a URL of one");
	if (website(&call, host, &site) != 0)
		return -1;
	if (agent__db_get(call.svc, &c) != 0)
		return unavailable(ctx);
	rc = agent__inow_key_ensure(c->pg, call.workspace_id, host, seo_now_ms(),
				    call.arena, &key, &created);
	agent__db_put(call.svc, c);
	if (rc == SEO_ENOMEM)
		return oom(ctx);
	if (rc != 0)
		return unavailable(ctx);
	out = msg_new(ctx, &seo__agent__v1__index_now_key__descriptor);
	if (out == NULL)
		return oom(ctx);
	out->host = (char *)key.host;
	out->key = (char *)key.key;
	out->key_location = (char *)key.key_location;
	out->has_verified = 1;
	out->verified = key.verified;
	out->instructions = seo_arena_printf(call.arena, INSTRUCTIONS,
					     key.key_location, key.key);
	if (out->instructions == NULL)
		return oom(ctx);
	if (created && rpc_ctx_set_http_status(ctx, 201) != 0)
		return oom(ctx);
	*resp = &out->base;
	return 0;
}

/* The answer of an accepted submission. */
static int accepted(rpc_ctx *ctx, const agent_inow_result *res,
		    const char *proposal_id, ProtobufCMessage **resp)
{
	Seo__Agent__V1__SubmitIndexNowResponse *out =
		msg_new(ctx, &seo__agent__v1__submit_index_now_response__descriptor);
	Seo__Agent__V1__IndexNowSubmission *d =
		msg_new(ctx, &seo__agent__v1__index_now_submission__descriptor);

	if (out == NULL || d == NULL)
		return oom(ctx);
	d->host = (char *)res->host;
	d->has_url_count = 1;
	d->url_count = res->url_count;
	d->key_location = (char *)res->key_location;
	d->status = "accepted";
	d->proposal_id = (char *)proposal_id;
	out->data = d;
	out->has_billed = 1;
	out->billed = 1;
	*resp = &out->base;
	return 0;
}

/* The answer of a call held or queued as a proposal: nothing submitted,
 * the credit given back. */
static int held(rpc_ctx *ctx, const agent_proposal_answer *a,
		ProtobufCMessage **resp)
{
	Seo__Agent__V1__SubmitIndexNowResponse *out =
		msg_new(ctx, &seo__agent__v1__submit_index_now_response__descriptor);
	Seo__Agent__V1__IndexNowSubmission *d =
		msg_new(ctx, &seo__agent__v1__index_now_submission__descriptor);

	if (out == NULL || d == NULL || rpc_ctx_set_http_status(ctx, 202) != 0)
		return oom(ctx);
	d->status = (char *)a->status;
	d->proposal_id = (char *)a->proposal_id;
	d->review_url = (char *)a->review_url;
	out->data = d;
	out->message = (char *)a->message;
	out->has_billed = 1;
	out->billed = 0;
	*resp = &out->base;
	return 0;
}

/*
 * An agent's call (X-Service-Client: mcp): held as a proposal, or run at
 * once under the website's automatic policy (the proposals part decides;
 * agent_proposal_indexnow_from_agent()). A failed run answers its error
 * with the proposal's id.
 */
static int from_agent(agent_call *call, const agent_inow_urls *urls,
		      const agent_site *site, ProtobufCMessage **resp)
{
	agent_proposal_answer a;
	agent_inow_result res;
	agent_err err;
	seo_pg_conn *c;
	char extra[96];
	int rc;

	if (agent__db_get(call->svc, &c) != 0)
		return unavailable(call->ctx);
	rc = agent_indexnow_key_get(c->pg, call->workspace_id, urls->host,
				    seo_now_ms(), call->arena, NULL);
	if (rc == 0)
		rc = agent_proposal_indexnow_from_agent(
			call, c->pg, site->id,
			strcmp(site->indexnow_policy, "automatic") == 0, urls->host,
			urls->urls, urls->n, &a, &err);
	else if (rc == SEO_ENOTFOUND)
		agent__err(&err, rc, "indexnow_key_not_found",
			   "no IndexNow key for %s: create one with "
			   "POST /v1/indexnow/key", urls->host);
	else
		agent__err(&err, rc, "service_unavailable",
			   "the indexnow store is unavailable");
	agent__db_put(call->svc, c);
	if (rc != 0)
		return agent__fail(call->ctx, &err);
	if (strcmp(a.status, "executed") != 0)
		return held(call->ctx, &a, resp);
	if (a.outcome.err.code != NULL) {
		snprintf(extra, sizeof(extra), "{\"proposal_id\": \"%s\"}",
			 a.proposal_id);
		rpc_ctx_fail_extra(call->ctx, extra);
		return agent__fail(call->ctx, &a.outcome.err);
	}
	res = (agent_inow_result){a.host, a.url_count, a.key_location};
	return accepted(call->ctx, &res, a.proposal_id, resp);
}

int agent__rpc_submit_indexnow(rpc_ctx *ctx, const ProtobufCMessage *req,
			       ProtobufCMessage **resp)
{
	const Seo__Agent__V1__SubmitIndexNowRequest *r = (const void *)req;
	agent_inow_submit in;
	agent_inow_result res;
	agent_inow_urls urls;
	agent_call call;
	agent_site site;
	agent_err err;
	size_t bad;
	int reason, rc;

	if (agent__call_of(ctx, &call) != 0)
		return -1;
	rc = agent_indexnow_check_urls(call.svc->fetch,
				       (const char *const *)r->urls, r->n_urls,
				       call.arena, &urls, &reason, &bad);
	if (rc == SEO_ENOMEM)
		return oom(ctx);
	if (rc != 0 && (reason == AGENT_INOW_URLS_NONE ||
			reason == AGENT_INOW_URLS_TOO_MANY))
		return rpc_ctx_fail(ctx, agent_indexnow_reason_code(reason), "%s",
				    agent_indexnow_reason_text(reason));
	if (rc != 0)
		return rpc_ctx_fail(ctx, agent_indexnow_reason_code(reason),
				    "urls[%zu]: %s", bad,
				    agent_indexnow_reason_text(reason));
	if (website(&call, urls.host, &site) != 0)
		return -1;
	if (call.service_client != NULL && strcmp(call.service_client, "mcp") == 0)
		return from_agent(&call, &urls, &site, resp);
	in = (agent_inow_submit){
		.workspace_id = call.workspace_id,
		.site_id = site.id,
		.host = urls.host,
		.urls = urls.urls,
		.n_urls = urls.n,
	};
	if (agent_indexnow_submit(call.svc, &in, call.arena, &res, &err) != 0)
		return agent__fail(ctx, &err);
	return accepted(ctx, &res, NULL, resp);
}

/*
 * service.c: the seo.realtime.v1.Realtime handlers. Each call fetches on
 * its own event loop and fetcher, on the worker thread it runs on: the
 * handlers of seo/rpc.h answer synchronously, and a call's fetches (one
 * page, a sitemap walk, the site-health probes) are then bounded by the
 * call alone. The analysers' JSON becomes the answer through
 * rt_pb_from_json().
 */
#include "rt_service.h"

#include <limits.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rt.h"
#include "seo/domain.h"
#include "seo/errors.h"
#include "seo/log.h"
#include "seo/realtime/v1/realtime.pb-c.h"
#include "seo/util.h"

#define METHOD(m) "/seo.realtime.v1.Realtime/" m
#define MSG(t) (&seo__realtime__v1__##t##__descriptor)

/* A page analysis's fetch, and each site-health probe (the spec's 5 s). */
#define PAGE_TIMEOUT_MS 10000
#define PROBE_TIMEOUT_MS 5000
/* Time kept from the caller's deadline to send the answer back. */
#define ANSWER_MARGIN_MS 200

/* `cap_ms`, or less when the caller's deadline is nearer; at least 1 ms
 * (0 would be the fetcher's default). */
static long budget_ms(rpc_ctx *ctx, long cap_ms)
{
	int64_t deadline = rpc_ctx_deadline(ctx), left;

	if (deadline == 0)
		return cap_ms;
	left = deadline - seo_mono_ms() - ANSWER_MARGIN_MS;
	return left < 1 ? 1 : left < cap_ms ? (long)left : cap_ms;
}

/* Turns `obj` (consumed) into the answer of type `desc`. An analyser whose
 * output does not fit its message is our bug: internal_error. */
static int answer(rpc_ctx *ctx, json_t *obj,
		  const ProtobufCMessageDescriptor *desc, ProtobufCMessage **resp)
{
	const char *where = NULL;
	int rc;

	if (obj == NULL)
		return rpc_ctx_fail(ctx, "internal_error", "out of memory");
	rc = rt_pb_from_json(obj, desc, rpc_ctx_arena(ctx), resp, &where);
	json_decref(obj);
	if (rc == SEO_ENOMEM)
		return rpc_ctx_fail(ctx, "internal_error", "out of memory");
	if (rc != 0) {
		log_error("analysis does not fit %s at %s", desc->name,
			  where ? where : "?");
		return rpc_ctx_fail(ctx, "internal_error",
				    "analysis does not fit its answer");
	}
	return 0;
}

/* What the call's fetches are configured with. */
static const seo_fetch_config *fetch_config(rpc_ctx *ctx)
{
	return rt_svc_fetch(rpc_ctx_service(ctx));
}

/* The public error of a failed fetch. */
static int fetch_failed(rpc_ctx *ctx, const seo_fetch_result *res)
{
	return rpc_ctx_fail(ctx, seo_fetch_error_code(res->error),
			    "could not fetch %s: %s", res->url, res->message);
}

/* ---- page analyses ---------------------------------------------------- */

typedef int (*page_analyser_fn)(const rt_page *page, json_t **out);

/* One analysis of a page: its analyser, its answer, and whether the
 * analysis goes under "data" (page-seo) or is the answer itself
 * (schema-markup). */
typedef struct page_method {
	page_analyser_fn analyse;
	const ProtobufCMessageDescriptor *output;
	int wrap_data;
} page_method;

static const page_method page_seo_method = {rt_page_seo, MSG(page_seo_response), 1};
static const page_method schema_method = {rt_schema_markup,
					  MSG(schema_markup_response), 0};

static int analyse_page(rpc_ctx *ctx, const ProtobufCMessage *req,
			ProtobufCMessage **resp, const page_method *m)
{
	const Seo__Realtime__V1__UrlRequest *r = (const void *)req;
	seo_fetch_opts opts = {0};
	seo_fetch_result res;
	rt_page page;
	json_t *out = NULL;
	int rc;

	opts.timeout_ms = budget_ms(ctx, PAGE_TIMEOUT_MS);
	rc = seo_fetch_sync(fetch_config(ctx), r->url, &opts, rpc_ctx_arena(ctx),
			    &res);
	if (rc != 0)
		return rpc_ctx_fail(ctx, "internal_error",
				    "could not start the fetcher");
	if (res.error != SEO_FETCH_OK)
		return fetch_failed(ctx, &res);
	page = (rt_page){res.url, res.final_url, res.status,
			 res.response_time_ms, res.body, res.body_len,
			 res.headers, res.n_headers};
	if (m->analyse(&page, &out) != 0)
		return rpc_ctx_fail(ctx, "internal_error", "out of memory");
	if (m->wrap_data)
		out = json_pack("{s:o}", "data", out);
	return answer(ctx, out, m->output, resp);
}

static int page_seo(rpc_ctx *ctx, const ProtobufCMessage *req,
		    ProtobufCMessage **resp)
{
	return analyse_page(ctx, req, resp, &page_seo_method);
}

static int schema_markup(rpc_ctx *ctx, const ProtobufCMessage *req,
			 ProtobufCMessage **resp)
{
	return analyse_page(ctx, req, resp, &schema_method);
}

/* ---- site analyses ------------------------------------------------------ */

/*
 * The host a site analysis fetches: `domain` read as every domain argument
 * is (seo/domain.h: a scheme, userinfo, port or path around it dropped, an
 * IDN in punycode), a leading "www." kept, since the analyses probe the
 * host as given. NULL when it is no domain name.
 */
static const char *site_host(rpc_ctx *ctx, const char *domain)
{
	char host[SEO_DOMAIN_MAX + 1];

	if (seo_domain_normalize(domain, 0, host, sizeof(host)) != 0)
		return NULL;
	return seo_arena_strdup(rpc_ctx_arena(ctx), host);
}

/* A call's own loop and fetcher; both NULL-safe to free. */
typedef struct loop {
	struct event_base *base;
	seo_fetcher *f;
} loop;

static int loop_open(rpc_ctx *ctx, loop *l)
{
	l->f = NULL;
	l->base = event_base_new();
	if (l->base == NULL)
		return SEO_ENOMEM;
	return seo_fetcher_new(l->base, fetch_config(ctx), &l->f);
}

static void loop_close(loop *l)
{
	seo_fetcher_free(l->f);
	if (l->base != NULL)
		event_base_free(l->base);
}

typedef struct walk_done {
	struct event_base *base;
	int rc;
	json_t *result;
} walk_done;

static void on_walk(int rc, json_t *result, void *ud)
{
	walk_done *w = ud;

	w->rc = rc;
	w->result = result;
	event_base_loopbreak(w->base);
}

static int sitemap(rpc_ctx *ctx, const ProtobufCMessage *req,
		   ProtobufCMessage **resp)
{
	const Seo__Realtime__V1__SitemapRequest *r = (const void *)req;
	const char *host = site_host(ctx, r->domain), *origin, *source;
	walk_done w = {NULL, 0, NULL};
	loop l = {NULL, NULL};
	int rc;

	if (host == NULL)
		return rpc_ctx_fail(ctx, "invalid_domain",
				    "\"%.200s\" is not a domain name", r->domain);
	origin = seo_arena_printf(rpc_ctx_arena(ctx), "https://%s", host);
	rc = origin != NULL ? loop_open(ctx, &l) : SEO_ENOMEM;
	if (rc == 0) {
		w.base = l.base;
		rc = rt_sitemap_fetch(l.f, origin,
				      r->has_limit ? (size_t)r->limit : 100,
				      budget_ms(ctx, RT_SITEMAP_WALK_MS),
				      rpc_ctx_arena(ctx), on_walk, &w);
	}
	if (rc == 0) {
		event_base_dispatch(l.base);
		rc = w.rc;
	}
	loop_close(&l);
	if (rc == SEO_EDENIED)
		return rpc_ctx_fail(ctx, "private_ip",
				    "%s resolves to a private or reserved address",
				    host);
	if (rc != 0) {
		json_decref(w.result);
		return rpc_ctx_fail(ctx, "internal_error",
				    "could not run the sitemap walk");
	}
	/* "none found" is refunded by the gateway: see the route's
	 * billed_field. */
	source = json_string_value(json_object_get(w.result, "source"));
	json_object_set_new(w.result, "billed",
			    json_integer(source != NULL && strcmp(source, "none") != 0));
	return answer(ctx, w.result, MSG(sitemap_response), resp);
}

/* The site-health probes, fetched in parallel on the call's loop. */
enum { PROBE_HOME, PROBE_ROBOTS, PROBE_SITEMAP, PROBE_HTTP, PROBE_WWW, N_PROBES };

typedef struct probe_set {
	struct event_base *base;
	size_t pending;
	seo_fetch_result res[N_PROBES];
} probe_set;

typedef struct probe_slot {
	probe_set *set;
	seo_fetch_result *res;
} probe_slot;

static void on_probe(const seo_fetch_result *res, void *ud)
{
	probe_slot *slot = ud;

	*slot->res = *res;
	if (--slot->set->pending == 0)
		event_base_loopbreak(slot->set->base);
}

static int site_health(rpc_ctx *ctx, const ProtobufCMessage *req,
		       ProtobufCMessage **resp)
{
	const Seo__Realtime__V1__DomainRequest *r = (const void *)req;
	seo_arena *a = rpc_ctx_arena(ctx);
	const char *host = site_host(ctx, r->domain), *apex, *url[N_PROBES];
	probe_set set = {NULL, 0, {{0}}};
	probe_slot slot[N_PROBES];
	seo_fetch_opts opts = {0};
	rt_site_probes probes;
	loop l = {NULL, NULL};
	json_t *data = NULL;
	int rc;

	if (host == NULL)
		return rpc_ctx_fail(ctx, "invalid_domain",
				    "\"%.200s\" is not a domain name", r->domain);
	apex = strncmp(host, "www.", 4) == 0 ? host + 4 : host;
	url[PROBE_HOME] = seo_arena_printf(a, "https://%s/", host);
	url[PROBE_ROBOTS] = seo_arena_printf(a, "https://%s/robots.txt", host);
	url[PROBE_SITEMAP] = seo_arena_printf(a, "https://%s/sitemap.xml", host);
	url[PROBE_HTTP] = seo_arena_printf(a, "http://%s/", host);
	url[PROBE_WWW] = seo_arena_printf(a, "https://www.%s/", apex);
	opts.timeout_ms = budget_ms(ctx, PROBE_TIMEOUT_MS);
	/* robots.txt is read as bytes, the way its parser expects. */
	opts.raw_body = 1;
	rc = loop_open(ctx, &l);
	set.base = l.base;
	for (size_t i = 0; rc == 0 && i < N_PROBES; i++) {
		slot[i] = (probe_slot){&set, &set.res[i]};
		rc = url[i] != NULL ? seo_fetch_start(l.f, url[i], &opts, a, on_probe,
						     &slot[i])
				    : SEO_ENOMEM;
		set.pending += rc == 0;
	}
	if (set.pending > 0)
		event_base_dispatch(l.base);
	loop_close(&l);
	if (rc != 0)
		return rpc_ctx_fail(ctx, "internal_error",
				    "could not start the probes");
	/* Only the site's own host decides private_ip: a www host that
	 * resolves privately is just not a redirect. */
	if (set.res[PROBE_HOME].error == SEO_FETCH_PRIVATE_IP)
		return fetch_failed(ctx, &set.res[PROBE_HOME]);
	probes = (rt_site_probes){&set.res[PROBE_HOME], &set.res[PROBE_ROBOTS],
				  &set.res[PROBE_SITEMAP], &set.res[PROBE_HTTP],
				  &set.res[PROBE_WWW]};
	if (rt_site_health(host, apex, &probes, a, &data) != 0)
		return rpc_ctx_fail(ctx, "internal_error", "out of memory");
	return answer(ctx, json_pack("{s:o}", "data", data),
		      MSG(site_health_response), resp);
}

/* ---- tech-stack ----------------------------------------------------------- */

/* The rule file, compiled once for the process and never freed: every
 * worker thread reads it. */
static pthread_once_t tech_once = PTHREAD_ONCE_INIT;
static seo_tech_rules *tech_rules;

static void load_tech_rules(void)
{
	char path[PATH_MAX], err[512];
	int rc = seo_tech_rules_path(path, sizeof(path));

	if (rc != 0) {
		log_error("technology rules not found; set SEO_TECH_RULES");
		return;
	}
	rc = seo_tech_rules_load(path, &tech_rules, err, sizeof(err));
	if (rc != 0)
		log_error("technology rules %s: %s", path,
			  rc == SEO_EINVAL || rc == SEO_EIO ? err : seo_strerror(rc));
	else
		log_info("%zu technology rules from %s",
			 seo_tech_rules_count(tech_rules), path);
}

const seo_tech_rules *rt_service_tech_rules(void)
{
	pthread_once(&tech_once, load_tech_rules);
	return tech_rules;
}

static int tech_stack(rpc_ctx *ctx, const ProtobufCMessage *req,
		      ProtobufCMessage **resp)
{
	const Seo__Realtime__V1__DomainRequest *r = (const void *)req;
	const seo_tech_rules *rules = rt_service_tech_rules();
	const char *host = site_host(ctx, r->domain), *url;
	seo_arena *a = rpc_ctx_arena(ctx);
	seo_fetch_opts opts = {0};
	seo_fetch_result res;
	json_t *data = NULL;

	if (host == NULL)
		return rpc_ctx_fail(ctx, "invalid_domain",
				    "\"%.200s\" is not a domain name", r->domain);
	if (rules == NULL)
		return rpc_ctx_fail(ctx, "internal_error",
				    "technology rules are not loaded");
	/* The homepage only, as the spec says. */
	url = seo_arena_printf(a, "https://%s/", host);
	opts.timeout_ms = budget_ms(ctx, PAGE_TIMEOUT_MS);
	if (url == NULL || seo_fetch_sync(fetch_config(ctx), url, &opts, a, &res) != 0)
		return rpc_ctx_fail(ctx, "internal_error",
				    "could not start the fetcher");
	if (res.error != SEO_FETCH_OK)
		return fetch_failed(ctx, &res);
	if (rt_tech_stack(host, &res, rules, a, &data) != 0)
		return rpc_ctx_fail(ctx, "internal_error", "out of memory");
	return answer(ctx, json_pack("{s:o}", "data", data),
		      MSG(tech_stack_response), resp);
}

/* ---- one workspace's share of the workers ------------------------------ */

/* Retry-After of a call refused because its workspace's analyses all run:
 * a page analysis takes up to 10 s, most far less. */
#define BUSY_RETRY_S 2

/* Who a call counts against: its workspace; an anonymous call, its client
 * address. */
static const char *caller_of(rpc_ctx *ctx)
{
	const char *who = rpc_ctx_meta(ctx, "seo-workspace-id");

	if (who == NULL)
		who = rpc_ctx_meta(ctx, "seo-client-ip");
	return who != NULL ? who : "";
}

/* Runs `run` in one of the caller's slots, or refuses the call at once,
 * 429 rate_limited with a Retry-After, when all are taken. */
static int admitted(rpc_ctx *ctx, const ProtobufCMessage *req,
		    ProtobufCMessage **resp, rpc_handler_fn run)
{
	rt_slots *slots = rt_svc_slots(rpc_ctx_service(ctx));
	const char *who = caller_of(ctx);
	char extra[32], secs[12];
	int rc;

	if (slots == NULL)
		return run(ctx, req, resp);
	rc = rt_slots_take(slots, who);
	if (rc == SEO_EDENIED) {
		snprintf(secs, sizeof(secs), "%d", BUSY_RETRY_S);
		snprintf(extra, sizeof(extra), "{\"retry_after\":%s}", secs);
		rpc_ctx_fail_extra(ctx, extra);
		rpc_ctx_set_meta(ctx, "retry-after", secs);
		return rpc_ctx_fail(ctx, "rate_limited",
				    "this workspace already runs %u live analyses; "
				    "retry when one ends", rt_slots_held(slots, who));
	}
	if (rc != 0)
		return rpc_ctx_fail(ctx, "internal_error", "out of memory");
	rc = run(ctx, req, resp);
	rt_slots_give(slots, who);
	return rc;
}

#define ADMITTED(fn)                                                          \
	static int fn##_admitted(rpc_ctx *ctx, const ProtobufCMessage *req,  \
				 ProtobufCMessage **resp)                    \
	{                                                                     \
		return admitted(ctx, req, resp, fn);                          \
	}

ADMITTED(page_seo)
ADMITTED(schema_markup)
ADMITTED(sitemap)
ADMITTED(site_health)
ADMITTED(tech_stack)
ADMITTED(rt__page_performance)

const rpc_method rt_rpc_methods[] = {
	{METHOD("PageSeo"), MSG(url_request), MSG(page_seo_response),
	 page_seo_admitted},
	{METHOD("SchemaMarkup"), MSG(url_request), MSG(schema_markup_response),
	 schema_markup_admitted},
	{METHOD("Sitemap"), MSG(sitemap_request), MSG(sitemap_response),
	 sitemap_admitted},
	{METHOD("SiteHealth"), MSG(domain_request), MSG(site_health_response),
	 site_health_admitted},
	{METHOD("TechStack"), MSG(domain_request), MSG(tech_stack_response),
	 tech_stack_admitted},
	{METHOD("PagePerformance"), MSG(page_performance_request),
	 MSG(page_performance_response), rt__page_performance_admitted},
};

const size_t rt_rpc_n_methods = sizeof(rt_rpc_methods) / sizeof(rt_rpc_methods[0]);

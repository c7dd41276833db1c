/*
 * GET /v1/client-report: a website's week for the client (report.h).
 */
#include "agent_int.h"
#include "parts.h"
#include "report.h"

#include <stdlib.h>
#include <string.h>

#include "seo/agent/v1/agent.pb-c.h"
#include "seo/errors.h"
#include "seo/util.h"

#define BAD_INPUT "invalid_client_report_input"

/* The week asked for by `in` at `now_ms`. Returns 0 or SEO_EINVAL (*err). */
static int week_asked(const Seo__Agent__V1__ClientReportRequest *in,
		      int64_t now_ms, int64_t *start_ms, agent_err *err)
{
	if (in->site_id == NULL || in->site_id[0] == '\0')
		return agent__err(err, SEO_EINVAL, BAD_INPUT,
				  "site_id is required");
	if (in->week_start == NULL) {
		*start_ms = agent__week_of(now_ms);
		return 0;
	}
	if (agent__week_parse(in->week_start, start_ms) != 0)
		return agent__err(err, SEO_EINVAL, BAD_INPUT,
				  "week_start must be a Monday written "
				  "YYYY-MM-DD");
	if (*start_ms > now_ms)
		return agent__err(err, SEO_EINVAL, BAD_INPUT,
				  "week_start is in the future");
	return 0;
}

/* Row `i` of `events` as a message on `a`; NULL when out of memory. */
static Seo__Agent__V1__ReportEvent *event_msg(seo_arena *a,
					      const PGresult *events, int i)
{
	Seo__Agent__V1__ReportEvent *e = seo_arena_alloc(a, sizeof(*e));
	Seo__Common__RawJson *params = seo_arena_alloc(a, sizeof(*params));

	if (e == NULL || params == NULL)
		return NULL;
	seo__agent__v1__report_event__init(e);
	seo__common__raw_json__init(params);
	e->id = seo_arena_strdup(a, PQgetvalue(events, i, AGENT_EV_ID));
	e->verb = seo_arena_strdup(a, PQgetvalue(events, i, AGENT_EV_VERB));
	params->json = seo_arena_strdup(a, PQgetvalue(events, i, AGENT_EV_PARAMS));
	e->params = params;
	e->has_occurred_at = 1;
	e->occurred_at = strtoll(PQgetvalue(events, i, AGENT_EV_AT), NULL, 10);
	if (!PQgetisnull(events, i, AGENT_EV_TEXT))
		e->agent_text = seo_arena_strdup(a, PQgetvalue(events, i,
							       AGENT_EV_TEXT));
	if (e->id == NULL || e->verb == NULL || params->json == NULL ||
	    (e->agent_text == NULL && !PQgetisnull(events, i, AGENT_EV_TEXT)))
		return NULL;
	return e;
}

static Seo__Agent__V1__ReportKpis *kpis_msg(seo_arena *a, const agent_week *w)
{
	Seo__Agent__V1__ReportKpis *k = seo_arena_alloc(a, sizeof(*k));

	if (k == NULL)
		return NULL;
	seo__agent__v1__report_kpis__init(k);
	k->has_clicks_28d = k->has_clicks_prev_28d = w->has_clicks;
	k->clicks_28d = w->clicks_28d;
	k->clicks_prev_28d = w->clicks_prev_28d;
	k->has_queries_up = k->has_queries_down = 1;
	k->queries_up = w->queries_up;
	k->queries_down = w->queries_down;
	k->window_end = seo_arena_strdup(a, w->window_end);
	return k->window_end != NULL ? k : NULL;
}

/* The answer for week `w` starting `start_ms`; NULL when out of memory. */
static Seo__Agent__V1__ClientReportResponse *
response(seo_arena *a, int64_t start_ms, const agent_week *w)
{
	Seo__Agent__V1__ClientReportResponse *out = seo_arena_alloc(a, sizeof(*out));
	Seo__Agent__V1__ClientReport *rep = seo_arena_alloc(a, sizeof(*rep));
	char date[AGENT_DATE_LEN];
	size_t n = (size_t)PQntuples(w->events);

	if (out == NULL || rep == NULL)
		return NULL;
	seo__agent__v1__client_report_response__init(out);
	seo__agent__v1__client_report__init(rep);
	agent__date(start_ms, date);
	rep->week_start = seo_arena_strdup(a, date);
	rep->kpis = kpis_msg(a, w);
	rep->events = seo_arena_alloc(a, (n > 0 ? n : 1) * sizeof(*rep->events));
	if (rep->week_start == NULL || rep->kpis == NULL || rep->events == NULL)
		return NULL;
	for (rep->n_events = 0; rep->n_events < n; rep->n_events++) {
		rep->events[rep->n_events] = event_msg(a, w->events,
						       (int)rep->n_events);
		if (rep->events[rep->n_events] == NULL)
			return NULL;
	}
	out->report = rep;
	out->has_frozen = 1;
	out->frozen = w->frozen;
	return out;
}

int agent__rpc_client_report(rpc_ctx *ctx, const ProtobufCMessage *req,
			     ProtobufCMessage **resp)
{
	const Seo__Agent__V1__ClientReportRequest *in = (const void *)req;
	Seo__Agent__V1__ClientReportResponse *out;
	const Seo__Account__V1__Site *site;
	agent_call call;
	agent_err err;
	agent_week week;
	seo_pg_conn *c;
	rpc_result res;
	int64_t start_ms;
	int rc;

	if (agent__call_of(ctx, &call) != 0)
		return -1;
	if (week_asked(in, seo_now_ms(), &start_ms, &err) != 0)
		return agent__fail(ctx, &err);
	rc = agent__site_find(&call, in->site_id, &site, &res);
	if (rc == SEO_ENOTFOUND)
		return rpc_ctx_fail(ctx, "site_not_found",
				    "no website %s in this workspace", in->site_id);
	if (rc != 0)
		return rpc_peer_fail(ctx, &res);
	if (agent__db_get(call.svc, &c) != 0)
		return rpc_ctx_fail(ctx, "internal_error", "database unavailable");
	rc = agent__week_read(c->pg, call.workspace_id, site->id,
			      start_ms, &week);
	agent__db_put(call.svc, c);
	out = rc == 0 ? response(call.arena, start_ms, &week) : NULL;
	PQclear(week.events);
	if (rc != 0)
		return rpc_ctx_fail(ctx, "internal_error",
				    "the report could not be read");
	if (out == NULL)
		return rpc_ctx_fail(ctx, "internal_error", "out of memory");
	*resp = &out->base;
	return 0;
}

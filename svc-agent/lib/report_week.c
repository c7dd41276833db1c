/*
 * A website's client-report week (report.h): saved or live, and saving it.
 */
#include "report.h"
#include "agent_int.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "seo/errors.h"

/* 1970-01-01 was a Thursday: the first Monday is 4 days later. */
#define MONDAY_MS (4 * AGENT_DAY_MS)
/* Both 28-day windows end 3 days before the week's last day. */
#define WINDOW_END_MS (6 * AGENT_DAY_MS - 3 * AGENT_DAY_MS)

const char agent__client_verbs[] =
	"{indexnow.submitted,outreach.sent_daily,rank.moves_detected,"
	"agent.note,task.completed}";

/* The week's client-visible activity: $1 workspace, $2 site, $3 the
 * week's start, $4 agent__client_verbs. */
#define WEEK_ROWS \
	" FROM agent_activity WHERE workspace_id = $1 AND site_id = $2 " \
	"AND visible AND verb = ANY($4::text[]) AND occurred_at >= $3::bigint " \
	"AND occurred_at < $3::bigint + 604800000"
/* The most events a week shows (the specification's Limits). */
#define EVENTS_MAX " LIMIT 500"
#define EVENT_COLUMNS "id, verb, params::text, agent_text, occurred_at"
/* A count of a rank.moves_detected event's params; not a number: 0. */
#define MOVES(f) \
	"coalesce(sum(CASE WHEN jsonb_typeof(params->'" f "') = 'number' " \
	"THEN floor((params->>'" f "')::numeric) END), 0)::bigint"

enum { Q_SAVED, Q_SAVED_EVENTS, Q_LIVE_EVENTS, Q_MOVES, Q_SNAPSHOT,
       Q_SAVE_WEEK, Q_SAVE_EVENTS, Q__COUNT };

static const seo_pg_stmt rows[Q__COUNT] = {
	[Q_SAVED] = {"saved",
		"SELECT clicks_28d, clicks_prev_28d, queries_up, queries_down, "
		"window_end FROM agent_report_weeks WHERE workspace_id = $1 "
		"AND site_id = $2 AND week_start = $3::bigint"},
	[Q_SAVED_EVENTS] = {"saved_events",
		"SELECT " EVENT_COLUMNS " FROM agent_report_week_events "
		"WHERE site_id = $1 AND week_start = $2::bigint "
		"ORDER BY occurred_at, id"},
	[Q_LIVE_EVENTS] = {"live_events",
		"SELECT " EVENT_COLUMNS WEEK_ROWS " ORDER BY occurred_at, id"
		EVENTS_MAX},
	[Q_MOVES] = {"moves",
		"SELECT " MOVES("up") ", " MOVES("down") WEEK_ROWS
		" AND verb = 'rank.moves_detected'"},
	[Q_SNAPSHOT] = {"snapshot",
		"SET TRANSACTION ISOLATION LEVEL REPEATABLE READ"},
	[Q_SAVE_WEEK] = {"save_week",
		"INSERT INTO agent_report_weeks (workspace_id, site_id, "
		"week_start, clicks_28d, clicks_prev_28d, queries_up, "
		"queries_down, window_end, frozen_at) VALUES ($1, $2, $3::bigint, "
		"$4::bigint, $5::bigint, $6::bigint, $7::bigint, $8, $9::bigint) "
		"ON CONFLICT DO NOTHING"},
	[Q_SAVE_EVENTS] = {"save_events",
		"INSERT INTO agent_report_week_events (site_id, week_start, id, "
		"verb, params, agent_text, occurred_at) SELECT $2, $3::bigint, "
		"id, verb, params, agent_text, occurred_at" WEEK_ROWS
		" ORDER BY occurred_at, id" EVENTS_MAX},
};

static const seo_pg_stmts stmts = {"agent_rw_", rows, Q__COUNT};

int64_t agent__week_of(int64_t ms)
{
	return ms - (ms - MONDAY_MS) % AGENT_WEEK_MS;
}

int agent__week_parse(const char *s, int64_t *start_ms)
{
	struct tm tm;
	int mon, mday;
	time_t t;

	for (int i = 0; i < AGENT_DATE_LEN - 1; i++)
		if (i == 4 || i == 7 ? s[i] != '-' : s[i] < '0' || s[i] > '9')
			return SEO_EINVAL;
	if (s[AGENT_DATE_LEN - 1] != '\0')
		return SEO_EINVAL;
	memset(&tm, 0, sizeof(tm));
	tm.tm_year = atoi(s) - 1900;
	tm.tm_mon = mon = atoi(s + 5) - 1;
	tm.tm_mday = mday = atoi(s + 8);
	/* timegm() carries 2026-02-30 into March, in `tm` too: a real date
	 * keeps its month and day. */
	t = timegm(&tm);
	if (t < 0 || tm.tm_mon != mon || tm.tm_mday != mday || tm.tm_wday != 1)
		return SEO_EINVAL;
	*start_ms = (int64_t)t * 1000;
	return 0;
}

void agent__date(int64_t ms, char out[AGENT_DATE_LEN])
{
	time_t t = (time_t)(ms / 1000);
	struct tm tm;

	gmtime_r(&t, &tm);
	strftime(out, AGENT_DATE_LEN, "%Y-%m-%d", &tm);
}

/* The parameters $1..$4 of WEEK_ROWS for one website's week. */
typedef struct week_key {
	char start[24];
	const char *p[4];
} week_key;

static void key_of(week_key *k, const char *workspace_id, const char *site_id,
		   int64_t start_ms)
{
	snprintf(k->start, sizeof(k->start), "%" PRId64, start_ms);
	k->p[0] = workspace_id;
	k->p[1] = site_id;
	k->p[2] = k->start;
	k->p[3] = agent__client_verbs;
}

static int64_t num(const PGresult *r, int col)
{
	return strtoll(PQgetvalue(r, 0, col), NULL, 10);
}

int agent__week_kpis(PGconn *pg, const char *workspace_id,
		     const char *site_id, int64_t start_ms, agent_week *out)
{
	week_key k;
	PGresult *r = NULL;
	int rc;

	key_of(&k, workspace_id, site_id, start_ms);
	rc = agent__db_exec(pg, &stmts, Q_MOVES, 4, k.p, &r);
	if (rc == 0) {
		out->queries_up = num(r, 0);
		out->queries_down = num(r, 1);
		/* The seam of search data: none reaches svc-agent yet. */
		out->has_clicks = 0;
		agent__date(start_ms + WINDOW_END_MS, out->window_end);
	}
	PQclear(r);
	return rc;
}

/* *out from the saved row `r` (Q_SAVED) and its events. */
static int read_saved(PGconn *pg, const char *site_id, const char *start,
		      PGresult *r, agent_week *out)
{
	const char *params[] = {site_id, start};

	out->frozen = 1;
	out->has_clicks = !PQgetisnull(r, 0, 0);
	if (out->has_clicks) {
		out->clicks_28d = num(r, 0);
		out->clicks_prev_28d = num(r, 1);
	}
	out->queries_up = num(r, 2);
	out->queries_down = num(r, 3);
	snprintf(out->window_end, sizeof(out->window_end), "%s",
		 PQgetvalue(r, 0, 4));
	return agent__db_exec(pg, &stmts, Q_SAVED_EVENTS, 2, params,
			      &out->events);
}

int agent__week_read(PGconn *pg, const char *workspace_id,
		     const char *site_id, int64_t start_ms, agent_week *out)
{
	week_key k;
	PGresult *r = NULL;
	int rc;

	memset(out, 0, sizeof(*out));
	key_of(&k, workspace_id, site_id, start_ms);
	rc = agent__db_exec(pg, &stmts, Q_SAVED, 3, k.p, &r);
	if (rc == 0 && PQntuples(r) == 1)
		rc = read_saved(pg, site_id, k.start, r, out);
	else if (rc == 0)
		rc = agent__week_kpis(pg, workspace_id, site_id, start_ms, out);
	if (rc == 0 && !out->frozen)
		rc = agent__db_exec(pg, &stmts, Q_LIVE_EVENTS, 4, k.p,
				    &out->events);
	PQclear(r);
	return rc;
}

/* The week's KPIs as row `q`'s text parameters $4..$8 into `v`. */
static void kpi_params(const agent_week *w, char v[][24], const char **p)
{
	p[0] = p[1] = NULL;
	if (w->has_clicks) {
		snprintf(v[0], 24, "%" PRId64, w->clicks_28d);
		snprintf(v[1], 24, "%" PRId64, w->clicks_prev_28d);
		p[0] = v[0];
		p[1] = v[1];
	}
	snprintf(v[2], 24, "%" PRId64, w->queries_up);
	snprintf(v[3], 24, "%" PRId64, w->queries_down);
	p[2] = v[2];
	p[3] = v[3];
	p[4] = w->window_end;
}

int agent__week_save(PGconn *pg, const char *workspace_id,
		     const char *site_id, int64_t start_ms,
		     int64_t frozen_at_ms, int *saved)
{
	char at[24], v[4][24];
	const char *params[9];
	week_key k;
	agent_week w;
	PGresult *r = NULL;
	int rc;

	memset(&w, 0, sizeof(w));
	*saved = 0;
	key_of(&k, workspace_id, site_id, start_ms);
	memcpy(params, k.p, sizeof(k.p));
	snprintf(at, sizeof(at), "%" PRId64, frozen_at_ms);
	rc = agent__db_begin(pg);
	if (rc == 0)
		rc = agent__db_exec(pg, &stmts, Q_SNAPSHOT, 0, NULL, NULL);
	if (rc == 0)
		rc = agent__week_kpis(pg, workspace_id, site_id, start_ms, &w);
	if (rc == 0) {
		kpi_params(&w, v, params + 3);
		params[8] = at;
		rc = agent__db_exec(pg, &stmts, Q_SAVE_WEEK, 9, params, &r);
	}
	if (rc == 0 && strcmp(PQcmdTuples(r), "1") == 0) {
		*saved = 1;
		rc = agent__db_exec(pg, &stmts, Q_SAVE_EVENTS, 4, k.p, NULL);
	}
	PQclear(r);
	if (rc == 0)
		rc = agent__db_commit(pg);
	if (rc != 0) {
		agent__db_rollback(pg);
		*saved = 0;
	}
	return rc;
}

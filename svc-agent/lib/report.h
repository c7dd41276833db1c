/*
 * report.h: the client report's weeks (report_week.c, library
 * agent_store): the week arithmetic, and a website's week read from its
 * saved snapshot or computed live from agent_activity. The route is
 * report.c, the saving job report_freeze.c.
 */
#ifndef AGENT_REPORT_H
#define AGENT_REPORT_H

#include <stdint.h>

#include <libpq-fe.h>

#define AGENT_DAY_MS ((int64_t)86400 * 1000)
#define AGENT_WEEK_MS (7 * AGENT_DAY_MS)
/* "YYYY-MM-DD" and its NUL. */
#define AGENT_DATE_LEN 11

/* The Monday 00:00 UTC starting the week of `ms` (Unix ms, from
 * 1970-01-05). */
int64_t agent__week_of(int64_t ms);

/* `s` as the Unix ms of its 00:00 UTC when it is a real date written
 * YYYY-MM-DD and a Monday. Returns 0, or SEO_EINVAL. */
int agent__week_parse(const char *s, int64_t *start_ms);

/* The verbs of the specification's Events, the only ones a client report
 * shows (whatever else is marked visible), as a PostgreSQL text[]. */
extern const char agent__client_verbs[];

/* The UTC date of `ms` as YYYY-MM-DD into `out`. */
void agent__date(int64_t ms, char out[AGENT_DATE_LEN]);

/* Columns of agent_week.events. */
enum { AGENT_EV_ID, AGENT_EV_VERB, AGENT_EV_PARAMS, AGENT_EV_TEXT,
       AGENT_EV_AT };

/* One website's week. */
typedef struct agent_week {
	int frozen;                /* read from its saved snapshot */
	int has_clicks;            /* 0: no search data, clicks are null */
	int64_t clicks_28d, clicks_prev_28d;
	int64_t queries_up, queries_down;
	char window_end[AGENT_DATE_LEN];
	/* its client-visible events, oldest first, at most 500
	 * rows of the AGENT_EV_* columns (params as
	 * JSON text, agent_text possibly NULL); the caller PQclear()s it */
	PGresult *events;
} agent_week;

/*
 * The week starting `start_ms` of website `site_id` of workspace
 * `workspace_id` (the caller checked both) into *out: its snapshot when
 * the freeze job saved it, else computed from agent_activity now.
 * Returns 0 or SEO_EDB (logged).
 */
int agent__week_read(PGconn *pg, const char *workspace_id,
		     const char *site_id, int64_t start_ms, agent_week *out);

/*
 * The week's KPIs computed now into *out (not its events): both 28-day
 * windows end 3 days before the week's last day; clicks are null (no
 * search data reaches svc-agent yet); queries up and down add the week's
 * client-visible rank.moves_detected events. Returns 0 or SEO_EDB.
 */
int agent__week_kpis(PGconn *pg, const char *workspace_id,
		     const char *site_id, int64_t start_ms, agent_week *out);

/*
 * Saves the week starting `start_ms` of website `site_id` as it reads now
 * (KPIs and events) under `frozen_at_ms`, in one transaction on `pg`
 * (idle). *saved is 1, or 0 when it was saved before (a snapshot never
 * changes). Returns 0 or SEO_EDB.
 */
int agent__week_save(PGconn *pg, const char *workspace_id,
		     const char *site_id, int64_t start_ms,
		     int64_t frozen_at_ms, int *saved);

#endif

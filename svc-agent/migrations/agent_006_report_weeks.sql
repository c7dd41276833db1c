-- Saved client-report weeks: a website's past week with client-visible
-- activity, copied by the `freeze` job and never changed afterwards (new or
-- newly shared events of that week no longer reach its report). Weeks
-- without a row are computed live from agent_activity. Times are Unix
-- milliseconds; week_start is a Monday 00:00 UTC.
CREATE TABLE agent_report_weeks (
    site_id text NOT NULL,
    week_start bigint NOT NULL,
    workspace_id text NOT NULL,
    clicks_28d bigint,
    clicks_prev_28d bigint,
    queries_up bigint NOT NULL,
    queries_down bigint NOT NULL,
    window_end text NOT NULL,
    frozen_at bigint NOT NULL,
    PRIMARY KEY (site_id, week_start)
);

CREATE INDEX agent_report_weeks_start ON agent_report_weeks (week_start);

-- The saved week's events, at most 500, as the report showed them.
CREATE TABLE agent_report_week_events (
    site_id text NOT NULL,
    week_start bigint NOT NULL,
    id text NOT NULL,
    verb text NOT NULL,
    params jsonb NOT NULL,
    agent_text text,
    occurred_at bigint NOT NULL,
    PRIMARY KEY (site_id, week_start, id),
    FOREIGN KEY (site_id, week_start) REFERENCES agent_report_weeks
        ON DELETE CASCADE
);

-- The freeze job looks for weeks with client-visible rows only.
CREATE INDEX agent_activity_visible ON agent_activity (occurred_at)
    WHERE visible AND site_id IS NOT NULL;

-- The activity of a workspace's websites: the Events of the specification
-- (client-visible verbs such as indexnow.submitted, outreach.sent_daily,
-- agent.note, task.completed) and the internal ones, one row each. Ids are
-- `act_...`: the client report's events and the activity notes share them.
CREATE TABLE agent_activity (
    id text PRIMARY KEY,
    workspace_id text NOT NULL,
    site_id text,
    verb text NOT NULL,
    params jsonb NOT NULL DEFAULT '{}'::jsonb,
    agent_text text,
    -- client-visible now: false for internal rows and for notes and task
    -- summaries not (yet) shared with the client
    visible boolean NOT NULL DEFAULT false,
    occurred_at bigint NOT NULL
);

CREATE INDEX agent_activity_site ON agent_activity (site_id, occurred_at)
    WHERE site_id IS NOT NULL;
CREATE INDEX agent_activity_workspace ON agent_activity (workspace_id, occurred_at);

-- Agent tasks (work a person queued for an agent) and activity notes (what
-- an agent reports it did). Times are Unix milliseconds.
CREATE TABLE agent_tasks (
    id             text PRIMARY KEY,             -- tsk_...
    workspace_id   text NOT NULL,
    site_id        text,                         -- NULL: workspace-wide
    site_host      text,
    prompt         text NOT NULL,
    origin         text NOT NULL CHECK (origin IN ('task_box', 'proposal', 'rankings_row', 'domain_view')),
    status         text NOT NULL CHECK (status IN ('open', 'claimed', 'done', 'expired', 'cancelled')),
    created_at     bigint NOT NULL,
    expires_at     bigint NOT NULL,
    claimed_by     text,                         -- the key (its id) that claimed it
    claimed_at     bigint,
    completed_at   bigint,
    result_summary text,
    -- the task.completed activity row of the summary
    event_id       text,
    -- when it became done, expired or cancelled: retention counts from here
    ended_at       bigint
);

CREATE INDEX agent_tasks_list ON agent_tasks (workspace_id, created_at DESC, id DESC);
CREATE INDEX agent_tasks_live ON agent_tasks (expires_at) WHERE status IN ('open', 'claimed');
CREATE INDEX agent_tasks_ended ON agent_tasks (ended_at) WHERE ended_at IS NOT NULL;

-- The activity notes: their agent.note row in agent_activity (the id, the
-- text, the website) and what only a note has. Removing the activity row
-- removes the note.
CREATE TABLE agent_notes (
    id                text PRIMARY KEY REFERENCES agent_activity (id) ON DELETE CASCADE,
    workspace_id      text NOT NULL,
    key_id            text NOT NULL,
    client_request_id text,
    kind_hint         text CHECK (kind_hint IN ('research', 'draft', 'analysis')),
    credits           bigint NOT NULL,
    calls             bigint NOT NULL,
    created_at        bigint NOT NULL
);

CREATE UNIQUE INDEX agent_notes_request ON agent_notes (key_id, client_request_id)
    WHERE client_request_id IS NOT NULL;
CREATE INDEX agent_notes_day ON agent_notes (workspace_id, created_at);

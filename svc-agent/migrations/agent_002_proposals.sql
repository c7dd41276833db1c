-- Proposals: an agent asks a person to approve an action (the
-- specification's Proposal resource and its statuses). One row each; the
-- kind's snapshot of what a run does is `payload`, as its prepare hook made
-- it.
CREATE TABLE agent_proposals (
    id text PRIMARY KEY,
    workspace_id text NOT NULL,
    kind text NOT NULL,
    status text NOT NULL,
    title text NOT NULL,
    site_id text,
    source text NOT NULL,
    estimated_credits integer NOT NULL,
    payload jsonb NOT NULL,
    -- equal for identical content: one open proposal per workspace, kind
    -- and key (below)
    dedupe_key text NOT NULL,
    -- pending proposals of the kind with this key and other content are
    -- superseded by a new one (outreach: the campaign)
    supersede_key text,
    -- the agent's note to the reviewer (cleaned, at most 1000 characters)
    note text,
    created_at bigint NOT NULL,
    expires_at bigint,
    decided_at bigint,
    decided_via text,
    finished_at bigint,
    result jsonb,
    error_code text,
    -- whom a later run acts for (the credit it costs): the creator
    created_user_id text NOT NULL,
    created_key_id text,
    created_role text NOT NULL,
    -- runs started, the last one at started_at; a run queued for the
    -- hourly retry waits since queued_at, with the code of its last
    -- attempt in error_code
    attempts integer NOT NULL DEFAULT 0,
    started_at bigint,
    queued_at bigint,
    CHECK (status IN ('pending', 'approved', 'executing', 'succeeded',
                      'partially_succeeded', 'failed', 'skipped', 'expired',
                      'superseded', 'cancelled'))
);

CREATE UNIQUE INDEX agent_proposals_open ON agent_proposals
    (workspace_id, kind, dedupe_key)
    WHERE status IN ('pending', 'approved', 'executing');
CREATE INDEX agent_proposals_list ON agent_proposals
    (workspace_id, created_at DESC, id DESC);
CREATE INDEX agent_proposals_waiting ON agent_proposals (status, expires_at)
    WHERE status IN ('pending', 'approved', 'executing');

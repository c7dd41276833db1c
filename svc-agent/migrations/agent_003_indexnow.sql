-- IndexNow keys: one per workspace and host (www and apex are two hosts),
-- never rotated. verified_at is the last time the hosted key file was
-- confirmed; a submission trusts it for 24 hours, and it is cleared when
-- the upstream rejects the key so that the next submission checks again.
CREATE TABLE agent_indexnow_keys (
    workspace_id text NOT NULL,
    host text NOT NULL,
    key text NOT NULL CHECK (key ~ '^[0-9a-f]{32}$'),
    created_at bigint NOT NULL,
    verified_at bigint,
    PRIMARY KEY (workspace_id, host)
);

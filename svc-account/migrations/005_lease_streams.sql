-- Lease reports applied once by their sequence (issue 14, docs/decisions.md
-- "Credit leases"): a holder numbers the calls it reports for a workspace
-- 1, 2, ... within a stream (a random id it draws when it starts keeping
-- the workspace), and a report carries its first call's number, its calls
-- consecutive. `reported_seq` is the last call of the stream written, so a
-- report sent again writes only the calls after it, with COPY and no
-- per-row conflict check. One row per stream rather than a column of the
-- lease: a stream outlives a lease (calls reported after a close) and an
-- old stream's late report must still find its number after a new one
-- began.
CREATE TABLE lease_streams (
    workspace_id text NOT NULL REFERENCES workspaces(id),
    holder       text NOT NULL,
    stream       text NOT NULL,
    reported_seq bigint NOT NULL CHECK (reported_seq >= 0),
    updated_at   bigint NOT NULL,
    PRIMARY KEY (workspace_id, holder, stream)
);
-- Streams not reported on for long are forgotten (reconcile job).
CREATE INDEX lease_streams_updated ON lease_streams (updated_at);

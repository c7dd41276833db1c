-- Credit leases (issue 14, docs/decisions.md "Credit leases"): a gateway
-- (the holder) takes a share of a workspace's balance ahead and debits
-- billed calls from it in its own memory. Every change of a balance stays
-- one ledger row: a top-up is a row 'lease' of -t, a close gives back
-- granted - used as a row 'lease' of +that, both with the lease id as ref.
-- `lease_seq` numbers the changes of a workspace's open leases, so that a
-- process keeping them in memory applies the newest state only.
CREATE TABLE credit_leases (
    id           text PRIMARY KEY,                -- lse_...
    workspace_id text NOT NULL REFERENCES workspaces(id),
    holder       text NOT NULL,
    granted      bigint NOT NULL CHECK (granted >= 0),
    used         bigint NOT NULL CHECK (used >= 0 AND used <= granted),
    created_at   bigint NOT NULL,
    renewed_at   bigint NOT NULL,
    closed_at    bigint
);
-- One open lease per holder and workspace.
CREATE UNIQUE INDEX credit_leases_open ON credit_leases (holder, workspace_id)
    WHERE closed_at IS NULL;
-- The expiry scan (reconcile job) and a workspace's open leases.
CREATE INDEX credit_leases_renewed ON credit_leases (renewed_at) WHERE closed_at IS NULL;
CREATE INDEX credit_leases_workspace ON credit_leases (workspace_id) WHERE closed_at IS NULL;

ALTER TABLE workspaces ADD COLUMN lease_seq bigint NOT NULL DEFAULT 0;

-- The append-only trigger stays: only the reason's check changes.
ALTER TABLE ledger DROP CONSTRAINT ledger_reason_check;
ALTER TABLE ledger ADD CONSTRAINT ledger_reason_check
    CHECK (reason IN ('grant', 'charge', 'refund', 'purchase', 'lease'));

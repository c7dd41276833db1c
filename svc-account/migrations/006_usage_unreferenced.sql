-- Usage rows without a foreign key to their workspace (issue 14,
-- docs/decisions.md "Credit leases"): the key's check is a query per row
-- inserted, measured at about a third of PostgreSQL's CPU for a usage row
-- (10 of 30 us). It guards nothing here: every writer of usage rows
-- (ledger.c, lease.c) has locked the workspace's row in the same
-- transaction, refusing an unknown one as not_found, and workspaces are
-- never deleted.
ALTER TABLE usage DROP CONSTRAINT usage_workspace_id_fkey;

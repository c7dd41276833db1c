-- A leased call's usage row with one index entry fewer and a cheaper one
-- (issue 14, docs/decisions.md "Credit leases", "A leased call's usage
-- row"): about a fifth less of PostgreSQL's CPU for such a row.
--
-- usage_request keeps the rows of per-call debits only, those with a
-- settle time (every debit made under a request id has one; a leased row
-- never does): a per-call debit is retried under its request id and found
-- by it (ledger.c, ACCT_Q_LEDGER_BY_REQUEST), while a leased report is
-- applied once by its stream and sequence (migration 005), and nothing
-- looks a leased row up by its request id.
DROP INDEX usage_request;
CREATE UNIQUE INDEX usage_request ON usage (request_id)
    WHERE request_id IS NOT NULL AND settle_by IS NOT NULL;

-- The listing's index in ascending order, read backwards for newest
-- first: rows arrive in time order, and a descending index took each new
-- row at the left of its workspace's range, where a full page splits in
-- halves the next rows never fill (300,000 rows in time order: 6,066
-- pages, 4,038 ascending). No entry equals another (the id is in it), so
-- deduplication, tried at every full page, never found any.
DROP INDEX usage_workspace;
CREATE INDEX usage_workspace ON usage (workspace_id, created_at, id)
    WITH (deduplicate_items = off);

-- A leased call's usage row, written in batches (issue 14, docs/decisions.md
-- "A leased call's usage row"): a Lease report writes one row per key it
-- carries calls of, holding those calls in order as one JSON text, where a
-- row per call cost PostgreSQL a heap tuple and three index entries (13 us
-- of its CPU a call, more than the rest of a billed call's extra work).
-- Every call is still one usage row to its readers: GET /v1/usage lists
-- and counts it, a claim attributes it, and usage_all shows it as a row.
-- Rows written before stay in usage, as every per-call debit's row does.
--
-- calls: [[created_at, endpoint, domain, charged, credits_used, request_id,
-- attributed_to], ...], created_at in unix ms, domain and attributed_to
-- null when none; outcome is earned when credits_used equals charged,
-- else refunded. unclaimed counts the calls whose attributed_to is null,
-- so that a claim skips a batch with none.
CREATE TABLE usage_batches (
    id           text PRIMARY KEY,               -- ubt_ + the time + random
    workspace_id text NOT NULL,
    user_id      text,
    key_id       text,
    first_at     bigint NOT NULL,                -- its calls' created_at: least,
    last_at      bigint NOT NULL,                -- and most
    n_calls      integer NOT NULL CHECK (n_calls > 0),
    credits_used bigint NOT NULL CHECK (credits_used >= 0),
    unclaimed    integer NOT NULL,
    calls        text NOT NULL
);
-- The listing, newest first: read backwards.
CREATE INDEX usage_batches_workspace ON usage_batches (workspace_id, last_at, id);
-- A claim: one key's batches of the last 24 hours.
CREATE INDEX usage_batches_key ON usage_batches (key_id, last_at);

-- lz4 compresses a batch's text several times faster than pglz (0.5 us a
-- call against 1.5 measured); a server built without it keeps pglz.
DO $$
BEGIN
    IF EXISTS (SELECT 1 FROM pg_settings WHERE name = 'default_toast_compression'
               AND 'lz4' = ANY (enumvals)) THEN
        ALTER TABLE usage_batches ALTER COLUMN calls SET COMPRESSION lz4;
    END IF;
END
$$;

-- Every usage row, one per call, whether written alone or in a batch: for
-- operators and tests (svc-account reads the tables themselves).
CREATE VIEW usage_all AS
SELECT id, workspace_id, user_id, key_id, endpoint, domain, charged,
       credits_used, request_id, settle_by, outcome, attributed_to, created_at
FROM usage
UNION ALL
SELECT b.id || '.' || lpad(c.o::text, 4, '0'), b.workspace_id, b.user_id,
       b.key_id, c.e->>1, c.e->>2, (c.e->>3)::bigint, (c.e->>4)::bigint,
       c.e->>5, NULL::bigint,
       CASE WHEN c.e->>3 = c.e->>4 THEN 'earned' ELSE 'refunded' END,
       c.e->>6, (c.e->>0)::bigint
FROM usage_batches b, json_array_elements(b.calls::json) WITH ORDINALITY AS c(e, o);

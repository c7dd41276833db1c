-- A batch's calls in a quarter of the text (issue 14, docs/decisions.md
-- "A batch's calls, compact"): a call written as migration 008's
-- [created_at, endpoint, domain, charged, credits_used, request_id,
-- attributed_to] took 88 bytes for a busy key calling one route, mostly
-- the same names and the same request id prefix over and over; every
-- byte was formatted by svc-account, compressed and written to TOAST by
-- PostgreSQL at each report.
--
-- A batch written from now on keeps its calls in calls_compact, an object
--   {"p": prefix, "c": [[at, endpoint, domain, charged, credits_used,
--    request_id, attributed_to], ...], "n": [name, ...]}
-- where a call's at is its created_at less the batch's first_at, its
-- endpoint and domain are either the index of a name in n or the text
-- itself (null: none), its request_id is the rest after prefix (null:
-- none), and attributed_to is there once a claim set it; calls is then
-- '[]', so that an svc-account from before this migration, during a
-- rolling update, lists and claims without the new batches' calls
-- instead of failing on them. Batches written before keep their array in
-- calls. usage_batch_calls() reads both and is the one reader of the
-- text: the view below, svc-account's usage page and its claim go
-- through it. It is inlined into them (no STRICT, one query); OFFSET 0
-- keeps its batch-wide values (the text parsed, the calls, the names,
-- the prefix) computed once a batch, not again from the text at every
-- call.
ALTER TABLE usage_batches ADD COLUMN calls_compact text;

-- Compressed with lz4 as 008's calls: a new column takes the server's
-- default, pglz, which took a fifth of the report's PostgreSQL CPU.
DO $$
BEGIN
    IF EXISTS (SELECT 1 FROM pg_settings WHERE name = 'default_toast_compression'
               AND 'lz4' = ANY (enumvals)) THEN
        ALTER TABLE usage_batches ALTER COLUMN calls_compact SET COMPRESSION lz4;
    END IF;
END
$$;

CREATE FUNCTION usage_batch_calls(calls text, compact text, first_at bigint)
RETURNS TABLE (o bigint, e json, created_at bigint, endpoint text,
               domain text, charged bigint, credits_used bigint,
               request_id text, attributed_to text)
LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
SELECT x.o, x.e,
       s.base + (x.e->>0)::bigint,
       CASE WHEN json_typeof(x.e->1) = 'number'
            THEN s.n->>((x.e->>1)::int) ELSE x.e->>1 END,
       CASE WHEN json_typeof(x.e->2) = 'number'
            THEN s.n->>((x.e->>2)::int) ELSE x.e->>2 END,
       (x.e->>3)::bigint, (x.e->>4)::bigint,
       s.p || (x.e->>5),
       x.e->>6
FROM (SELECT CASE WHEN k THEN j->'c' ELSE j END AS c,
             CASE WHEN k THEN j->'n' END AS n,
             CASE WHEN k THEN j->>'p' ELSE '' END AS p,
             CASE WHEN k THEN first_at ELSE 0 END AS base
      FROM (SELECT coalesce(compact, calls)::json AS j,
                   compact IS NOT NULL AS k OFFSET 0) t
      OFFSET 0) s,
     json_array_elements(s.c) WITH ORDINALITY AS x(e, o)
$$;

CREATE OR REPLACE VIEW usage_all AS
SELECT id, workspace_id, user_id, key_id, endpoint, domain, charged,
       credits_used, request_id, settle_by, outcome, attributed_to, created_at
FROM usage
UNION ALL
SELECT b.id || '.' || lpad(c.o::text, 4, '0'), b.workspace_id, b.user_id,
       b.key_id, c.endpoint, c.domain, c.charged, c.credits_used,
       c.request_id, NULL::bigint,
       CASE WHEN c.charged = c.credits_used THEN 'earned' ELSE 'refunded' END,
       c.attributed_to, c.created_at
FROM usage_batches b,
     usage_batch_calls(b.calls, b.calls_compact, b.first_at) AS c;

-- Every debit ends earned or returned (issue 12). A debit made with the
-- caller's idempotency key (request_id) is open (outcome NULL) until the
-- caller reports what the call finally cost, or the reconcile job refunds
-- it after settle_by and a grace. Rows written before carry no key and
-- are never reconciled.
ALTER TABLE usage
    ADD COLUMN request_id text,
    ADD COLUMN settle_by  bigint,
    ADD COLUMN outcome    text CHECK (outcome IN ('earned', 'refunded'));

CREATE UNIQUE INDEX usage_request ON usage (request_id) WHERE request_id IS NOT NULL;
CREATE INDEX usage_open ON usage (settle_by) WHERE outcome IS NULL;

-- Workspaces, users, API keys, the credit ledger, usage, pricing, payments,
-- websites and the mail outbox. Times are Unix milliseconds (bigint), as the
-- public interface shows them.

CREATE TABLE workspaces (
    id          text PRIMARY KEY,                 -- ws_...
    name        text NOT NULL,
    -- The balance is the sum of the ledger; kept here so that a debit
    -- locks one row instead of summing the ledger.
    balance     bigint NOT NULL DEFAULT 0 CHECK (balance >= 0),
    created_at  bigint NOT NULL
);

CREATE TABLE users (
    id           text PRIMARY KEY,                -- usr_...
    workspace_id text NOT NULL REFERENCES workspaces(id),
    email        text,
    role         text NOT NULL CHECK (role IN ('owner', 'admin', 'member', 'client')),
    created_at   bigint NOT NULL,
    removed_at   bigint
);
CREATE INDEX users_workspace ON users (workspace_id);

CREATE TABLE api_keys (
    id           text PRIMARY KEY,                -- lowercase hex SHA-256 of the raw key
    workspace_id text NOT NULL REFERENCES workspaces(id),
    user_id      text NOT NULL REFERENCES users(id),
    name         text NOT NULL DEFAULT 'Default',
    last_four    text NOT NULL,
    created_at   bigint NOT NULL,
    revoked_at   bigint
);
CREATE INDEX api_keys_workspace ON api_keys (workspace_id, created_at DESC);

-- Append-only: every change of a balance is one row, never updated.
CREATE TABLE ledger (
    id           bigserial PRIMARY KEY,
    workspace_id text NOT NULL REFERENCES workspaces(id),
    delta        bigint NOT NULL CHECK (delta <> 0),
    reason       text NOT NULL CHECK (reason IN ('grant', 'charge', 'refund', 'purchase')),
    ref          text,                             -- charge id, payment id
    created_at   bigint NOT NULL
);
CREATE INDEX ledger_workspace ON ledger (workspace_id);

CREATE FUNCTION ledger_append_only() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    RAISE EXCEPTION 'the ledger is append-only';
END $$;
CREATE TRIGGER ledger_no_update BEFORE UPDATE OR DELETE ON ledger
    FOR EACH ROW EXECUTE FUNCTION ledger_append_only();

-- One row per billed call (its id is the charge id); credits_used drops to
-- 0 when the call is refunded.
CREATE TABLE usage (
    id           text PRIMARY KEY,                -- chg_...
    workspace_id text NOT NULL REFERENCES workspaces(id),
    user_id      text,
    key_id       text,
    endpoint     text NOT NULL,
    domain       text,
    charged      bigint NOT NULL CHECK (charged >= 0),
    -- A refund lowers it, never below zero nor above what was charged.
    credits_used bigint NOT NULL CHECK (credits_used BETWEEN 0 AND charged),
    created_at   bigint NOT NULL
);
CREATE INDEX usage_workspace ON usage (workspace_id, created_at DESC, id DESC);
CREATE INDEX usage_key ON usage (key_id, created_at);

CREATE TABLE price_tiers (
    min_credits      bigint PRIMARY KEY,
    price_per_credit numeric(10, 5) NOT NULL CHECK (price_per_credit > 0)
);
INSERT INTO price_tiers VALUES (100, 0.01000), (1000, 0.00800), (10000, 0.00600), (100000, 0.00400);

CREATE TABLE payments (
    id           text PRIMARY KEY,                -- provider checkout session id
    workspace_id text NOT NULL REFERENCES workspaces(id),
    user_id      text,
    credits      bigint NOT NULL CHECK (credits >= 100),
    amount_cents bigint NOT NULL,
    status       text NOT NULL CHECK (status IN ('open', 'completed')),
    created_at   bigint NOT NULL,
    completed_at bigint
);

-- Webhook events already applied: a replayed event adds nothing.
CREATE TABLE payment_events (
    event_id     text PRIMARY KEY,
    payment_id   text NOT NULL,
    received_at  bigint NOT NULL
);

CREATE TABLE websites (
    id              text PRIMARY KEY,             -- site_...
    workspace_id    text NOT NULL REFERENCES workspaces(id),
    host            text NOT NULL,
    name            text NOT NULL,
    indexnow_policy text NOT NULL DEFAULT 'approval' CHECK (indexnow_policy IN ('automatic', 'approval')),
    created_at      bigint NOT NULL,
    archived_at     bigint,
    UNIQUE (workspace_id, host)
);

-- Notification mail waits here; a sender drains it, so that a failing mail
-- server delays mail and never the API.
CREATE TABLE outbox (
    id              bigserial PRIMARY KEY,
    workspace_id    text,
    to_addr         text NOT NULL,
    subject         text NOT NULL,
    body            text NOT NULL,
    created_at      bigint NOT NULL,
    attempts        integer NOT NULL DEFAULT 0,
    next_attempt_at bigint NOT NULL,
    sent_at         bigint,
    last_error      text
);
CREATE INDEX outbox_pending ON outbox (next_attempt_at) WHERE sent_at IS NULL;

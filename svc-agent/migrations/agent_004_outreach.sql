-- Outreach: a website's mail campaigns, their contacts, what each outreach
-- proposal holds, and the outbox its runs queue mail in (seo/mail.h).
-- Times are Unix milliseconds.

-- A campaign belongs to one website. It is live while it holds a
-- copy-ready contact (docs/decisions.md): an inline proposal naming a live
-- campaign of the website reuses it, otherwise it starts a new one.
CREATE TABLE agent_campaigns (
    id text PRIMARY KEY,                 -- cmp_...
    workspace_id text NOT NULL,
    site_id text NOT NULL,
    name text NOT NULL,
    created_at bigint NOT NULL
);
CREATE INDEX agent_campaigns_name ON agent_campaigns (workspace_id, site_id, name);

-- One contact per domain and campaign, at most 500 per campaign. `rev`
-- grows when a later proposal changes its copy; `state` is ready
-- (copy-ready: nothing sent yet), queued (its mail is in the outbox) or
-- removed (a reviewer took it out of a proposal).
CREATE TABLE agent_contacts (
    campaign_id text NOT NULL REFERENCES agent_campaigns (id) ON DELETE CASCADE,
    domain text NOT NULL,
    workspace_id text NOT NULL,
    email text NOT NULL,
    email_key text NOT NULL,             -- lowercased: one mail per address
    name text,
    subject text NOT NULL,
    body text NOT NULL,
    domain_authority double precision,   -- null: unknown
    rev integer NOT NULL DEFAULT 1,
    state text NOT NULL DEFAULT 'ready'
        CHECK (state IN ('ready', 'queued', 'removed')),
    created_at bigint NOT NULL,
    updated_at bigint NOT NULL,
    queued_at bigint,
    outbox_id bigint,
    PRIMARY KEY (campaign_id, domain)
);
-- An address is emailed once per workspace, whichever campaign it is in.
CREATE UNIQUE INDEX agent_contacts_emailed ON agent_contacts (workspace_id, email_key)
    WHERE state = 'queued';
CREATE INDEX agent_contacts_outbox ON agent_contacts (outbox_id)
    WHERE outbox_id IS NOT NULL;

-- What an outreach proposal holds: the copy of each contact as proposed
-- (the reviewer approves this copy, a run sends nothing else), at most
-- 100, under the hold id (hld_...) of the proposal's payload. A reviewer's
-- removal is marked, not deleted, for the result's `removed`.
CREATE TABLE agent_outreach_held (
    hold_id text NOT NULL,
    campaign_id text NOT NULL REFERENCES agent_campaigns (id) ON DELETE CASCADE,
    domain text NOT NULL,
    rev integer NOT NULL,
    email text NOT NULL,
    subject text NOT NULL,
    body text NOT NULL,
    position integer NOT NULL,
    removed_at bigint,
    PRIMARY KEY (hold_id, domain)
);
CREATE INDEX agent_outreach_held_campaign ON agent_outreach_held (campaign_id);

-- svc-agent's outbox (seo/mail.h), drained by its mailer.
CREATE TABLE agent_outbox (
    id bigserial PRIMARY KEY,
    workspace_id text,
    to_addr text NOT NULL,
    subject text NOT NULL,
    body text NOT NULL,
    created_at bigint NOT NULL,
    attempts integer NOT NULL DEFAULT 0,
    next_attempt_at bigint NOT NULL,
    sent_at bigint,
    last_error text
);
CREATE INDEX agent_outbox_pending ON agent_outbox (next_attempt_at) WHERE sent_at IS NULL;

-- outreach.sent_daily: one client-visible event per website and UTC day
-- that outreach mail was sent, counting it. The mailer marks a mail sent;
-- this trigger counts it in the same transaction, so the count is exactly
-- what the SMTP server accepted that day.
CREATE UNIQUE INDEX agent_activity_sent_daily ON agent_activity (site_id, (params->>'date'))
    WHERE verb = 'outreach.sent_daily';

CREATE FUNCTION agent_outreach_sent() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
    ws text;
    site text;
    day text := to_char(to_timestamp(NEW.sent_at / 1000.0) AT TIME ZONE 'UTC', 'YYYY-MM-DD');
BEGIN
    SELECT k.workspace_id, c.site_id INTO ws, site
      FROM agent_contacts k JOIN agent_campaigns c ON c.id = k.campaign_id
     WHERE k.outbox_id = NEW.id;
    IF NOT FOUND THEN
        RETURN NULL;
    END IF;
    INSERT INTO agent_activity (id, workspace_id, site_id, verb, params, visible, occurred_at)
    VALUES ('act_' || replace(gen_random_uuid()::text, '-', ''), ws, site,
            'outreach.sent_daily', jsonb_build_object('count', 1, 'date', day),
            true, NEW.sent_at)
    ON CONFLICT (site_id, (params->>'date')) WHERE verb = 'outreach.sent_daily'
    DO UPDATE SET params = jsonb_set(agent_activity.params, '{count}',
        to_jsonb((agent_activity.params->>'count')::bigint + 1));
    RETURN NULL;
END
$$;

CREATE TRIGGER agent_outbox_sent AFTER UPDATE OF sent_at ON agent_outbox
    FOR EACH ROW WHEN (OLD.sent_at IS NULL AND NEW.sent_at IS NOT NULL)
    EXECUTE FUNCTION agent_outreach_sent();

"""Proposals through the gateway (spec: Proposals, Proposal statuses):
creation's shared rules (unknown fields, kind, site_id, note,
client_request_id), the answers' exact bodies, dedupe and supersede, a
person's decision (`seoctl proposal decide`) and the worker's run, expiry at
instants set with `seoctl job run expire --at`, the list's filters, limits,
fallbacks and order, and 404 for unknown, malformed and other workspaces'
ids. Outreach proposals carry the state machine here; IndexNow's own rules
are in test_agent_proposals_indexnow.py."""

import math
import os
import sys
import time
from datetime import datetime, timezone

sys.path.insert(0, os.path.dirname(__file__))
import harness as h  # noqa: E402
from harness import check, eq, expect_error, test  # noqa: E402

DAY = 24 * 3600 * 1000
ANSWER = {"status", "proposal_id", "review_url", "title", "dedupe_hit", "message"}
FIELDS = {"id", "kind", "status", "title", "site_id", "source", "estimated_credits",
          "created_at", "expires_at", "decided_at", "decided_via", "result",
          "error_code"}


class Ctx:
    def __init__(self):
        # more calls than one key may make in a minute
        self.stack = h.Stack("proposals", env={"SEO_RATE_LIMIT_PER_MIN": "100000"})
        ws = self.stack.workspace(credits=100)
        self.key, self.ws = ws["api_key"], ws["workspace_id"]
        self.site = self.stack.seoctl("website", "add", "--workspace", self.ws,
                                      "--host", "shop.example.com")["site_id"]
        self.site2 = self.stack.seoctl("website", "add", "--workspace", self.ws,
                                       "--host", "blog.example.org")["site_id"]
        other = self.stack.workspace()
        self.other_key = other["api_key"]
        self.other_site = self.stack.seoctl("website", "add", "--workspace",
                                            other["workspace_id"],
                                            "--host", "other.example.net")["site_id"]
        self.n = 0

    def logs(self):
        return self.stack.logs()

    def post(self, body, key=None):
        return self.stack.request("POST", "/v1/proposals", key=key or self.key, body=body)

    def get(self, path, key=None):
        return self.stack.get(path, key=key or self.key)

    def proposal(self, pid, key=None):
        r = self.get("/v1/proposals/" + pid, key)
        eq(r.status, 200, "GET proposal %s: %r" % (pid, r))
        return r.json()["proposal"]

    def contacts(self, n, tag=None):
        self.n += 1
        tag = tag or "t%d" % self.n
        return [{"email": "editor%d@%s-site%d.example" % (i, tag, i),
                 "domain": "%s-site%d.example" % (tag, i),
                 "subject": "A secret subject %d" % i,
                 "body": "Hello, a body %d." % i} for i in range(n)]

    def outreach(self, campaign=None, contacts=None, **extra):
        self.n += 1
        body = {"kind": "outreach_send", "site_id": self.site,
                "campaign_name": campaign or "campaign %d" % self.n,
                "contacts": contacts or self.contacts(2)}
        body.update(extra)
        return self.post(body)

    def created(self, **kw):
        r = self.outreach(**kw)
        eq(r.status, 202, "create: %r" % r)
        return r.json()

    def decide(self, pid, how, ok=True):
        return self.stack.seoctl("proposal", "decide", "--id", pid, "--" + how,
                                 expect_ok=ok)

    def job(self, name, at_ms):
        at = datetime.fromtimestamp(at_ms / 1000, timezone.utc)
        return self.stack.seoctl("job", "run", name, "--at",
                                 at.strftime("%Y-%m-%dT%H:%M:%SZ"))

    def wait_status(self, pid, want, timeout=20):
        deadline = time.time() + timeout
        while True:
            p = self.proposal(pid)
            if p["status"] in want or time.time() > deadline:
                return p
            time.sleep(0.1)

    def credits(self):
        return self.get("/v1/credits").json()["credits"]


def setup():
    return Ctx()


def teardown(c):
    return c.stack.close()


# ---- creation ---------------------------------------------------------------------

@test
def pending_answer_is_exact(c):
    before = c.credits()
    r = c.outreach()
    eq(r.status, 202, "status")
    a = r.json()
    eq(set(a), ANSWER, "answer fields")
    eq(a["status"], "awaiting_approval", "status")
    eq(a["dedupe_hit"], False, "dedupe_hit")
    check(a["proposal_id"].startswith("prp_"), "id prefix", a)
    eq(a["review_url"], "/proposals/" + a["proposal_id"], "review_url holds only the id")
    p = c.proposal(a["proposal_id"])
    eq(set(p), FIELDS, "proposal fields")
    eq((p["kind"], p["status"], p["site_id"], p["source"], p["estimated_credits"]),
       ("outreach_send", "pending", c.site, "agent", 0), "proposal")
    eq(p["expires_at"] - p["created_at"], 14 * DAY, "outreach expires after 14 days")
    eq((p["decided_at"], p["decided_via"], p["result"], p["error_code"]),
       (None, None, None, None), "undecided")
    eq(p["title"], a["title"], "title")
    eq(c.credits(), before, "proposals are free")


@test
def titles_hold_no_addresses_subjects_or_bodies(c):
    contacts = c.contacts(3, "tt")
    a = c.created(contacts=contacts)
    for ct in contacts:
        for v in ct.values():
            check(v not in a["title"], "title shows %r" % v, a["title"])
    check("3" in a["title"], "title counts the contacts", a["title"])


@test
def unknown_fields_and_bad_kinds_are_refused(c):
    for body in ({"kind": "outreach_send", "workspace_id": c.ws},
                 {"kind": "indexnow_submit", "urls": ["https://shop.example.com/"],
                  "extra": 1},
                 {"kind": "investigate_drop"},
                 {"kind": "outreach_sending_change"},
                 {"kind": "nonsense"},
                 {"kind": 5},
                 {"note": "no kind"},
                 {"kind": "outreach_send", "site_id": c.site, "campaign_name": "x",
                  "contacts": [{"email": "a@b.example", "domain": "b.example",
                                "subject": "s", "body": "b", "phone": "1"}]}):
        expect_error(c.post(body), 400, "invalid_proposal_input")


@test
def client_request_id_is_validated(c):
    for bad in ("", "x" * 65, "has space", "semi;colon", "é"):
        expect_error(c.outreach(client_request_id=bad), 400, "invalid_proposal_input")
    for good in ("a", "A-z_0-9", "x" * 64):
        eq(c.outreach(client_request_id=good).status, 202, "client_request_id %r" % good)


@test
def other_workspaces_site_is_not_found(c):
    expect_error(c.outreach(site_id=c.other_site), 404, "site_not_found")
    expect_error(c.outreach(site_id="site_nonexistent"), 404, "site_not_found")


@test
def note_is_cleaned_and_cut(c):
    note = "line one\nline\ttwo\x07\u0085 " + "é" * 1200
    a = c.created(note=note)
    stored = c.stack.db.query("SELECT note FROM agent_proposals WHERE id = '%s'"
                              % a["proposal_id"])
    # line breaks and tabs read as spaces (\u0085 too, a run as one), the
    # bell is gone
    want = ("line one line two " + "é" * 1200)[:1000]
    eq(stored, want, "note without control characters, 1000 characters")


# ---- dedupe and supersede ----------------------------------------------------------

@test
def identical_open_proposal_is_a_dedupe_hit(c):
    contacts = c.contacts(2)
    first = c.created(campaign="dedupe campaign", contacts=contacts)
    again = c.created(campaign="dedupe campaign", contacts=contacts, note="other note")
    eq(again["proposal_id"], first["proposal_id"], "same proposal")
    eq(again["dedupe_hit"], True, "dedupe_hit")
    eq(again["status"], "awaiting_approval", "still awaiting")
    eq(set(again), ANSWER, "answer fields")
    n = c.stack.db.query("SELECT count(*) FROM agent_proposals WHERE id = '%s'"
                         % first["proposal_id"])
    eq(n, "1", "one row")


@test
def dedupe_of_approved_answers_approved(c):
    contacts = c.contacts(2)
    first = c.created(campaign="approved dedupe", contacts=contacts)
    # held approved: no worker picks a proposal queued for retry
    c.stack.db.query("UPDATE agent_proposals SET status = 'approved', decided_at = 1, "
                     "decided_via = 'web', queued_at = 1 WHERE id = '%s'"
                     % first["proposal_id"])
    r = c.outreach(campaign="approved dedupe", contacts=contacts)
    eq(r.status, 202, "status")
    a = r.json()
    eq((a["status"], a["proposal_id"], a["dedupe_hit"]),
       ("approved", first["proposal_id"], True), "approved dedupe")
    eq(a["review_url"], "/proposals/" + first["proposal_id"], "review_url")
    c.stack.db.query("UPDATE agent_proposals SET status = 'skipped', queued_at = NULL "
                     "WHERE id = '%s'" % first["proposal_id"])


@test
def new_contacts_supersede_the_pending_proposal(c):
    first = c.created(campaign="supersede campaign", contacts=c.contacts(2))
    second = c.created(campaign="supersede campaign", contacts=c.contacts(3))
    check(second["proposal_id"] != first["proposal_id"], "a new proposal")
    eq(c.proposal(first["proposal_id"])["status"], "superseded", "old one")
    eq(c.proposal(second["proposal_id"])["status"], "pending", "new one")


@test
def outreach_is_never_approved_automatically(c):
    c.stack.seoctl("website", "policy", "--site", c.site, "--indexnow", "automatic")
    try:
        a = c.created()
        eq(a["status"], "awaiting_approval", "outreach waits for a person")
        eq(c.proposal(a["proposal_id"])["status"], "pending", "pending")
    finally:
        c.stack.seoctl("website", "policy", "--site", c.site, "--indexnow", "approval")


# ---- decisions and runs ------------------------------------------------------------

@test
def approve_runs_to_succeeded(c):
    a = c.created()
    t0 = int(time.time() * 1000)
    out = c.decide(a["proposal_id"], "approve")
    eq(out, {"proposal_id": a["proposal_id"], "status": "approved"}, "decide output")
    p = c.wait_status(a["proposal_id"], {"succeeded", "partially_succeeded", "failed"})
    eq(p["status"], "succeeded", "run: %r" % p)
    eq(p["decided_via"], "web", "decided_via")
    check(p["decided_at"] >= t0 - 1000, "decided_at", p)
    eq(p["result"]["queued"], 2, "result: %r" % p["result"])
    eq(p["error_code"], None, "no error")
    # finished: no decision changes it
    r = c.decide(a["proposal_id"], "skip", ok=False)
    check(r.returncode != 0 and "invalid_parameter" in r.stderr, "skip after run", r.stderr)


@test
def skip_is_final(c):
    a = c.created()
    eq(c.decide(a["proposal_id"], "skip")["status"], "skipped", "skip")
    p = c.proposal(a["proposal_id"])
    eq((p["status"], p["decided_via"]), ("skipped", "web"), "skipped")
    check(p["decided_at"] is not None, "decided_at set")
    r = c.decide(a["proposal_id"], "approve", ok=False)
    check(r.returncode != 0 and "invalid_parameter" in r.stderr, "approve after skip",
          r.stderr)


@test
def decide_refuses_unknown_ids_and_bad_flags(c):
    r = c.decide("prp_unknown", "approve", ok=False)
    check(r.returncode != 0 and "proposal_not_found" in r.stderr, "unknown", r.stderr)
    a = c.created()
    r = c.stack.seoctl("proposal", "decide", "--id", a["proposal_id"], "--approve",
                       "--skip", expect_ok=False)
    check(r.returncode != 0, "both flags refused")
    r = c.stack.seoctl("proposal", "decide", "--id", a["proposal_id"], expect_ok=False)
    check(r.returncode != 0, "no flag refused")
    eq(c.proposal(a["proposal_id"])["status"], "pending", "unchanged")


@test
def no_route_approves(c):
    a = c.created()
    for method, path in (("POST", "/v1/proposals/%s/approve"),
                         ("POST", "/v1/proposals/%s"), ("PATCH", "/v1/proposals/%s"),
                         ("POST", "/v1/proposals/%s/execute")):
        r = c.stack.request(method, path % a["proposal_id"], key=c.key,
                            body={"status": "approved"})
        check(r.status in (404, 405), "%s %s answered %r" % (method, path, r))
    eq(c.proposal(a["proposal_id"])["status"], "pending", "still pending")


# ---- expiry ------------------------------------------------------------------------

@test
def pending_expires_after_14_days(c):
    a = c.created()
    p = c.proposal(a["proposal_id"])
    exp = p["expires_at"]
    c.job("expire", (exp // 1000 - 1) * 1000)
    eq(c.proposal(a["proposal_id"])["status"], "pending", "a second before expiry")
    out = c.job("expire", math.ceil(exp / 1000) * 1000)
    check(out["done"] >= 1, "the job counted it", out)
    p = c.proposal(a["proposal_id"])
    eq(p["status"], "expired", "at expiry")
    eq(p["decided_at"], None, "nobody decided")
    r = c.decide(a["proposal_id"], "approve", ok=False)
    check(r.returncode != 0, "an expired proposal cannot be approved")


@test
def a_late_decision_finds_it_expired(c):
    a = c.created()
    c.stack.db.query("UPDATE agent_proposals SET expires_at = 1 WHERE id = '%s'"
                     % a["proposal_id"])
    r = c.decide(a["proposal_id"], "approve", ok=False)
    check(r.returncode != 0 and "expiry" in r.stderr, "past expiry", r.stderr)


@test
def expire_leaves_decided_proposals(c):
    a = c.created()
    c.decide(a["proposal_id"], "skip")
    c.job("expire", c.proposal(a["proposal_id"])["expires_at"] + DAY)
    eq(c.proposal(a["proposal_id"])["status"], "skipped", "skipped stays")


@test
def retention_clears_notes_then_forgets(c):
    a = c.created(note="an agent's note")
    open_one = c.created(note="still pending")
    c.decide(a["proposal_id"], "skip")
    note = "SELECT coalesce(note, '-') FROM agent_proposals WHERE id = '%s'"
    now = int(time.time() * 1000)
    c.job("retention", now + 89 * DAY)
    eq(c.stack.db.query(note % a["proposal_id"]), "an agent's note", "kept 89 days")
    c.job("retention", now + 91 * DAY)
    eq(c.stack.db.query(note % a["proposal_id"]), "-", "cleared after 90 days")
    eq(c.proposal(a["proposal_id"])["status"], "skipped", "the proposal stays")
    eq(c.stack.db.query(note % open_one["proposal_id"]), "still pending",
       "an open proposal keeps its note")
    c.job("retention", now + 401 * DAY)
    expect_error(c.get("/v1/proposals/" + a["proposal_id"]), 404, "proposal_not_found")
    eq(c.proposal(open_one["proposal_id"])["status"], "pending", "open ones stay")


# ---- reading -----------------------------------------------------------------------

@test
def get_answers_404_for_unknown_malformed_and_foreign(c):
    a = c.created()
    for pid in ("prp_" + "A" * 24, "nonsense", "prp_", "prp_%25%27", "x" * 300):
        expect_error(c.get("/v1/proposals/" + pid), 404, "proposal_not_found")
    expect_error(c.get("/v1/proposals/" + a["proposal_id"], key=c.other_key), 404,
                 "proposal_not_found")


@test
def list_filters_limits_and_order(c):
    ids = [c.created()["proposal_id"] for _ in range(3)]
    r = c.get("/v1/proposals")
    eq(r.status, 200, "list")
    got = r.json()["proposals"]
    check(len(got) <= 25, "default limit 25", len(got))
    stamps = [(p["created_at"], p["id"]) for p in got]
    eq(stamps, sorted(stamps, reverse=True), "newest first")
    eq([p["id"] for p in got[:3]], ids[::-1], "the three newest")
    for q, n in (("limit=2", 2), ("limit=1", 1), ("limit=0", 25), ("limit=abc", 25),
                 ("limit=-3", 25), ("limit=2.5", 25)):
        got = c.get("/v1/proposals?" + q).json()["proposals"]
        eq(len(got), min(n, total_count(c)), "limit %s" % q)
    got = c.get("/v1/proposals?limit=1000").json()["proposals"]
    eq(len(got), min(100, total_count(c)), "larger clamped to 100")
    pending = c.get("/v1/proposals?status=pending&limit=100").json()["proposals"]
    check(pending and all(p["status"] == "pending" for p in pending), "status filter")
    expect_error(c.get("/v1/proposals?status=open"), 400, "invalid_proposal_input")
    expect_error(c.get("/v1/proposals?site_id=" + c.other_site), 404, "site_not_found")
    eq(c.get("/v1/proposals?site_id=" + c.site2).json()["proposals"], [],
       "a website without proposals")
    mine = c.get("/v1/proposals?site_id=%s&limit=100" % c.site).json()["proposals"]
    check(mine and all(p["site_id"] == c.site for p in mine), "site filter")
    eq(c.get("/v1/proposals", key=c.other_key).json()["proposals"], [],
       "another workspace sees none")


def total_count(c):
    return int(c.stack.db.query("SELECT count(*) FROM agent_proposals p WHERE "
                                "p.workspace_id = '%s'" % c.ws))


if __name__ == "__main__":
    sys.exit(h.run(setup, teardown))

"""Outreach proposals through the gateway: campaigns per website,
copy-ready contacts and their limits at real sizes (100 contacts of
10,000-character bodies, a 500-contact campaign), a person's approval
(seoctl proposal decide), the run queuing each held contact's mail through
svc-agent's outbox to the fake SMTP server, suppression, the result counts,
the reviewer's removal (seoctl proposal remove-email), supersede, cancel,
expiry and outreach.sent_daily."""

import glob
import json
import os
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(__file__))
import harness as h  # noqa: E402
from harness import check, eq, expect_error, test  # noqa: E402

DAY_MS = 86400 * 1000
TERMINAL = ("succeeded", "partially_succeeded", "failed")


class Ctx:
    pass


def setup():
    c = Ctx()
    c.mail_dir = tempfile.mkdtemp(prefix="seo-it-outreach-mail-")
    c.smtp = h.Fake("fake_smtp.py", "--dir", c.mail_dir)
    c.stack = h.Stack("agent_outreach", env={
        "SEO_SMTP_URL": "smtp://127.0.0.1:%d" % c.smtp.port,
        "SEO_MAIL_FROM": "outreach@seo.example",
        # The rate itself is proven by test_rate_limit.py.
        "SEO_RATE_LIMIT_PER_MIN": "100000",
    })
    s = c.stack
    c.ws = s.workspace()
    c.key = c.ws["api_key"]
    wid = c.ws["workspace_id"]
    c.site = s.seoctl("website", "add", "--workspace", wid, "--host", "shop.example")
    c.site_b = s.seoctl("website", "add", "--workspace", wid, "--host", "blog.example")
    c.other = s.workspace()
    c.other_site = s.seoctl("website", "add", "--workspace", c.other["workspace_id"],
                            "--host", "other.example")
    c.logs = s.logs
    return c


def teardown(c):
    problem = c.stack.close()
    c.smtp.close()
    return problem


def contacts(tag, n, body_len=40, start=0):
    return [{"email": "editor@%s%d.example" % (tag, i),
             "domain": "%s%d.example" % (tag, i),
             "subject": "Subject for %s%d" % (tag, i),
             "body": ("Body %s%d " % (tag, i)).ljust(body_len, "b")}
            for i in range(start, start + n)]


def propose(c, body, key=None, status=202):
    r = c.stack.request("POST", "/v1/proposals", key=key or c.key,
                        body=dict({"kind": "outreach_send"}, **body))
    eq(r.status, status, "POST /v1/proposals %r" % (r.body[:300],))
    return r.json()


def inline(c, name, cs, site=None, **extra):
    return propose(c, dict({"campaign_name": name, "site_id": site or c.site["site_id"],
                            "contacts": cs}, **extra))


def invalid(c, body, what):
    r = c.stack.request("POST", "/v1/proposals", key=c.key,
                        body=dict({"kind": "outreach_send"}, **body))
    e = expect_error(r, 400, "invalid_proposal_input")
    check(what in e["message"], "message names %r" % what, e)


def get(c, pid, key=None):
    r = c.stack.get("/v1/proposals/" + pid, key=key or c.key)
    eq(r.status, 200, "GET proposal")
    return r.json()["proposal"]


def decide(c, pid, how="--approve"):
    return c.stack.seoctl("proposal", "decide", "--id", pid, how)


def wait_done(c, pid, timeout=30):
    deadline = time.time() + timeout
    while time.time() < deadline:
        p = get(c, pid)
        if p["status"] in TERMINAL:
            return p
        time.sleep(0.1)
    raise AssertionError("proposal %s still %s" % (pid, p["status"]))


def mails(c):
    out = []
    for path in sorted(glob.glob(os.path.join(c.mail_dir, "*.json"))):
        with open(path, encoding="utf-8") as f:
            out.append(json.load(f))
    return out


def wait_mails(c, to, timeout=30):
    """The mails received for the addresses `to`, once all arrived."""
    deadline = time.time() + timeout
    while time.time() < deadline:
        got = {m["rcpt_to"][0]: m for m in mails(c) if m["rcpt_to"][0] in to}
        if len(got) == len(to):
            return got
        time.sleep(0.1)
    raise AssertionError("mail for %s did not arrive" % sorted(set(to) - set(got)))


def sent_daily(c):
    rows = c.stack.db.query(
        "SELECT site_id || ' ' || (params->>'date') || ' ' || (params->>'count') "
        "FROM agent_activity WHERE verb = 'outreach.sent_daily' AND visible")
    return {tuple(r.split(" ")[:2]): int(r.split(" ")[2]) for r in rows.splitlines()}


@test
def created_pending_never_automatic(c):
    # even a website whose IndexNow policy is automatic holds outreach
    c.stack.seoctl("website", "policy", "--site", c.site["site_id"],
                   "--indexnow", "automatic")
    a = inline(c, "First", contacts("fi", 2), note="two editors")
    eq(a["status"], "awaiting_approval")
    eq(a["dedupe_hit"], False)
    eq(a["title"], "Send 2 outreach emails for shop.example")
    check(a["proposal_id"].startswith("prp_"), "proposal id", a)
    check("@" not in a["review_url"] and "Subject" not in a["review_url"],
          "review_url holds ids only", a)
    p = get(c, a["proposal_id"])
    eq(p["status"], "pending")
    eq(p["kind"], "outreach_send")
    eq(p["site_id"], c.site["site_id"])
    eq(p["estimated_credits"], 0)
    eq(p["expires_at"] - p["created_at"], 14 * DAY_MS, "outreach expiry")
    eq(p["result"], None)
    eq(p["decided_at"], None)
    text = json.dumps(p)
    check("@" not in text and "Subject for" not in text and "Body fi" not in text,
          "no address, subject or body in the proposal", p)
    # identical again: the same proposal, dedupe_hit
    again = inline(c, "First", contacts("fi", 2))
    eq(again["proposal_id"], a["proposal_id"])
    eq(again["dedupe_hit"], True)
    c.stack.seoctl("website", "policy", "--site", c.site["site_id"],
                   "--indexnow", "approval")


@test
def approved_run_sends_through_smtp(c):
    cs = contacts("ap", 3)
    cs[0]["name"] = "Ann"
    cs[0]["domain_authority"] = 250  # out of range: kept as unknown
    a = inline(c, "Approved", cs)
    eq(decide(c, a["proposal_id"])["status"], "approved")
    p = wait_done(c, a["proposal_id"])
    eq(p["status"], "succeeded")
    eq(p["decided_via"], "web")
    eq(p["result"], {"queued": 3, "suppressed": 0, "changed": 0, "already_queued": 0,
                     "removed": 0, "changed_since_review": 0})
    got = wait_mails(c, [x["email"] for x in cs])
    for x in cs:
        m = got[x["email"]]
        eq(m["mail_from"], "outreach@seo.example")
        check("Subject: %s\r\n" % x["subject"] in m["data"], "subject", m["data"][:400])
        check(m["data"].endswith(x["body"] + "\r\n"), "plain-text body", m["data"][-200:])
        check("Content-Type: text/plain; charset=utf-8" in m["data"], "plain text")
    eq(c.stack.db.query("SELECT domain_authority IS NULL FROM agent_contacts "
                        "WHERE domain = 'ap0.example'"), "t", "authority unknown")
    # the campaign is no longer live: its name starts a new one, where the
    # addresses emailed are skipped
    b = inline(c, "Approved", contacts("ap", 4))
    eq(b["title"], "Send 1 outreach email for shop.example")
    invalid(c, {"campaign_name": "Approved", "site_id": c.site["site_id"],
                "contacts": contacts("ap", 3)}, "every contact was already emailed")


@test
def sent_daily_counts_mail_sent(c):
    before = sent_daily(c)
    a = inline(c, "Daily", contacts("dy", 2), site=c.site_b["site_id"])
    decide(c, a["proposal_id"])
    eq(wait_done(c, a["proposal_id"])["status"], "succeeded")
    wait_mails(c, ["editor@dy0.example", "editor@dy1.example"])
    day = time.strftime("%Y-%m-%d", time.gmtime())
    deadline = time.time() + 10
    while sent_daily(c).get((c.site_b["site_id"], day), 0) < 2 and time.time() < deadline:
        time.sleep(0.1)
    after = sent_daily(c)
    eq(after.get((c.site_b["site_id"], day), 0) - before.get((c.site_b["site_id"], day), 0),
       2, "sent_daily of blog.example")
    eq(c.stack.db.query("SELECT count(*) FROM agent_activity WHERE verb = "
                        "'outreach.sent_daily' AND site_id = '%s'" % c.site_b["site_id"]),
       "1", "one event per website and day")


@test
def suppressed_at_run_is_partial(c):
    shared = contacts("su", 1)
    a = inline(c, "SupA", shared + contacts("sa", 2))
    b = inline(c, "SupB", shared)
    decide(c, b["proposal_id"])
    eq(wait_done(c, b["proposal_id"])["status"], "succeeded")
    decide(c, a["proposal_id"])
    p = wait_done(c, a["proposal_id"])
    eq(p["status"], "partially_succeeded")
    eq(p["result"], {"queued": 2, "suppressed": 1, "changed": 0, "already_queued": 0,
                     "removed": 0, "changed_since_review": 0})
    wait_mails(c, ["editor@su0.example", "editor@sa0.example", "editor@sa1.example"])
    eq(sum(1 for m in mails(c) if m["rcpt_to"] == ["editor@su0.example"]), 1,
       "one mail per address")
    # skipped at creation once emailed (any case)
    x = contacts("su", 1)
    x[0]["email"] = "EDITOR@SU0.example"
    invalid(c, {"campaign_name": "SupC", "site_id": c.site["site_id"], "contacts": x},
            "already emailed")


@test
def changed_since_review(c):
    a = inline(c, "Changes", contacts("ch", 3))
    c.stack.stop_service("svc-agent")
    try:
        decide(c, a["proposal_id"])
        # a later copy of ch0 reaches the campaign while the run waits (a
        # proposal of the same campaign made after the approval)
        c.stack.db.query("UPDATE agent_contacts SET subject = 'newer', rev = rev + 1, "
                         "updated_at = (extract(epoch from now()) * 1000)::bigint + 1000 "
                         "WHERE domain = 'ch0.example'")
    finally:
        c.stack.start_service("svc-agent")
        c.stack.wait_healthy()
    p = wait_done(c, a["proposal_id"])
    eq(p["status"], "partially_succeeded")
    eq(p["result"], {"queued": 2, "suppressed": 0, "changed": 1, "already_queued": 0,
                     "removed": 0, "changed_since_review": 1})


@test
def reviewer_removes_then_cancels(c):
    a = inline(c, "Review", contacts("rv", 3))
    pid = a["proposal_id"]
    r = c.stack.seoctl("proposal", "remove-email", "--id", pid, "--email", "EDITOR@rv2.example")
    eq(r, {"proposal_id": pid, "status": "pending", "removed": 1, "held": 2})
    out = c.stack.seoctl("proposal", "remove-email", "--id", pid, "--email",
                         "editor@rv2.example", expect_ok=False)
    check(out.returncode != 0 and "invalid_parameter" in out.stderr, "removed twice", out.stderr)
    decide(c, pid)
    p = wait_done(c, pid)
    eq(p["status"], "succeeded")
    eq(p["result"], {"queued": 2, "suppressed": 0, "changed": 0, "already_queued": 0,
                     "removed": 1, "changed_since_review": 0})
    eq(c.stack.db.query("SELECT count(*) FROM agent_outbox WHERE to_addr = "
                        "'editor@rv2.example'"), "0", "no mail to a removed address")
    # every email removed: cancelled, and a decision is refused
    b = inline(c, "Review2", contacts("rw", 2))
    pid = b["proposal_id"]
    c.stack.seoctl("proposal", "remove-email", "--id", pid, "--email", "editor@rw0.example")
    r = c.stack.seoctl("proposal", "remove-email", "--id", pid, "--email", "editor@rw1.example")
    eq(r["status"], "cancelled")
    eq(r["held"], 0)
    eq(get(c, pid)["status"], "cancelled")
    out = c.stack.seoctl("proposal", "decide", "--id", pid, "--approve", expect_ok=False)
    check(out.returncode != 0, "a cancelled proposal cannot be approved", out.stdout)
    out = c.stack.seoctl("proposal", "remove-email", "--id", "prp_nothing", "--email",
                         "a@b.example", expect_ok=False)
    check("proposal_not_found" in out.stderr, "unknown proposal", out.stderr)


@test
def superseded_by_new_contacts(c):
    a = inline(c, "Super", contacts("sp", 2))
    b = inline(c, "Super", contacts("sp", 3))
    check(b["proposal_id"] != a["proposal_id"], "a new proposal", b)
    eq(get(c, a["proposal_id"])["status"], "superseded")
    eq(get(c, b["proposal_id"])["status"], "pending")
    # an existing campaign without contacts proposes its copy-ready ones
    camp = c.stack.db.query("SELECT payload->>'campaign_id' FROM agent_proposals "
                            "WHERE id = '%s'" % b["proposal_id"])
    d = propose(c, {"campaign_id": camp})
    eq(d["proposal_id"], b["proposal_id"], "the same content")
    eq(d["dedupe_hit"], True)
    e = propose(c, {"campaign_id": camp, "contacts": contacts("sp", 1, start=3)})
    eq(e["title"], "Send 1 outreach email for shop.example")
    eq(get(c, b["proposal_id"])["status"], "superseded")


@test
def expires_after_14_days(c):
    a = inline(c, "Expiry", contacts("ex", 1))
    p = get(c, a["proposal_id"])
    at = time.strftime("%Y-%m-%dT%H:%M:%SZ",
                       time.gmtime(p["expires_at"] / 1000 + 1))
    c.stack.seoctl("job", "run", "expire", "--at", at)
    eq(get(c, a["proposal_id"])["status"], "expired")


@test
def campaign_rules(c):
    site = c.site["site_id"]
    r = c.stack.request("POST", "/v1/proposals", key=c.key, body={
        "kind": "outreach_send", "campaign_name": "X", "site_id": c.other_site["site_id"],
        "contacts": contacts("cr", 1)})
    expect_error(r, 404, "site_not_found")
    invalid(c, {"campaign_name": "X", "contacts": contacts("cr", 1)}, "site_id is required")
    invalid(c, {"campaign_name": "X", "site_id": site}, "contacts is required")
    invalid(c, {"campaign_name": "X", "campaign_id": "cmp_x", "site_id": site,
                "contacts": contacts("cr", 1)}, "campaign_name or campaign_id")
    invalid(c, {"campaign_id": "cmp_" + "a" * 24}, "names no campaign")
    invalid(c, {"campaign_id": "prp_nothing"}, "names no campaign")
    # another workspace's campaign is unknown here
    o = propose(c, {"campaign_name": "Theirs", "site_id": c.other_site["site_id"],
                    "contacts": contacts("ot", 1)}, key=c.other["api_key"])
    theirs = c.stack.db.query("SELECT payload->>'campaign_id' FROM agent_proposals "
                              "WHERE id = '%s'" % o["proposal_id"])
    invalid(c, {"campaign_id": theirs}, "names no campaign")
    r = c.stack.get("/v1/proposals/" + o["proposal_id"], key=c.key)
    expect_error(r, 404, "proposal_not_found")
    # the campaign's website must match a site_id given with it
    mine = inline(c, "Mine", contacts("mi", 1))
    camp = c.stack.db.query("SELECT payload->>'campaign_id' FROM agent_proposals "
                            "WHERE id = '%s'" % mine["proposal_id"])
    invalid(c, {"campaign_id": camp, "site_id": c.site_b["site_id"]},
            "not the campaign's website")
    invalid(c, {"campaign_name": "X", "site_id": site, "contacts": contacts("cr", 1),
                "urls": ["https://shop.example/"]}, "urls")
    two = contacts("du", 2)
    two[1]["domain"] = "WWW.du0.example"
    invalid(c, {"campaign_name": "X", "site_id": site, "contacts": two}, "one contact per domain")


@test
def field_limits_at_their_sizes(c):
    site = c.site["site_id"]
    local = "a" * 64
    longest = "%s@%s.%s.%s.%s" % (local, "b" * 63, "c" * 63, "d" * 63, "e" * 63)
    domain = "%s.%s.%s.%s" % ("a" * 63, "b" * 63, "c" * 63, "d" * 61)
    eq(len(longest), 320)
    eq(len(domain), 253)
    limits = [("email", longest), ("domain", domain), ("subject", "\u00e9" * 500),
              ("body", "\u20ac" * 10000), ("name", "n" * 200)]
    for i, (field, value) in enumerate(limits):
        x = contacts("lim%d" % i, 1)
        x[0][field] = value
        inline(c, "Limits %d" % i, x)
        over = value + ("x" if field != "email" else "y")
        x[0][field] = over
        invalid(c, {"campaign_name": "Limits", "site_id": site, "contacts": x},
                "contacts[0].%s is longer than" % field)
    inline(c, "n" * 200, contacts("cn", 1))
    invalid(c, {"campaign_name": "n" * 201, "site_id": site, "contacts": contacts("cn", 1)},
            "campaign_name is longer than 200")
    for field, value, what in [("email", "not an address", "is not an email"),
                               ("subject", "two\nlines", "control characters"),
                               ("body", "", "is empty"),
                               ("domain", "10.0.0.1", "is not a domain")]:
        x = contacts("bad", 1)
        x[0][field] = value
        invalid(c, {"campaign_name": "Bad", "site_id": site, "contacts": x}, what)
    x = contacts("miss", 1)
    del x[0]["subject"]
    invalid(c, {"campaign_name": "Bad", "site_id": site, "contacts": x},
            "contacts[0].subject is required")


@test
def hundred_contacts_of_ten_thousand_characters(c):
    cs = contacts("hu", 100, body_len=10000)
    a = inline(c, "Hundred", cs)
    eq(a["title"], "Send 100 outreach emails for shop.example")
    invalid(c, {"campaign_name": "Hundred", "site_id": c.site["site_id"],
                "contacts": contacts("hv", 101)}, "more than 100")
    decide(c, a["proposal_id"])
    p = wait_done(c, a["proposal_id"], timeout=60)
    eq(p["status"], "succeeded")
    eq(p["result"]["queued"], 100)
    got = wait_mails(c, [x["email"] for x in cs], timeout=120)
    check(all(m["data"].endswith(("Body hu%d " % i).ljust(10000, "b") + "\r\n")
              for i, m in enumerate(got[x["email"]] for x in cs)),
          "every body whole")


@test
def campaign_of_five_hundred(c):
    site = c.site_b["site_id"]
    first = None
    for i in range(5):
        a = inline(c, "Five hundred", contacts("fh%d" % i, 100, body_len=10000), site=site)
        eq(a["title"], "Send 100 outreach emails for blog.example")
        first = first or a["proposal_id"]
    camp = c.stack.db.query("SELECT payload->>'campaign_id' FROM agent_proposals "
                            "WHERE id = '%s'" % first)
    eq(c.stack.db.query("SELECT count(*) FROM agent_contacts WHERE campaign_id = '%s'"
                        % camp), "500")
    # the open one again: a dedupe hit, not counted against the limit
    again = inline(c, "Five hundred", contacts("fh4", 100, body_len=10000), site=site)
    eq((again["proposal_id"], again["dedupe_hit"]), (a["proposal_id"], True))
    invalid(c, {"campaign_name": "Five hundred", "site_id": site,
                "contacts": contacts("fh5", 1)}, "more than 500")
    invalid(c, {"campaign_id": camp, "contacts": contacts("fh5", 1)}, "more than 500")
    eq(c.stack.db.query("SELECT count(*) FROM agent_contacts WHERE campaign_id = '%s'"
                        % camp), "500", "nothing of a refused proposal stays")
    # without contacts: the oldest 100 copy-ready ones
    d = propose(c, {"campaign_id": camp})
    eq(d["title"], "Send 100 outreach emails for blog.example")


if __name__ == "__main__":
    sys.exit(h.run(setup, teardown))

"""IndexNow proposals through the gateway, against a local HTTPS test site
hosting (or not) the key file (tests/fakes/site_server.py) and a fake
IndexNow upstream (tests/fakes/fake_indexnow.py): the URL rules and
indexnow_key_not_found at creation, the stored list, a person's approval run
by the worker (1 credit charged, refunded when the run fails, error_code),
the website's policy Automatic (200 executed, or 202 approved when the run is
queued, then the hourly indexnow-retry job), expiry after 7 days, and the
charges exact under concurrent automatic runs of which half fail."""

import json
import os
import sys
import time
from datetime import datetime, timezone

sys.path.insert(0, os.path.dirname(__file__))
import harness as h  # noqa: E402
from harness import check, eq, expect_error, test  # noqa: E402
from indexnow_env import Env  # noqa: E402

DAY = 24 * 3600 * 1000
HOSTS = ["shop.test", "www.shop.test", "auto.test", "nokey.test", "other.test"]


class Ctx:
    pass


def setup():
    c = Ctx()
    c.env = Env("proposals_indexnow", HOSTS)
    c.stack = c.env.stack
    c.logs = c.stack.logs
    return c


def teardown(c):
    return c.env.close()


# ---- helpers ---------------------------------------------------------------------

def hosted(c, method, host, path, body=None):
    return c.env.site_call(method, host, path, body)


def upstream(c, path, body=None):
    return c.env.upstream_call(path, body)


def mode(c, m):
    upstream(c, "/_control", {"mode": m, "delay": 0})


class W:
    """A workspace with website `host`, its key and the key file hosted."""

    def __init__(self, c, host="shop.test", credits=100, policy=None, key=True):
        self.c = c
        w = c.stack.workspace(credits=credits)
        self.key, self.ws = w["api_key"], w["workspace_id"]
        self.host = host
        self.site = c.stack.seoctl("website", "add", "--workspace", self.ws,
                                   "--host", host)["site_id"]
        if policy:
            c.stack.seoctl("website", "policy", "--site", self.site, "--indexnow", policy)
        if key:
            r = c.stack.request("POST", "/v1/indexnow/key?domain=" + host, key=self.key)
            check(r.status in (200, 201), "key", r)
            self.inow_key = r.json()["key"]
            hosted(c, "PUT", host, "/%s.txt" % self.inow_key, self.inow_key.encode())

    def post(self, body):
        return self.c.stack.request("POST", "/v1/proposals", key=self.key, body=body)

    def propose(self, urls, **extra):
        body = {"kind": "indexnow_submit", "urls": urls}
        body.update(extra)
        return self.post(body)

    def proposal(self, pid):
        r = self.c.stack.get("/v1/proposals/" + pid, key=self.key)
        eq(r.status, 200, "GET proposal")
        return r.json()["proposal"]

    def credits(self):
        return self.c.stack.get("/v1/credits", key=self.key).json()["credits"]

    def wait(self, pid, want, timeout=30):
        deadline = time.time() + timeout
        while True:
            p = self.proposal(pid)
            if p["status"] in want or time.time() > deadline:
                return p
            time.sleep(0.1)

    def urls(self, *paths):
        return ["https://%s/%s" % (self.host, p) for p in paths]


def decide(c, pid, how):
    return c.stack.seoctl("proposal", "decide", "--id", pid, "--" + how)


def job(c, name, at_ms=None):
    args = ["job", "run", name]
    if at_ms is not None:
        at = datetime.fromtimestamp(at_ms / 1000, timezone.utc)
        args += ["--at", at.strftime("%Y-%m-%dT%H:%M:%SZ")]
    return c.stack.seoctl(*args)


def usage(c, w):
    return c.stack.db.query("SELECT coalesce(sum(credits_used), 0) || '/' || count(*) "
                            "FROM usage_all WHERE workspace_id = '%s' AND endpoint = "
                            "'indexnow'" % w.ws)


# ---- creation ------------------------------------------------------------------

@test
def url_rules_at_creation(c):
    w = W(c)
    other = W(c, host="other.test", key=False)
    long_url = "https://shop.test/" + "a" * 2040
    for urls in ([], ["https://shop.test:443/a"], ["https://shop.test/a#frag"],
                 ["https://user:pw@shop.test/a"], ["ftp://shop.test/a"],
                 ["https://shop.test/a", "https://www.shop.test/b"],
                 [" https://shop.test/a"], ["not a url"], [long_url],
                 ["https://shop.test/%d" % i for i in range(1001)],
                 ["https://elsewhere.test/a"], ["https://10.0.0.1/a"]):
        expect_error(w.propose(urls), 400, "invalid_proposal_input")
    for body in ({"kind": "indexnow_submit"},
                 {"kind": "indexnow_submit", "urls": "https://shop.test/a"},
                 {"kind": "indexnow_submit", "urls": [5]},
                 {"kind": "indexnow_submit", "urls": ["https://shop.test/a"],
                  "campaign_name": "x"}):
        expect_error(w.post(body), 400, "invalid_proposal_input")
    expect_error(w.propose(["https://shop.test/a"], site_id=other.site), 404,
                 "site_not_found")
    r = c.stack.request("POST", "/v1/proposals", key=w.key,
                        raw_body=b"[1, 2]", headers={"Content-Type": "application/json"})
    expect_error(r, 400, "invalid_proposal_input")
    eq(w.credits(), 100, "nothing charged")


@test
def site_id_must_own_the_host(c):
    w = W(c)
    sub = c.stack.seoctl("website", "add", "--workspace", w.ws, "--host",
                         "www.shop.test")["site_id"]
    expect_error(w.propose(w.urls("a"), site_id=sub), 400, "invalid_proposal_input")
    r = w.propose(w.urls("a"), site_id=w.site)
    eq(r.status, 202, "the owning website: %r" % r)


@test
def key_is_needed_at_creation(c):
    w = W(c, host="nokey.test", key=False)
    expect_error(w.propose(["https://nokey.test/a"]), 400, "indexnow_key_not_found")


@test
def list_is_stored_deduplicated_and_sorted(c):
    w = W(c)
    urls = w.urls("z", "a", "m", "a", "z")
    a = w.propose(urls).json()
    eq(a["status"], "awaiting_approval", "pending")
    eq(a["title"], "Submit 3 URLs of shop.test to IndexNow", "title from count and host")
    check("https://" not in a["title"], "no URL in the title")
    payload = json.loads(c.stack.db.query(
        "SELECT payload FROM agent_proposals WHERE id = '%s'" % a["proposal_id"]))
    eq(payload, {"host": "shop.test", "urls": sorted(set(urls))}, "stored list")
    p = w.proposal(a["proposal_id"])
    eq((p["kind"], p["status"], p["estimated_credits"], p["site_id"]),
       ("indexnow_submit", "pending", 1, w.site), "proposal")
    eq(p["expires_at"] - p["created_at"], 7 * DAY, "7 days")
    again = w.propose(list(reversed(urls))).json()
    eq((again["proposal_id"], again["dedupe_hit"]), (a["proposal_id"], True),
       "the same set in another order is identical")
    eq(w.credits(), 100, "proposals are free")


@test
def concurrent_identical_proposals_make_one(c):
    w = W(c)
    urls = w.urls("same-1", "same-2")
    res = h.parallel(10, lambda i: w.propose(urls if i % 2 else urls[::-1]))
    check(all(not isinstance(r, Exception) and r.status == 202 for r in res),
          "answers", res)
    answers = [r.json() for r in res]
    eq(len({a["proposal_id"] for a in answers}), 1, "one proposal")
    eq(sorted(a["dedupe_hit"] for a in answers), [False] + [True] * 9,
       "one creation, nine hits")
    eq(c.stack.db.query("SELECT count(*) FROM agent_proposals WHERE workspace_id = "
                        "'%s'" % w.ws), "1", "one row")


# ---- approval and the worker ---------------------------------------------------------

@test
def approved_run_succeeds_and_charges_one_credit(c):
    mode(c, "ok")
    w = W(c)
    pid = w.propose(w.urls("p1", "p2")).json()["proposal_id"]
    eq(w.credits(), 100, "nothing before the run")
    decide(c, pid, "approve")
    p = w.wait(pid, {"succeeded", "failed"})
    eq(p["status"], "succeeded", "run: %r" % p)
    eq(p["result"], {"host": "shop.test", "url_count": 2,
                     "key_location": "https://shop.test/%s.txt" % w.inow_key}, "result")
    eq((p["decided_via"], p["error_code"]), ("web", None), "decided")
    eq(w.credits(), 99, "1 credit")
    eq(usage(c, w), "1/1", "one usage row of 1 credit")
    sent = [r for r in upstream(c, "/_requests") if r.get("urlList") == w.urls("p1", "p2")]
    eq(len(sent), 1, "submitted once")


@test
def failed_run_is_refunded_with_its_error_code(c):
    w = W(c)
    mode(c, "422")
    pid = w.propose(w.urls("f1")).json()["proposal_id"]
    decide(c, pid, "approve")
    p = w.wait(pid, {"succeeded", "failed"})
    eq((p["status"], p["error_code"], p["result"]),
       ("failed", "indexnow_url_mismatch", None), "failed")
    eq(w.credits(), 100, "refunded")
    # the app's retry: approved again, run again
    mode(c, "ok")
    eq(decide(c, pid, "approve")["status"], "approved", "retry")
    p = w.wait(pid, {"succeeded", "failed"})
    eq((p["status"], p["error_code"]), ("succeeded", None), "retried")
    eq(w.credits(), 99, "charged once")
    eq(usage(c, w), "1/2", "two attempts, one charged")


@test
def missing_key_file_fails_the_run(c):
    mode(c, "ok")
    w = W(c)
    hosted(c, "DELETE", w.host, "/%s.txt" % w.inow_key)
    pid = w.propose(w.urls("k1")).json()["proposal_id"]
    decide(c, pid, "approve")
    p = w.wait(pid, {"succeeded", "failed"})
    eq((p["status"], p["error_code"]), ("failed", "indexnow_key_not_verified"), "failed")
    eq(w.credits(), 100, "refunded")


@test
def a_run_without_credits_fails(c):
    mode(c, "ok")
    w = W(c, credits=0)
    pid = w.propose(w.urls("c1")).json()["proposal_id"]
    decide(c, pid, "approve")
    p = w.wait(pid, {"succeeded", "failed"})
    eq((p["status"], p["error_code"]), ("failed", "insufficient_credits"), "failed")
    eq(w.credits(), 0, "nothing charged")


@test
def pending_indexnow_expires_after_7_days(c):
    w = W(c)
    pid = w.propose(w.urls("e1")).json()["proposal_id"]
    exp = w.proposal(pid)["expires_at"]
    job(c, "expire", (exp // 1000 - 1) * 1000)
    eq(w.proposal(pid)["status"], "pending", "before")
    job(c, "expire", (exp // 1000 + 1) * 1000)
    eq(w.proposal(pid)["status"], "expired", "after")


# ---- policy Automatic ----------------------------------------------------------------

@test
def automatic_policy_executes_at_once(c):
    mode(c, "ok")
    w = W(c, host="auto.test", policy="automatic")
    r = w.propose(["https://auto.test/x", "https://auto.test/y"])
    eq(r.status, 200, "executed: %r" % r)
    a = r.json()
    eq(a["status"], "executed", "status")
    eq(a["outcome"], {"status": "succeeded", "errorCode": None,
                      "result": {"host": "auto.test", "url_count": 2,
                                 "key_location": "https://auto.test/%s.txt" % w.inow_key}},
       "outcome")
    eq(w.credits(), 99, "1 credit")
    p = w.proposal(a["proposal_id"])
    eq((p["status"], p["decided_via"]), ("succeeded", "policy"), "proposal")
    check(p["decided_at"] is not None, "decided_at")


@test
def automatic_failure_is_executed_failed_and_refunded(c):
    w = W(c, host="auto.test", policy="automatic")
    mode(c, "403")
    r = w.propose(["https://auto.test/rejected"])
    eq(r.status, 200, "executed: %r" % r)
    a = r.json()
    eq(a["outcome"], {"status": "failed", "errorCode": "indexnow_key_rejected",
                      "result": None}, "outcome")
    eq(w.credits(), 100, "refunded")
    eq(w.proposal(a["proposal_id"])["error_code"], "indexnow_key_rejected", "error_code")
    mode(c, "ok")


@test
def automatic_run_queued_then_retried(c):
    h.clear_of_the_hourly_job(35)  # indexnow-retry would run it first
    w = W(c, host="auto.test", policy="automatic")
    mode(c, "503")
    r = w.propose(["https://auto.test/queued"])
    eq(r.status, 202, "queued: %r" % r)
    a = r.json()
    eq(set(a), {"status", "proposal_id", "message"}, "only status, id, message")
    eq(a["status"], "approved", "status")
    p = w.proposal(a["proposal_id"])
    eq((p["status"], p["error_code"]), ("approved", None), "queued")
    eq(w.credits(), 100, "the failed attempt refunded")
    # the same content while queued: already approved
    again = w.propose(["https://auto.test/queued"])
    eq((again.status, again.json()["status"], again.json()["dedupe_hit"]),
       (202, "approved", True), "dedupe of an approved proposal")
    time.sleep(1)
    eq(w.proposal(a["proposal_id"])["status"], "approved", "the worker leaves it queued")
    mode(c, "ok")
    # within the second it was queued in: the job's instant is whole seconds
    queued = int(c.stack.db.query("SELECT queued_at FROM agent_proposals WHERE id = '%s'"
                                  % a["proposal_id"]))
    out = job(c, "indexnow-retry", queued)
    check(out["done"] >= 1, "retried", out)
    p = w.wait(a["proposal_id"], {"succeeded", "failed"})
    eq(p["status"], "succeeded", "retried run")
    eq(w.credits(), 99, "charged once")


@test
def queued_run_fails_after_a_day(c):
    w = W(c, host="auto.test", policy="automatic")
    mode(c, "429")
    a = w.propose(["https://auto.test/limited"]).json()
    eq(a["status"], "approved", "queued")
    decided = w.proposal(a["proposal_id"])["decided_at"]
    job(c, "indexnow-retry", decided + DAY + 1000)
    p = w.proposal(a["proposal_id"])
    eq((p["status"], p["error_code"]), ("failed", "indexnow_rate_limited"), "gave up")
    eq(w.credits(), 100, "nothing charged")
    mode(c, "ok")


@test
def charges_exact_under_concurrent_automatic_runs(c):
    w = W(c, host="auto.test", policy="automatic", credits=100)
    mode(c, "fail_marked")
    n = 20

    def one(i):
        tag = "fail" if i % 2 else "ok"
        return w.propose(["https://auto.test/%s-%d" % (tag, i)])

    res = h.parallel(n, one)
    check(all(not isinstance(r, Exception) and r.status in (200, 202) for r in res),
          "answers", res)
    statuses = sorted((r.status, r.json()["status"]) for r in res)
    ok = [r for r in res if r.status == 200 and r.json()["outcome"]["status"] == "succeeded"]
    queued = [r for r in res if r.status == 202]
    eq(len(ok) + len(queued), n, "every call succeeded or was queued: %r" % statuses)
    eq(len(ok), n // 2, "the unmarked half succeeded")
    eq(w.credits(), 100 - n // 2, "exactly one credit per success")
    mode(c, "ok")


if __name__ == "__main__":
    sys.exit(h.run(setup, teardown))

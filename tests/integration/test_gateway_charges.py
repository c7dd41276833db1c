"""The charge path through the gateway: 200 parallel billed calls on a
balance that covers 37 of them. Exactly 37 answer 200, the others 402
insufficient_credits charging nothing; the balance ends at the remainder,
the ledger sums to the balance and there is one usage row per success.
Outcomes of calls that earned their charge ride on later debits."""

import datetime
import os
import sys
import time

sys.path.insert(0, os.path.dirname(__file__))
import harness as h  # noqa: E402
from harness import check, eq, test  # noqa: E402

CALLS = 200
COVERED = 37
COST = 2          # /v1/referring-domains
REMAINDER = 1
PATH = "/v1/referring-domains?domain=example.com&limit=1"


def setup():
    # The rate limit is proven elsewhere; here it would only get in the way.
    return h.Stack("gwcharge", env={"SEO_RATE_LIMIT_PER_MIN": "0"})


@test
def exactly_floor_balance_over_cost_succeed(s):
    ws = s.workspace(credits=COVERED * COST + REMAINDER)
    key = ws["api_key"]
    results = h.parallel(CALLS, lambda i: s.get(PATH, key=key))
    errors = [r for r in results if isinstance(r, Exception)]
    eq(errors, [], "transport errors")
    ok = [r for r in results if r.status == 200]
    denied = [r for r in results if r.status != 200]
    eq(len(ok), COVERED, "successful billed calls")
    eq({(r.status, r.json()["code"]) for r in denied}, {(402, "insufficient_credits")})
    check(all(r.json()["credits_used"] == COST for r in ok), "credits_used on every success")
    eq(min(r.json()["credits_remaining"] for r in ok), REMAINDER, "last success leaves the remainder")
    eq(s.get("/v1/credits", key=key).json(), {"credits": REMAINDER})
    wid = ws["workspace_id"]
    eq(int(s.db.query("SELECT sum(delta) FROM ledger WHERE workspace_id = '%s'" % wid)),
       REMAINDER, "ledger sum equals the balance")
    usage = s.get("/v1/usage?limit=200", key=key).json()
    eq(usage["total"], COVERED, "one usage row per billed success")
    check(all(u["endpoint"] == "referring-domains" and u["credits_used"] == COST
              and u["domain"] == "example.com" for u in usage["usage"]), "usage rows", usage)


@test
def failed_calls_are_refunded_and_show_zero(s):
    ws = s.workspace(credits=10)
    key = ws["api_key"]
    s.stop_service("svc-graph")
    try:
        r = s.get(PATH, key=key)
        eq(r.status, 503, "service down")
        eq(r.json()["code"], "service_unavailable")
    finally:
        s.start_service("svc-graph")
        s.wait_healthy()
    eq(s.get("/v1/credits", key=key).json(), {"credits": 10}, "refunded")
    usage = s.get("/v1/usage", key=key).json()
    eq(usage["total"], 1)
    eq(usage["usage"][0]["credits_used"], 0, "refunded call shows 0")
    r = s.get(PATH, key=key)
    eq(r.status, 200)
    eq((r.json()["credits_used"], r.json()["credits_remaining"]), (COST, 10 - COST))


@test
def client_role_never_reads_the_balance(s):
    """/v1/credits refuses a client-role key, so its billed answers leave
    credits_remaining out and its 402 does not name the balance
    (docs/decisions.md); the owner's show both."""
    ws = s.workspace(credits=COST + REMAINDER)
    owner = ws["api_key"]
    client = s.seoctl("user", "add", "--workspace", ws["workspace_id"], "--email",
                      "client-%d@example.com" % h.free_port(), "--role", "client")["api_key"]
    h.expect_error(s.get("/v1/credits", key=client), 403, "capability_missing")
    r = s.get(PATH, key=client)
    eq(r.status, 200, r)
    eq(r.json()["credits_used"], COST)
    check("credits_remaining" not in r.json(), "no balance for a client", r.json())
    r = s.get(PATH, key=client)
    body = h.expect_error(r, 402, "insufficient_credits")
    check("balance is" not in body["message"] and str(REMAINDER) not in body["message"],
          "the client's 402 does not name the balance", body)
    body = h.expect_error(s.get(PATH, key=owner), 402, "insufficient_credits")
    check("the balance is %d" % REMAINDER in body["message"], "the owner's 402 names it", body)
    s.seoctl("credits", "grant", "--workspace", ws["workspace_id"], "--credits", "10")
    r = s.get(PATH, key=owner)
    eq((r.status, r.json()["credits_remaining"]), (200, REMAINDER + 10 - COST))


@test
def head_charges_nothing(s):
    """HEAD of a billed route is 405 with Allow (a HEAD would be charged
    for an answer it never gets); HEAD of a free route is its GET without
    the body."""
    ws = s.workspace(credits=10)
    key = ws["api_key"]
    r = s.request("HEAD", PATH, key=key)
    eq(r.status, 405, "HEAD of a billed route")
    eq(r.body, b"", "no body in an answer to HEAD")
    eq(r.header("Allow"), "GET", "Allow")
    eq(s.get("/v1/credits", key=key).json(), {"credits": 10}, "nothing charged")
    eq(s.get("/v1/usage", key=key).json()["total"], 0, "no usage row")
    r = s.request("HEAD", "/v1/credits", key=key)
    eq(r.status, 200, "HEAD of a free route")
    eq(r.body, b"", "no body")
    check(int(r.header("Content-Length")) > 0, "the GET's length", r.headers)
    r = s.request("PUT", "/v1/credits", key=key)
    eq(r.status, 405, "PUT of a free GET route")
    eq(r.header("Allow"), "GET, HEAD", "Allow of a free GET route")


@test
def earned_outcomes_ride_on_later_debits(s):
    """A call that earned its whole charge is closed earned without a
    report of its own: the next debit carries it, and the last one waits
    at most the gateway's flush (50 ms) for a Settle call. Nothing is left
    for the reconcile job, which then refunds none of them."""
    ws = s.workspace(credits=100)
    key = ws["api_key"]
    wid = ws["workspace_id"]
    for _ in range(10):
        eq(s.get(PATH, key=key).status, 200, "billed call")
    results = h.parallel(20, lambda i: s.get(PATH, key=key))
    eq(sorted(r.status for r in results), [200] * 20, "parallel billed calls")
    open_rows = "SELECT count(*) FROM usage_all WHERE workspace_id = '%s' " \
                "AND outcome IS NULL" % wid
    deadline = time.time() + 2
    while int(s.db.query(open_rows)) > 0 and time.time() < deadline:
        time.sleep(0.05)
    eq(int(s.db.query(open_rows)), 0, "every charge closed")
    eq(int(s.db.query("SELECT count(*) FROM usage_all WHERE workspace_id = '%s' "
                      "AND outcome = 'earned' AND credits_used = %d"
                      % (wid, COST))), 30, "30 charges earned in full")
    at = datetime.datetime.now(datetime.timezone.utc) + datetime.timedelta(days=1)
    s.seoctl("job", "run", "reconcile", "--at", at.strftime("%Y-%m-%dT%H:%M:%SZ"))
    eq(s.get("/v1/credits", key=key).json(), {"credits": 100 - 30 * COST},
       "nothing given back by the reconcile job")


if __name__ == "__main__":
    sys.exit(h.run(setup, lambda s: s.close()))

"""A crash of each process under billed load (issue 14), as the durability
promise of docs/decisions.md says: whatever dies, credits are conserved
(the balance plus what usage rows say was earned equals the grant, and the
ledger sums to the balance) and, once the reconcile job has run, nobody
paid for a call that was not answered 200. A crash of a gateway or of
PostgreSQL itself may leave calls answered 200 unpaid (the gateway's
outcomes not yet reported, the debits not yet on disk): that costs the
operator, never the customer. A crash of a service costs nothing either
way: its calls fail and are refunded. (svc-account SIGKILLed, and
PostgreSQL stopped and started, are in test_account_faults.py.)"""

import os
import signal
import sys
import time

sys.path.insert(0, os.path.dirname(__file__))
import harness as h  # noqa: E402
from harness import check, eq, test  # noqa: E402

COST = 2          # /v1/referring-domains
PATH = "/v1/referring-domains?domain=example.com&limit=1"
GRANTED = 100000
RPC_TIMEOUT_MS = 3000


def setup():
    return h.Stack("crashes", env={"SEO_RATE_LIMIT_PER_MIN": "0",
                                   "SEO_RPC_TIMEOUT_MS": str(RPC_TIMEOUT_MS)},
                   gateways=2)


def settled(s, ws, statuses, exact):
    """After the reconcile job: conserved; paid at most (exactly, when
    `exact`) what was answered 200."""
    wid = ws["workspace_id"]
    ok = statuses.count(200)
    check(ok > 0, "some calls succeeded", statuses[:20])
    if exact:
        # every caller lived: each debit's outcome comes, and each leased
        # call is reported before the job expires the leases (a usage read
        # waits for its gateway's queue; the job would close a lease whose
        # last calls are still queued, and they would be written free)
        h.wait_reported(s, wid)
        for port in s.gateways:
            eq(s.get("/v1/usage?limit=1", key=ws["api_key"], port=port).status,
               200, "the usage read that waits for the leased calls")
    else:
        time.sleep(8)  # the live gateways' reports, retried with back-off
    h.reconcile_tomorrow(s)
    _, earned = h.conserved(s, wid, GRANTED)
    eq(int(s.db.query("SELECT count(*) FROM usage_all WHERE workspace_id = '%s' "
                      "AND outcome IS NULL" % wid)), 0, "every charge closed")
    if exact:
        eq(earned, ok * COST, "credits earned by the calls answered 200")
    else:
        check(earned <= ok * COST, "never more than the calls answered 200",
              (earned, ok))
        check(earned > 0, "the calls before the crash paid", earned)


@test
def a_killed_gateway(s):
    ws = s.workspace(credits=GRANTED)
    victim = "gateway1"

    def crash():
        s.procs[victim].stop(signal.SIGKILL)

    try:
        statuses = h.billed_load(s, PATH, ws["api_key"], crash, s.gateways, 4, 1.5)
    finally:
        # A fresh gateway in its place, for the tests that follow.
        s.procs.pop(victim)
        s.gateways.pop()
        s.start_gateway()
    check(0 in statuses, "the killed gateway's clients lost it")
    settled(s, ws, [st for st in statuses if st != 0], exact=False)


@test
def a_killed_service(s):
    ws = s.workspace(credits=GRANTED)

    def crash():
        s.procs["svc-graph"].stop(signal.SIGKILL)
        time.sleep(0.5)
        s.start_service("svc-graph")

    statuses = h.billed_load(s, PATH, ws["api_key"], crash, s.gateways[:1], 4, 1.5)
    s.wait_healthy()
    check(set(statuses) <= {200, 503}, "only 200 and 503", sorted(set(statuses)))
    check(503 in statuses, "the crash was seen")
    settled(s, ws, statuses, exact=True)


@test
def a_crashed_postgresql(_):
    """pg_ctl stop -m immediate: no shutdown checkpoint, the debits
    committed without waiting for the disk in the last moments may be
    gone, whole."""
    cluster = h.PgCluster()
    shared = os.environ.get("SEO_TEST_PG_URL")
    stack = None
    try:
        os.environ["SEO_TEST_PG_URL"] = cluster.url
        stack = h.Stack("crashpg", env={"SEO_RATE_LIMIT_PER_MIN": "0",
                                        "SEO_RPC_TIMEOUT_MS": str(RPC_TIMEOUT_MS)})
        ws = stack.workspace(credits=GRANTED)

        def crash():
            cluster.run(h.pg_bin("pg_ctl"), "-D", cluster.data, "-m", "immediate",
                        "-w", "stop")
            time.sleep(1)
            cluster.start()

        statuses = h.billed_load(stack, PATH, ws["api_key"], crash, stack.gateways, 4, 1.5)
        stack.wait_healthy()
        check(set(statuses) <= {200, 503}, "only 200 and 503", sorted(set(statuses)))
        settled(stack, ws, statuses, exact=False)
    finally:
        if shared is not None:
            os.environ["SEO_TEST_PG_URL"] = shared
        problem = stack.close() if stack is not None else None
        cluster.close()
    check(problem is None, "the stack stopped cleanly", problem)


if __name__ == "__main__":
    sys.exit(h.run(setup, lambda s: s.close()))

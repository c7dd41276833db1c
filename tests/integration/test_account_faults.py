"""Money and availability when svc-account or its database fails (issue
12): a database that cannot be reached answers 503 service_unavailable
(never 500 internal_error) and /healthz names svc-account; under billed
load through a database outage and through a SIGKILL of svc-account,
credits are conserved (the balance plus what usage rows say was earned
equals what was granted) and, once the reconcile job has run, exactly the
calls answered 200 paid; checkouts stuck at the payment provider hold no
database connection; the same through a restart of PostgreSQL itself
(a throwaway cluster of this test, never the shared server); a debit held
by a lock past its caller's deadline is never written."""

import os
import subprocess
import sys
import threading
import time

sys.path.insert(0, os.path.dirname(__file__))
import harness as h  # noqa: E402
from harness import check, eq, test  # noqa: E402

COST = 2          # /v1/referring-domains
PATH = "/v1/referring-domains?domain=example.com&limit=1"


RPC_TIMEOUT_MS = 3000
# The gateway's reports retry with back-off up to 5 s apart.
REPORTS_SETTLE_S = 8


def setup():
    # A payment provider that accepts and never answers (10 s timeout).
    pay = h.Fake("fake_payments.py", "--fail", "hang")
    try:
        s = h.Stack("acctfault", env={"SEO_RATE_LIMIT_PER_MIN": "0",
                                      "SEO_RPC_TIMEOUT_MS": str(RPC_TIMEOUT_MS),
                                      "SEO_PAYMENTS_API_URL": pay.url,
                                      "SEO_PAYMENTS_KEY": "sk_test_fake"})
    except BaseException:
        pay.close()
        raise
    s.pay = pay
    return s


def teardown(s):
    database_up(s)
    problem = s.close()
    s.pay.close()
    return problem


def database_down(s):
    """No new connection is accepted and every open one is cut: to
    svc-account the database is gone, while the test server stays up for
    the other tests."""
    d = s.db
    d.psql(d.admin_url, "ALTER DATABASE %s ALLOW_CONNECTIONS false" % d.name)
    d.psql(d.admin_url, "SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity "
                        "WHERE datname = '%s'" % d.name)


def database_up(s):
    d = s.db
    d.psql(d.admin_url, "ALTER DATABASE %s ALLOW_CONNECTIONS true" % d.name)


reconcile = h.reconcile_tomorrow
conserved = h.conserved


def billed_load(s, key, fault):
    """8 clients calling PATH while fault() runs; their statuses."""
    return h.billed_load(s, PATH, key, fault)


@test
def database_down_is_503_and_unhealthy(s):
    ws = s.workspace(credits=100)
    key = ws["api_key"]
    eq(s.get(PATH, key=key).status, 200, "billed call before the outage")
    database_down(s)
    try:
        r = s.get(PATH, key=key)
        h.expect_error(r, 503, "service_unavailable")
        check("postgres" not in r.json()["message"].lower(), "no database detail", r.json())
        h.expect_error(s.get("/v1/credits", key=key), 503, "service_unavailable")
        r = s.get("/healthz")
        eq(r.status, 503, "healthz while the database is down")
        eq(r.json()["services"]["account"], "unavailable", "svc-account named")
    finally:
        database_up(s)
    deadline = time.time() + 10
    while s.get("/healthz").status != 200 and time.time() < deadline:
        time.sleep(0.1)
    eq(s.get("/healthz").status, 200, "healthy again")
    eq(s.get(PATH, key=key).status, 200, "billed call after the outage")
    conserved(s, ws["workspace_id"], 100)


def paid_what_was_answered(s, ws, granted, statuses):
    ok = statuses.count(200)
    check(ok > 0, "some calls succeeded", statuses[:20])
    check(set(statuses) <= {200, 503}, "only 200 and 503", sorted(set(statuses)))
    # A workspace holding a credit lease is served from the gateway's
    # memory through an outage of the database (docs/decisions.md,
    # "credit leases"): then the fault costs no call, and the conservation
    # below is what is left to prove.
    leased = int(s.db.query("SELECT count(*) FROM credit_leases WHERE workspace_id = '%s' "
                            "AND granted > 0"
                            % ws["workspace_id"])) > 0
    check(statuses.count(503) > 0 or leased,
          "the fault was seen, or a lease served through it")
    conserved(s, ws["workspace_id"], granted)
    time.sleep(REPORTS_SETTLE_S)
    reconcile(s)
    balance, earned = conserved(s, ws["workspace_id"], granted)
    eq(earned, ok * COST, "credits earned by the calls answered 200")
    eq(int(s.db.query("SELECT count(*) FROM usage_all WHERE workspace_id = '%s' "
                      "AND credits_used > 0" % ws["workspace_id"])), ok,
       "one paying usage row per call answered 200")


@test
def billed_load_through_an_outage_conserves_credits(s):
    granted = 100000
    ws = s.workspace(credits=granted)

    def outage():
        database_down(s)
        try:
            time.sleep(2)
        finally:
            database_up(s)

    statuses = billed_load(s, ws["api_key"], outage)
    paid_what_was_answered(s, ws, granted, statuses)


@test
def billed_load_through_a_killed_svc_account(s):
    granted = 100000
    ws = s.workspace(credits=granted)

    def kill_and_restart():
        s.procs["svc-account"].stop(h.signal.SIGKILL)
        time.sleep(0.5)
        s.start_service("svc-account")

    statuses = billed_load(s, ws["api_key"], kill_and_restart)
    s.wait_healthy()
    paid_what_was_answered(s, ws, granted, statuses)


Cluster = h.PgCluster


@test
def billed_load_through_a_postgresql_restart(_):
    cluster = Cluster()
    shared = os.environ.get("SEO_TEST_PG_URL")
    stack = None
    try:
        os.environ["SEO_TEST_PG_URL"] = cluster.url
        stack = h.Stack("acctpg", env={"SEO_RATE_LIMIT_PER_MIN": "0",
                                       "SEO_RPC_TIMEOUT_MS": str(RPC_TIMEOUT_MS)})
        granted = 100000
        ws = stack.workspace(credits=granted)

        def restart():
            cluster.stop()
            time.sleep(1)
            cluster.start()

        statuses = billed_load(stack, ws["api_key"], restart)
        stack.wait_healthy()
        paid_what_was_answered(stack, ws, granted, statuses)
    finally:
        if shared is not None:
            os.environ["SEO_TEST_PG_URL"] = shared
        problem = stack.close() if stack is not None else None
        cluster.close()
    check(problem is None, "the stack stopped cleanly", problem)


@test
def a_debit_held_past_its_deadline_is_not_written(s):
    ws = s.workspace(credits=100)
    wid = ws["workspace_id"]
    # Another session locks the workspace row, as a stalled commit would.
    holder = subprocess.Popen([h.pg_bin("psql"), s.db.url, "-AtqX"],
                              stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                              stderr=subprocess.DEVNULL, text=True)
    try:
        holder.stdin.write("BEGIN; SELECT 1 FROM workspaces WHERE id = '%s' FOR UPDATE;\n"
                           % wid)
        holder.stdin.flush()
        # its row printed: the lock is held (a fixed pause let a slow psql
        # take it after the call had been charged)
        eq(holder.stdout.readline().strip(), "1", "the workspace row locked")
        t0 = time.time()
        r = s.get(PATH, key=ws["api_key"])
        h.expect_error(r, 503, "service_unavailable")
        check(time.time() - t0 < RPC_TIMEOUT_MS / 1000.0 + 2, "answered at the deadline")
        time.sleep(1)
    finally:
        holder.stdin.write("COMMIT;\n")
        holder.stdin.close()
        holder.wait(10)
    time.sleep(1)
    eq(int(s.db.query("SELECT balance FROM workspaces WHERE id = '%s'" % wid)), 100,
       "nothing charged after the caller gave up")
    eq(int(s.db.query("SELECT count(*) FROM usage_all WHERE workspace_id = '%s'" % wid)), 0,
       "no usage row")
    eq(s.get(PATH, key=ws["api_key"]).status, 200, "billed call after the lock")
    h.wait_reported(s, wid)
    reconcile(s)
    conserved(s, wid, 100)
    eq(int(s.db.query("SELECT balance FROM workspaces WHERE id = '%s'" % wid)), 100 - COST,
       "the call answered 200 stays paid")


@test
def a_hung_payment_provider_holds_no_connection(s):
    # More checkouts stuck at the provider than svc-account has pooled
    # connections (16), while key checks and reads go on.
    ws = s.workspace(credits=10)
    key = ws["api_key"]
    statuses = []

    def checkout():
        r = s.request("POST", "/v1/checkout", key=key, body={"credits": 1000}, timeout=60)
        statuses.append(r.status)

    threads = [threading.Thread(target=checkout) for _ in range(24)]
    for t in threads:
        t.start()
    try:
        time.sleep(1.5)
        t0 = time.time()
        r = s.get("/v1/credits", key=key)
        took = time.time() - t0
        eq(r.status, 200, "credits while checkouts hang")
        check(took < 1.0, "answered at once", took)
    finally:
        for t in threads:
            t.join()
    check(200 not in statuses, "no checkout succeeded", statuses)


if __name__ == "__main__":
    sys.exit(h.run(setup, teardown))

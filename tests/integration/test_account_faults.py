"""Money and availability when svc-account's database fails (issue 12):
a database that cannot be reached answers 503 service_unavailable (never
500 internal_error) and /healthz names svc-account; billed calls during
the outage charge nothing that was not answered 200, and credits are
conserved: the balance plus what usage rows say was earned equals what was
granted."""

import os
import sys
import threading
import time

sys.path.insert(0, os.path.dirname(__file__))
import harness as h  # noqa: E402
from harness import check, eq, test  # noqa: E402

COST = 2          # /v1/referring-domains
PATH = "/v1/referring-domains?domain=example.com&limit=1"


def setup():
    return h.Stack("acctfault", env={"SEO_RATE_LIMIT_PER_MIN": "0"})


def teardown(s):
    database_up(s)
    return s.close()


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


def conserved(s, wid, granted):
    balance = int(s.db.query("SELECT balance FROM workspaces WHERE id = '%s'" % wid))
    earned = int(s.db.query("SELECT coalesce(sum(credits_used), 0) FROM usage "
                            "WHERE workspace_id = '%s'" % wid))
    ledger = int(s.db.query("SELECT sum(delta) FROM ledger WHERE workspace_id = '%s'" % wid))
    eq(ledger, balance, "ledger sum equals the balance")
    eq(balance + earned, granted, "balance plus credits earned equals the grant")
    return balance, earned


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


@test
def billed_load_through_an_outage_conserves_credits(s):
    granted = 100000
    ws = s.workspace(credits=granted)
    key = ws["api_key"]
    stop = threading.Event()
    statuses = []
    lock = threading.Lock()

    def client():
        while not stop.is_set():
            try:
                st = s.get(PATH, key=key, timeout=60).status
            except OSError:
                st = 0
            with lock:
                statuses.append(st)

    threads = [threading.Thread(target=client) for _ in range(8)]
    for t in threads:
        t.start()
    try:
        time.sleep(1)
        database_down(s)
        time.sleep(2)
        database_up(s)
        time.sleep(2)
    finally:
        database_up(s)
        stop.set()
        for t in threads:
            t.join()
    ok = statuses.count(200)
    check(ok > 0, "some calls succeeded", statuses[:20])
    check(set(statuses) <= {200, 503}, "only 200 and 503", sorted(set(statuses)))
    check(statuses.count(503) > 0, "the outage was seen")
    balance, earned = conserved(s, ws["workspace_id"], granted)
    check(earned >= ok * COST, "every call answered 200 paid", earned, ok)


if __name__ == "__main__":
    sys.exit(h.run(setup, teardown))

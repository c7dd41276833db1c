"""Credit leases (issue 14, docs/decisions.md "credit leases"): a gateway
debits a workspace's billed calls from a lease it holds in memory and
reports them in batches. Through two gateways and a real svc-account:
calls are served from the lease (no per-call debit), every answer and read
sees the calls answered before it, failures give the credits back, the
count of successes stays exactly floor(B/cost) near zero, a purchase shows
at once, a revoked key fails on its next billed call, and a gateway that
stops or is killed leaves every credit earned or returned. A workspace
only read through a gateway holds a watch lease there (granted 0): its
/v1/credits is answered from memory, follows calls made through the other
gateway, never delays a refusal near zero, and is given back once no
longer read. The rate limit is off: a key the limit counts is debited call
by call."""

import json
import os
import signal
import sys
import threading
import time

sys.path.insert(0, os.path.dirname(__file__))
import harness as h  # noqa: E402
from harness import check, eq, expect_error, test  # noqa: E402

COST = 2
PATH = "/v1/referring-domains?domain=example.com&limit=1"
HEAVY_COST = 10
HEAVY = "/v1/site-explorer?domain=example.com"
BIG = 100000


def setup():
    return h.Stack("leases", env={"SEO_RATE_LIMIT_PER_MIN": "0"}, gateways=2)


def q(s, sql):
    return s.db.query(sql)


def open_leases(s, wid):
    """(number, credits still held) of the workspace's open leases."""
    row = q(s, "SELECT count(*) || ',' || coalesce(sum(granted - used), 0) "
               "FROM credit_leases WHERE workspace_id = '%s' AND closed_at IS NULL"
            % wid)
    n, held = row.split(",")
    return int(n), int(held)


def conserved(s, wid, granted):
    """The harness's conservation (leases included); returns earned."""
    return h.conserved(s, wid, granted)[1]


def wait_lease(s, wid, key, port=None):
    """Billed calls until the workspace holds a lease (the first calls are
    debited alone while the gateway asks for one); the calls made."""
    made = 0
    deadline = time.time() + 10
    while time.time() < deadline:
        eq(s.get(PATH, key=key, port=port).status, 200, "billed call")
        made += 1
        if open_leases(s, wid)[0] > 0:
            return made
        time.sleep(0.05)
    raise AssertionError("no lease was opened")


def per_call_debits(s, wid):
    return int(q(s, "SELECT count(*) FROM ledger WHERE workspace_id = '%s' "
                    "AND reason = 'charge'" % wid))


def credits(s, key, port=None):
    r = s.get("/v1/credits", key=key, port=port)
    eq(r.status, 200, "GET /v1/credits")
    return r.json()["credits"]


@test
def billed_calls_come_from_the_lease(s):
    ws = s.workspace(credits=BIG)
    wid, key = ws["workspace_id"], ws["api_key"]
    made = wait_lease(s, wid, key)
    before = per_call_debits(s, wid)
    calls = 400

    def work(i):
        out = []
        for _ in range(calls // 8):
            r = s.get(PATH, key=key)
            out.append((r.status, r.json().get("credits_used")))
        return out

    results = [x for part in h.parallel(8, work) for x in part]
    eq(set(results), {(200, COST)}, "every call answered and charged")
    made += calls
    check(per_call_debits(s, wid) - before <= calls // 10,
          "the calls came from the lease, not one debit each",
          per_call_debits(s, wid) - before)
    # One more, then the balance it showed is the one /v1/credits shows.
    r = s.get(PATH, key=key)
    made += 1
    eq(credits(s, key), r.json()["credits_remaining"], "credits after the last call")
    eq(r.json()["credits_remaining"], BIG - COST * made, "the balance shown")
    usage = s.get("/v1/usage?limit=1", key=key).json()
    eq(usage["total"], made, "one usage row per call, written before the usage read")
    rows = int(q(s, "SELECT count(*) FROM usage_all WHERE workspace_id = '%s'" % wid))
    eq(rows, made, "one usage row per call")
    eq(conserved(s, wid, BIG), COST * made, "earned")


@test
def every_call_keeps_its_own_key_and_route(s):
    # More keys and routes than a lease state keeps names of (16, the
    # gateway's NAMES_MAX): the calls past them carry their own copies,
    # and every usage row still names its call's key and route.
    ws = s.workspace(credits=BIG)
    wid, key = ws["workspace_id"], ws["api_key"]
    wait_lease(s, wid, key)
    keys = {}
    # 19 keys and the owner's (20, the most a workspace holds), one user,
    # two routes: 22 names.
    for i in range(19):
        r = s.request("POST", "/v1/keys", key=key, body={"name": "k%d" % i})
        eq(r.status, 201, r)
        keys[r.json()["id"]] = r.json()["key"]
    routes = [(PATH, "referring-domains", COST), (HEAVY, "site-explorer", HEAVY_COST)]
    made = {}
    for _ in range(3):
        for kid, raw in keys.items():
            for path, name, cost in routes:
                r = s.get(path, key=raw)
                eq(r.status, 200, r)
                eq(r.json()["credits_used"], cost)
                made[(kid, name)] = made.get((kid, name), 0) + 1
    eq(s.get("/v1/usage?limit=1", key=key).status, 200)
    rows = q(s, "SELECT key_id || ' ' || endpoint || ' ' || count(*) FROM usage_all "
                "WHERE workspace_id = '%s' AND key_id IN (%s) GROUP BY key_id, endpoint"
             % (wid, ",".join("'%s'" % k for k in keys)))
    got = {}
    for line in rows.splitlines():
        kid, name, n = line.split(" ")
        got[(kid, name)] = int(n)
    eq(got, made, "a usage row per call, with its own key and route")
    check(int(q(s, "SELECT coalesce(sum(n_calls), 0) FROM usage_batches "
                   "WHERE workspace_id = '%s'" % wid)) >= len(made),
          "the calls were reported on the lease")


@test
def every_call_keeps_its_own_domain(s):
    # Domains short and long, in turn: the gateway's queue keeps every
    # queued call's domain in one text (gateway/lib/lease_queue.c), moved
    # when a report drops calls from the front, so each call's domain
    # must come back whole and its own, whatever came before it.
    ws = s.workspace(credits=BIG)
    wid, key = ws["workspace_id"], ws["api_key"]
    made = wait_lease(s, wid, key)
    label = "a" * 60
    domains = ["example.com",
               ("b" * 35) + ".example.com",          # 47 bytes
               ("c" * 36) + ".example.com",          # 48
               "%s.%s.%s.example.com" % (label, label, label)]
    sent = {}
    for _ in range(5):
        for d in domains + domains[::-1]:
            r = s.get("/v1/referring-domains?domain=%s&limit=1" % d, key=key)
            eq(r.status, 200, r)
            sent[d] = sent.get(d, 0) + 1
    eq(s.get("/v1/usage?limit=1", key=key).status, 200)
    rows = q(s, "SELECT domain || ' ' || count(*) FROM usage_all WHERE workspace_id = "
                "'%s' AND domain <> 'example.com' GROUP BY domain" % wid)
    got = {d: int(n) for d, n in (line.split(" ") for line in rows.splitlines())}
    del sent["example.com"]
    eq(got, sent, "a usage row per call, with its own domain")
    eq(q(s, "SELECT count(*) FROM usage_all WHERE workspace_id = '%s' AND "
            "domain = 'example.com'" % wid), str(made + 10))


@test
def every_read_sees_the_call_before_it(s):
    ws = s.workspace(credits=BIG)
    wid, key = ws["workspace_id"], ws["api_key"]
    made = wait_lease(s, wid, key)
    for i in range(30):
        r = s.get(PATH, key=key)
        eq(r.status, 200, "billed call")
        made += 1
        if i % 2:
            usage = s.get("/v1/usage?limit=1", key=key).json()
            eq(usage["total"], made, "usage rows right after the call")
        else:
            eq(credits(s, key), BIG - COST * made, "credits right after the call")
            r = s.get("/v1/me", key=key)
            eq(r.json()["credits"], BIG - COST * made, "/v1/me's credits")


@test
def failed_calls_give_the_credits_back(s):
    ws = s.workspace(credits=BIG)
    wid, key = ws["workspace_id"], ws["api_key"]
    made = wait_lease(s, wid, key)
    s.stop_service("svc-graph")
    try:
        for _ in range(20):
            r = s.get(PATH, key=key)
            eq(r.status, 503, "svc-graph is down")
        eq(credits(s, key), BIG - COST * made, "nothing charged for the failures")
    finally:
        s.start_service("svc-graph")
        s.wait_healthy()
    # A usage read waits for the queued calls to be reported.
    eq(s.get("/v1/usage?limit=1", key=key).status, 200, "usage read")
    free = int(q(s, "SELECT count(*) FROM usage_all WHERE workspace_id = '%s' "
                    "AND credits_used = 0 AND charged = %d" % (wid, COST)))
    eq(free, 20, "the failures' usage rows at 0")
    eq(conserved(s, wid, BIG), COST * made, "earned")


@test
def exact_near_zero_across_two_gateways(s):
    """12,000 credits, a lease taken first (while the balance is still
    10,000 or more: left to the race, the calls debited alone while the
    gateway asks could take it under first), then 10 a call, 16 clients
    on two gateways until each is refused: exactly what is left over 10
    succeed, whatever the leases held when the balance ran out."""
    granted = 12000
    ws = s.workspace(credits=granted)
    wid, key = ws["workspace_id"], ws["api_key"]
    made = wait_lease(s, wid, key, s.gateways[0])
    while COST * made % HEAVY_COST != 0:
        eq(s.get(PATH, key=key).status, 200, "billed call")
        made += 1
    lock = threading.Lock()
    statuses = []

    def client(i):
        port = s.gateways[i % 2]
        while True:
            st = s.get(HEAVY, key=key, port=port, timeout=60).status
            with lock:
                statuses.append(st)
            if st != 200:
                return

    h.parallel(16, client)
    eq(statuses.count(200), (granted - COST * made) // HEAVY_COST, "successes")
    eq(set(statuses), {200, 402}, "only successes and refusals")
    leased = int(q(s, "SELECT count(*) FROM ledger WHERE workspace_id = '%s' "
                      "AND reason = 'lease'" % wid))
    check(leased > 0, "leases were taken", leased)
    for port in s.gateways:
        expect_error(s.get(HEAVY, key=key, port=port), 402, "insufficient_credits")
        eq(credits(s, key, port), 0, "no credit left")
    eq(conserved(s, wid, granted), granted, "all earned")


@test
def a_purchase_shows_at_once(s):
    ws = s.workspace(credits=BIG)
    wid, key = ws["workspace_id"], ws["api_key"]
    made = wait_lease(s, wid, key)
    s.seoctl("credits", "grant", "--workspace", wid, "--credits", "5000")
    want = BIG + 5000 - COST * made
    deadline = time.time() + 2
    seen = None
    while time.time() < deadline:
        seen = [credits(s, key, p) for p in s.gateways]
        if seen == [want, want]:
            break
        time.sleep(0.02)
    eq(seen, [want, want], "the grant on both gateways")
    r = s.get(PATH, key=key)
    eq(r.json()["credits_remaining"], want - COST, "and in the next call's balance")


@test
def a_revoked_key_fails_its_next_billed_call(s):
    ws = s.workspace(credits=BIG)
    wid, owner = ws["workspace_id"], ws["api_key"]
    wait_lease(s, wid, owner)
    for i in range(5):
        via, other = (s.gateways if i % 2 == 0 else s.gateways[::-1])
        k = s.request("POST", "/v1/keys", key=owner, body={"name": "l%d" % i},
                      port=via).json()
        for port in s.gateways:
            for _ in range(3):
                eq(s.get(PATH, key=k["key"], port=port).status, 200, "warm call")
        eq(s.request("DELETE", "/v1/keys/" + k["id"], key=owner, port=via).status,
           200, "revoked")
        expect_error(s.get(PATH, key=k["key"], port=other), 401, "invalid_api_key")
        expect_error(s.get(PATH, key=k["key"], port=via), 401, "invalid_api_key")


def replace_gateway(s, name):
    s.procs.pop(name)
    s.gateways.pop()
    s.start_gateway()
    s.wait_healthy()


def spend_on_gateway1(s):
    """A workspace whose lease the second gateway holds and has spent from
    50 calls past its opening: (workspace id, key, calls made)."""
    ws = s.workspace(credits=BIG)
    wid, key = ws["workspace_id"], ws["api_key"]
    port = s.gateways[1]
    made = wait_lease(s, wid, key, port)
    for _ in range(50):
        eq(s.get(PATH, key=key, port=port).status, 200, "billed call")
        made += 1
    return wid, key, made


@test
def a_stopped_gateway_gives_its_lease_back(s):
    wid, key, made = spend_on_gateway1(s)
    code = s.procs["gateway1"].stop(signal.SIGTERM)
    replace_gateway(s, "gateway1")
    eq(code, 0, "the gateway stopped cleanly")
    eq(open_leases(s, wid)[0], 0, "its lease given back")
    eq(int(q(s, "SELECT balance FROM workspaces WHERE id = '%s'" % wid)),
       BIG - COST * made, "the balance, in the database")
    eq(conserved(s, wid, BIG), COST * made, "earned")


@test
def a_killed_gateways_lease_expires(s):
    wid, key, made = spend_on_gateway1(s)
    # every call reported before the kill (each within GW_LEASE_REPORT_MAX_MS)
    deadline = time.time() + 10
    while int(q(s, "SELECT count(*) FROM usage_all WHERE workspace_id = '%s'" % wid)) < made:
        check(time.time() < deadline, "the calls reported")
        time.sleep(0.05)
    s.procs["gateway1"].stop(signal.SIGKILL)
    replace_gateway(s, "gateway1")
    check(open_leases(s, wid)[0] > 0, "the lease is still open")
    h.reconcile_tomorrow(s)
    eq(open_leases(s, wid)[0], 0, "the expired lease given back")
    eq(conserved(s, wid, BIG), COST * made, "earned: every call answered")
    eq(credits(s, key), BIG - COST * made, "the balance shown")


def watch_lease(s, wid, key, port, want):
    """Reads /v1/credits through `port` (each answer `want`) until the
    workspace holds a watch lease (granted 0); its id."""
    deadline = time.time() + 10
    while time.time() < deadline:
        eq(credits(s, key, port), want, "credits read")
        row = q(s, "SELECT id FROM credit_leases WHERE workspace_id = '%s' "
                   "AND closed_at IS NULL AND granted = 0" % wid)
        if row:
            return row
        time.sleep(0.05)
    raise AssertionError("no watch lease was opened")


@test
def reads_are_answered_from_a_watch_lease(s):
    """A balance too small for a lease, read through one gateway: a watch
    lease holds nothing, and the reads are answered while svc-account is
    stopped (SIGSTOP): from the gateway's memory."""
    ws = s.workspace(credits=500)
    wid, key = ws["workspace_id"], ws["api_key"]
    port = s.gateways[0]
    eq(credits(s, key, port), 500, "a single read")
    time.sleep(0.3)
    eq(open_leases(s, wid), (0, 0), "no lease for a single read")
    watch_lease(s, wid, key, port, 500)
    eq(open_leases(s, wid), (1, 0), "one lease, holding nothing")
    # a few reads only: stopped for seconds, svc-account would fail the
    # gateway's key watch, and the keys would be asked of it again
    acct = s.procs["svc-account"].proc
    acct.send_signal(signal.SIGSTOP)
    try:
        seen = [credits(s, key, port) for _ in range(5)]
    finally:
        acct.send_signal(signal.SIGCONT)
    eq(set(seen), {500}, "answered without svc-account")
    r = s.get(PATH, key=key, port=port)
    eq(r.status, 200, "billed call")
    eq(credits(s, key, port), 500 - COST, "the gateway's own call, read at once")
    eq(conserved(s, wid, 500), COST, "earned")


@test
def a_watch_lease_follows_calls_through_the_other_gateway(s):
    ws = s.workspace(credits=500)
    wid, key = ws["workspace_id"], ws["api_key"]
    g1, g2 = s.gateways
    watch_lease(s, wid, key, g2, 500)
    for i in range(10):
        r = s.get(PATH, key=key, port=g1)
        eq(r.status, 200, "billed call on gateway 1")
        want = r.json()["credits_remaining"]
        eq(want, 500 - COST * (i + 1), "the balance after it")
        deadline = time.time() + 2
        while credits(s, key, g2) != want:
            check(time.time() < deadline, "gateway 2 shows the call within 2 s",
                  credits(s, key, g2), want)
            time.sleep(0.01)
    eq(conserved(s, wid, 500), COST * 10, "earned")


def refusal_ms(s, proc, request_ids):
    """duration_ms of each request in `proc`'s access log (waited for)."""
    deadline = time.time() + 5
    while True:
        with open(s.procs[proc].log_path, "rb") as f:
            lines = [json.loads(x) for x in f.read().splitlines()
                     if x.startswith(b'{"ts":') and b'"request_id"' in x]
        took = {x["request_id"]: x["duration_ms"] for x in lines}
        if set(request_ids) <= took.keys() or time.time() > deadline:
            break
        time.sleep(0.05)
    eq(sorted(took.keys() & set(request_ids)), sorted(request_ids),
       "every refusal in the access log")
    return [took[i] for i in request_ids]


@test
def exact_near_zero_with_a_reader(s):
    """Gateway 2 reads in a loop (holding a watch lease) while 4 clients
    spend through gateway 1 until refused: exactly floor(B/cost) succeed,
    no balance read is negative, and a refusal is answered without the
    recall's wait (a lease holding nothing is never waited for)."""
    granted = 255
    ws = s.workspace(credits=granted)
    wid, key = ws["workspace_id"], ws["api_key"]
    g1, g2 = s.gateways
    watch_lease(s, wid, key, g2, granted)
    lock = threading.Lock()
    statuses, refusals, reads = [], [], []
    done = threading.Event()

    def reader():
        while not done.is_set():
            reads.append(credits(s, key, g2))

    def client(i):
        while True:
            r = s.get(HEAVY, key=key, port=g1, timeout=60)
            with lock:
                statuses.append(r.status)
                if r.status != 200:
                    refusals.append(r.header("X-Request-Id"))
            if r.status != 200:
                return

    t = threading.Thread(target=reader)
    t.start()
    try:
        h.parallel(4, client)
    finally:
        done.set()
        t.join()
    eq(statuses.count(200), granted // HEAVY_COST, "successes")
    eq(set(statuses), {200, 402}, "only successes and refusals")
    check(len(reads) > 0 and min(reads) >= 0, "no negative balance read",
          min(reads or [None]))
    # as the gateway timed them: a client's clock adds the machine's
    # hiccups (a connection retried), a recall waits 2 s inside
    took = refusal_ms(s, "gateway0", refusals)
    check(max(took) < 1000, "refusals answered at once, not after a recall", took)
    left = granted % HEAVY_COST
    deadline = time.time() + 2
    while credits(s, key, g2) != left:
        check(time.time() < deadline, "gateway 2 shows what is left",
              credits(s, key, g2))
        time.sleep(0.01)
    eq(credits(s, key, g1), left, "and gateway 1")
    eq(conserved(s, wid, granted), granted - left, "earned")


@test
def a_watch_lease_is_given_back_when_no_longer_read(s):
    """Read every 0.3 s for 7 s (past GW_LEASE_IDLE_MS): the same watch
    lease stays open; then unread, it is closed within 5 s and a bit."""
    ws = s.workspace(credits=500)
    wid, key = ws["workspace_id"], ws["api_key"]
    port = s.gateways[0]
    lid = watch_lease(s, wid, key, port, 500)
    until = time.time() + 7
    while time.time() < until:
        eq(credits(s, key, port), 500, "credits read")
        # The idle time runs from the last read, not from the check
        # below (psql may take seconds on a loaded machine).
        last = time.time()
        time.sleep(0.3)
    eq(q(s, "SELECT closed_at IS NULL FROM credit_leases WHERE id = '%s'" % lid),
       "t", "open while read")
    deadline = last + 15
    while q(s, "SELECT closed_at IS NULL FROM credit_leases WHERE id = '%s'"
               % lid) == "t":
        check(time.time() < deadline, "given back once no longer read")
        time.sleep(0.1)
    check(time.time() - last >= 4, "not before GW_LEASE_IDLE_MS without reads",
          time.time() - last)
    eq(open_leases(s, wid), (0, 0), "no lease open")
    eq(conserved(s, wid, 500), 0, "nothing earned")


if __name__ == "__main__":
    sys.exit(h.run(setup, lambda s: s.close()))

"""The rate limit counted in the gateways (issue 14): each gateway admits a
key's calls from tokens svc-account granted it out of the key's one bucket,
so that at a limit a user reaches (600 a minute here) two gateways under
concurrent clients admit exactly the limit's worth between them, never more,
with far fewer Authorize calls than requests; under steady use far from the
limit the next grant is asked ahead, so that no call waits for an Authorize;
a gateway killed while it held tokens does not lock the key out, one
stopped gives them back, and a call refused by one recalls what the other
holds; a revocation still fails the very next call on both gateways."""

import os
import re
import signal
import sys
import threading
import time

sys.path.insert(0, os.path.dirname(__file__))
import harness as h  # noqa: E402
from harness import check, eq, expect_error, test  # noqa: E402

LIMIT = 600
REFILL_PER_S = LIMIT / 60.0
# Billed (through the credit lease) and free: both counted by the limit.
BILLED = "/v1/referring-domains?domain=example.com&limit=1"
FREE = "/v1/keys"
CLIENTS_PER_GATEWAY = 4


def setup():
    s = h.Stack("rategrants", env={"SEO_RATE_LIMIT_PER_MIN": str(LIMIT)}, gateways=2)
    s.ws = s.workspace(credits=1000000)
    return s


def new_key(s, name):
    r = s.request("POST", "/v1/keys", key=s.ws["api_key"], body={"name": name})
    eq(r.status, 201, "key created")
    return r.json()


def counter(s, port, name):
    text = s.metrics(port=port).body.decode()
    m = re.search(r"^%s (\d+)$" % name, text, re.M)
    check(m is not None, "%s in /metrics" % name, text[-500:])
    return int(m.group(1))


def counters(s, name):
    return sum(counter(s, p, name) for p in s.gateways)


def load(s, key, ports, until):
    """CLIENTS_PER_GATEWAY clients per port, alternating the billed and the
    free route, each until until(its statuses) is true; every status."""
    statuses = []
    lock = threading.Lock()

    def client(i):
        port = ports[i % len(ports)]
        mine = []
        while not until(mine):
            st = s.get(BILLED if len(mine) % 2 == 0 else FREE, key=key,
                       port=port).status
            mine.append(st)
        with lock:
            statuses.extend(mine)

    threads = [threading.Thread(target=client, args=(i,))
               for i in range(CLIENTS_PER_GATEWAY * len(ports))]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    return statuses


def refused_in_a_row(n):
    return lambda mine: len(mine) >= n and set(mine[-n:]) == {429}


@test
def two_gateways_admit_the_limit_and_no_more(s):
    key = new_key(s, "limit")["key"]
    t0 = time.time()
    statuses = load(s, key, s.gateways, refused_in_a_row(20))
    elapsed = time.time() - t0
    ok = statuses.count(200)
    check(set(statuses) <= {200, 429}, "only admitted or refused", set(statuses))
    # The bucket refills while the clients run: at most that much more.
    most = LIMIT + int(REFILL_PER_S * elapsed) + 1
    check(LIMIT <= ok <= most, "admitted %d..%d" % (LIMIT, most), (ok, elapsed))
    check(counters(s, "seo_rate_local_total") > 0, "calls counted in the gateways")


@test
def far_fewer_authorize_calls_than_requests(s):
    key = new_key(s, "calls")["key"]
    before = counters(s, "seo_account_authorize_total")
    local_before = counters(s, "seo_rate_local_total")
    statuses = load(s, key, s.gateways, lambda mine: len(mine) >= 50)
    eq(set(statuses), {200}, "under the limit, every call admitted")
    asked = counters(s, "seo_account_authorize_total") - before
    local = counters(s, "seo_rate_local_total") - local_before
    calls = len(statuses)
    check(asked * 4 <= calls, "Authorize calls at most a quarter of the calls",
          (asked, calls))
    check(local + asked >= calls, "every call counted here or there",
          (local, asked, calls))


@test
def steady_use_asks_ahead_off_the_call_path(s):
    """A key far from its limit, under steady load through one gateway:
    after warm-up the gateway asks its next grant ahead of running out
    (seo_rate_ask_total) and no call of the key waits for an Authorize. A
    stack of its own: at 600 a minute grants stay small."""
    fast = h.Stack("rateasks", env={"SEO_RATE_LIMIT_PER_MIN": "60000000"})
    try:
        key = fast.workspace(credits=1000000)["api_key"]
        port = fast.gateways[0]
        warm = load(fast, key, [port], lambda mine: len(mine) >= 250)
        eq(set(warm), {200}, "warm-up calls")
        before = {n: counter(fast, port, n) for n in
                  ("seo_account_authorize_total", "seo_rate_ask_total",
                   "seo_rate_local_total")}
        statuses = load(fast, key, [port], lambda mine: len(mine) >= 2500)
        eq(set(statuses), {200}, "every call admitted")
        d = {n: counter(fast, port, n) - v for n, v in before.items()}
        calls = len(statuses)
        # A grant holds at most 4096 tokens: without asks ahead, these
        # 10,000 calls ran out at least twice, each time sending a call
        # to svc-account.
        per_call = d["seo_account_authorize_total"] - d["seo_rate_ask_total"]
        check(d["seo_rate_ask_total"] > 0, "grants asked ahead", d)
        check(per_call <= 1, "at most one call asked svc-account", (d, calls))
        check(d["seo_rate_local_total"] + per_call >= calls,
              "every call counted here or there", (d, calls))
    finally:
        fast.close()


@test
def a_killed_gateway_does_not_lock_the_key_out(s):
    key = new_key(s, "killed")["key"]
    victim, survivor = "gateway1", s.gateways[0]
    got = load(s, key, [s.gateways[1]], lambda mine: len(mine) >= 25)
    eq(set(got), {200}, "the victim's calls")
    spent = len(got)
    try:
        s.procs[victim].stop(signal.SIGKILL)
    finally:
        # A fresh gateway in its place, for the tests that follow.
        s.procs.pop(victim)
        s.gateways.pop()
        s.start_gateway()
        s.wait_healthy()
    # What it held when killed is lost (at most an eighth of the bucket);
    # the rest of the minute's budget is there at once.
    statuses = load(s, key, [survivor], refused_in_a_row(10))
    ok = statuses.count(200)
    check(ok >= LIMIT - spent - LIMIT // 8, "admitted after the kill", (ok, spent))
    check(ok + spent <= LIMIT + 10 * REFILL_PER_S, "never more than the limit",
          (ok, spent))


@test
def a_refusal_recalls_tokens_held_elsewhere(s):
    key = new_key(s, "recalled")["key"]
    holder, other = s.gateways
    got = load(s, key, [holder], lambda mine: len(mine) >= 25)
    eq(set(got), {200}, "the holder's calls")
    spent = len(got)
    # The other gateway alone, at once (well within the holder's 1 s
    # hold): its first refusal recalls what the holder still holds, which
    # it then admits too.
    t0 = time.time()
    statuses = load(s, key, [other], refused_in_a_row(30))
    elapsed = time.time() - t0
    ok = statuses.count(200)
    check(ok >= LIMIT - spent, "admitted through the other gateway",
          (ok, spent, elapsed))
    check(ok + spent <= LIMIT + int(REFILL_PER_S * (elapsed + 1)) + 1,
          "never more than the limit", (ok, spent, elapsed))


@test
def a_stopped_gateway_gives_its_tokens_back(s):
    key = new_key(s, "stopped")["key"]
    victim, survivor = "gateway1", s.gateways[0]
    got = load(s, key, [s.gateways[1]], lambda mine: len(mine) >= 25)
    eq(set(got), {200}, "the stopping gateway's calls")
    spent = len(got)
    try:
        eq(s.procs[victim].stop(signal.SIGTERM), 0, "a clean stop")
    finally:
        s.procs.pop(victim)
        s.gateways.pop()
        s.start_gateway()
        s.wait_healthy()
    # Nothing it held is lost: the whole rest of the minute's budget.
    statuses = load(s, key, [survivor], refused_in_a_row(10))
    ok = statuses.count(200)
    check(ok >= LIMIT - spent, "admitted after the stop", (ok, spent))
    check(ok + spent <= LIMIT + 10 * REFILL_PER_S, "never more than the limit",
          (ok, spent))


@test
def revocation_fails_the_next_call_with_tokens_held(s):
    for i in range(3):
        k = new_key(s, "revoked%d" % i)
        for port in s.gateways:
            got = load(s, k["key"], [port], lambda mine: len(mine) >= 12)
            eq(set(got), {200}, "warm calls")
        check(counters(s, "seo_rate_local_total") > 0, "tokens were held")
        via, other = s.gateways if i % 2 == 0 else s.gateways[::-1]
        eq(s.request("DELETE", "/v1/keys/" + k["id"], key=s.ws["api_key"],
                     port=via).status, 200, "revoked")
        expect_error(s.get(FREE, key=k["key"], port=other), 401, "invalid_api_key")
        expect_error(s.get(BILLED, key=k["key"], port=via), 401, "invalid_api_key")


@test
def rate_headers_count_down_on_one_gateway(s):
    key = new_key(s, "headers")["key"]
    port = s.gateways[0]
    seen = []
    for _ in range(40):
        r = s.get(FREE, key=key, port=port)
        eq(r.status, 200)
        eq(r.header("RateLimit-Limit"), str(LIMIT))
        seen.append(int(r.header("RateLimit-Remaining")))
        check(0 <= int(r.header("RateLimit-Reset")) <= 60, "reset in seconds")
    # One client, one gateway: the local view never goes up by more than
    # the refill between two calls.
    check(all(b <= a + 1 for a, b in zip(seen, seen[1:])), "counts down", seen)
    check(seen[-1] <= LIMIT - 40 + 1 + int(REFILL_PER_S * 5), "40 calls counted", seen)


if __name__ == "__main__":
    sys.exit(h.run(setup, lambda s: s.close()))

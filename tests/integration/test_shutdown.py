"""Graceful shutdown with live analyses in flight (page-seo against a slow
local test site, tests/fakes/site_server.py): a SIGTERM to svc-realtime or
to a gateway answers every call that had begun, keeps no credit it did not
earn (the balance plus the costs of the successes answered equals what was
granted), and the process exits 0 without a sanitizer report. A call that
outlives the gateway's drain limit (SEO_DRAIN_MS) is answered 503 and
refunded before the gateway lets go of svc-account. A second SIGTERM stops
at once, still cleanly."""

import json
import os
import signal
import sys
import time
import urllib.parse
import urllib.request

sys.path.insert(0, os.path.dirname(__file__))
import harness as h  # noqa: E402
from harness import check, eq, test  # noqa: E402

COST = 3          # page-seo's fixed cost
CREDITS = 1000
SANITIZER = ("ERROR: AddressSanitizer", "ERROR: LeakSanitizer", "runtime error:")


class Ctx:
    pass


def setup():
    c = Ctx()
    c.site = h.Fake("site_server.py")
    c.stack = h.Stack("shutdown", env={
        "SEO_FETCH_ALLOW_NETS": "127.0.0.0/8",
        "SEO_FETCH_CONNECT_TO": "slow.test:80:127.0.0.1:%d" % c.site.port,
        "SEO_RATE_LIMIT_PER_MIN": "0",
        # 20 analyses of one workspace at once, over the default 8
        "SEO_REALTIME_WORKSPACE_FETCHES": "32",
    })
    c.logs = c.stack.logs
    c.calls = 0
    return c


def teardown(c):
    problem = c.stack.close()
    c.site.close()
    return problem


def balance(c, workspace_id):
    return int(c.stack.db.query("SELECT balance FROM workspaces WHERE id = '%s'"
                                % workspace_id))


def begun(c, tag):
    """How many of the calls tagged `tag` reached the test site."""
    with urllib.request.urlopen("%s/count?id=%s" % (c.site.url, tag), timeout=10) as r:
        return json.load(r)["count"]


def live_calls(c, port, key, n, ms, victim, signals=1):
    """n page-seo calls on a page that takes `ms` to load; `victim` gets
    SIGTERM `signals` times, 0.3 s apart, once they are all under way (each
    has reached the test site: a fixed pause sent it before the slowest
    had reached the gateway). Returns the answers (or the transport errors)
    and how long the victim took to exit after the first signal."""
    c.calls += 1
    tag = "live%d" % c.calls

    def call(i):
        if i == n:
            deadline = time.monotonic() + 30
            while begun(c, tag) < n:
                check(time.monotonic() < deadline, "the calls under way",
                      begun(c, tag), n)
                time.sleep(0.05)
            t0 = time.monotonic()
            for k in range(signals):
                time.sleep(0.3 if k else 0)
                victim.proc.send_signal(signal.SIGTERM)
            victim.proc.wait(60)
            return time.monotonic() - t0
        url = "http://slow.test/slow?" + urllib.parse.urlencode({"ms": ms, "id": tag,
                                                                 "i": i})
        return c.stack.get("/v1/page-seo?" + urllib.parse.urlencode({"url": url}),
                           key=key, port=port, timeout=60)
    results = h.parallel(n + 1, call)
    if isinstance(results[n], Exception):
        raise results[n]
    return results[:n], results[n]


def gateway(c, env=None):
    """One more gateway, to be stopped by the test: its port and process."""
    port = c.stack.start_gateway(env)
    c.stack.wait_healthy()
    victim = c.stack.procs["gateway%d" % (len(c.stack.gateways) - 1)]
    c.stack.gateways.remove(port)
    return port, victim


def clean_exit(c, p):
    """Checks that `p` exited cleanly and takes it out of the stack."""
    c.stack.procs.pop(p.name)
    p.log.close()
    eq(p.proc.returncode, 0, p.name + " exit code")
    with open(p.log_path, "rb") as f:
        log = f.read().decode("utf-8", "replace")
    for s in SANITIZER:
        check(s not in log, "%s reported by %s" % (s, p.name), p.tail(40))


def conserved(c, ws, answers):
    ok = sum(1 for r in answers if r.status == 200)
    eq(balance(c, ws["workspace_id"]) + COST * ok, CREDITS,
       "balance plus the successes' costs")
    eq(int(c.stack.db.query("SELECT coalesce(sum(delta), 0) FROM ledger "
                            "WHERE workspace_id = '%s'" % ws["workspace_id"])),
       balance(c, ws["workspace_id"]), "ledger sum equals the balance")


def sigterm_during(c, victim, port, n, ms, max_s):
    """SIGTERM to `victim` during n calls of `ms` each through the gateway
    on `port`: every call answered, a clean exit within max_s, credits
    conserved. Returns the answers."""
    ws = c.stack.workspace(credits=CREDITS)
    answers, took = live_calls(c, port, ws["api_key"], n, ms, victim)
    eq([a for a in answers if isinstance(a, Exception)], [], "transport errors")
    clean_exit(c, victim)
    check(took < max_s, "%s took %.1f s to stop" % (victim.name, took))
    conserved(c, ws, answers)
    return answers


@test
def sigterm_to_svc_realtime_finishes_its_calls(c):
    # Done once its calls are answered, not at the drain limit.
    answers = sigterm_during(c, c.stack.procs["svc-realtime"], None, 10, 3000, 5)
    eq([a.status for a in answers], [200] * 10, "statuses")
    c.stack.start_service("svc-realtime")
    c.stack.wait_healthy()


@test
def sigterm_to_gateway_finishes_live_calls(c):
    port, victim = gateway(c)
    answers = sigterm_during(c, victim, port, 20, 3000, 10)
    eq([a.status for a in answers], [200] * 20, "statuses")


@test
def calls_past_the_drain_limit_are_refunded(c):
    port, victim = gateway(c, {"SEO_DRAIN_MS": "1000"})
    answers = sigterm_during(c, victim, port, 20, 8000, 6)
    eq({(a.status, a.json()["code"]) for a in answers}, {(503, "service_unavailable")},
       "answers past the drain limit")


@test
def a_second_signal_stops_at_once_and_cleanly(c):
    """The operator's way out of a long drain: calls still open fail (their
    refunds are logged as failed, for svc-account's reconciliation), and
    the gateway frees everything in order without a sanitizer report."""
    ws = c.stack.workspace(credits=CREDITS)
    port, victim = gateway(c)
    answers, took = live_calls(c, port, ws["api_key"], 5, 8000, victim, signals=2)
    clean_exit(c, victim)
    check(took < 3, "the gateway took %.1f s to stop" % took)
    check(all(isinstance(a, Exception) or a.status == 503 for a in answers),
          "no call answered as a success", answers)


if __name__ == "__main__":
    sys.exit(h.run(setup, teardown))

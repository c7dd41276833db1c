"""Periodic jobs run by hand, as ../shared/CONTRACT.md defines
`seoctl job run NAME [--at TIME]`: retention at an instant set with --at
(expired page-performance results, old daily counters, old delivered mail),
reconcile (debits left open past their settle time and the grace),
two seoctl processes competing for one job at the same instant (one does the
work, the other counts 0), and unknown names refused."""

import json
import os
import subprocess
import sys

sys.path.insert(0, os.path.dirname(__file__))
import harness as h  # noqa: E402
from harness import check, eq, test  # noqa: E402

AT = "2026-12-07T07:00:00Z"
T = 1796626800000  # AT in Unix ms
HOUR = 3600 * 1000
DAY = 24 * HOUR


class Ctx:
    def __init__(self):
        self.db = h.Database("jobs")
        self.env = dict(os.environ)
        self.env.update({
            "SEO_PG_URL": self.db.url,
            "SEO_MIGRATIONS_DIR": os.path.join(h.SOURCE_DIR, "svc-account", "migrations"),
            "SEO_REALTIME_MIGRATIONS_DIR": os.path.join(h.SOURCE_DIR, "svc-realtime",
                                                        "migrations"),
            "SEO_AGENT_MIGRATIONS_DIR": os.path.join(h.SOURCE_DIR, "svc-agent", "migrations"),
        })
        self.seoctl = os.path.join(h.BIN, "seoctl")
        if not os.path.exists(self.seoctl):
            self.db.close()
            raise h.Skip("seoctl is not built")

    def start(self, *args):
        return subprocess.Popen([self.seoctl] + list(args), env=self.env,
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)

    def run(self, *args):
        p = self.start(*args)
        out, err = p.communicate(timeout=60)
        return p.returncode, out, err

    def job(self, name, at=AT):
        rc, out, err = self.run("job", "run", name, "--at", at)
        eq(rc, 0, "seoctl job run %s: %s" % (name, err))
        return json.loads(out)

    def count(self, sql):
        return int(self.db.query(sql))


def setup():
    c = Ctx()
    rc, _, err = c.run("migrate")
    eq(rc, 0, "seoctl migrate: %s" % err)
    # the first run applies svc-realtime's migrations too, and finds nothing
    eq(c.job("retention"), {"job": "retention", "at": AT, "done": 0}, "empty run")
    return c


def teardown(c):
    c.db.close()


@test
def retention_at_a_set_instant(c):
    c.db.query(
        "INSERT INTO rt_psi_cache (url, strategy, result, cached_at) VALUES "
        "('https://old.test/', 'mobile', '{}', %d), "
        "('https://edge.test/', 'mobile', '{}', %d), "
        "('https://fresh.test/', 'mobile', '{}', %d);"
        "INSERT INTO rt_psi_user_calls (day, user_id, calls) VALUES "
        "('2026-11-29', 'usr_a', 1), ('2026-11-30', 'usr_a', 1), ('2026-12-07', 'usr_a', 3);"
        "INSERT INTO rt_psi_attempts (day, attempts) VALUES "
        "('2026-11-01', 5), ('2026-12-07', 1);"
        "INSERT INTO outbox (to_addr, subject, body, created_at, next_attempt_at, sent_at) "
        "VALUES ('a@x.test', 's', 'b', %d, %d, %d), ('b@x.test', 's', 'b', %d, %d, %d), "
        "('c@x.test', 's', 'b', %d, %d, NULL)"
        % (T - 25 * HOUR, T - DAY, T - HOUR,
           T - 31 * DAY, T - 31 * DAY, T - 31 * DAY,
           T - 29 * DAY, T - 29 * DAY, T - 29 * DAY,
           T - 90 * DAY, T - 90 * DAY))
    # an hour before: the old result (24 h old then), the counters of days
    # before 11-30, the mail sent 31 days before; unsent mail stays
    eq(c.job("retention", "2026-12-07T06:00:00Z")["done"], 4, "done an hour before")
    # at the instant the edge result is 24 h old too
    eq(c.job("retention")["done"], 1, "done at the instant")
    eq(c.db.query("SELECT string_agg(url, ',' ORDER BY url) FROM rt_psi_cache"),
       "https://fresh.test/", "cache left")
    eq(c.db.query("SELECT string_agg(day::text, ',' ORDER BY day) FROM rt_psi_user_calls"),
       "2026-11-30,2026-12-07", "calls left")
    eq(c.db.query("SELECT string_agg(day::text, ',' ORDER BY day) FROM rt_psi_attempts"),
       "2026-12-07", "attempts left")
    eq(c.db.query("SELECT string_agg(to_addr, ',' ORDER BY to_addr) FROM outbox"),
       "b@x.test,c@x.test", "mail left")
    eq(c.job("retention")["done"], 0, "a second run")


@test
def a_job_run_once_across_two_processes(c):
    rows = 20000
    c.db.query("INSERT INTO rt_psi_cache (url, strategy, result, cached_at) "
               "SELECT 'https://r' || i || '.test/', 'desktop', '{}', %d "
               "FROM generate_series(1, %d) AS i" % (T - 2 * DAY, rows))
    procs = [c.start("job", "run", "retention", "--at", AT) for _ in range(2)]
    outs = []
    for p in procs:
        out, err = p.communicate(timeout=60)
        eq(p.returncode, 0, "seoctl: %s" % err)
        outs.append(json.loads(out))
    for o in outs:
        eq((o["job"], o["at"]), ("retention", AT), "answer")
    eq(sorted(o["done"] for o in outs), [0, rows], "work done")
    eq(c.count("SELECT count(*) FROM rt_psi_cache WHERE strategy = 'desktop'"), 0,
       "rows left")


@test
def reconcile_refunds_debits_left_open(c):
    # An open debit (a key, no outcome) whose settle time is a day before
    # AT, one inside the grace, and one settled: only the first comes back.
    c.db.query("INSERT INTO workspaces (id, name, balance, created_at) "
               "VALUES ('ws_rc', 'rc', 10, 0);"
               "INSERT INTO ledger (workspace_id, delta, reason, created_at) "
               "VALUES ('ws_rc', 19, 'grant', 0), ('ws_rc', -5, 'charge', 0), "
               "('ws_rc', -3, 'charge', 0), ('ws_rc', -1, 'charge', 0);"
               "INSERT INTO usage (id, workspace_id, endpoint, charged, credits_used, "
               "request_id, settle_by, outcome, created_at) VALUES "
               "('chg_rc_old', 'ws_rc', 'backlinks', 5, 5, 'rq-old', %d, NULL, 0), "
               "('chg_rc_new', 'ws_rc', 'backlinks', 3, 3, 'rq-new', %d, NULL, 0), "
               "('chg_rc_done', 'ws_rc', 'backlinks', 1, 1, 'rq-done', %d, 'earned', 0)"
               % (T - DAY, T - 60000, T - DAY))
    eq(c.job("reconcile"), {"job": "reconcile", "at": AT, "done": 1})
    eq(c.count("SELECT balance FROM workspaces WHERE id = 'ws_rc'"), 15, "refunded")
    eq(c.count("SELECT sum(delta) FROM ledger WHERE workspace_id = 'ws_rc'"), 15, "ledger")
    eq(c.job("reconcile"), {"job": "reconcile", "at": AT, "done": 0}, "idempotent")


@test
def unknown_names_and_times(c):
    for name in ("nope", "Freeze", "freeze "):
        rc, out, err = c.run("job", "run", name)
        check(rc != 0, "exit status of %s" % name, rc)
        eq(out, "", "stdout of %s" % name)
        eq(json.loads(err)["error"], "unknown_job", "error of %s" % name)
    # "freeze" (client-report weeks) is known, and finds nothing here
    eq(c.job("freeze"), {"job": "freeze", "at": AT, "done": 0}, "freeze")
    # so are the proposals' "expire" and "indexnow-retry"
    for name in ("expire", "indexnow-retry"):
        eq(c.job(name), {"job": name, "at": AT, "done": 0}, name)
    rc, out, err = c.run("job", "run", "retention", "--at", "2026-12-07")
    check(rc != 0, "exit status of a day without a time", rc)
    eq(json.loads(err)["error"], "invalid_parameter", "error of a bad time")


if __name__ == "__main__":
    sys.exit(h.run(setup, teardown))

"""GET /v1/client-report through the gateway (the specification's Client
report, Client report week and Events): the input rules, other workspaces'
websites, a new website's empty report, the 28-day windows, client-visible
events only and oldest first, notes and task summaries private until shared
(`seoctl activity share`, for notes and summaries written through their
routes too), at most 500 events, the freeze job at instants
set with `seoctl job run freeze --at` (saved weeks never change, weeks
without events stay live), and the retention of saved weeks.

Events are written as the other parts of svc-agent write them: rows of
agent_activity (visible or not, a verb, params), and by those parts
themselves (an IndexNow submission, against a local HTTPS site hosting the
key file and a fake IndexNow upstream)."""

import calendar
import datetime
import http.client
import json
import os
import secrets
import ssl
import sys
import tempfile
import urllib.parse

sys.path.insert(0, os.path.dirname(__file__))
import harness as h  # noqa: E402
from harness import check, eq, expect_error, test  # noqa: E402

DAY = 86400 * 1000
HOUR = 3600 * 1000
KPI_KEYS = ["clicks_28d", "clicks_prev_28d", "queries_down", "queries_up", "window_end"]
EVENT_KEYS = ["agent_text", "id", "occurred_at", "params", "verb"]


def ms(day, hour=0, minute=0, second=0):
    """Unix ms of `day` (YYYY-MM-DD) at the time given, UTC."""
    d = datetime.date.fromisoformat(day)
    return calendar.timegm((d.year, d.month, d.day, hour, minute, second)) * 1000


def date(t):
    return datetime.datetime.fromtimestamp(t // 1000, datetime.timezone.utc).date().isoformat()


def json_error(text):
    return json.loads(text)["error"]


def this_monday():
    today = datetime.datetime.now(datetime.timezone.utc).date()
    return today - datetime.timedelta(days=today.weekday())


# The HTTPS test site's host, where IndexNow key files are put.
INOW_HOST = "report.test"


class Ctx:
    def __init__(self):
        cert, key = h.tls_cert(tempfile.mkdtemp(prefix="seo-it-report-"), [INOW_HOST])
        self.tls = h.Fake("site_server.py", "--tls", cert, key)
        self.upstream = h.Fake("fake_indexnow.py")
        try:
            self.s = h.Stack("agent_report", env={
                "SEO_FETCH_ALLOW_NETS": "127.0.0.0/8",
                "SEO_FETCH_CONNECT_TO": "%s:443:127.0.0.1:%d" % (INOW_HOST, self.tls.port),
                "SEO_FETCH_CA_FILE": cert,
                "SEO_INDEXNOW_URL": self.upstream.url + "/indexnow",
            })
        except BaseException:
            self.tls.close()
            self.upstream.close()
            raise

    def close(self):
        problem = self.s.close()
        self.tls.close()
        self.upstream.close()
        return problem

    def host_file(self, host, path, body):
        """Puts `body` at https://host/path on the test site."""
        conn = http.client.HTTPSConnection("127.0.0.1", self.tls.port, timeout=10,
                                           context=ssl._create_unverified_context())
        try:
            conn.request("PUT", "/_hosted?" + urllib.parse.urlencode(
                {"host": host, "path": path}), body=body.encode())
            eq(conn.getresponse().status, 200, "hosted")
        finally:
            conn.close()

    def logs(self):
        return self.s.logs()

    def workspace(self, sites=1, hosts=None):
        """A new workspace (its own key: 60 requests a minute each) and
        `sites` websites of it (on `hosts` when given)."""
        w = self.s.workspace(credits=50)
        hosts = hosts or ["site%d-%s.test" % (i, secrets.token_hex(4)) for i in range(sites)]
        w["sites"] = [self.s.seoctl("website", "add", "--workspace", w["workspace_id"],
                                    "--host", host)["site_id"] for host in hosts]
        return w

    def report(self, key, query):
        return self.s.get("/v1/client-report?" + query, key=key)

    def ok(self, key, site, week=None):
        r = self.report(key, "site_id=%s%s" % (site, "&week_start=" + week if week is not None else ""))
        eq(r.status, 200, "report of %s %s: %r" % (site, week, r))
        return r.json()

    def event(self, w, site, verb, at, params="{}", text=None, visible=True):
        """An activity row as the parts of svc-agent write it; its id."""
        eid = "act_" + secrets.token_urlsafe(18)[:24]
        self.s.db.query(
            "INSERT INTO agent_activity (id, workspace_id, site_id, verb, params, "
            "agent_text, visible, occurred_at) VALUES ('%s', '%s', %s, '%s', '%s', %s, %s, %d)"
            % (eid, w["workspace_id"], "'%s'" % site if site else "NULL", verb, params,
               "'%s'" % text if text is not None else "NULL",
               "true" if visible else "false", at))
        return eid

    def freeze(self, at):
        return self.s.seoctl("job", "run", "freeze", "--at", at)["done"]

    def share(self, eid, expect_ok=True):
        return self.s.seoctl("activity", "share", "--id", eid, expect_ok=expect_ok)


def setup():
    c = Ctx()
    # svc-agent's tables, as its first connection would make them
    c.s.seoctl("job", "run", "retention", "--at", "2020-01-06T00:00:00Z")
    return c


def teardown(c):
    return c.close()


@test
def new_website_valid_empty_report(c):
    w = c.workspace()
    body = c.ok(w["api_key"], w["sites"][0])
    monday = this_monday()
    eq(sorted(body), ["frozen", "report"], "fields")
    eq(body["frozen"], False, "frozen")
    eq(sorted(body["report"]), ["events", "kpis", "week_start"], "report fields")
    eq(body["report"]["week_start"], monday.isoformat(), "the current week by default")
    eq(body["report"]["events"], [], "events")
    eq(body["report"]["kpis"], {
        "clicks_28d": None, "clicks_prev_28d": None, "queries_up": 0, "queries_down": 0,
        "window_end": (monday + datetime.timedelta(days=3)).isoformat()}, "kpis")
    # the current Monday given explicitly is the same week
    eq(c.ok(w["api_key"], w["sites"][0], monday.isoformat()), body, "explicit week")
    # free: nothing charged, no usage row
    eq(c.s.get("/v1/credits", key=w["api_key"]).json()["credits"], 50, "credits")
    usage = c.s.get("/v1/usage", key=w["api_key"]).json()
    eq([u for u in usage["usage"] if u["endpoint"] == "client-report"], [], "usage rows")


@test
def input_rules(c):
    w = c.workspace()
    key, site = w["api_key"], w["sites"][0]
    for query in ("", "site_id=", "week_start=2026-11-23"):
        expect_error(c.report(key, query), 400, "invalid_client_report_input")
    next_monday = this_monday() + datetime.timedelta(days=7)
    for week in ("2026-11-24",              # a Tuesday
                 "2026-11-22",              # a Sunday
                 "2026-02-30", "2026-13-02", "2026-1-05", "26-11-23",
                 "2026/11/23", "2026-11-23T00:00:00Z", "monday",
                 next_monday.isoformat(),   # the future
                 "2126-11-25"):           # a Monday, a century on
        expect_error(c.report(key, "site_id=%s&week_start=%s" % (site, week)), 400,
                     "invalid_client_report_input")
    # the input is refused before the website is looked up
    expect_error(c.report(key, "site_id=nope&week_start=2026-11-24"), 400,
                 "invalid_client_report_input")
    # empty is absent, as for every query parameter: the current week
    eq(c.ok(key, site, "")["report"]["week_start"], this_monday().isoformat(), "empty")
    for week in ("2026-03-02", "2024-02-26", "2019-12-30"):
        eq(c.ok(key, site, week)["report"]["week_start"], week, "a past Monday")
    check(c.report(None, "site_id=" + site).status == 401, "no key")


@test
def other_workspace_is_missing(c):
    a, b = c.workspace(), c.workspace()
    other = expect_error(c.report(a["api_key"], "site_id=" + b["sites"][0]), 404,
                         "site_not_found")
    missing = expect_error(c.report(a["api_key"], "site_id=site_missing"), 404,
                           "site_not_found")
    eq(other["message"].replace(b["sites"][0], "X"), missing["message"].replace("site_missing", "X"),
       "the same answer")
    # b's own keys read it, a client's too: the report is for clients
    eq(c.ok(b["api_key"], b["sites"][0], "2026-03-02")["frozen"], False, "owner's read")
    client = c.s.seoctl("user", "add", "--workspace", b["workspace_id"], "--email",
                        "client-%s@example.com" % secrets.token_hex(4), "--role", "client")
    eq(c.ok(client["api_key"], b["sites"][0], "2026-03-02")["frozen"], False, "client's read")


@test
def windows_end_three_days_before_the_weeks_last_day(c):
    w = c.workspace()
    for week, end in (("2026-10-05", "2026-10-08"), ("2024-02-26", "2024-02-29"),
                      ("2025-12-29", "2026-01-01")):
        eq(c.ok(w["api_key"], w["sites"][0], week)["report"]["kpis"]["window_end"], end, week)


@test
def client_visible_events_only_oldest_first(c):
    h.clear_of_the_hourly_job(0)  # freeze saves past weeks
    w = c.workspace(sites=2)
    key, site, other = w["api_key"], w["sites"][0], w["sites"][1]
    wk = "2026-09-07"
    t = ms(wk)
    shown = [
        c.event(w, site, "outreach.sent_daily", t + 2 * DAY, '{"count": 4, "date": "2026-09-09"}'),
        c.event(w, site, "indexnow.submitted", t, '{"url_count": 3, "host": "a.test"}'),
        c.event(w, site, "rank.moves_detected", t + 3 * DAY, '{"up": 3, "down": 1, "date": "x"}'),
        c.event(w, site, "rank.moves_detected", t + 4 * DAY, '{"up": 2, "down": "?"}'),
    ]
    note = c.event(w, site, "agent.note", t + DAY, text="drafted the outreach", visible=False)
    summary = c.event(w, site, "task.completed", t + 5 * DAY, text="fixed titles", visible=False)
    # internal activity, visible or not, never shows
    internal = [c.event(w, site, verb, t + DAY, visible=vis) for verb, vis in (
        ("proposal.approved", False), ("policy.changed", True), ("credits.charged", True),
        ("calls.attributed", True), ("team.member_added", True), ("client.invited", False))]
    # other websites, other weeks, the workspace without a website
    c.event(w, other, "indexnow.submitted", t + DAY, '{"url_count": 1, "host": "b.test"}')
    c.event(w, site, "indexnow.submitted", t - 1, '{"url_count": 1, "host": "a.test"}')
    c.event(w, site, "indexnow.submitted", t + 7 * DAY, '{"url_count": 1, "host": "a.test"}')
    c.event(w, None, "agent.note", t + DAY, text="workspace-wide")

    body = c.ok(key, site, wk)
    events = body["report"]["events"]
    eq([e["id"] for e in events], [shown[1], shown[0], shown[2], shown[3]], "oldest first")
    for e in events:
        eq(sorted(e), EVENT_KEYS, "event fields")
        eq(e["agent_text"], None, "no text")
    eq(events[0], {"id": shown[1], "verb": "indexnow.submitted", "occurred_at": t,
                   "params": {"url_count": 3, "host": "a.test"}, "agent_text": None}, "event")
    eq(events[1]["params"], {"count": 4, "date": "2026-09-09"}, "outreach params")
    kpis = body["report"]["kpis"]
    eq((kpis["queries_up"], kpis["queries_down"]), (5, 1), "moves of the week")
    eq(kpis["clicks_28d"], None, "no search data")

    # private until shared: the note, then the summary
    eq(c.share(note), {"id": note, "verb": "agent.note", "shared": True}, "share")
    eq(c.share(note), {"id": note, "verb": "agent.note", "shared": True}, "share again")
    events = c.ok(key, site, wk)["report"]["events"]
    eq([e["id"] for e in events], [shown[1], note, shown[0], shown[2], shown[3]], "note shown")
    eq((events[1]["verb"], events[1]["agent_text"], events[1]["params"]),
       ("agent.note", "drafted the outreach", {}), "the note")
    c.share(summary)
    last = c.ok(key, site, wk)["report"]["events"][-1]
    eq((last["id"], last["verb"], last["agent_text"]), (summary, "task.completed", "fixed titles"),
       "the summary")

    # nothing else can be shared
    for eid, code in ((internal[0], "not_shareable"), (shown[1], "not_shareable"),
                      ("act_nope", "activity_not_found")):
        r = c.share(eid, expect_ok=False)
        check(r.returncode != 0, "share %s refused" % eid, r.stdout)
        eq(json_error(r.stderr), code, "error of %s" % eid)
    eq(len(c.ok(key, site, wk)["report"]["events"]), 6, "still six events")


@test
def indexnow_submissions_reach_the_report(c):
    w = c.workspace(hosts=[INOW_HOST])
    key, site = w["api_key"], w["sites"][0]
    r = c.s.request("POST", "/v1/indexnow/key?domain=" + INOW_HOST, key=key)
    eq(r.status, 201, "key: %r" % r)
    c.host_file(INOW_HOST, "/%s.txt" % r.json()["key"], r.json()["key"])
    r = c.s.request("POST", "/v1/indexnow", key=key, body={
        "urls": ["https://%s/a" % INOW_HOST, "https://%s/b" % INOW_HOST]})
    eq(r.status, 200, "submission: %r" % r)
    events = c.ok(key, site)["report"]["events"]
    eq([(e["verb"], e["params"], e["agent_text"]) for e in events],
       [("indexnow.submitted", {"url_count": 2, "host": INOW_HOST}, None)], "the event")
    check(events[0]["id"].startswith("act_"), "an act_ id", events[0]["id"])


@test
def notes_and_summaries_private_until_shared(c):
    # written through their routes: POST /v1/activity, a task completed
    w = c.workspace()
    key, site = w["api_key"], w["sites"][0]
    r = c.s.request("POST", "/v1/activity", key=key,
                    body={"summary": "checked the titles", "site_id": site})
    eq(r.status, 200, "note: %r" % r)
    note = r.json()["id"]
    r = c.s.request("POST", "/v1/activity", key=key, body={"summary": "workspace-wide"})
    eq(r.status, 200, "note without a website: %r" % r)
    loose = r.json()["id"]
    task = c.s.seoctl("task", "create", "--workspace", w["workspace_id"], "--site", site,
                      "--prompt", "fix the titles")["task_id"]
    r = c.s.request("POST", "/v1/agent-tasks/%s/complete" % task, key=key,
                    body={"summary": "fixed 3 titles"})
    eq(r.status, 200, "complete: %r" % r)
    eq(c.ok(key, site)["report"]["events"], [], "private")

    eq(c.share(note), {"id": note, "verb": "agent.note", "shared": True}, "note shared")
    events = c.ok(key, site)["report"]["events"]
    eq([(e["id"], e["verb"], e["agent_text"], e["params"]) for e in events],
       [(note, "agent.note", "checked the titles", {})], "the note")
    # a task's summary is shared by the task's id
    shared = c.share(task)
    eq((shared["verb"], shared["shared"]), ("task.completed", True), "summary shared")
    check(shared["id"].startswith("act_"), "the activity's id", shared)
    events = c.ok(key, site)["report"]["events"]
    eq([(e["id"], e["verb"], e["agent_text"]) for e in events],
       [(note, "agent.note", "checked the titles"),
        (shared["id"], "task.completed", "fixed 3 titles")], "note and summary")
    # shared or not, a note without a website is in no website's report
    c.share(loose)
    eq(len(c.ok(key, site)["report"]["events"]), 2, "the workspace-wide note")
    # an open task has no summary to share
    open_task = c.s.seoctl("task", "create", "--workspace", w["workspace_id"], "--site", site,
                           "--prompt", "later")["task_id"]
    eq(json_error(c.share(open_task, expect_ok=False).stderr), "activity_not_found",
       "an open task")


@test
def at_most_500_events(c):
    h.clear_of_the_hourly_job(0)  # freeze saves past weeks
    w = c.workspace()
    key, site = w["api_key"], w["sites"][0]
    wk = "2026-09-14"
    t = ms(wk)
    # 600 events a minute apart, written newest first
    c.s.db.query(
        "INSERT INTO agent_activity (id, workspace_id, site_id, verb, params, visible, "
        "occurred_at) SELECT 'act_cap' || lpad(i::text, 4, '0'), '%s', '%s', "
        "'indexnow.submitted', jsonb_build_object('url_count', i, 'host', 'a.test'), true, "
        "%d + i * 60000 FROM generate_series(600, 1, -1) AS i" % (w["workspace_id"], site, t))
    live = c.ok(key, site, wk)
    events = live["report"]["events"]
    eq(len(events), 500, "capped")
    eq([e["occurred_at"] for e in events], [t + i * 60000 for i in range(1, 501)],
       "the oldest 500, oldest first")
    eq(events[0]["params"], {"url_count": 1, "host": "a.test"}, "first")
    eq(live["frozen"], False, "live")
    c.freeze("2026-09-21T07:00:00Z")
    saved = c.ok(key, site, wk)
    eq(saved["frozen"], True, "saved")
    eq(saved["report"], live["report"], "the saved week as it read")


@test
def freeze_saves_past_weeks_once(c):
    w = c.workspace(sites=3)
    key, site, quiet, private = w["api_key"], w["sites"][0], w["sites"][1], w["sites"][2]
    # weeks before every other test's, so that each run's count is exact
    wk, nxt = "2025-03-03", "2025-03-10"
    t = ms(wk)
    first = c.event(w, site, "indexnow.submitted", t + DAY, '{"url_count": 2, "host": "f.test"}')
    c.event(w, site, "outreach.sent_daily", ms(nxt) - 1, '{"count": 1, "date": "2025-03-09"}')
    c.event(w, site, "rank.moves_detected", t + 2 * DAY, '{"up": 4, "down": 2, "date": "x"}')
    note = c.event(w, private, "agent.note", t + DAY, text="private", visible=False)
    before = c.ok(key, site, wk)
    eq((before["frozen"], len(before["report"]["events"])), (False, 3), "live before")

    # Monday 06:59:59 after the week: too early
    eq(c.freeze("2025-03-10T06:59:59Z"), 0, "before 07:00")
    eq(c.ok(key, site, wk)["frozen"], False, "not yet")
    # from 07:00 the week is saved: one week of one website
    eq(c.freeze("2025-03-10T07:00:00Z"), 1, "at 07:00")
    saved = c.ok(key, site, wk)
    eq(saved, dict(before, frozen=True), "saved as it read")
    eq(saved["report"]["kpis"]["queries_up"], 4, "saved moves")
    eq(c.freeze("2025-03-10T08:00:00Z"), 0, "the next hour finds nothing")

    # later events of the saved week change nothing
    c.event(w, site, "indexnow.submitted", t + 3 * DAY, '{"url_count": 9, "host": "f.test"}')
    late_note = c.event(w, site, "agent.note", t + 4 * DAY, text="late", visible=False)
    c.share(late_note)
    c.s.db.query("UPDATE agent_activity SET params = '{\"url_count\": 99}' WHERE id = '%s'"
                 % first)
    eq(c.ok(key, site, wk), saved, "a saved week never changes")
    eq(c.freeze("2025-03-17T07:00:00Z"), 0, "saved once")
    eq(c.ok(key, site, wk), saved, "still")

    # a week without client-visible events stays live: none, or private only
    for s in (quiet, private):
        eq(c.ok(key, s, wk)["frozen"], False, "no events: live")
    eq(c.ok(key, site, nxt)["frozen"], False, "the next week: live")
    # a note shared later makes its week a week with activity: saved next run
    c.share(note)
    eq(c.freeze("2025-03-17T08:00:00Z"), 1, "the shared note's week")
    got = c.ok(key, private, wk)
    eq((got["frozen"], [e["id"] for e in got["report"]["events"]]), (True, [note]), "saved")
    eq(int(c.s.db.query("SELECT count(*) FROM agent_report_weeks WHERE site_id IN "
                        "('%s', '%s', '%s')" % (site, quiet, private))), 2, "rows")


@test
def the_current_week_stays_live(c):
    w = c.workspace()
    now = int(datetime.datetime.now(datetime.timezone.utc).timestamp() * 1000)
    at = max(now - 1000, ms(this_monday().isoformat()))
    c.event(w, w["sites"][0], "indexnow.submitted", at, '{"url_count": 1, "host": "n.test"}')
    c.s.seoctl("job", "run", "freeze")
    body = c.ok(w["api_key"], w["sites"][0])
    eq((body["frozen"], len(body["report"]["events"])), (False, 1), "live")


@test
def saved_weeks_kept_400_days(c):
    w = c.workspace()
    key, site = w["api_key"], w["sites"][0]
    wk = "2025-04-07"
    c.event(w, site, "indexnow.submitted", ms(wk) + DAY, '{"url_count": 1, "host": "r.test"}')
    eq(c.freeze("2025-04-14T07:00:00Z"), 1, "saved")
    end = ms("2025-04-14") + 400 * DAY
    kept = "SELECT count(*) FROM agent_report_weeks WHERE site_id = '%s'" % site
    c.s.seoctl("job", "run", "retention", "--at", stamp(end - 1000))
    eq(int(c.s.db.query(kept)), 1, "kept until 400 days after its end")
    eq(c.ok(key, site, wk)["frozen"], True, "still saved")
    c.s.seoctl("job", "run", "retention", "--at", stamp(end))
    eq(int(c.s.db.query(kept)), 0, "deleted")
    eq(int(c.s.db.query("SELECT count(*) FROM agent_report_week_events WHERE site_id = '%s'"
                        % site)), 0, "its events")
    gone = c.ok(key, site, wk)
    eq((gone["frozen"], gone["report"]["events"]), (False, []), "a live empty week")
    # a freeze at that instant does not save it again
    eq(c.freeze(stamp(end)), 0, "not saved again")


def stamp(t):
    return datetime.datetime.fromtimestamp(t // 1000, datetime.timezone.utc).strftime(
        "%Y-%m-%dT%H:%M:%SZ")


if __name__ == "__main__":
    sys.exit(h.run(setup, teardown))

"""Agent tasks through the real gateway, svc-agent, svc-account and
PostgreSQL: `seoctl task create` (and `task cancel`), GET /v1/agent-tasks
with its filters, order and limit, claim and complete by the state table,
summary cleaning, expiry by the `expire` job at a set instant, the private
task.completed event, and no charge."""

import datetime
import json
import os
import sys
import time

sys.path.insert(0, os.path.dirname(__file__))
import harness as h  # noqa: E402
from harness import check, eq, expect_error, test  # noqa: E402

DAY_MS = 86400 * 1000
TASK_FIELDS = {"id", "site_id", "site_host", "prompt", "status", "origin",
               "created_at", "expires_at", "claimed_at", "completed_at",
               "result_summary"}


class Ctx:
    pass


def setup():
    c = Ctx()
    c.stack = h.Stack("agent_tasks", env={"SEO_RATE_LIMIT_PER_MIN": "0"})
    s = c.stack
    c.logs = s.logs
    c.ws = s.workspace(credits=500)
    c.wid = c.ws["workspace_id"]
    c.key = c.ws["api_key"]
    # a second key of the workspace: another agent
    c.key2 = s.seoctl("user", "add", "--workspace", c.wid, "--email",
                      "agent2@example.com", "--role", "member")["api_key"]
    c.site = s.seoctl("website", "add", "--workspace", c.wid, "--host",
                      "shop.example.com")
    c.site2 = s.seoctl("website", "add", "--workspace", c.wid, "--host",
                       "blog.example.com")
    c.other = s.workspace(credits=10)
    c.other_site = s.seoctl("website", "add", "--workspace",
                            c.other["workspace_id"], "--host", "other.example.com")
    return c


def teardown(c):
    return c.stack.close()


def create(c, prompt="check the titles", site=None, origin=None, workspace=None):
    args = ["task", "create", "--workspace", workspace or c.wid, "--prompt", prompt]
    if site:
        args += ["--site", site]
    if origin:
        args += ["--origin", origin]
    out = c.stack.seoctl(*args)
    eq(set(out), {"task_id"}, "task create answer")
    check(out["task_id"].startswith("tsk_"), "task id", out)
    return out["task_id"]


def fresh_workspace(c):
    ws = c.stack.workspace(credits=10)
    return ws["workspace_id"], ws["api_key"]


def tasks(c, query="", key=None):
    r = c.stack.get("/v1/agent-tasks" + query, key=key or c.key)
    eq(r.status, 200, "list %s: %r" % (query, r))
    body = r.json()
    eq(set(body), {"tasks"}, "list body")
    return body["tasks"]


def ids(rows):
    return [t["id"] for t in rows]


def claim(c, tid, key=None):
    return c.stack.request("POST", "/v1/agent-tasks/%s/claim" % tid, key=key or c.key)


def complete(c, tid, summary="done", key=None, body=None, raw=None):
    if raw is not None:
        return c.stack.request("POST", "/v1/agent-tasks/%s/complete" % tid,
                               key=key or c.key, raw_body=raw,
                               headers={"Content-Type": "application/json"})
    return c.stack.request("POST", "/v1/agent-tasks/%s/complete" % tid,
                           key=key or c.key,
                           body=body if body is not None else {"summary": summary})


def db(c, sql):
    return c.stack.db.query(sql)


def iso(ms):
    return datetime.datetime.fromtimestamp(ms / 1000, datetime.timezone.utc) \
        .strftime("%Y-%m-%dT%H:%M:%SZ")


@test
def task_create_checks_its_input(c):
    s = c.stack
    tid = create(c, "audit \u200bthe\x07 blog\u2066", site=c.site2["site_id"],
                 origin="rankings_row")
    row = db(c, "SELECT prompt, origin, site_host, status FROM agent_tasks "
                "WHERE id = '%s'" % tid)
    eq(row, "audit the blog|rankings_row|blog.example.com|open", "stored task")
    cases = [
        (["--workspace", "ws_nope", "--prompt", "x"], "workspace_not_found"),
        (["--workspace", c.wid, "--prompt", "x", "--site", c.other_site["site_id"]],
         "site_not_found"),
        (["--workspace", c.wid, "--prompt", "x", "--origin", "email"], "invalid_parameter"),
        (["--workspace", c.wid, "--prompt", " \u200b\t"], "invalid_parameter"),
        (["--workspace", c.wid, "--prompt", "x" * 4001], "invalid_parameter"),
    ]
    for args, code in cases:
        out = s.seoctl("task", "create", *args, expect_ok=False)
        check(out.returncode != 0, "exit status", args)
        eq(json.loads(out.stderr)["error"], code, "error of %r" % args[-1][:20])
    out = s.seoctl("task", "create", "--workspace", c.wid, expect_ok=False)
    eq(out.returncode, 2, "--prompt is required")


@test
def list_shows_open_tasks_newest_first_with_every_field(c):
    wid, key = fresh_workspace(c)
    site = c.stack.seoctl("website", "add", "--workspace", wid, "--host", "a.example.org")
    before = int(time.time() * 1000)
    first = create(c, "first", workspace=wid)
    second = create(c, "second", site=site["site_id"], workspace=wid)
    after = int(time.time() * 1000)
    rows = tasks(c, key=key)
    eq(ids(rows), [second, first], "newest first")
    for t in rows:
        eq(set(t), TASK_FIELDS, "task fields")
        eq(t["status"], "open", "status")
        eq(t["origin"], "task_box", "default origin")
        check(before <= t["created_at"] <= after, "created_at", t)
        eq(t["expires_at"], t["created_at"] + 7 * DAY_MS, "expires a week later")
        for f in ("claimed_at", "completed_at", "result_summary"):
            eq(t[f], None, f)
    eq((rows[0]["site_id"], rows[0]["site_host"]), (site["site_id"], "a.example.org"),
       "website of the task")
    eq((rows[1]["site_id"], rows[1]["site_host"]), (None, None), "workspace-wide")
    eq(rows[0]["prompt"], "second", "prompt")
    # another workspace sees none of them
    eq(tasks(c, key=c.other["api_key"]), [], "other workspace")


@test
def list_filters_by_status_and_website(c):
    wid, key = fresh_workspace(c)
    site = c.stack.seoctl("website", "add", "--workspace", wid, "--host", "f.example.org")
    site_b = c.stack.seoctl("website", "add", "--workspace", wid, "--host", "g.example.org")
    t_open = create(c, "open one", site=site["site_id"], workspace=wid)
    t_claimed = create(c, "claimed one", workspace=wid)
    t_done = create(c, "done one", site=site["site_id"], workspace=wid)
    eq(claim(c, t_claimed, key=key).status, 200, "claim")
    eq(complete(c, t_done, key=key).status, 200, "complete")
    eq(ids(tasks(c, key=key)), [t_open], "default: open")
    eq(ids(tasks(c, "?status=open", key=key)), [t_open], "open")
    eq(ids(tasks(c, "?status=claimed", key=key)), [t_claimed], "claimed")
    eq(ids(tasks(c, "?status=all", key=key)), [t_done, t_claimed, t_open], "all")
    for other in ("done", "expired", "ALL", "x" * 300):
        eq(ids(tasks(c, "?status=" + other, key=key)), [t_open], "%s reads as open" % other)
    eq(ids(tasks(c, "?status=all&site_id=" + site["site_id"], key=key)),
       [t_done, t_open], "one website")
    eq(tasks(c, "?site_id=" + site_b["site_id"], key=key), [], "website without tasks")
    for bad in (c.other_site["site_id"], "site_nope"):
        expect_error(c.stack.get("/v1/agent-tasks?site_id=" + bad, key=key),
                     404, "site_not_found")


@test
def list_returns_at_most_50(c):
    wid, key = fresh_workspace(c)
    made = [create(c, "task %d" % i, workspace=wid) for i in range(53)]
    rows = tasks(c, "?status=all", key=key)
    eq(len(rows), 50, "at most 50")
    eq(ids(rows), list(reversed(made))[:50], "the 50 newest")


@test
def claim_follows_the_state_table(c):
    tid = create(c, "claim me")
    r = claim(c, tid)
    eq(r.status, 200, "claim: %r" % r)
    t = r.json()["task"]
    eq(set(r.json()), {"task"}, "claim body")
    eq((t["id"], t["status"]), (tid, "claimed"), "claimed")
    check(t["claimed_at"] is not None, "claimed_at", t)
    # again by the same key: a no-op returning the task
    again = claim(c, tid)
    eq(again.status, 200, "repeated claim")
    eq(again.json()["task"], t, "same task, claimed_at unchanged")
    # another key of the workspace
    expect_error(claim(c, tid, key=c.key2), 409, "task_not_claimable")
    expect_error(complete(c, tid, key=c.key2), 409, "task_not_claimable")
    # another workspace, unknown and malformed ids
    expect_error(claim(c, tid, key=c.other["api_key"]), 404, "task_not_found")
    for bad in ("tsk_nope", "nope", "%FF%FE", "tsk_" + "x" * 500):
        expect_error(claim(c, bad), 404, "task_not_found")
        expect_error(complete(c, bad), 404, "task_not_found")
    # done: nobody claims or completes it again
    eq(complete(c, tid).status, 200, "complete")
    for key in (c.key, c.key2):
        expect_error(claim(c, tid, key=key), 409, "task_not_claimable")
        expect_error(complete(c, tid, key=key), 409, "task_not_claimable")


@test
def concurrent_claims_have_one_winner(c):
    tid = create(c, "race")
    keys = [c.key, c.key2] * 5
    results = h.parallel(len(keys), lambda i: claim(c, tid, key=keys[i]))
    won = {keys[i] for i, r in enumerate(results) if r.status == 200}
    eq(len(won), 1, "one key holds the claim: %r" % results)
    for i, r in enumerate(results):
        if keys[i] in won:
            eq(r.status, 200, "the winner's repeats")
        else:
            expect_error(r, 409, "task_not_claimable")


@test
def complete_claims_an_open_task_and_records_the_summary(c):
    tid = create(c, "write it up", site=c.site["site_id"])
    before = int(time.time() * 1000)
    r = complete(c, tid, "Fixed \u200b3 titles\x1b[31m and\tthe\nmeta\u202e ")
    eq(r.status, 200, "complete: %r" % r)
    t = r.json()["task"]
    eq(t["status"], "done", "done")
    eq(t["result_summary"], "Fixed 3 titles[31m and the meta", "cleaned summary")
    check(t["completed_at"] >= before and t["claimed_at"] == t["completed_at"],
          "completing claims", t)
    # the claimed task of this key completes too
    tid2 = create(c, "second")
    eq(claim(c, tid2).status, 200, "claim")
    r = complete(c, tid2, "y" * 2500)
    eq(r.status, 200, "complete claimed")
    eq(r.json()["task"]["result_summary"], "y" * 2000, "cut at 2000 characters")
    eq(len(complete(c, create(c, "emoji"), "\U0001F600" * 2001).json()["task"]
           ["result_summary"]), 2000, "characters, not bytes")
    # the task.completed event: the summary, private until shared
    ev = db(c, "SELECT a.verb, a.site_id, a.agent_text, a.visible FROM agent_activity a "
               "JOIN agent_tasks t ON t.event_id = a.id WHERE t.id = '%s'" % tid)
    eq(ev, "task.completed|%s|Fixed 3 titles[31m and the meta|f" % c.site["site_id"],
       "private event")


@test
def complete_refuses_a_bad_summary(c):
    tid = create(c, "summaries")
    bodies = [{}, {"summary": ""}, {"summary": None}, {"summary": 5},
              {"summary": ["x"]}, {"summary": {"a": 1}}, {"summary": True},
              {"summary": " \u200b\u2060\x01 \n"}]
    for body in bodies:
        expect_error(complete(c, tid, body=body), 400, "invalid_task_summary")
    for raw in (b"", b"not json", b"[1]", b'"x"', b'{"summary": "a"',
                b'{"summary": "a\\u0000b"}'):
        expect_error(complete(c, tid, raw=raw), 400, "invalid_task_summary")
    # checked before the task: a bad summary on an unknown task is a 400
    expect_error(complete(c, "tsk_nope", body={}), 400, "invalid_task_summary")
    # nothing changed
    eq(db(c, "SELECT status FROM agent_tasks WHERE id = '%s'" % tid), "open", "still open")
    eq(complete(c, tid, body={"summary": "ok", "extra": 1}).status, 200,
       "unknown fields are ignored")


@test
def expire_job_at_a_set_instant(c):
    wid, key = fresh_workspace(c)
    tid = create(c, "will expire", workspace=wid)
    claimed = create(c, "claimed, will expire", workspace=wid)
    done = create(c, "done before", workspace=wid)
    eq(claim(c, claimed, key=key).status, 200, "claim")
    eq(complete(c, done, key=key).status, 200, "complete")
    created = tasks(c, "?status=all", key=key)[0]["created_at"]
    expires = created + 7 * DAY_MS
    out = c.stack.seoctl("job", "run", "expire", "--at", iso(expires - 60000))
    eq(db(c, "SELECT count(*) FROM agent_tasks WHERE workspace_id = '%s' "
             "AND status = 'expired'" % wid), "0", "nothing before the expiry")
    out = c.stack.seoctl("job", "run", "expire", "--at", iso(expires + 3600 * 1000))
    eq(out["job"], "expire", "job")
    check(out["done"] >= 2, "two expired", out)
    eq(db(c, "SELECT id, status FROM agent_tasks WHERE workspace_id = '%s' "
             "ORDER BY created_at, id" % wid),
       "%s|expired\n%s|expired\n%s|done" % (tid, claimed, done), "statuses")
    eq(ids(tasks(c, "?status=all", key=key)), [done], "expired tasks are not listed")
    for t in (tid, claimed, done):
        expect_error(claim(c, t, key=key), 409, "task_not_claimable")
        expect_error(complete(c, t, key=key), 409, "task_not_claimable")
    again = c.stack.seoctl("job", "run", "expire", "--at", iso(expires + 3600 * 1000))
    eq(db(c, "SELECT count(*) FROM agent_tasks WHERE workspace_id = '%s' "
             "AND status = 'expired'" % wid), "2", "idempotent")
    check(again["done"] >= 0, "ran again", again)


@test
def a_task_past_its_expiry_is_expired_before_the_job_runs(c):
    wid, key = fresh_workspace(c)
    tid = create(c, "stale", workspace=wid)
    mine = create(c, "stale claim", workspace=wid)
    eq(claim(c, mine, key=key).status, 200, "claim")
    db(c, "UPDATE agent_tasks SET expires_at = %d WHERE id IN ('%s', '%s')"
       % (int(time.time() * 1000) - 1000, tid, mine))
    eq(tasks(c, "?status=all", key=key), [], "not listed")
    for t in (tid, mine):
        body = expect_error(claim(c, t, key=key), 409, "task_not_claimable")
        check("expired" in body["message"], "says why", body)
        expect_error(complete(c, t, key=key), 409, "task_not_claimable")


@test
def cancel_by_a_person(c):
    tid = create(c, "never mind")
    claimed = create(c, "claimed, never mind")
    eq(claim(c, claimed).status, 200, "claim")
    for t in (tid, claimed):
        eq(c.stack.seoctl("task", "cancel", "--id", t),
           {"task_id": t, "status": "cancelled"}, "cancel")
        expect_error(claim(c, t), 409, "task_not_claimable")
        expect_error(complete(c, t), 409, "task_not_claimable")
    eq(c.stack.seoctl("task", "cancel", "--id", tid)["status"], "cancelled", "again")
    check(tid not in ids(tasks(c, "?status=all")), "not listed")
    done = create(c, "done")
    eq(complete(c, done).status, 200, "complete")
    out = c.stack.seoctl("task", "cancel", "--id", done, expect_ok=False)
    eq(json.loads(out.stderr)["error"], "task_not_claimable", "a done task stays done")
    out = c.stack.seoctl("task", "cancel", "--id", "tsk_nope", expect_ok=False)
    eq(json.loads(out.stderr)["error"], "task_not_found", "unknown")


@test
def retention_removes_tasks_ended_400_days_ago(c):
    old = create(c, "ancient")
    eq(complete(c, old).status, 200, "complete")
    recent = create(c, "recent")
    eq(complete(c, recent).status, 200, "complete")
    now = int(time.time() * 1000)
    db(c, "UPDATE agent_tasks SET ended_at = %d WHERE id = '%s'" % (now - 401 * DAY_MS, old))
    c.stack.seoctl("job", "run", "retention", "--at", iso(now))
    eq(db(c, "SELECT id FROM agent_tasks WHERE id IN ('%s', '%s')" % (old, recent)),
       recent, "only the old one removed")


@test
def task_routes_are_free(c):
    wid, key = fresh_workspace(c)
    credits = c.stack.get("/v1/credits", key=key).json()["credits"]
    tid = create(c, "free", workspace=wid)
    responses = [c.stack.get("/v1/agent-tasks", key=key), claim(c, tid, key=key),
                 complete(c, tid, key=key)]
    for r in responses:
        eq(r.status, 200, "call")
        check("credits_used" not in r.json(), "plain object", r)
    eq(c.stack.get("/v1/credits", key=key).json()["credits"], credits, "balance")
    eq(c.stack.get("/v1/usage", key=key).json()["total"], 0, "no usage rows")


if __name__ == "__main__":
    sys.exit(h.run(setup, teardown))

"""Activity notes (POST /v1/activity) through the real gateway, svc-agent,
svc-account and PostgreSQL: input rules and cleaning, the key's
unattributed calls of the last 24 hours attached from its usage rows and
never twice, client_request_id idempotent per key (also under 20
concurrent repeats), 200 notes per workspace and UTC day, the private
agent.note event, and no charge."""

import hashlib
import json
import os
import sys
import time

sys.path.insert(0, os.path.dirname(__file__))
import harness as h  # noqa: E402
from harness import check, eq, expect_error, test  # noqa: E402

HOUR_MS = 3600 * 1000
NOTE_FIELDS = {"id", "credits", "calls", "duplicate"}
# A billed call answered from the demo crawl: its credits_used is what it
# cost.
BILLED = "/v1/referring-domains?domain=no-such-domain-in-demo.com"


class Ctx:
    pass


def setup():
    c = Ctx()
    c.stack = h.Stack("agent_activity", env={"SEO_RATE_LIMIT_PER_MIN": "0"})
    s = c.stack
    c.logs = s.logs
    c.ws = s.workspace(credits=100000)
    c.wid = c.ws["workspace_id"]
    c.key = c.ws["api_key"]
    c.key2 = s.seoctl("user", "add", "--workspace", c.wid, "--email",
                      "agent2@example.com", "--role", "member")["api_key"]
    c.site = s.seoctl("website", "add", "--workspace", c.wid, "--host", "shop.example.com")
    c.other = s.workspace(credits=10)
    c.other_site = s.seoctl("website", "add", "--workspace", c.other["workspace_id"],
                            "--host", "other.example.com")
    return c


def teardown(c):
    return c.stack.close()


def note(c, body, key=None):
    return c.stack.request("POST", "/v1/activity", key=key or c.key, body=body)


def ok(c, body, key=None):
    r = note(c, body, key)
    eq(r.status, 200, "note %r: %r" % (body, r))
    n = r.json()
    eq(set(n), NOTE_FIELDS, "note fields")
    check(n["id"].startswith("act_"), "note id", n)
    return n


def billed(c, key=None, n=1):
    """n billed calls of `key`; returns what they cost."""
    total = 0
    for _ in range(n):
        r = c.stack.get(BILLED, key=key or c.key)
        eq(r.status, 200, "billed call: %r" % r)
        total += r.json()["credits_used"]
    check(total > 0, "the calls cost credits", total)
    return total


def db(c, sql):
    return c.stack.db.query(sql)


def key_id(key):
    return hashlib.sha256(key.encode()).hexdigest()


def fresh(c):
    """A workspace of its own, so that no other test's calls or notes count."""
    ws = c.stack.workspace(credits=100000)
    return ws["workspace_id"], ws["api_key"]


def clear_usage(c, key):
    """Attributes what the key has not yet to a note of its own, through
    POST /v1/activity itself: the next note starts from no call."""
    ok(c, {"summary": "the calls before this test"}, key)


@test
def a_note_takes_over_the_keys_calls_once(c):
    wid, key = fresh(c)
    cost = billed(c, key, 3)
    n = ok(c, {"summary": "researched backlinks"}, key)
    eq((n["credits"], n["calls"], n["duplicate"]), (cost, 3, False), "the three calls")
    eq(db(c, "SELECT count(*) FROM usage_all WHERE attributed_to = '%s'" % n["id"]), "3",
       "usage rows attributed")
    n2 = ok(c, {"summary": "nothing new"}, key)
    eq((n2["credits"], n2["calls"]), (0, 0), "nothing claimed twice")
    check(n2["id"] != n["id"], "a new note", n2)
    cost = billed(c, key, 1)
    eq((ok(c, {"summary": "one more"}, key)["credits"]), cost, "the next call")


@test
def only_the_calling_keys_calls(c):
    clear_usage(c, c.key)
    clear_usage(c, c.key2)
    cost2 = billed(c, c.key2, 2)
    n = ok(c, {"summary": "mine"}, c.key)
    eq((n["credits"], n["calls"]), (0, 0), "another key's calls are not mine")
    n2 = ok(c, {"summary": "theirs"}, c.key2)
    eq((n2["credits"], n2["calls"]), (cost2, 2), "the other key's own note")


@test
def only_calls_of_the_last_24_hours(c):
    wid, key = fresh(c)
    now = int(time.time() * 1000)
    kid = key_id(key)
    for i, (age, credits) in enumerate(((25 * HOUR_MS, 7), (23 * HOUR_MS, 5))):
        db(c, "INSERT INTO usage (id, workspace_id, key_id, endpoint, charged, "
              "credits_used, created_at) VALUES ('chg_old%d_%s', '%s', '%s', "
              "'backlinks', %d, %d, %d)" % (i, wid, wid, kid, credits, credits, now - age))
    n = ok(c, {"summary": "window"}, key)
    eq((n["credits"], n["calls"]), (5, 1), "the 23-hour-old call, not the 25-hour-old one")
    eq(db(c, "SELECT attributed_to IS NULL FROM usage_all WHERE id = 'chg_old0_%s'" % wid), "t",
       "the old row stays unattributed")


@test
def refunded_calls_count_as_calls_at_their_final_cost(c):
    wid, key = fresh(c)
    kid = key_id(key)
    now = int(time.time() * 1000)
    db(c, "INSERT INTO usage (id, workspace_id, key_id, endpoint, charged, credits_used, "
          "created_at) VALUES ('chg_ref_%s', '%s', '%s', 'sitemap', 2, 0, %d)"
       % (wid, wid, kid, now - 1000))
    n = ok(c, {"summary": "refunded"}, key)
    eq((n["credits"], n["calls"]), (0, 1), "a refunded call")


@test
def summary_is_cleaned_and_cut_to_500(c):
    n = ok(c, {"summary": "  Drafted\u200b\u2063 two\x1b\tposts\n\ufeff  "})
    eq(db(c, "SELECT verb, agent_text, visible, site_id IS NULL, params FROM agent_activity "
             "WHERE id = '%s'" % n["id"]),
       "agent.note|Drafted two posts|f|t|{}", "the private agent.note event")
    n = ok(c, {"summary": "\u00e9" * 2000})
    eq(db(c, "SELECT length(agent_text) FROM agent_activity WHERE id = '%s'" % n["id"]),
       "500", "first 500 characters kept")
    for body in ({}, {"summary": ""}, {"summary": None}, {"summary": 3},
                 {"summary": ["a"]}, {"summary": "\u200b \x01\n"},
                 {"summary": "x" * 2001}):
        expect_error(note(c, body), 400, "invalid_activity_input")


@test
def site_kind_hint_and_refs_are_checked(c):
    sid = c.site["site_id"]
    n = ok(c, {"summary": "site note", "site_id": sid, "kind_hint": "draft",
               "object_refs": [{"type": "campaign", "id": "cmp_1"},
                               {"type": "proposal", "id": "prp_x"},
                               {"type": "task", "id": "tsk_y"},
                               {"type": "task", "id": "tsk_z"},
                               {"type": "task", "id": "t-5_A"}]})
    eq(db(c, "SELECT a.site_id, n.kind_hint FROM agent_activity a JOIN agent_notes n "
             "USING (id) WHERE id = '%s'" % n["id"]), "%s|draft" % sid, "stored")
    for hint in ("research", "analysis"):
        ok(c, {"summary": "hint", "kind_hint": hint})
    ok(c, {"summary": "nulls", "site_id": None, "kind_hint": None, "object_refs": None,
           "client_request_id": None})
    ok(c, {"summary": "no refs", "object_refs": []})
    ref = {"type": "task", "id": "tsk_1"}
    bad = [
        {"site_id": c.other_site["site_id"]}, {"site_id": "site_nope"}, {"site_id": ""},
        {"site_id": 5},
        {"kind_hint": "essay"}, {"kind_hint": ""}, {"kind_hint": 1},
        {"object_refs": [ref] * 6}, {"object_refs": ref}, {"object_refs": "tsk_1"},
        {"object_refs": [{"type": "user", "id": "u"}]},
        {"object_refs": [{"type": "task"}]}, {"object_refs": [{"id": "tsk_1"}]},
        {"object_refs": [{"type": "task", "id": ""}]},
        {"object_refs": [{"type": "task", "id": 5}]},
        {"object_refs": [{"type": "task", "id": "a b"}]},
        {"object_refs": [{"type": "task", "id": "x" * 65}]},
        {"object_refs": [dict(ref, note="x")]}, {"object_refs": [["task", "tsk_1"]]},
        {"client_request_id": ""}, {"client_request_id": "x" * 65},
        {"client_request_id": "a.b"}, {"client_request_id": "\u00e9"},
        {"client_request_id": 5},
        {"credits": 3}, {"calls": 1}, {"duplicate": False},
    ]
    for extra in bad:
        body = dict({"summary": "bad"}, **extra)
        expect_error(note(c, body), 400, "invalid_activity_input")
    for raw in (b"not json", b"[1]", b'{"summary": "x"'):
        expect_error(c.stack.request("POST", "/v1/activity", key=c.key, raw_body=raw,
                                     headers={"Content-Type": "application/json"}),
                     400, "invalid_activity_input")
    expect_error(c.stack.request("POST", "/v1/activity?foo=1", key=c.key,
                                 body={"summary": "x"}), 400, "invalid_activity_input")


@test
def client_request_id_returns_the_first_note(c):
    wid, key = fresh(c)
    cost = billed(c, key, 2)
    first = ok(c, {"summary": "first", "client_request_id": "run-42_A"}, key)
    eq((first["credits"], first["calls"], first["duplicate"]), (cost, 2, False), "first")
    later = billed(c, key, 1)
    again = ok(c, {"summary": "changed text", "client_request_id": "run-42_A"}, key)
    eq(again, dict(first, duplicate=True), "the first note again")
    eq(db(c, "SELECT count(*) FROM agent_notes WHERE workspace_id = '%s'" % wid), "1",
       "one note")
    eq(db(c, "SELECT count(*) FROM usage_all WHERE workspace_id = '%s' "
             "AND attributed_to IS NULL" % wid), "1", "the later call left alone")
    # per key: the same id from another key is another note
    key2 = c.stack.seoctl("user", "add", "--workspace", wid, "--email", "k2@example.com",
                          "--role", "member")["api_key"]
    other = ok(c, {"summary": "other key", "client_request_id": "run-42_A"}, key2)
    check(other["id"] != first["id"] and not other["duplicate"], "per key", other)
    n = ok(c, {"summary": "new"}, key)
    eq((n["credits"], n["calls"]), (later, 1), "the later call goes to the next note")


@test
def twenty_concurrent_repeats_log_one_note(c):
    wid, key = fresh(c)
    cost = billed(c, key, 4)
    body = {"summary": "concurrent", "client_request_id": "same-request"}
    results = h.parallel(20, lambda i: note(c, body, key))
    for r in results:
        eq(getattr(r, "status", r), 200, "every repeat answered")
    notes = [r.json() for r in results]
    eq(len({n["id"] for n in notes}), 1, "one note id")
    eq(sum(1 for n in notes if not n["duplicate"]), 1, "one first")
    check(all((n["credits"], n["calls"]) == (cost, 4) for n in notes),
          "every answer carries the first note's calls", notes)
    eq(db(c, "SELECT count(*) FROM agent_notes WHERE workspace_id = '%s'" % wid), "1",
       "one note stored")
    eq(db(c, "SELECT count(DISTINCT attributed_to) || ' ' || count(*) FROM usage_all "
             "WHERE workspace_id = '%s'" % wid), "1 4", "claimed once")


@test
def two_hundred_notes_per_workspace_and_utc_day(c):
    wid, key = fresh(c)
    for i in range(200):
        r = note(c, {"summary": "note %d" % i, "client_request_id": "n%d" % i}, key)
        eq(r.status, 200, "note %d" % i)
    body = expect_error(note(c, {"summary": "one too many"}, key), 429,
                        "activity_limit_reached")
    check("200" in body["message"], "message", body)
    # every key of the workspace shares the limit
    key2 = c.stack.seoctl("user", "add", "--workspace", wid, "--email", "k3@example.com",
                          "--role", "member")["api_key"]
    expect_error(note(c, {"summary": "another key"}, key2), 429, "activity_limit_reached")
    # a repeat is no new note
    eq(ok(c, {"summary": "again", "client_request_id": "n7"}, key)["duplicate"], True,
       "repeat at the limit")
    # another workspace has its own
    ok(c, {"summary": "elsewhere"}, c.other["api_key"])
    # yesterday's notes do not count
    day = int(time.time() * 1000) // (86400 * 1000) * 86400 * 1000
    db(c, "UPDATE agent_notes SET created_at = %d WHERE workspace_id = '%s' "
          "AND client_request_id IN ('n0', 'n1')" % (day - 1, wid))
    ok(c, {"summary": "a new day's room"}, key)
    ok(c, {"summary": "and one more"}, key)
    expect_error(note(c, {"summary": "full again"}, key), 429, "activity_limit_reached")


@test
def activity_is_free(c):
    wid, key = fresh(c)
    credits = c.stack.get("/v1/credits", key=key).json()["credits"]
    for i in range(3):
        r = note(c, {"summary": "free %d" % i}, key)
        eq(r.status, 200, "note")
        check("credits_used" not in r.json(), "plain object", r)
    eq(c.stack.get("/v1/credits", key=key).json()["credits"], credits, "balance")
    eq(c.stack.get("/v1/usage", key=key).json()["total"], 0, "no usage rows")
    expect_error(c.stack.request("POST", "/v1/activity", body={"summary": "x"}), 401,
                 "invalid_api_key")


if __name__ == "__main__":
    sys.exit(h.run(setup, teardown))

"""IndexNow through the real gateway, svc-agent and svc-account: keys
(POST /v1/indexnow/key) and submissions (POST /v1/indexnow) against a
local HTTPS test site hosting (or not, or wrongly) the key file
(tests/fakes/site_server.py) and a fake IndexNow upstream answering each
status of the protocol (tests/fakes/fake_indexnow.py): every rule and
code, the order of checks, the 24-hour verification and its clearing, the
event, and the credit charged once and refunded on every failure, also
under 50 concurrent submissions."""

import json
import os
import ssl
import sys
import time
import urllib.parse

sys.path.insert(0, os.path.dirname(__file__))
import harness as h  # noqa: E402
from harness import check, eq, expect_error, test  # noqa: E402
from indexnow_env import Env  # noqa: E402

# Hosts served by the local HTTPS site (key files are put there per test).
HOSTS = ["inow.test", "www.inow.test", "blog.inow.test", "deep.blog.inow.test",
         "other.test", "load.test", "agent.test", "auto.test"]


class Ctx:
    pass


def setup():
    c = Ctx()
    c.env = Env("indexnow", HOSTS, closed_hosts=["down.test"])
    c.stack, c.tls, c.upstream = c.env.stack, c.env.tls, c.env.upstream
    c.tls_ctx = ssl.create_default_context(cafile=c.env.cert)
    c.logs = c.stack.logs
    return c


def teardown(c):
    return c.env.close()


# ---- helpers ---------------------------------------------------------------

def site_call(c, method, host, path, body=None, status=200):
    return c.env.site_call(method, host, path, body, status)


def host_file(c, host, key, body=None, status=200):
    site_call(c, "PUT", host, "/%s.txt" % key,
              (body if body is not None else key).encode()
              if isinstance(body if body is not None else key, str) else body, status)


def unhost_file(c, host, key):
    site_call(c, "DELETE", host, "/%s.txt" % key)


def file_hits(c, host, key):
    return site_call(c, "GET", host, "/%s.txt" % key)["count"]


def upstream(c, path, body=None):
    return c.env.upstream_call(path, body)


def mode(c, m, delay=0):
    upstream(c, "/_control", {"mode": m, "delay": delay})


def submissions(c):
    return upstream(c, "/_requests")


def workspace(c, credits=100, hosts=("inow.test",)):
    w = c.stack.workspace(credits=credits)
    w["sites"] = {}
    for host in hosts:
        w["sites"][host] = c.stack.seoctl("website", "add", "--workspace", w["workspace_id"],
                                          "--host", host)["site_id"]
    return w


def make_key(c, w, domain, status=None):
    r = c.stack.request("POST", "/v1/indexnow/key?domain=" + urllib.parse.quote(domain),
                        key=w["api_key"])
    if status is not None:
        eq(r.status, status, "key status %s" % r.body[:300])
    return r


def submit(c, w, urls, headers=None, raw=None):
    if raw is not None:
        return c.stack.request("POST", "/v1/indexnow", key=w["api_key"], raw_body=raw,
                               headers=dict(headers or {}, **{"Content-Type": "application/json"}))
    return c.stack.request("POST", "/v1/indexnow", key=w["api_key"], body={"urls": urls},
                           headers=headers)


def balance(c, w):
    r = c.stack.get("/v1/credits", key=w["api_key"])
    eq(r.status, 200, "credits")
    return r.json()["credits"]


def ready(c, hosts=("inow.test",), credits=100):
    """A workspace with a website, a key for each host and its file hosted."""
    w = workspace(c, credits=credits, hosts=hosts[:1])
    w["keys"] = {}
    for host in hosts:
        k = make_key(c, w, host).json()
        host_file(c, host, k["key"])
        w["keys"][host] = k["key"]
    return w


def agent_db(c, sql):
    """Rows of svc-agent's tables (the stack's one database), as lists of
    text."""
    out = c.stack.db.query(sql)
    return [line.split("|") for line in out.splitlines()] if out else []


# ---- keys ------------------------------------------------------------------

@test
def key_created_then_same(c):
    w = workspace(c)
    r = make_key(c, w, "inow.test", 201)
    k = r.json()
    eq(sorted(k), ["host", "instructions", "key", "key_location", "verified"], "fields")
    eq(k["host"], "inow.test", "host")
    check(len(k["key"]) == 32 and all(ch in "0123456789abcdef" for ch in k["key"]),
          "32 lowercase hex", k["key"])
    eq(k["key_location"], "https://inow.test/%s.txt" % k["key"], "key_location")
    eq(k["verified"], False, "verified")
    check(k["key_location"] in k["instructions"] and k["key"] in k["instructions"],
          "instructions name the file and the key", k["instructions"])
    again = make_key(c, w, "inow.test", 200).json()
    eq(again, k, "never rotated")
    # a URL is reduced to its host; hosts are lowercased
    eq(make_key(c, w, "https://INOW.test/some/page?x=1", 200).json()["key"], k["key"],
       "url reduced")


@test
def key_www_and_apex_distinct(c):
    w = workspace(c)
    apex = make_key(c, w, "inow.test", 201).json()
    www = make_key(c, w, "www.inow.test", 201).json()
    sub = make_key(c, w, "deep.blog.inow.test", 201).json()
    eq(www["host"], "www.inow.test", "www host")
    check(len({apex["key"], www["key"], sub["key"]}) == 3, "distinct keys")


@test
def key_unique_per_workspace(c):
    a, b = workspace(c), workspace(c)
    ka = make_key(c, a, "inow.test", 201).json()
    kb = make_key(c, b, "inow.test", 201).json()
    check(ka["key"] != kb["key"], "each workspace its own key")


@test
def key_concurrent_first_calls(c):
    w = workspace(c)
    res = h.parallel(10, lambda i: make_key(c, w, "inow.test"))
    eq(sorted(r.status for r in res), [200] * 9 + [201], "one creation")
    eq(len({r.json()["key"] for r in res}), 1, "one key")


@test
def key_errors(c):
    w = workspace(c)
    for bad in ("", "not a domain", "127.0.0.1", "localhost", "a..b", "x_y"):
        r = make_key(c, w, bad)
        check(r.status == 400 and r.json()["code"] == "invalid_domain", "invalid", bad, r)
    r = c.stack.request("POST", "/v1/indexnow/key", key=w["api_key"])
    expect_error(r, 400, "invalid_domain")
    expect_error(make_key(c, w, "other.test"), 400, "indexnow_host_not_a_website")
    # a parent of the website is no subdomain of it
    w2 = workspace(c, hosts=("blog.inow.test",))
    expect_error(make_key(c, w2, "inow.test"), 400, "indexnow_host_not_a_website")
    expect_error(c.stack.request("POST", "/v1/indexnow/key?domain=inow.test"),
                 401, "invalid_api_key")
    client = c.stack.seoctl("user", "add", "--workspace", w["workspace_id"],
                            "--email", "client-%d@example.com" % h.free_port(),
                            "--role", "client")
    expect_error(c.stack.request("POST", "/v1/indexnow/key?domain=inow.test",
                                 key=client["api_key"]), 403, "capability_missing")


@test
def key_free(c):
    w = workspace(c)
    before = balance(c, w)
    make_key(c, w, "inow.test", 201)
    eq(balance(c, w), before, "keys cost nothing")


# ---- submissions: success ----------------------------------------------------

@test
def submit_accepted(c):
    mode(c, "ok")
    w = ready(c)
    key = w["keys"]["inow.test"]
    n0 = len(submissions(c))
    r = submit(c, w, ["https://inow.test/a", "https://INOW.test/b?x=1", "http://inow.test/a"])
    eq(r.status, 200, "status %s" % r.body[:300])
    body = r.json()
    eq(body["data"], {"host": "inow.test", "url_count": 3,
                      "key_location": "https://inow.test/%s.txt" % key,
                      "status": "accepted"}, "data")
    eq(body["credits_used"], 1, "credits_used")
    eq(body["credits_remaining"], 99, "credits_remaining")
    check("billed" not in body, "billing field hidden", body)
    sent = submissions(c)[n0:]
    eq(len(sent), 1, "one upstream call")
    eq(sent[0], {"host": "inow.test", "key": key,
                 "keyLocation": "https://inow.test/%s.txt" % key,
                 "urlList": ["https://inow.test/a", "https://inow.test/b?x=1",
                             "http://inow.test/a"]}, "protocol body")
    eq(balance(c, w), 99, "1 credit")
    # the key is now verified, for 24 hours
    eq(make_key(c, w, "inow.test", 200).json()["verified"], True, "verified")
    # the client-visible event
    rows = agent_db(c, "SELECT verb, params::text, visible, site_id FROM agent_activity "
                       "WHERE workspace_id = '%s'" % w["workspace_id"])
    eq(len(rows), 1, "one event")
    verb, params, visible, site_id = rows[0]
    eq(verb, "indexnow.submitted", "verb")
    eq(json.loads(params), {"url_count": 3, "host": "inow.test"}, "params")
    eq(visible, "t", "client-visible")
    eq(site_id, w["sites"]["inow.test"], "site")
    # usage row
    usage = c.stack.get("/v1/usage", key=w["api_key"]).json()
    rows = usage.get("usage", usage.get("data", []))
    check(any(u["endpoint"] == "indexnow" and u["credits_used"] == 1 for u in rows),
          "usage row", usage)


@test
def submit_202_accepted(c):
    mode(c, "202")
    w = ready(c)
    r = submit(c, w, ["https://inow.test/x"])
    eq(r.status, 200, "status %s" % r.body[:300])
    eq(r.json()["data"]["status"], "accepted", "202 upstream is accepted")
    eq(balance(c, w), 99, "charged")
    mode(c, "ok")


@test
def submit_subdomain(c):
    mode(c, "ok")
    w = ready(c, hosts=("inow.test", "deep.blog.inow.test"))
    r = submit(c, w, ["https://deep.blog.inow.test/p"])
    eq(r.status, 200, "status %s" % r.body[:300])
    eq(r.json()["data"]["host"], "deep.blog.inow.test", "host")
    rows = agent_db(c, "SELECT site_id FROM agent_activity WHERE workspace_id = '%s'"
                    % w["workspace_id"])
    eq(rows, [[w["sites"]["inow.test"]]], "event on the owning website")


@test
def verification_cached_24h(c):
    mode(c, "ok")
    w = ready(c)
    key = w["keys"]["inow.test"]
    for _ in range(3):
        eq(submit(c, w, ["https://inow.test/a"]).status, 200, "submitted")
    eq(file_hits(c, "inow.test", key), 1, "file checked once")
    # the file gone: still trusted within the day
    unhost_file(c, "inow.test", key)
    eq(submit(c, w, ["https://inow.test/a"]).status, 200, "trusted for a day")
    # a day later it is checked again
    agent_db(c, "UPDATE agent_indexnow_keys SET verified_at = verified_at - 86400001 "
                "WHERE workspace_id = '%s'" % w["workspace_id"])
    eq(make_key(c, w, "inow.test", 200).json()["verified"], False, "expired")
    expect_error(submit(c, w, ["https://inow.test/a"]), 400, "indexnow_key_not_verified")
    eq(balance(c, w), 96, "failure refunded")


@test
def key_rejected_clears_cache(c):
    w = ready(c)
    key = w["keys"]["inow.test"]
    mode(c, "ok")
    eq(submit(c, w, ["https://inow.test/a"]).status, 200, "verified")
    hits = file_hits(c, "inow.test", key)
    mode(c, "403")
    expect_error(submit(c, w, ["https://inow.test/a"]), 403, "indexnow_key_rejected")
    eq(make_key(c, w, "inow.test", 200).json()["verified"], False, "cache cleared")
    mode(c, "ok")
    eq(submit(c, w, ["https://inow.test/a"]).status, 200, "again")
    eq(file_hits(c, "inow.test", key), hits + 1, "file checked again")
    eq(balance(c, w), 98, "the rejected call refunded")


# ---- the key file --------------------------------------------------------------

@test
def key_file_rules(c):
    mode(c, "ok")
    w = workspace(c)
    key = make_key(c, w, "inow.test", 201).json()["key"]
    n0 = len(submissions(c))
    cases = [
        ("missing", None, 200),
        ("404", key, 404),
        ("301", key, 301),
        ("wrong content", "0" * 32, 200),
        ("key twice", key + key, 200),
        ("key with text", "key: " + key, 200),
        ("uppercase", key.upper(), 200),
        ("over 4 KB", key + " " * (4097 - 32), 200),
    ]
    for what, body, status in cases:
        if body is None:
            unhost_file(c, "inow.test", key)
        else:
            host_file(c, "inow.test", key, body, status)
        r = submit(c, w, ["https://inow.test/p"])
        expect_error(r, 400, "indexnow_key_not_verified")
        check(key in r.json()["message"] or "inow.test" in r.json()["message"],
              "message says which file (%s)" % what, r.json())
    eq(len(submissions(c)), n0, "nothing submitted")
    eq(balance(c, w), 100, "every failure refunded")
    # surrounding whitespace and a byte-order mark are ignored; 4 KB is a key file
    for body in ("\n  %s \r\n" % key, "\ufeff" + key + "\n", key + " " * (4096 - 32)):
        host_file(c, "inow.test", key, body)
        agent_db(c, "UPDATE agent_indexnow_keys SET verified_at = NULL")
        r = submit(c, w, ["https://inow.test/p"])
        eq(r.status, 200, "accepted with %r: %s" % (body[:40], r.body[:200]))


@test
def key_file_unreachable(c):
    w = workspace(c, hosts=("down.test",))
    make_key(c, w, "down.test", 201)
    r = submit(c, w, ["https://down.test/p"])
    expect_error(r, 400, "indexnow_key_not_verified")
    eq(balance(c, w), 100, "refunded")


# ---- submissions: input and order of checks ------------------------------------

@test
def submit_invalid_urls(c):
    w = ready(c)
    before = len(submissions(c))
    bad = [
        ("ftp://inow.test/a", "indexnow_invalid_url"),
        ("inow.test/a", "indexnow_invalid_url"),
        ("https://user:pw@inow.test/a", "indexnow_invalid_url"),
        ("https://inow.test/a#frag", "indexnow_invalid_url"),
        (" https://inow.test/a", "indexnow_invalid_url"),
        ("https://inow.test/a ", "indexnow_invalid_url"),
        ("https://inow.test:443/a", "indexnow_invalid_url"),
        ("https://inow.test:8443/a", "indexnow_invalid_url"),
        ("https://10.1.2.3/a", "indexnow_invalid_url"),
        ("https://[::1]/a", "indexnow_invalid_url"),
        ("https://localhost/a", "indexnow_invalid_url"),
        ("https://intranet/a", "indexnow_invalid_url"),
        ("https://inow.test/" + "a" * 2100, "indexnow_invalid_url"),
    ]
    for url, code in bad:
        r = submit(c, w, ["https://inow.test/ok", url])
        body = expect_error(r, 400, code)
        check("urls[1]" in body["message"], "message names the entry", url, body)
    expect_error(submit(c, w, []), 400, "indexnow_invalid_url")
    expect_error(c.stack.request("POST", "/v1/indexnow", key=w["api_key"], body={}),
                 400, "indexnow_invalid_url")
    expect_error(submit(c, w, None, raw=b"not json"), 400, "indexnow_invalid_url")
    expect_error(submit(c, w, None, raw=b"[1, 2]"), 400, "indexnow_invalid_url")
    expect_error(c.stack.request("POST", "/v1/indexnow", key=w["api_key"],
                                 body={"urls": "https://inow.test/a"}), 400, "indexnow_invalid_url")
    expect_error(c.stack.request("POST", "/v1/indexnow", key=w["api_key"],
                                 body={"urls": [1]}), 400, "indexnow_invalid_url")
    # 2048 characters is the limit, not past it
    eq(submit(c, w, ["https://inow.test/" + "a" * (2048 - 18)]).status, 200, "2048 chars")
    many = ["https://inow.test/%d" % i for i in range(1001)]
    expect_error(submit(c, w, many), 400, "indexnow_too_many_urls")
    eq(submit(c, w, many[:1000]).status, 200, "1000 urls")
    expect_error(submit(c, w, ["https://inow.test/a", "https://www.inow.test/a"]),
                 400, "indexnow_host_mismatch")
    eq(len(submissions(c)), before + 2, "only the valid calls submitted")
    eq(balance(c, w), 98, "only they charged")


@test
def order_of_checks(c):
    mode(c, "ok")
    w = workspace(c)
    # URLs first: an invalid URL on a foreign host is invalid_url
    expect_error(submit(c, w, ["https://other.test/a", "ftp://x"]), 400, "indexnow_invalid_url")
    # then one host
    expect_error(submit(c, w, ["https://other.test/a", "https://inow.test/a"]),
                 400, "indexnow_host_mismatch")
    # then ownership, before the key
    expect_error(submit(c, w, ["https://other.test/a"]), 400, "indexnow_host_not_a_website")
    # then the key
    expect_error(submit(c, w, ["https://inow.test/a"]), 400, "indexnow_key_not_found")
    expect_error(submit(c, w, ["https://www.inow.test/a"]), 400, "indexnow_key_not_found")
    # then the file, before the upstream
    key = make_key(c, w, "inow.test", 201).json()["key"]
    mode(c, "429")
    expect_error(submit(c, w, ["https://inow.test/a"]), 400, "indexnow_key_not_verified")
    host_file(c, "inow.test", key)
    expect_error(submit(c, w, ["https://inow.test/a"]), 429, "indexnow_rate_limited")
    mode(c, "ok")
    eq(balance(c, w), 100, "every failure refunded")


# ---- the upstream's answers ----------------------------------------------------

@test
def upstream_statuses(c):
    w = ready(c)
    cases = [("400", 400, "indexnow_invalid_request"),
             ("403", 403, "indexnow_key_rejected"),
             ("422", 422, "indexnow_url_mismatch"),
             ("429", 429, "indexnow_rate_limited"),
             ("500", 503, "indexnow_unavailable"),
             ("503", 503, "indexnow_unavailable"),
             ("close", 503, "indexnow_unavailable")]
    for m, status, code in cases:
        mode(c, m)
        expect_error(submit(c, w, ["https://inow.test/a"]), status, code)
        eq(balance(c, w), 100, "refunded after %s" % m)
    mode(c, "ok")
    # no upstream at all
    eq(submit(c, w, ["https://inow.test/a"]).status, 200, "ok again")
    eq(balance(c, w), 99, "charged once")
    rows = agent_db(c, "SELECT count(*) FROM agent_activity WHERE workspace_id = '%s'"
                    % w["workspace_id"])
    eq(rows, [["1"]], "only the accepted call is an event")


# ---- the agent-origin flow (X-Service-Client: mcp) ---------------------------

MCP = {"X-Service-Client": "mcp"}


def proposal(c, w, pid):
    r = c.stack.get("/v1/proposals/" + pid, key=w["api_key"])
    eq(r.status, 200, "proposal %s" % r.body[:200])
    return r.json()["proposal"]


def settled(c, w, pid, states=("succeeded", "failed", "partially_succeeded"), timeout=40):
    """The proposal once the worker has run it."""
    deadline = time.time() + timeout
    while True:
        p = proposal(c, w, pid)
        if p["status"] in states or time.time() > deadline:
            return p
        time.sleep(0.2)


def policy(c, w, host, value):
    c.stack.seoctl("website", "policy", "--site", w["sites"][host], "--indexnow", value)


@test
def agent_held_for_approval(c):
    mode(c, "ok")
    w = ready(c, hosts=("agent.test",))
    n0 = len(submissions(c))
    r = submit(c, w, ["https://agent.test/a"], headers=MCP)
    eq(r.status, 202, "held %s" % r.body[:300])
    body = r.json()
    eq(body["data"]["status"], "awaiting_approval", "status")
    check(body["data"]["proposal_id"].startswith("prp_"), "proposal_id", body)
    check(body["data"]["proposal_id"] in body["data"]["review_url"], "review_url", body)
    check(body.get("message"), "message", body)
    eq(body["credits_used"], 0, "credits_used")
    eq(balance(c, w), 100, "nothing charged")
    eq(len(submissions(c)), n0, "nothing submitted")
    p = proposal(c, w, body["data"]["proposal_id"])
    eq((p["kind"], p["status"], p["source"]), ("indexnow_submit", "pending", "agent"), "pending")
    # the same again: the same proposal
    again = submit(c, w, ["https://agent.test/a"], headers=MCP)
    eq(again.status, 202, "again")
    eq(again.json()["data"]["proposal_id"], body["data"]["proposal_id"], "deduplicated")
    # approved and executing: the same call answers approved
    mode(c, "ok", delay=3)
    c.stack.seoctl("proposal", "decide", "--id", body["data"]["proposal_id"], "--approve")
    settled(c, w, body["data"]["proposal_id"], states=("executing", "succeeded"))
    third = submit(c, w, ["https://agent.test/a"], headers=MCP)
    eq(third.status, 202, "approved %s" % third.body[:300])
    eq(third.json()["data"]["status"], "approved", "already approved")
    eq(third.json()["credits_used"], 0, "nothing charged")
    p = settled(c, w, body["data"]["proposal_id"])
    mode(c, "ok")
    eq(p["status"], "succeeded", "run")
    eq(balance(c, w), 99, "the run charged once")


@test
def agent_other_clients_not_held(c):
    mode(c, "ok")
    w = ready(c, hosts=("agent.test",))
    for hdr in ({}, {"X-Service-Client": "marketplace"}, {"X-Service-Client": "MCP-other"}):
        r = submit(c, w, ["https://agent.test/b"], headers=hdr)
        eq(r.status, 200, "submitted for %r: %s" % (hdr, r.body[:200]))
        check("proposal_id" not in r.json()["data"], "no proposal", r.json())
    eq(balance(c, w), 97, "charged each")


@test
def agent_automatic_runs_now(c):
    mode(c, "ok")
    w = ready(c, hosts=("auto.test",))
    policy(c, w, "auto.test", "automatic")
    r = submit(c, w, ["https://auto.test/a"], headers=MCP)
    eq(r.status, 200, "ran %s" % r.body[:300])
    body = r.json()
    eq(body["data"]["status"], "accepted", "accepted")
    eq(body["data"]["host"], "auto.test", "host")
    check(body["data"]["proposal_id"].startswith("prp_"), "proposal_id", body)
    eq(body["credits_used"], 1, "credits_used")
    eq(balance(c, w), 99, "1 credit, once")
    p = proposal(c, w, body["data"]["proposal_id"])
    eq((p["status"], p["decided_via"]), ("succeeded", "policy"), "proposal")


@test
def agent_automatic_fails(c):
    w = ready(c, hosts=("auto.test",))
    policy(c, w, "auto.test", "automatic")
    mode(c, "403")
    r = submit(c, w, ["https://auto.test/fail403"], headers=MCP)
    body = expect_error(r, 403, "indexnow_key_rejected")
    check(body.get("proposal_id", "").startswith("prp_"), "proposal_id added", body)
    eq(balance(c, w), 100, "refunded")
    p = proposal(c, w, body["proposal_id"])
    eq((p["status"], p["error_code"]), ("failed", "indexnow_key_rejected"), "failed")
    mode(c, "ok")
    unhost_file(c, "auto.test", w["keys"]["auto.test"])
    body = expect_error(submit(c, w, ["https://auto.test/nofile"], headers=MCP),
                        400, "indexnow_key_not_verified")
    check(body.get("proposal_id", "").startswith("prp_"), "proposal_id added", body)
    eq(balance(c, w), 100, "refunded")


@test
def agent_automatic_queued(c):
    w = ready(c, hosts=("auto.test",))
    policy(c, w, "auto.test", "automatic")
    mode(c, "429")
    r = submit(c, w, ["https://auto.test/queued"], headers=MCP)
    eq(r.status, 202, "queued %s" % r.body[:300])
    body = r.json()
    eq(body["data"]["status"], "approved", "approved")
    check(body.get("message"), "message", body)
    eq(body["credits_used"], 0, "nothing charged now")
    eq(balance(c, w), 100, "refunded")
    pid = body["data"]["proposal_id"]
    eq(proposal(c, w, pid)["status"], "approved", "queued")
    mode(c, "ok")
    c.stack.seoctl("job", "run", "indexnow-retry")
    p = settled(c, w, pid)
    eq(p["status"], "succeeded", "retried")
    eq(balance(c, w), 99, "charged by the run")


@test
def agent_checks_first(c):
    mode(c, "ok")
    w = workspace(c, hosts=("agent.test",))
    expect_error(submit(c, w, ["ftp://agent.test/a"], headers=MCP), 400, "indexnow_invalid_url")
    expect_error(submit(c, w, ["https://other.test/a"], headers=MCP),
                 400, "indexnow_host_not_a_website")
    expect_error(submit(c, w, ["https://agent.test/a"], headers=MCP),
                 400, "indexnow_key_not_found")
    eq(c.stack.get("/v1/proposals", key=w["api_key"]).json()["proposals"], [], "no proposal")
    eq(balance(c, w), 100, "refunded")


# ---- charge and refund under load ---------------------------------------------

@test
def concurrent_half_failing(c):
    mode(c, "fail_marked")
    w = ready(c, hosts=("load.test",), credits=1000)
    # the file checked once, as after any first submission
    eq(submit(c, w, ["https://load.test/first"]).status, 200, "first")

    def one(i):
        url = "https://load.test/%s/%d" % ("fail" if i % 2 else "ok", i)
        return submit(c, w, [url])

    res = h.parallel(50, one)
    statuses = sorted(r.status for r in res)
    eq(statuses, [200] * 25 + [503] * 25, "half accepted, half unavailable")
    for i, r in enumerate(res):
        if i % 2:
            eq(r.json()["code"], "indexnow_unavailable", "code")
        else:
            eq(r.json()["credits_used"], 1, "credits_used")
    eq(balance(c, w), 1000 - 1 - 25, "exactly the accepted calls charged")
    usage = c.stack.get("/v1/usage?limit=200", key=w["api_key"]).json()
    rows = [u for u in usage.get("usage", usage.get("data", [])) if u["endpoint"] == "indexnow"]
    eq(len(rows), 51, "a usage row per call")
    eq(sum(u["credits_used"] for u in rows), 26, "refunded rows at 0")
    mode(c, "ok")


if __name__ == "__main__":
    sys.exit(h.run(setup, teardown))

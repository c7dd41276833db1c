"""GET /v1/page-performance through the real gateway, svc-realtime,
svc-account and PostgreSQL, against tests/fakes/fake_pagespeed.py (the
PageSpeed Insights v5 wire format): the object, billing after success,
the shared 24-hour cache, the daily quotas, upstream failures, URL rules,
single-flight, and svc-realtime without its database."""

import json
import os
import re
import sys
import time
import urllib.parse
import urllib.request

sys.path.insert(0, os.path.dirname(__file__))
import harness as h  # noqa: E402
from harness import check, eq, expect_error, test  # noqa: E402

PSI_KEY = "psi-test-key"
ISO = re.compile(r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$")


class Ctx:
    pass


def setup():
    c = Ctx()
    c.psi = h.Fake("fake_pagespeed.py", "--key", PSI_KEY)
    c.stack = h.Stack("psi", env={
        "SEO_PAGESPEED_URL": c.psi.url,
        "SEO_PAGESPEED_KEY": PSI_KEY,
        "SEO_RATE_LIMIT_PER_MIN": "100000",
    })
    c.logs = c.stack.logs
    c.n = 0
    return c


def teardown(c):
    problem = c.stack.close()
    c.psi.close()
    return problem


# ---- helpers -----------------------------------------------------------


def fake(c, path, body=None):
    req = urllib.request.Request(c.psi.url + path,
                                 data=json.dumps(body).encode() if body is not None else None,
                                 method="POST" if body is not None else "GET")
    with urllib.request.urlopen(req, timeout=10) as r:
        return json.loads(r.read())


def runs(c):
    return fake(c, "/_count")["count"]


def control(c, **ctl):
    fake(c, "/_reset", {})
    if ctl:
        fake(c, "/_control", ctl)


def new_url(c):
    """A URL nobody asked for yet: uncached."""
    c.n += 1
    return "https://site%d.test/page?x=%d" % (c.n, c.n)


def workspace(c, credits=100):
    return c.stack.workspace(credits=credits)


def psi(c, key, url, **params):
    q = {"url": url}
    q.update(params)
    return c.stack.get("/v1/page-performance?" + urllib.parse.urlencode(q), key=key)


def balance(c, key):
    return c.stack.get("/v1/credits", key=key).json()["credits"]


def usage(c, key):
    return [(r["endpoint"], r["credits_used"], r["domain"])
            for r in c.stack.get("/v1/usage", key=key).json()["usage"]]


def today():
    return time.strftime("%Y-%m-%d", time.gmtime())


def calls_of(c, user_id):
    v = c.stack.db.query("SELECT calls FROM rt_psi_user_calls WHERE day = '%s' AND "
                         "user_id = '%s'" % (today(), user_id))
    return int(v) if v else 0


def attempts(c):
    v = c.stack.db.query("SELECT attempts FROM rt_psi_attempts WHERE day = '%s'" % today())
    return int(v) if v else 0


# ---- tests --------------------------------------------------------------


@test
def success_charges_three_and_writes_one_usage_row(c):
    control(c)
    ws = workspace(c)
    key, url = ws["api_key"], new_url(c)
    r = psi(c, key, url)
    eq(r.status, 200, "status")
    body = r.json()
    eq(sorted(body), ["credits_remaining", "credits_used", "data", "url"])
    eq((body["url"], body["credits_used"], body["credits_remaining"]), (url, 3, 97))
    d = body["data"]
    eq(sorted(d), sorted(["url", "performance_score", "accessibility_score", "seo_score",
                          "core_web_vitals", "crux_data", "strategy", "cached_at"]))
    eq((d["url"], d["strategy"], d["crux_data"]), (url, "mobile", True))
    eq((d["performance_score"], d["accessibility_score"], d["seo_score"]), (92, 87, 90))
    eq(d["core_web_vitals"], {"lcp_ms": 2345.6, "cls": 0.042, "inp_ms": None,
                              "fcp_ms": 1200.5, "ttfb_ms": 180.25}, "vitals")
    check(ISO.match(d["cached_at"]), "cached_at is ISO 8601", d["cached_at"])
    eq(balance(c, key), 97, "balance")
    eq(usage(c, key), [("page-performance", 3, url)], "one usage row")
    # what the upstream was asked
    eq(fake(c, "/_requests"), [{"url": url, "strategy": "mobile",
                                "categories": ["performance", "accessibility", "seo"],
                                "key": PSI_KEY}], "upstream request")
    eq(calls_of(c, ws["user_id"]), 1, "the person's calls")


@test
def cache_hit_is_billed_and_shared(c):
    control(c)
    ws, other = workspace(c), workspace(c)
    url = new_url(c)
    first = psi(c, ws["api_key"], url).json()
    eq(runs(c), 1, "one run")
    again = psi(c, ws["api_key"], url)
    eq(again.status, 200)
    eq(again.json()["data"], first["data"], "same result, same cached_at")
    eq(again.json()["credits_used"], 3, "cache hits are billed")
    # another workspace's user gets the same entry
    theirs = psi(c, other["api_key"], url).json()
    eq(theirs["data"]["cached_at"], first["data"]["cached_at"], "shared cached_at")
    eq(runs(c), 1, "no further run")
    eq(balance(c, ws["api_key"]), 94)
    eq(balance(c, other["api_key"]), 97)
    eq([u[1] for u in usage(c, ws["api_key"])], [3, 3])
    eq(calls_of(c, ws["user_id"]), 2, "cache hits count for the person")


@test
def strategies_are_cached_apart(c):
    control(c)
    key, url = workspace(c)["api_key"], new_url(c)
    mobile = psi(c, key, url).json()["data"]
    desktop = psi(c, key, url, strategy="desktop").json()["data"]
    eq(runs(c), 2, "desktop is a run of its own")
    eq((desktop["strategy"], desktop["performance_score"], desktop["seo_score"]),
       ("desktop", 99, 91))
    eq(desktop["core_web_vitals"]["lcp_ms"], 812.4)
    eq([r["strategy"] for r in fake(c, "/_requests")], ["mobile", "desktop"])
    # anything else is mobile: the mobile entry answers
    for other in ("tablet", "", "Desktop"):
        d = psi(c, key, url, strategy=other).json()["data"]
        eq((d["strategy"], d["cached_at"]), ("mobile", mobile["cached_at"]), other)
    eq(runs(c), 2, "no further run")
    # the exact url: another spelling is another entry
    psi(c, key, url + "&")
    eq(runs(c), 3, "exact url")


@test
def missing_categories_audits_and_field_data(c):
    control(c, missing_categories=["seo", "accessibility"],
            missing_audits=["server-response-time"], field_data=False, inp=True)
    key, url = workspace(c)["api_key"], new_url(c)
    r = psi(c, key, url)
    eq(r.status, 200)
    d = r.json()["data"]
    eq((d["performance_score"], d["accessibility_score"], d["seo_score"]), (92, 0, 0))
    eq(d["crux_data"], False, "no field data")
    eq(d["core_web_vitals"]["inp_ms"], 150.0, "inp when present")
    eq(d["core_web_vitals"]["ttfb_ms"], None, "missing audit")
    control(c)


@test
def upstream_failures_are_free_and_counted(c):
    ws = workspace(c)
    key = ws["api_key"]
    before = attempts(c)
    modes = ("500", "429", "garbage", "nolighthouse", "runtime_error")
    for mode in modes:
        control(c, mode=mode)
        body = expect_error(psi(c, key, new_url(c)), 503, "psi_unavailable")
        check(body["message"], "message", body)
        eq(runs(c), 1, mode)
    control(c)
    eq(balance(c, key), 100, "nothing charged")
    eq(usage(c, key), [], "no usage rows")
    eq(calls_of(c, ws["user_id"]), len(modes), "counted for the person")
    eq(attempts(c) - before, len(modes), "each an attempt")
    # a failure is not cached: the next call runs again
    url = new_url(c)
    control(c, mode="500")
    expect_error(psi(c, key, url), 503, "psi_unavailable")
    control(c)
    eq(psi(c, key, url).status, 200, "after the failure")
    eq(runs(c), 1)


@test
def person_cap(c):
    control(c)
    ws = workspace(c)
    key, url = ws["api_key"], new_url(c)
    c.stack.db.query("INSERT INTO rt_psi_user_calls (day, user_id, calls) VALUES "
                     "('%s', '%s', 49)" % (today(), ws["user_id"]))
    eq(psi(c, key, url).status, 200, "the 50th call")
    body = expect_error(psi(c, key, url), 429, "user_quota_exceeded")
    check(isinstance(body["retry_after"], int) and 1 <= body["retry_after"] <= 86400,
          "retry_after", body)
    expect_error(psi(c, key, new_url(c), strategy="desktop"), 429, "user_quota_exceeded")
    eq(runs(c), 1, "refused before any run")
    eq(balance(c, key), 97, "the refusals are free")
    eq([u[1] for u in usage(c, key)], [3])
    eq(calls_of(c, ws["user_id"]), 50)
    # another person of the same workspace still has its 50
    mate = c.stack.seoctl("user", "add", "--workspace", ws["workspace_id"], "--email",
                          "mate-%d@example.com" % h.free_port(), "--role", "member")
    eq(psi(c, mate["api_key"], url).status, 200, "another person")


@test
def service_wide_cap(c):
    control(c)
    ws = workspace(c)
    key = ws["api_key"]
    cached = new_url(c)
    eq(psi(c, key, cached).status, 200)
    c.stack.db.query("INSERT INTO rt_psi_attempts (day, attempts) VALUES ('%s', 25000) "
                     "ON CONFLICT (day) DO UPDATE SET attempts = 25000" % today())
    try:
        body = expect_error(psi(c, key, new_url(c)), 429, "quota_exceeded")
        check(isinstance(body["retry_after"], int) and 1 <= body["retry_after"] <= 86400,
              "retry_after", body)
        eq(runs(c), 1, "no run past the cap")
        eq(calls_of(c, ws["user_id"]), 1, "the refused call is not the person's")
        eq(balance(c, key), 97, "free")
        r = psi(c, key, cached)
        eq(r.status, 200, "a cached url still answers")
        eq(attempts(c), 25000, "cache hits are no attempts")
    finally:
        c.stack.db.query("DELETE FROM rt_psi_attempts")


@test
def short_balance_runs_then_refuses(c):
    control(c)
    ws = workspace(c, credits=2)
    key, url = ws["api_key"], new_url(c)
    before = attempts(c)
    body = expect_error(psi(c, key, url), 402, "insufficient_credits")
    check("3" in body["message"], "message names the cost", body)
    eq(runs(c), 1, "the upstream ran")
    eq(balance(c, key), 2, "nothing charged")
    eq(usage(c, key), [("page-performance", 0, url)], "the row at 0")
    eq(calls_of(c, ws["user_id"]), 1, "counted for the person")
    eq(attempts(c) - before, 1, "an attempt")
    # the run was kept: with credits it is a cache hit
    c.stack.seoctl("credits", "grant", "--workspace", ws["workspace_id"], "--credits", "10")
    r = psi(c, key, url)
    eq(r.status, 200)
    eq((r.json()["credits_used"], r.json()["credits_remaining"]), (3, 9))
    eq(runs(c), 1, "cache hit")


@test
def bad_urls_are_free(c):
    control(c)
    ws = workspace(c)
    key = ws["api_key"]
    for url in ("ftp://a.test/", "https://a.test/#top", "https://user:pw@a.test/",
                "a.test", "https://", "https://a.test:99999/", "https://a test/"):
        expect_error(psi(c, key, url), 400, "invalid_url")
    expect_error(c.stack.get("/v1/page-performance", key=key), 400, "invalid_url")
    for url in ("http://10.0.0.1/", "http://127.0.0.1:8080/", "http://[::1]/",
                "http://169.254.169.254/latest/meta-data/", "http://192.168.1.1/",
                "http://[::ffff:10.0.0.1]/", "http://0x7f.1/", "http://localhost:8080/"):
        expect_error(psi(c, key, url), 400, "private_ip")
    eq(runs(c), 0, "no run")
    eq(balance(c, key), 100, "free")
    eq(usage(c, key), [], "no usage rows")
    eq(calls_of(c, ws["user_id"]), 0, "not counted")


@test
def concurrent_identical_calls_share_one_run(c):
    control(c, delay=1.5)
    keys = [workspace(c)["api_key"] for _ in range(2)]
    url = new_url(c)
    before = attempts(c)
    results = h.parallel(6, lambda i: psi(c, keys[i % 2], url))
    for r in results:
        check(not isinstance(r, Exception) and r.status == 200, "200", r)
    eq(runs(c), 1, "one upstream run")
    eq(attempts(c) - before, 1, "one attempt")
    eq(len(set(r.json()["data"]["cached_at"] for r in results)), 1, "one result")
    eq([balance(c, k) for k in keys], [91, 91], "every call billed")
    control(c)


@test
def openapi_states_cost_and_errors(c):
    op = c.stack.get("/v1/openapi.json").json()["paths"]["/v1/page-performance"]["get"]
    eq((op["x-credit-cost"], op["x-billing"]), (3, "after_success"))
    check("only once the work succeeded" in op["description"], "billing in words",
          op["description"])
    for status in ("200", "400", "402", "429", "503"):
        check(status in op["responses"], "response %s" % status, sorted(op["responses"]))
    eq(sorted(p["name"] for p in op["parameters"]), ["strategy", "url"])


def private_ip_error(host):
    return {"error": "Bad Request", "code": "private_ip",
            "message": "%s resolves to a private or reserved address" % host}


@test
def private_urls_never_reach_the_provider(c):
    """The URL is checked by the fetcher's address policy before anything
    is counted, charged or sent to PageSpeed: the same answer as
    page-seo's, nothing at the fake, nothing on the bill."""
    control(c)
    ws = workspace(c)
    key = ws["api_key"]
    for url, host in (("http://127.0.0.1:%d/" % c.psi.port, "127.0.0.1"),
                      ("https://[::1]/x", "::1"),
                      ("http://localhost:%d/" % c.psi.port, "localhost"),
                      ("http://10.1.2.3/", "10.1.2.3"),
                      ("http://2130706433/", "127.0.0.1"),
                      ("http://100.100.100.200/latest", "100.100.100.200")):
        for strategy in ("mobile", "desktop"):
            r = psi(c, key, url, strategy=strategy)
            eq(r.status, 400, url)
            eq(r.json(), private_ip_error(host), url)
    eq(fake(c, "/_requests"), [], "nothing reached the provider")
    eq(balance(c, key), 100, "nothing charged")
    eq(usage(c, key), [], "no usage rows")
    eq(calls_of(c, ws["user_id"]), 0, "not counted")
    r = c.stack.get("/v1/page-seo?" + urllib.parse.urlencode({"url": "http://10.1.2.3/"}),
                    key=key)
    body = expect_error(r, 400, "private_ip")
    eq(body["error"], "Bad Request", "page-seo answers alike")


@test
def allow_list_is_the_fetchers(c):
    """SEO_FETCH_ALLOW_NETS exempts the same networks for page-performance
    as for the live fetches, and nothing more. It replaces svc-realtime."""
    control(c)
    key = workspace(c)["api_key"]
    s = c.stack
    s.stop_service("svc-realtime")
    env = dict(s.env, SEO_FETCH_ALLOW_NETS="127.0.0.0/8")
    s.procs["svc-realtime"] = h.Process("svc-realtime", [s.binary("svc-realtime")], env,
                                        s.tmp)
    s.wait_healthy()
    url = "http://127.0.0.1:%d/allowed" % c.psi.port
    r = psi(c, key, url)
    eq(r.status, 200, "an allowed network runs")
    eq([q["url"] for q in fake(c, "/_requests")], [url])
    for url, host in (("http://10.1.2.3/", "10.1.2.3"), ("http://[::1]/", "::1")):
        eq(psi(c, key, url).json(), private_ip_error(host), url)
    eq(runs(c), 1, "no further run")
    eq(balance(c, key), 97, "the run charged, the refusals not")


@test
def realtime_without_database_still_serves(c):
    """Last: it replaces svc-realtime by one whose database is away."""
    control(c)
    key = workspace(c)["api_key"]
    s = c.stack
    s.stop_service("svc-realtime")
    env = dict(s.env, SEO_PG_URL="postgresql://seo@127.0.0.1:%d/none" % h.closed_port(),
               SEO_FETCH_ALLOW_NETS="127.0.0.0/8")
    s.procs["svc-realtime"] = h.Process("svc-realtime", [s.binary("svc-realtime")], env,
                                        s.tmp)
    s.wait_healthy()
    body = expect_error(psi(c, key, new_url(c)), 503, "service_unavailable")
    check("unavailable" in body["message"], "message", body)
    r = s.get("/v1/page-seo?" + urllib.parse.urlencode({"url": c.psi.url + "/"}), key=key)
    eq(r.status, 200, "page-seo without the database")
    eq(r.json()["data"]["title"]["text"], "Fake PageSpeed target page for tests")
    eq(runs(c), 0, "no run")
    eq(balance(c, key), 97, "page-seo charged, page-performance not")


if __name__ == "__main__":
    sys.exit(h.run(setup, teardown))

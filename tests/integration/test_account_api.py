"""Account endpoints, authentication, roles, errors, headers, metrics and
OpenAPI through the real gateway, svc-account and PostgreSQL."""

import json
import re
import os
import shutil
import subprocess
import sys
import tempfile
import time
import urllib.request

sys.path.insert(0, os.path.dirname(__file__))
import harness as h  # noqa: E402
from harness import check, eq, expect_error, test  # noqa: E402


class Ctx:
    pass


def setup():
    c = Ctx()
    c.mail_dir = tempfile.mkdtemp(prefix="seo-it-mail-")
    c.smtp = h.Fake("fake_smtp.py", "--dir", c.mail_dir)
    c.pay = h.Fake("fake_payments.py")
    c.stack = h.Stack("account", env={
        "SEO_SMTP_URL": "smtp://127.0.0.1:%d" % c.smtp.port,
        "SEO_PAYMENTS_API_URL": c.pay.url,
        "SEO_PAYMENTS_KEY": "sk_test_fake",
        "SEO_PAYMENTS_WEBHOOK_SECRET": "whsec_test",
        "SEO_HTTP_BODY_LIMIT": "65536",
        # The rate itself is proven by test_rate_limit.py.
        "SEO_RATE_LIMIT_PER_MIN": "100000",
    })
    s = c.stack
    c.ws = s.workspace(credits=1000, email="owner@example.com")
    c.owner = c.ws["api_key"]
    wid = c.ws["workspace_id"]
    c.admin = s.seoctl("user", "add", "--workspace", wid, "--email", "admin@example.com",
                       "--role", "admin")
    c.member = s.seoctl("user", "add", "--workspace", wid, "--email", "member@example.com",
                        "--role", "member")
    c.member2 = s.seoctl("user", "add", "--workspace", wid, "--email", "member2@example.com",
                         "--role", "member")
    c.client = s.seoctl("user", "add", "--workspace", wid, "--email", "client@example.com",
                        "--role", "client")
    c.other = s.workspace(credits=50, email="other@example.com")
    c.logs = s.logs
    return c


def teardown(c):
    problem = c.stack.close()
    c.smtp.close()
    c.pay.close()
    return problem


@test
def healthz_names_every_service(c):
    r = c.stack.get("/healthz")
    eq(r.status, 200, "healthz status")
    body = r.json()
    eq(body["status"], "ok")
    eq(sorted(body["services"]), sorted(s["name"] for s in h.REGISTRY))
    check(all(v == "ok" for v in body["services"].values()), "all ok", body)


@test
def pricing_needs_no_key(c):
    r = c.stack.get("/v1/pricing")
    eq(r.status, 200)
    tiers = r.json()["tiers"]
    check(len(tiers) >= 2, "tiers", tiers)
    mins = [t["min"] for t in tiers]
    eq(mins, sorted(mins), "tiers ordered by min")
    check(all(isinstance(t["price_per_credit"], float) for t in tiers), "prices", tiers)
    check(r.header("RateLimit-Limit") is None, "no rate headers without a key")


@test
def pricing_kept_in_the_gateway_for_five_seconds(c):
    s = c.stack
    # Whatever an earlier call left in the gateway's memory expires first.
    time.sleep(5.2)
    t0 = time.monotonic()
    first = s.get("/v1/pricing").json()
    s.db.query("UPDATE price_tiers SET price_per_credit = price_per_credit * 2")
    try:
        again = s.get("/v1/pricing").json()
        if time.monotonic() - t0 < 4.5:
            eq(again, first, "the kept answer while it is fresh")
        while time.monotonic() - t0 < 9:
            now = s.get("/v1/pricing").json()
            if now != first:
                break
            time.sleep(0.2)
        seen = time.monotonic() - t0
        eq([t["price_per_credit"] for t in now["tiers"]],
           [2 * t["price_per_credit"] for t in first["tiers"]], "the new tiers")
        check(4.8 <= seen <= 7, "the new tiers shown after about 5 s", seen)
    finally:
        s.db.query("UPDATE price_tiers SET price_per_credit = price_per_credit / 2")


@test
def missing_unknown_and_malformed_keys_get_401(c):
    for key in (None, "", "seo_" + "x" * 32, "garbage"):
        expect_error(c.stack.get("/v1/credits", key=key), 401, "invalid_api_key")


@test
def me_for_each_role(c):
    r = c.stack.get("/v1/me", key=c.owner)
    eq(r.status, 200)
    me = r.json()
    eq(me["id"], c.ws["user_id"])
    eq(me["email"], "owner@example.com")
    eq(me["credits"], 1000)
    check(isinstance(me["created_at"], int) and me["created_at"] > 1.6e12, "ms timestamp", me)
    me = c.stack.get("/v1/me", key=c.client["api_key"]).json()
    eq(me["credits"], None, "client sees no credits")
    eq(me["email"], "client@example.com")


@test
def credits_roles(c):
    for who in (c.owner, c.admin["api_key"], c.member["api_key"]):
        r = c.stack.get("/v1/credits", key=who)
        eq(r.status, 200)
        eq(r.json(), {"credits": 1000})
    expect_error(c.stack.get("/v1/credits", key=c.client["api_key"]), 403, "capability_missing")
    eq(c.stack.get("/v1/credits", key=c.other["api_key"]).json(), {"credits": 50})


@test
def usage_and_keys_roles(c):
    for path in ("/v1/usage", "/v1/keys"):
        expect_error(c.stack.get(path, key=c.client["api_key"]), 403, "capability_missing")
    r = c.stack.request("POST", "/v1/keys", key=c.client["api_key"], body={})
    expect_error(r, 403, "capability_missing")


@test
def create_list_and_revoke_keys(c):
    s = c.stack
    r = s.request("POST", "/v1/keys", key=c.owner, body={})
    eq(r.status, 201, "create status")
    k1 = r.json()
    eq(sorted(k1), ["created_at", "id", "key", "name"])
    eq(k1["name"], "Default")
    check(k1["key"].startswith("seo_") and len(k1["key"]) == 36, "key format", k1["key"])
    r = s.request("POST", "/v1/keys", key=c.owner, body={"name": "ci"})
    k2 = r.json()
    eq(k2["name"], "ci")
    keys = s.get("/v1/keys", key=c.owner).json()["keys"]
    ids = [k["id"] for k in keys]
    check(ids.index(k2["id"]) < ids.index(k1["id"]), "newest first", ids)
    item = [k for k in keys if k["id"] == k2["id"]][0]
    eq(sorted(item), ["created_at", "id", "last_four", "name"])
    eq(item["last_four"], k2["key"][-4:])
    check("key" not in item, "raw key never listed")
    # The id is the key's hash and cannot authenticate.
    expect_error(s.get("/v1/credits", key=k2["id"]), 401, "invalid_api_key")
    # The new key works, then revocation takes effect on the very next call.
    eq(s.get("/v1/credits", key=k2["key"]).status, 200)
    r = s.request("DELETE", "/v1/keys/" + k2["id"], key=c.owner)
    eq(r.status, 200)
    eq(r.json(), {"success": True})
    expect_error(s.get("/v1/credits", key=k2["key"]), 401, "invalid_api_key")
    expect_error(s.request("DELETE", "/v1/keys/" + k2["id"], key=c.owner), 404, "key_not_found")
    expect_error(s.request("DELETE", "/v1/keys/nope", key=c.owner), 404, "key_not_found")
    ids = [k["id"] for k in s.get("/v1/keys", key=c.owner).json()["keys"]]
    check(k2["id"] not in ids and k1["id"] in ids, "active keys only", ids)


@test
def revoking_the_calling_key(c):
    s = c.stack
    k = s.request("POST", "/v1/keys", key=c.owner, body={"name": "self"}).json()
    r = s.request("DELETE", "/v1/keys/" + k["id"], key=k["key"])
    eq(r.status, 200)
    expect_error(s.get("/v1/me", key=k["key"]), 401, "invalid_api_key")


@test
def members_see_and_revoke_only_their_own_keys(c):
    s = c.stack
    m1, m2 = c.member["api_key"], c.member2["api_key"]
    own = s.request("POST", "/v1/keys", key=m1, body={"name": "mine"}).json()
    theirs = s.request("POST", "/v1/keys", key=m2, body={"name": "theirs"}).json()
    ids = [k["id"] for k in s.get("/v1/keys", key=m1).json()["keys"]]
    check(own["id"] in ids and theirs["id"] not in ids, "member sees own keys", ids)
    expect_error(s.request("DELETE", "/v1/keys/" + theirs["id"], key=m1), 404, "key_not_found")
    eq(s.get("/v1/credits", key=theirs["key"]).status, 200)
    # An admin sees everyone's and may revoke them.
    ids = [k["id"] for k in s.get("/v1/keys", key=c.admin["api_key"]).json()["keys"]]
    check(own["id"] in ids and theirs["id"] in ids, "admin sees all", ids)
    eq(s.request("DELETE", "/v1/keys/" + theirs["id"], key=c.admin["api_key"]).status, 200)


@test
def ids_of_another_workspace_are_absent(c):
    s = c.stack
    foreign = s.request("POST", "/v1/keys", key=c.other["api_key"], body={}).json()
    expect_error(s.request("DELETE", "/v1/keys/" + foreign["id"], key=c.owner), 404, "key_not_found")
    eq(s.get("/v1/credits", key=foreign["key"]).status, 200)
    ids = [k["id"] for k in s.get("/v1/keys", key=c.owner).json()["keys"]]
    check(foreign["id"] not in ids, "foreign key not listed")


@test
def key_mail_goes_through_the_outbox(c):
    s = c.stack
    before = int(s.db.query("SELECT count(*) FROM outbox"))
    k = s.request("POST", "/v1/keys", key=c.owner, body={"name": "mail"}).json()
    s.request("DELETE", "/v1/keys/" + k["id"], key=c.owner)
    eq(int(s.db.query("SELECT count(*) FROM outbox")), before + 2, "two mails queued")
    deadline = time.time() + 15
    while time.time() < deadline:
        pending = int(s.db.query("SELECT count(*) FROM outbox WHERE sent_at IS NULL"))
        if pending == 0:
            break
        time.sleep(0.2)
    eq(pending, 0, "outbox drained to the SMTP server")
    eq(s.db.query("SELECT DISTINCT to_addr FROM outbox WHERE id > (SELECT max(id) - 2 FROM outbox)"),
       "owner@example.com")
    received = []
    for name in sorted(os.listdir(c.mail_dir)):
        if name.endswith(".json"):
            with open(os.path.join(c.mail_dir, name)) as f:
                received.append(json.load(f))
    check(len(received) >= 2, "mails at the SMTP server", received)
    eq(received[-1]["rcpt_to"], ["owner@example.com"])


@test
def usage_paging_rules(c):
    s = c.stack
    r = s.get("/v1/usage?limit=5000", key=c.owner)
    eq(r.status, 200)
    body = r.json()
    eq(sorted(body), ["total", "usage"])
    eq(body["total"], 0, "no billed call yet")
    expect_error(s.get("/v1/usage?limit=abc", key=c.owner), 400, "invalid_parameter")
    expect_error(s.get("/v1/usage?offset=-1", key=c.owner), 400, "invalid_parameter")


@test
def checkout_rules(c):
    s = c.stack
    expect_error(s.request("POST", "/v1/checkout", key=c.member["api_key"], body={"credits": 500}),
                 403, "capability_missing")
    for bad in ({"credits": 99}, {"credits": "abc"}, {"credits": 100.5}, {}):
        expect_error(s.request("POST", "/v1/checkout", key=c.owner, body=bad), 400, "invalid_credits")
    r = s.request("POST", "/v1/checkout", key=c.admin["api_key"], body={"credits": 1000})
    eq(r.status, 200, "checkout: %r" % r)
    url = r.json()["url"]
    check(url.startswith("http"), "checkout url", url)
    eq(int(s.db.query("SELECT count(*) FROM payments WHERE status = 'open'")), 1)


def complete_payment(c, session_id, **extra):
    body = dict({"session_id": session_id, "secret": "whsec_test",
                 "webhook_url": c.stack.base_url + "/v1/webhooks/payments"}, **extra)
    req = urllib.request.Request(c.pay.url + "/_complete", data=json.dumps(body).encode(),
                                 headers={"Content-Type": "application/json"}, method="POST")
    with urllib.request.urlopen(req, timeout=30) as r:
        return json.load(r)


@test
def payment_webhook_adds_credits_exactly_once(c):
    s = c.stack
    key = c.other["api_key"]
    before = s.get("/v1/credits", key=key).json()["credits"]
    r = s.request("POST", "/v1/checkout", key=key, body={"credits": 250})
    eq(r.status, 200, "checkout")
    wid = c.other["workspace_id"]
    session = s.db.query("SELECT id FROM payments WHERE workspace_id = '%s' "
                         "ORDER BY created_at DESC LIMIT 1" % wid)
    out = complete_payment(c, session)
    eq(out["status"], 200, "webhook delivery: %r" % out)
    eq(s.get("/v1/credits", key=key).json()["credits"], before + 250)
    # The same event again, and another event for the same session.
    eq(complete_payment(c, session, event_id=out["event"]["id"])["status"], 200)
    eq(complete_payment(c, session)["status"], 200)
    eq(s.get("/v1/credits", key=key).json()["credits"], before + 250, "credited once")
    eq(int(s.db.query("SELECT sum(delta) FROM ledger WHERE workspace_id = '%s'" % wid)),
       before + 250, "ledger sum equals the balance")
    # A forged signature adds nothing.
    out = complete_payment(c, session, secret="wrong")
    eq(out["status"], 400, "forged webhook: %r" % out)
    eq(json.loads(out["body"])["code"], "invalid_signature")


@test
def checkout_provider_failure(c):
    s = c.stack
    urllib.request.urlopen(urllib.request.Request(c.pay.url + "/_control/fail?mode=500",
                                                  method="POST"), timeout=10).read()
    try:
        body = expect_error(s.request("POST", "/v1/checkout", key=c.owner,
                                      body={"credits": 100}), 500, "checkout_failed")
        check(body["message"], "message")
    finally:
        urllib.request.urlopen(urllib.request.Request(c.pay.url + "/_control/fail?mode=none",
                                                      method="POST"), timeout=10).read()


@test
def bad_requests_get_the_error_object(c):
    s = c.stack
    expect_error(s.get("/v1/nothing-here", key=c.owner), 404, "not_found")
    expect_error(s.request("PUT", "/v1/credits", key=c.owner), 405, "method_not_allowed")
    r = s.request("POST", "/v1/keys", key=c.owner, raw_body=b"{not json",
                  headers={"Content-Type": "application/json"})
    expect_error(r, 400, "invalid_json")
    r = s.request("POST", "/v1/keys", key=c.owner, raw_body=b"[1,2]",
                  headers={"Content-Type": "application/json"})
    expect_error(r, 400, "invalid_json")
    r = s.request("POST", "/v1/keys", key=c.owner, raw_body=b"x" * 70000,
                  headers={"Content-Type": "application/json"})
    expect_error(r, 413, "payload_too_large")
    # A bad key with a bad parameter is told about the key first.
    expect_error(s.get("/v1/usage?limit=abc", key="seo_nope"), 401, "invalid_api_key")


@test
def authenticated_answers_carry_rate_headers_and_request_id(c):
    r = c.stack.get("/v1/credits", key=c.owner, headers={"X-Request-Id": "it-req-1"})
    eq(r.status, 200)
    eq(r.header("RateLimit-Limit"), "100000")
    check(0 <= int(r.header("RateLimit-Remaining")) < 100000, "remaining", r.header("RateLimit-Remaining"))
    check(int(r.header("RateLimit-Reset")) >= 0, "reset")
    eq(r.header("X-Request-Id"), "it-req-1")
    check(r.header("Content-Type").startswith("application/json"), "json")
    r = c.stack.get("/v1/credits", key=c.client["api_key"])
    eq(r.status, 403)
    first = r.header("X-Request-Id")
    check(re.fullmatch(r"[0-9a-f]{24}", first or ""), "generated id: prefix and 16 hex digits", first)
    second = c.stack.get("/v1/credits", key=c.client["api_key"]).header("X-Request-Id")
    check(second != first and second[:8] == first[:8], "the counter moves, the prefix stays", first, second)
    check(int(second[8:], 16) > int(first[8:], 16), "ids grow", first, second)


@test
def websites_ordered_by_name(c):
    s = c.stack
    wid = c.ws["workspace_id"]
    s.seoctl("website", "add", "--workspace", wid, "--host", "zeta.example", "--name", "Zeta")
    s.seoctl("website", "add", "--workspace", wid, "--host", "https://Alpha.Example/", "--name", "Alpha")
    s.seoctl("website", "add", "--workspace", c.other["workspace_id"], "--host", "other.example")
    r = s.get("/v1/websites", key=c.client["api_key"])
    eq(r.status, 200)
    sites = r.json()["websites"]
    eq([x["name"] for x in sites], ["Alpha", "Zeta"])
    eq(sites[0]["host"], "alpha.example")
    eq(sorted(sites[0]), ["host", "id", "name"])


@test
def metrics_count_requests_and_latency(c):
    r = c.stack.metrics()
    eq(r.status, 200)
    text = r.body.decode()
    check('seo_http_requests_total{method="GET",route="/v1/credits",status="200"}' in text,
          "credits counter", text[:2000])
    check('status="401"' in text, "401 counted")
    check("seo_http_request_duration_seconds_bucket" in text, "histogram")
    check("seo_credits_charged_total" in text and "seo_credits_refunded_total" in text, "credits")


@test
def openapi_document_lints(c):
    r = c.stack.get("/v1/openapi.json")
    eq(r.status, 200)
    doc = r.json()
    eq(doc["openapi"][:3], "3.1")
    for path in ("/v1/me", "/v1/credits", "/v1/keys", "/v1/keys/{id}", "/v1/usage",
                 "/v1/pricing", "/v1/checkout", "/v1/websites"):
        check(path in doc["paths"], "path in openapi", path)
    redocly = os.path.join(h.SOURCE_DIR, "var", "npm", "node_modules", ".bin", "redocly")
    if not os.path.exists(redocly):
        raise h.Skip("@redocly/cli not installed (./seo deps installs it)")
    path = os.path.join(c.stack.tmp, "openapi.json")
    with open(path, "w") as f:
        json.dump(doc, f)
    out = subprocess.run([redocly, "lint", "--format", "stylish", path], capture_output=True,
                         text=True, timeout=120)
    check(out.returncode == 0, "redocly lint", out.stdout[-3000:], out.stderr[-2000:])


@test
def a_service_down_is_503_not_a_hang(c):
    s = c.stack
    s.stop_service("svc-ranks")
    r = s.get("/healthz")
    expect = r.json()
    eq(r.status, 503)
    eq(expect["services"]["ranks"], "unavailable")
    eq(expect["services"]["account"], "ok")
    s.start_service("svc-ranks")
    s.wait_healthy()
    s.stop_service("svc-account")
    t0 = time.time()
    expect_error(s.get("/v1/credits", key=c.owner), 503, "service_unavailable")
    check(time.time() - t0 < 5, "fails fast")
    s.start_service("svc-account")
    s.wait_healthy()
    eq(s.get("/v1/credits", key=c.owner).status, 200, "reconnects")


if __name__ == "__main__":
    if shutil.which("psql") is None and not os.path.exists("/usr/lib/postgresql"):
        print("skipped: no PostgreSQL")
        sys.exit(0)
    sys.exit(h.run(setup, teardown))

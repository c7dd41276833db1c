"""The claim of docs/NEW-SERVICE.md: svc-example, added only through a
registry row (registry/services.def), its folder, its proto and one route
row, is started by the harness and answers through the gateway; its call
to svc-account carries the caller's identity and request id
(seo/rpc_peer.h)."""

import os
import subprocess
import sys

sys.path.insert(0, os.path.dirname(__file__))
import harness as h  # noqa: E402
from harness import check, eq, expect_error, test  # noqa: E402


def setup():
    s = h.Stack("example")
    s.email = "greeted-%d@example.com" % h.free_port()
    s.ws = s.workspace(credits=10, email=s.email)
    return s


@test
def the_registry_lists_it(s):
    row = [r for r in h.REGISTRY if r["process"] == "svc-example"]
    eq(len(row), 1, "one registry row")
    eq(row[0]["addr_env"], "SEO_EXAMPLE_ADDR")
    eq(row[0]["calls"], ["svc-account"], "its peers")
    check("svc-example" in s.procs, "started by the harness", list(s.procs))


@test
def it_answers_through_the_gateway(s):
    r = s.get("/v1/example/hello", key=s.ws["api_key"],
              headers={"X-Request-Id": "example-req-1"})
    eq(r.status, 200, "status")
    body = r.json()
    # The email is svc-account's answer to a call made with the identity
    # the gateway gave svc-example: it proves the metadata went along.
    eq(body["email"], s.email, "the caller, as svc-account knows them")
    eq(body["greeting"], "hello, " + s.email)
    eq(body["request_id"], "example-req-1", "request id carried to the service")
    eq(r.header("X-Request-Id"), "example-req-1")


@test
def query_parameters_reach_it(s):
    r = s.get("/v1/example/hello?name=Ana", key=s.ws["api_key"])
    eq(r.status, 200)
    eq(r.json()["greeting"], "hello, Ana")


@test
def it_is_free_and_needs_a_key(s):
    expect_error(s.get("/v1/example/hello"), 401, "invalid_api_key")
    credits = s.get("/v1/credits", key=s.ws["api_key"]).json()["credits"]
    eq(credits, 10, "nothing charged")


@test
def healthz_and_openapi_follow_the_registry(s):
    health = s.get("/healthz").json()
    eq(health["services"].get("example"), "ok", "healthz")
    doc = s.get("/v1/openapi.json").json()
    op = doc["paths"]["/v1/example/hello"]["get"]
    eq(op["tags"], ["example"], "tag from the registry row")
    tags = {t["name"]: t["description"] for t in doc["tags"]}
    eq(tags.get("example"), "The example service of docs/NEW-SERVICE.md.")


@test
def a_bad_peer_address_stops_it_at_start(s):
    env = dict(s.env, SEO_ACCOUNT_ADDR="no-port-here",
               SEO_EXAMPLE_ADDR="127.0.0.1:%d" % h.free_port())
    out = subprocess.run([s.binary("svc-example")], env=env,
                         capture_output=True, text=True, timeout=10)
    check(out.returncode != 0, "exit status", out.returncode)
    check("SEO_ACCOUNT_ADDR" in out.stdout + out.stderr, "names the variable",
          out.stdout + out.stderr)


if __name__ == "__main__":
    sys.exit(h.run(setup, lambda s: s.close()))

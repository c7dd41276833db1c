"""The route row's stages through the real gateway (docs/ARCHITECTURE.md,
"The route row's stages"), on svc-example's rows: an optional key, the
client IP and X-Service-Client forwarded (X-Forwarded-For only from
SEO_TRUSTED_PROXIES), a status and Retry-After the service chooses within
what the row allows, an answer of bytes with its content type, and the
specification's nullability in a real answer."""

import os
import subprocess
import sys

sys.path.insert(0, os.path.dirname(__file__))
import harness as h  # noqa: E402
from harness import check, eq, expect_error, test  # noqa: E402


def setup():
    s = h.Stack("stages")
    s.ws = s.workspace(credits=10)
    s.key = s.ws["api_key"]
    # A second gateway that trusts the loopback proxy (the test client).
    s.env["SEO_TRUSTED_PROXIES"] = "10.0.0.0/8, 127.0.0.1/32"
    s.trusting = s.start_gateway()
    del s.env["SEO_TRUSTED_PROXIES"]
    s.wait_healthy()
    return s


@test
def optional_key_anonymous_keyed_or_refused(s):
    r = s.get("/v1/example/stages")
    eq(r.status, 200, "anonymous")
    check("workspace_id" not in r.json(), "no identity without a key", r.json())
    check(r.header("RateLimit-Limit") is None, "no per-key rate", r)
    r = s.get("/v1/example/stages", key=s.key)
    eq(r.status, 200, "with a key")
    eq(r.json()["workspace_id"], s.ws["workspace_id"], "the key's workspace")
    expect_error(s.get("/v1/example/stages", key="sk_not-a-key"), 401,
                 "invalid_api_key")
    credits = s.get("/v1/credits", key=s.key).json()["credits"]
    eq(credits, 10, "nothing charged")


@test
def client_ip_and_service_client_forwarded(s):
    body = s.get("/v1/example/stages", headers={"X-Service-Client": "mcp"}).json()
    eq(body["client_ip"], "127.0.0.1", "the socket's peer")
    eq(body["service_client"], "mcp", "the agent-origin header")
    check("service_client" not in s.get("/v1/example/stages").json(),
          "absent when not sent")
    # Not trusted: the header is the client's word, not believed.
    body = s.get("/v1/example/stages",
                 headers={"X-Forwarded-For": "203.0.113.7"}).json()
    eq(body["client_ip"], "127.0.0.1", "X-Forwarded-For ignored from an untrusted peer")
    # Trusted: read from the right, skipping trusted hops; a spoofed
    # left part is not believed.
    body = s.get("/v1/example/stages", port=s.trusting,
                 headers={"X-Forwarded-For": "198.51.100.1, 203.0.113.7, 10.1.2.3"}).json()
    eq(body["client_ip"], "203.0.113.7", "the first untrusted hop from the right")
    body = s.get("/v1/example/stages", port=s.trusting).json()
    eq(body["client_ip"], "127.0.0.1", "no header: the peer")


@test
def status_and_headers_only_as_the_row_allows(s):
    r = s.get("/v1/example/stages?status=202&retry_after=30")
    eq(r.status, 202, "a status the row lists")
    eq(r.header("Retry-After"), "30", "a header the row lists")
    check(r.header("X-Internal") is None, "a header no row lists is dropped", r.headers)
    r = s.get("/v1/example/stages?status=201")
    eq(r.status, 200, "a status the row does not list: the row's own")
    r = s.get("/v1/example/stages?status=503&retry_after=5")
    eq(r.status, 200, "not even an error status")
    eq(r.header("Retry-After"), "5")
    r = s.get("/v1/example/stages")
    check(r.header("Retry-After") is None, "none unless the service sets it")
    expect_error(s.get("/v1/example/stages?status=99"), 400, "invalid_parameter")


@test
def bytes_with_a_content_type(s):
    r = s.get("/v1/example/card?name=Ana")
    eq(r.status, 200)
    eq(r.header("Content-Type"), "application/pdf")
    check(r.body.startswith(b"%PDF-1.4\n"), "the bytes as the service sent them", r.body)
    check(b"card for Ana" in r.body, "from the request", r.body)


@test
def openapi_and_metrics_follow_the_rows(s):
    doc = s.get("/v1/openapi.json").json()
    op = doc["paths"]["/v1/example/stages"]["get"]
    eq(op["security"], [{}, {"ApiKey": []}], "optional key")
    check("202" in op["responses"], "the other status", list(op["responses"]))
    check("Retry-After" in op["responses"]["202"]["headers"], "the header")
    eq([p["name"] for p in op["parameters"] if p["in"] == "header"], ["X-Service-Client"])
    card = doc["paths"]["/v1/example/card"]["get"]["responses"]["200"]["content"]
    eq(list(card), ["application/pdf"], "bytes: the row's content type")
    # nullable fields of the specification, and only those, may be null
    row = doc["components"]["schemas"]["seo.graph.v1.BacklinkRow"]["properties"]
    eq(row["anchor_text"]["type"], ["string", "null"])
    eq(row["anchor_type"]["type"], "string")
    metrics = s.metrics().body.decode()
    check('seo_route_info{method="GET",route="/v1/example/stages",key="optional",'
          'billing="free",quota="ip",output="json"} 1' in metrics, "route info")
    check('route="/v1/example/card",key="none",billing="free",quota="none",'
          'output="bytes"} 1' in metrics, "route info of the bytes row")


@test
def malformed_trusted_proxies_stop_the_gateway(s):
    env = dict(s.env, SEO_TRUSTED_PROXIES="10.0.0.0/33",
               SEO_HTTP_ADDR="127.0.0.1:%d" % h.free_port())
    out = subprocess.run([s.binary("gateway")], env=env, capture_output=True,
                         text=True, timeout=10)
    check(out.returncode != 0, "exit status", out.returncode)
    check("SEO_TRUSTED_PROXIES" in out.stdout + out.stderr, "names the variable",
          out.stdout + out.stderr)


if __name__ == "__main__":
    sys.exit(h.run(setup, lambda s: s.close()))

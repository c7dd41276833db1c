"""Internal calls need the stack's shared secret, /metrics its bearer token.

A raw gRPC call to svc-account (curl over cleartext HTTP/2, as any pod on
the network could make it) that claims to be a workspace owner is refused
without SEO_INTERNAL_TOKEN and served with it; the health check stays open
for probes. /metrics answers only the bearer of SEO_METRICS_TOKEN."""

import os
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(__file__))
import harness as h  # noqa: E402
from harness import check, eq, expect_error, test  # noqa: E402


def setup():
    s = h.Stack("internalauth")
    s.ws = s.workspace(credits=10)
    return s


def pb_string(field, text):
    raw = text.encode()
    return bytes([field << 3 | 2, len(raw)]) + raw


def grpc_raw(s, path, message, meta):
    """One unary call to svc-account by curl; its grpc-status (headers and
    trailers alike), or None when there was none. A refusal comes as soon
    as the headers are read, and the RST_STREAM(NO_ERROR) that follows it
    makes curl 7.88 drop the answer of a request whose body it was still
    sending: `message` None sends the headers alone."""
    addr = s.env[h.SERVICE_ENV["svc-account"]]
    with tempfile.TemporaryDirectory() as tmp:
        body = os.path.join(tmp, "req")
        with open(body, "wb") as f:
            f.write(b"\0" + len(message or b"").to_bytes(4, "big") + (message or b""))
        argv = ["curl", "-s", "--http2-prior-knowledge", "-X", "POST", "-D", "-", "-o",
                os.devnull, "--max-time", "10", "-H", "content-type: application/grpc",
                "-H", "te: trailers"]
        if message is not None:
            argv += ["--data-binary", "@" + body]
        for name, value in meta:
            argv += ["-H", "%s: %s" % (name, value)]
        out = subprocess.run(argv + ["http://%s%s" % (addr, path)],
                             capture_output=True, text=True, timeout=20)
    for line in out.stdout.splitlines():
        name, _, value = line.partition(":")
        if name.strip().lower() == "grpc-status":
            return int(value.strip())
    return None


def owner_meta(s):
    me = s.get("/v1/me", key=s.ws["api_key"]).json()
    return [("seo-workspace-id", s.ws["workspace_id"]), ("seo-user-id", me["id"]),
            ("seo-role", "owner")]


def key_count(s):
    return len(s.get("/v1/keys", key=s.ws["api_key"]).json()["keys"])


@test
def a_forged_owner_without_the_token_is_refused(s):
    before = key_count(s)
    create = "/seo.account.v1.Account/CreateKey"
    msg = pb_string(1, "forged")
    eq(grpc_raw(s, create, None, owner_meta(s)), 16, "UNAUTHENTICATED")
    eq(grpc_raw(s, create, None, owner_meta(s) + [("seo-internal-token", "x" * 43)]), 16,
       "another value: UNAUTHENTICATED")
    grpc_raw(s, create, msg, owner_meta(s))
    eq(key_count(s), before, "no key created")
    eq(grpc_raw(s, create, msg, owner_meta(s) + [("seo-internal-token",
                                                  s.env["SEO_INTERNAL_TOKEN"])]),
       0, "with the token: OK")
    eq(key_count(s), before + 1, "the key created with the token")


@test
def the_health_check_stays_open(s):
    eq(grpc_raw(s, "/grpc.health.v1.Health/Check", b"", []), 0, "health without the token")


@test
def metrics_need_their_bearer(s):
    r = s.get("/metrics")
    expect_error(r, 401, "invalid_api_key")
    check("Bearer" in (r.header("WWW-Authenticate") or ""), "WWW-Authenticate", r.headers)
    expect_error(s.get("/metrics", headers={"Authorization": "Bearer " + "y" * 43}), 401,
                 "invalid_api_key")
    expect_error(s.get("/metrics", key=s.ws["api_key"]), 401, "invalid_api_key")
    r = s.metrics()
    eq(r.status, 200)
    check(b"seo_credits" in r.body or b"seo_http_requests" in r.body, "the counters",
          r.body[:200])


@test
def services_and_gateway_refuse_to_start_without_the_token(s):
    for name in h.SERVICES + ["gateway"]:
        env = {k: v for k, v in s.env.items() if k != "SEO_INTERNAL_TOKEN"}
        out = subprocess.run([s.binary(name)], env=env, capture_output=True, text=True,
                             timeout=20)
        eq(out.returncode, 2, "%s exit status" % name)
        check("seo: SEO_INTERNAL_TOKEN: not set" in out.stderr, name, out.stderr)
        env["SEO_INTERNAL_TOKEN"] = "short"
        out = subprocess.run([s.binary(name)], env=env, capture_output=True, text=True,
                             timeout=20)
        eq(out.returncode, 2, "%s exit status with a short token" % name)
        check("SEO_INTERNAL_TOKEN: the value is shorter than 16 characters" in out.stderr,
              name, out.stderr)


if __name__ == "__main__":
    sys.exit(h.run(setup, lambda s: s.close()))

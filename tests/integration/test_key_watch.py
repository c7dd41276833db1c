"""Keys checked in the gateways' memory (issue 14): with two gateways that
have both served a key, a revocation through either answers only once
both forgot it, so the very next call through either fails; a removed
user's keys stop within the watch's round trip; a gateway whose watch is
cut (svc-account stopped) trusts nothing it kept. The rate limit is off
here: a key the limit counts is asked for at every call."""

import os
import sys
import time

sys.path.insert(0, os.path.dirname(__file__))
import harness as h  # noqa: E402
from harness import eq, expect_error, test  # noqa: E402

ROUNDS = 10
STAGES = "/v1/example/stages"


def setup():
    s = h.Stack("keywatch", env={"SEO_RATE_LIMIT_PER_MIN": "0"}, gateways=2)
    s.ws = s.workspace(credits=10)
    return s


def warm(s, key):
    """Both gateways serve the key a few times (and keep it)."""
    for port in s.gateways:
        for _ in range(3):
            eq(s.get("/v1/me", key=key, port=port).status, 200, "warm call")


@test
def revocation_fails_the_next_call_on_both_gateways(s):
    owner = s.ws["api_key"]
    for i in range(ROUNDS):
        via, other = (s.gateways if i % 2 == 0 else s.gateways[::-1])
        k = s.request("POST", "/v1/keys", key=owner, body={"name": "w%d" % i},
                      port=via).json()
        warm(s, k["key"])
        eq(s.request("DELETE", "/v1/keys/" + k["id"], key=owner, port=via).status,
           200, "revoked")
        expect_error(s.get("/v1/me", key=k["key"], port=other), 401, "invalid_api_key")
        expect_error(s.get("/v1/me", key=k["key"], port=via), 401, "invalid_api_key")


@test
def a_removed_users_keys_stop(s):
    member = s.seoctl("user", "add", "--workspace", s.ws["workspace_id"],
                      "--email", "m-%d@example.com" % h.free_port(), "--role", "member")
    key = member["api_key"]
    warm(s, key)
    s.seoctl("user", "remove", "--user", member["user_id"])
    deadline = time.time() + 2
    statuses = []
    while time.time() < deadline:
        statuses = [s.get("/v1/me", key=key, port=p).status for p in s.gateways]
        if statuses == [401, 401]:
            break
        time.sleep(0.02)
    eq(statuses, [401, 401], "the removed user's key on both gateways")


@test
def a_cut_watch_trusts_nothing(s):
    """/v1/example/stages is free and served by svc-example: a kept key
    needs no svc-account, until its watch is cut."""
    k = s.request("POST", "/v1/keys", key=s.ws["api_key"], body={"name": "cut"}).json()
    for port in s.gateways:
        for _ in range(3):
            eq(s.get(STAGES, key=k["key"], port=port).status, 200, "warm call")
    s.stop_service("svc-account")
    try:
        time.sleep(0.2)
        for port in s.gateways:
            expect_error(s.get(STAGES, key=k["key"], port=port), 503,
                         "service_unavailable")
    finally:
        s.start_service("svc-account")
        s.wait_healthy()
    eq(s.get(STAGES, key=k["key"]).status, 200, "back")


if __name__ == "__main__":
    sys.exit(h.run(setup, lambda s: s.close()))

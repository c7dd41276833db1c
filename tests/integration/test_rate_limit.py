"""The per-key rate limit holds across two gateway replicas serving the same
key: svc-account keeps the bucket, so the replicas share it."""

import os
import sys

sys.path.insert(0, os.path.dirname(__file__))
import harness as h  # noqa: E402
from harness import check, eq, expect_error, test  # noqa: E402

LIMIT = 5


def setup():
    s = h.Stack("ratelimit", env={"SEO_RATE_LIMIT_PER_MIN": str(LIMIT)}, gateways=2)
    s.ws = s.workspace(credits=10)
    return s


@test
def two_gateways_share_one_limit(s):
    key = s.ws["api_key"]
    a, b = s.gateways
    statuses = []
    remaining = []
    for i in range(LIMIT):
        r = s.get("/v1/me", key=key, port=a if i % 2 == 0 else b)
        statuses.append(r.status)
        remaining.append(int(r.header("RateLimit-Remaining")))
        eq(r.header("RateLimit-Limit"), str(LIMIT))
    eq(statuses, [200] * LIMIT, "first %d calls" % LIMIT)
    eq(remaining, sorted(remaining, reverse=True), "remaining counts down across replicas")
    for port in (a, b):
        r = s.get("/v1/me", key=key, port=port)
        body = expect_error(r, 429, "rate_limited")
        check(isinstance(body.get("retry_after"), int) and body["retry_after"] >= 1,
              "retry_after", body)
        eq(r.header("RateLimit-Remaining"), "0")
        check(not [k for k in body if k.startswith("ratelimit_")],
              "rate state only in headers", body)
        check(r.header("RateLimit-Reset") is not None, "reset header on 429")


@test
def limits_are_per_key(s):
    other = s.workspace(credits=10)
    eq(s.get("/v1/me", key=other["api_key"]).status, 200)


@test
def unauthenticated_routes_are_not_limited(s):
    for _ in range(LIMIT * 2):
        eq(s.get("/v1/pricing").status, 200)


if __name__ == "__main__":
    sys.exit(h.run(setup, lambda s: s.close()))

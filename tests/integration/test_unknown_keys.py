"""Trying keys is not free: after SEO_AUTH_FAILURES_PER_MIN unknown keys
from one address the gateway answers 429 with Retry-After before asking
svc-account, while a good key from another address (127.0.0.2) still works;
svc-account answers an unknown hash from its cache for a while, yet a key
created right after a probe of the same value works at once (the creator's
NOTIFY evicts it)."""

import hashlib
import os
import secrets
import sys
import time

sys.path.insert(0, os.path.dirname(__file__))
import harness as h  # noqa: E402
from harness import check, eq, expect_error, test  # noqa: E402

LIMIT = 10


def setup():
    s = h.Stack("unknownkeys", env={"SEO_AUTH_FAILURES_PER_MIN": str(LIMIT)})
    s.ws = s.workspace(credits=10)
    return s


def wrong_key():
    return "seo_" + secrets.token_hex(16)


@test
def many_wrong_keys_from_one_address_get_429(s):
    for i in range(LIMIT):
        expect_error(s.get("/v1/me", key=wrong_key()), 401, "invalid_api_key")
    r = s.get("/v1/me", key=wrong_key())
    body = expect_error(r, 429, "rate_limited")
    retry = r.header("Retry-After")
    check(retry is not None and 1 <= int(retry) <= 60, "Retry-After", r.headers)
    eq(body.get("retry_after"), int(retry), "retry_after in the body")
    # the address is refused before svc-account is asked, whatever the key
    expect_error(s.get("/v1/me", key=s.ws["api_key"]), 429, "rate_limited")
    # another address is not
    r = s.get("/v1/me", key=s.ws["api_key"], source="127.0.0.2")
    eq(r.status, 200, "a good key from 127.0.0.2")
    expect_error(s.get("/v1/me", key=wrong_key(), source="127.0.0.2"), 401,
                 "invalid_api_key")
    # a request without a key costs svc-account nothing and is told 401
    expect_error(s.get("/v1/me"), 401, "invalid_api_key")


def insert_key(s, key, notify):
    digest = hashlib.sha256(key.encode()).hexdigest()
    sql = ("INSERT INTO api_keys (id, workspace_id, user_id, name, last_four, created_at) "
           "VALUES ('%s', '%s', '%s', 'probe', '%s', 0)"
           % (digest, s.ws["workspace_id"], s.ws["user_id"], key[-4:]))
    if notify:
        # what svc-account's key creation does in its transaction
        sql = "BEGIN; %s; SELECT pg_notify('seo_auth', '%s'); COMMIT" % (sql, digest)
    s.db.query(sql)


def status_within(s, key, want, seconds):
    end = time.time() + seconds
    while True:
        r = s.get("/v1/me", key=key, source="127.0.0.3")
        if r.status == want or time.time() > end:
            return r.status
        time.sleep(0.05)


@test
def a_key_created_right_after_a_probe_works_at_once(s):
    hidden, created = wrong_key(), wrong_key()
    for key in (hidden, created):
        expect_error(s.get("/v1/me", key=key, source="127.0.0.3"), 401, "invalid_api_key")
    # written behind svc-account's back: the unknown hash is still cached
    insert_key(s, hidden, notify=False)
    expect_error(s.get("/v1/me", key=hidden, source="127.0.0.3"), 401, "invalid_api_key")
    # created as svc-account creates keys: works at once, not after 10 s
    t0 = time.time()
    insert_key(s, created, notify=True)
    eq(status_within(s, created, 200, 2), 200, "the new key")
    check(time.time() - t0 < 2, "at once", time.time() - t0)


if __name__ == "__main__":
    sys.exit(h.run(setup, lambda s: s.close()))

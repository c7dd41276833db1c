"""Configuration checked at start: a malformed SEO_* value stops every
process at once with exit status 2 and one line naming the variable and
the fault (seoctl: its JSON error), `./seo up` fails showing that line, and
a connect-to list of 500 entries is taken whole by a running stack."""

import json
import os
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(__file__))
import harness as h  # noqa: E402
from harness import check, eq, test  # noqa: E402

# (variable, value, fault): every list variable and one of each other kind.
BAD = [
    ("SEO_FETCH_CONNECT_TO", "a.test:80:127.0.0.1:81, b.test:80",
     'entry 2 "b.test:80" is not HOST:PORT:CONNECT_HOST:CONNECT_PORT'),
    ("SEO_FETCH_CONNECT_TO", "a.test:80:127.0.0.1:99999",
     'entry 1 "a.test:80:127.0.0.1:99999" is not HOST:PORT:CONNECT_HOST:CONNECT_PORT'),
    ("SEO_FETCH_ALLOW_NETS", "127.0.0.0/8, 10.0.0.0/40",
     'entry 2 "10.0.0.0/40" is not an address or a CIDR network'),
    ("SEO_FETCH_ALLOW_NETS", "localhost",
     'entry 1 "localhost" is not an address or a CIDR network'),
    ("SEO_RPC_TIMEOUT_MS", "abc", '"abc" is not a whole number of milliseconds'),
    ("SEO_HTTP_BODY_LIMIT", "0", '"0" is out of range: 1 to 1073741824 bytes'),
    ("SEO_RATE_LIMIT_PER_MIN", "sixty", '"sixty" is not a whole number of requests per minute'),
    ("SEO_LOG_LEVEL", "verbose", '"verbose" is not one of debug, info, warn, error'),
    ("SEO_CHALLENGE", "true", '"true" is neither on nor off'),
    ("SEO_HTTP_ADDR", "8080", '"8080" is not a host:port address'),
    ("SEO_GRAPH_ADDR", "127.0.0.1:99999", '"127.0.0.1:99999" is not a host:port address'),
    ("SEO_PAGESPEED_URL", "www.googleapis.com", '"www.googleapis.com" is not an http or https URL'),
    ("SEO_SMTP_URL", "mail.test:25", '"mail.test:25" is not an smtp or smtps URL'),
    ("SEO_MAIL_FROM", "noreply", '"noreply" is not an email address'),
    ("SEO_HTTP_TLS_CERT", "/nonexistent/cert.pem", '"/nonexistent/cert.pem" is not a readable file'),
    ("SEO_MIGRATIONS_DIR", "/nonexistent", '"/nonexistent" is not a directory'),
    ("SEO_PG_URL", "host", "the value is not a postgresql:// URL or a key=value connection string"),
    ("SEO_INTERNAL_TOKEN", "short", "the value is shorter than 16 characters"),
    ("SEO_AUTH_FAILURES_PER_MIN", "-1",
     '"-1" is out of range: 0 to 1000000 failed authentications per minute'),
]

# Every program with its arguments: each must refuse before doing anything.
PROGRAMS = [[p] for p in h.SERVICES] + [["gateway"], ["seoctl", "migrate"],
                                          ["seo-ingest", "--demo", "--out", "unused"]]


class Ctx:
    pass


def clean_env(tmp):
    """The environment without any SEO_* value, on fresh ports, with a
    database URL that is never reached."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("SEO_")}
    env["SEO_PG_URL"] = "postgresql://seo@127.0.0.1:%d/none" % h.closed_port()
    env["SEO_HTTP_ADDR"] = "127.0.0.1:%d" % h.free_port()
    env["SEO_DATA_DIR"] = os.path.join(tmp, "graph")
    for var in h.SERVICE_ENV.values():
        env[var] = "127.0.0.1:%d" % h.free_port()
    return env


def setup():
    c = Ctx()
    c.tmp = tempfile.mkdtemp(prefix="seo-it-config-")
    c.stack = None
    return c


def teardown(c):
    return c.stack.close() if c.stack is not None else None


def refusal(argv, env, cwd):
    """Runs one program that must stop at once; its status and stderr."""
    path = os.path.join(h.BIN, argv[0])
    if not os.path.exists(path):
        raise h.Skip("%s is not built" % argv[0])
    t0 = time.time()
    try:
        r = subprocess.run([path] + argv[1:], env=env, cwd=cwd, capture_output=True,
                           text=True, timeout=20)
    except subprocess.TimeoutExpired:
        raise AssertionError("%s kept running with a bad value" % argv[0])
    check(time.time() - t0 < 10, "%s stopped at once" % argv[0])
    return r.returncode, r.stderr


@test
def bad_values_stop_every_process(c):
    for var, value, fault in BAD:
        env = dict(clean_env(c.tmp), **{var: value})
        want = "%s: %s" % (var, fault)
        for argv in PROGRAMS:
            code, err = refusal(argv, env, c.tmp)
            eq(code, 2, "%s exit status with %s=%r" % (argv[0], var, value))
            if argv[0] == "seoctl":
                doc = json.loads(err)
                eq((doc["error"], doc["message"]), ("invalid_configuration", want), "seoctl")
            else:
                eq(err.strip().splitlines()[-1:], ["seo: " + want], argv[0])
            check(not os.path.exists(os.path.join(c.tmp, "unused")), "seo-ingest wrote nothing")


@test
def seo_up_fails_showing_the_message(c):
    seo = os.path.join(h.SOURCE_DIR, "seo")
    # `up` first installs what is missing; in a tree without the OpenAPI
    # linter that would be a download, not this test's business.
    if not os.path.exists(os.path.join(h.SOURCE_DIR, "var", "npm", "node_modules", ".bin",
                                       "redocly")):
        raise h.Skip("var/npm is not installed (./seo deps)")
    env = clean_env(c.tmp)
    env["SEO_PG_URL"] = os.environ.get("SEO_TEST_PG_URL") or env["SEO_PG_URL"]
    env["SEO_FETCH_CONNECT_TO"] = "a.test:80:127.0.0.1:81, b.test:80"
    r = subprocess.run([seo, "up"], env=env, cwd=h.SOURCE_DIR, capture_output=True,
                       text=True, timeout=540)
    check(r.returncode != 0, "./seo up failed", r.stdout)
    eq(r.stderr.strip().splitlines()[-1:],
       ['seo: SEO_FETCH_CONNECT_TO: entry 2 "b.test:80" is not '
        'HOST:PORT:CONNECT_HOST:CONNECT_PORT'], "./seo up's last words")
    eq(r.stdout, "", "no JSON line")


@test
def connect_to_of_500_entries(c):
    site = h.Fake("site_server.py")
    try:
        entries = ["h%d.test:80:127.0.0.1:1" % i for i in range(499)]
        entries.append("pg1.test:80:127.0.0.1:%d" % site.port)
        c.stack = h.Stack("config", env={
            "SEO_FETCH_ALLOW_NETS": "127.0.0.0/8",
            "SEO_FETCH_CONNECT_TO": ",".join(entries),
        })
        c.logs = c.stack.logs
        key = c.stack.workspace(credits=100)["api_key"]
        r = c.stack.get("/v1/page-seo?url=http%3A%2F%2Fpg1.test%2F", key=key)
        eq(r.status, 200, "page-seo through the 500th entry: %r" % r)
        d = r.json()["data"]
        eq((d["final_url"], d["status_code"]), ("http://pg1.test/", 200))
    finally:
        site.close()


if __name__ == "__main__":
    sys.exit(h.run(setup, teardown))

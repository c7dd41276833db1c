"""Integration test harness: starts the real processes against a real
PostgreSQL and talks HTTP to the gateway.

Each test program gets its own database (created on the server named by
SEO_TEST_PG_URL, dropped at exit) and its own ports, so programs run in
parallel under ctest. External providers are faked by the small servers in
tests/fakes, which speak the provider's wire format.

Only the standard library is used, so that Debian's /usr/bin/python3 runs it.
"""

import atexit
import datetime
import http.client
import json
import os
import random
import secrets
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
import traceback
import urllib.parse

SOURCE_DIR = os.environ.get(
    "SEO_SOURCE_DIR",
    os.path.abspath(os.path.join(os.path.dirname(__file__), "..", "..")))
BUILD_DIR = os.environ.get("SEO_BUILD_DIR", os.path.join(SOURCE_DIR, "build"))
BIN = os.path.join(BUILD_DIR, "bin")


def sanitized():
    """True when BUILD_DIR is a sanitizer build (./seo build asan): a test's
    latency bounds are for release builds."""
    try:
        with open(os.path.join(BUILD_DIR, "CMakeCache.txt")) as f:
            return "SEO_SANITIZE:BOOL=ON" in f.read()
    except OSError:
        return False


def registry():
    """The service registry (registry/services.def) as `seoctl services`
    prints it: one dict per service, in registry order."""
    out = subprocess.run([os.path.join(BIN, "seoctl"), "services"],
                         capture_output=True, text=True, check=True)
    return json.loads(out.stdout)["services"]


REGISTRY = registry()
SERVICES = [s["process"] for s in REGISTRY]
SERVICE_ENV = {s["process"]: s["addr_env"] for s in REGISTRY}


def tls_cert(d, hosts):
    """A self-signed certificate for `hosts` (the HTTPS test sites) and its
    key, written in directory `d`; returns their paths."""
    cert, key = os.path.join(d, "cert.pem"), os.path.join(d, "key.pem")
    subprocess.run(["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes",
                    "-keyout", key, "-out", cert, "-days", "2", "-subj", "/CN=sites.test",
                    "-addext", "subjectAltName=" + ",".join("DNS:" + n for n in hosts)],
                   check=True, capture_output=True)
    return cert, key


class Skip(Exception):
    pass


# Everything started is stopped when the test program ends, however it
# ends: a child left running would hold ctest's output pipe open.
_children = []


@atexit.register
def _stop_children():
    for proc in _children:
        if proc.poll() is None:
            proc.kill()
            proc.wait()


# Ports handed out come from below the kernel's ephemeral range, which
# every outgoing connection draws its source port from: a port the kernel
# picked for us (bind to 0) may be taken by any client socket, or by
# another test that was handed the same one, before our process binds it.
# Nor is a port handed twice in one test program: two services of a stack
# given the same free port would both be told it is free. A port handed
# stays reserved until the program ends: a socket bound to it with
# SO_REUSEADDR and never listened on lets our processes (which set
# SO_REUSEADDR, as PostgreSQL does) bind and listen there, while another
# test's check, a bind without it, finds the port taken. So no other test
# takes it between our choice and our process's bind, nor while one of
# our processes restarts on it.
_PORTS = (20000, 32767)
_handed = set()
_reserved = []


def free_port():
    while True:
        port = random.randint(*_PORTS)
        if port in _handed:
            continue
        _handed.add(port)
        with socket.socket() as s:
            try:
                s.bind(("127.0.0.1", port))
            except OSError:
                continue
        keep = socket.socket()
        keep.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            keep.bind(("127.0.0.1", port))
        except OSError:
            keep.close()
            continue
        _reserved.append(keep)
        return port


# Sockets bound and never listened on, kept for the program's life.
_closed = []


def closed_port():
    """A port where connections are refused for as long as this test
    program runs: bound, never listened on (a port merely free now may be
    listened on by another test's process later)."""
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    _closed.append(s)
    return s.getsockname()[1]


def pg_bin(name):
    root = "/usr/lib/postgresql"
    versions = sorted(os.listdir(root), key=lambda v: [int(x) for x in v.split(".")])
    return os.path.join(root, versions[-1], "bin", name)


class Database:
    """A fresh database on the test server, dropped by close()."""

    def __init__(self, label):
        base = os.environ.get("SEO_TEST_PG_URL")
        if not base:
            raise Skip("SEO_TEST_PG_URL is not set")
        self.admin_url = base
        self.name = "it_%s_%d" % (label, os.getpid())
        self.psql(base, "DROP DATABASE IF EXISTS %s" % self.name)
        self.psql(base, "CREATE DATABASE %s" % self.name)
        parts = urllib.parse.urlsplit(base)
        self.url = urllib.parse.urlunsplit(parts._replace(path="/" + self.name))

    @staticmethod
    def psql(url, sql):
        out = subprocess.run([pg_bin("psql"), url, "-AtqX", "-v", "ON_ERROR_STOP=1",
                              "-c", sql], capture_output=True, text=True)
        if out.returncode != 0:
            raise RuntimeError("psql failed: %s" % out.stderr.strip())
        return out.stdout.strip()

    def query(self, sql):
        return self.psql(self.url, sql)

    def close(self):
        try:
            self.psql(self.admin_url, "DROP DATABASE IF EXISTS %s WITH (FORCE)" % self.name)
        except RuntimeError as e:
            print("warning: %s" % e)


class Process:
    def __init__(self, name, argv, env, log_dir):
        self.name = name
        self.log_path = os.path.join(log_dir, "%s.log" % name)
        self.log = open(self.log_path, "wb")
        self.proc = subprocess.Popen(argv, env=env, stdout=self.log,
                                     stderr=subprocess.STDOUT)
        _children.append(self.proc)

    def stop(self, sig=signal.SIGTERM):
        if self.proc.poll() is None:
            self.proc.send_signal(sig)
            try:
                self.proc.wait(10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        self.log.close()
        return self.proc.returncode

    def tail(self, n=30):
        try:
            with open(self.log_path, "rb") as f:
                return b"\n".join(f.read().splitlines()[-n:]).decode("utf-8", "replace")
        except OSError:
            return ""


class Response:
    def __init__(self, status, headers, body):
        self.status = status
        self.headers = headers
        self.body = body

    def json(self):
        return json.loads(self.body)

    def header(self, name):
        for k, v in self.headers:
            if k.lower() == name.lower():
                return v
        return None

    def __repr__(self):
        return "<%d %s>" % (self.status, self.body[:300])


class PortTaken(RuntimeError):
    """A process of a stack could not listen on the port it was given."""


class Stack:
    """The services and one or more gateways, on fresh ports and a fresh
    database. `env` adds SEO_* variables for every process."""

    def __init__(self, label, env=None, gateways=1, services=None):
        self.db = Database(label)
        self.tmp = tempfile.mkdtemp(prefix="seo-it-%s-" % label)
        self.env = dict(os.environ)
        self.env.update({
            "SEO_PG_URL": self.db.url,
            "SEO_LOG_LEVEL": "info",
            "SEO_DATA_DIR": os.path.join(self.tmp, "graph"),
            "SEO_MIGRATIONS_DIR": os.path.join(SOURCE_DIR, "svc-account", "migrations"),
            "SEO_REALTIME_MIGRATIONS_DIR": os.path.join(SOURCE_DIR, "svc-realtime",
                                                        "migrations"),
            "SEO_AGENT_MIGRATIONS_DIR": os.path.join(SOURCE_DIR, "svc-agent", "migrations"),
            # No test reaches the real PageSpeed API; those that call it
            # pass their fake (tests/fakes/fake_pagespeed.py) in `env`.
            "SEO_PAGESPEED_URL": "http://127.0.0.1:9",
            # Nor IndexNow (tests/fakes/fake_indexnow.py).
            "SEO_INDEXNOW_URL": "http://127.0.0.1:9/indexnow",
            # The shared secrets of this stack (./seo up keeps its own
            # under var/).
            "SEO_INTERNAL_TOKEN": secrets.token_urlsafe(32),
            "SEO_METRICS_TOKEN": secrets.token_urlsafe(32),
        })
        self.procs = {}
        self.gateways = []
        self.closed = False
        for attempt in range(3):
            for var in SERVICE_ENV.values():
                self.env[var] = "127.0.0.1:%d" % free_port()
            self.env.update(env or {})
            try:
                if "svc-graph" in (services or SERVICES):
                    self.build_demo_index()
                for name in services or SERVICES:
                    self.start_service(name)
                for i in range(gateways):
                    self.start_gateway()
                self.wait_healthy()
                return
            except PortTaken:
                # another test bound one of our ports first: again, on
                # fresh ports
                self.stop_all()
                if attempt == 2:
                    self.close()
                    raise
            except BaseException:
                self.close()
                raise

    def stop_all(self):
        for p in self.procs.values():
            p.stop()
        self.procs = {}
        self.gateways = []

    def binary(self, name):
        """A built program; one missing is a broken build, not a skip."""
        path = os.path.join(BIN, name)
        if not os.path.exists(path):
            raise RuntimeError("%s is not built" % name)
        return path

    def build_demo_index(self):
        """The deterministic demo crawl, as `./seo up` builds it."""
        out = self.env["SEO_DATA_DIR"]
        if os.path.exists(out) or not os.path.exists(os.path.join(BIN, "seo-ingest")):
            return
        r = subprocess.run([os.path.join(BIN, "seo-ingest"), "--demo", "--out", out],
                           env=self.env, capture_output=True, text=True)
        if r.returncode != 0:
            raise RuntimeError("seo-ingest --demo failed: %s" % r.stderr[-2000:])

    def start_service(self, name):
        self.procs[name] = Process(name, [self.binary(name)], self.env, self.tmp)

    def stop_service(self, name):
        self.procs.pop(name).stop()

    def start_gateway(self, env=None):
        """Starts one more gateway (`env` adds variables for it alone) and
        returns its port; its process is procs["gateway<i>"]."""
        port = free_port()
        env = dict(self.env, SEO_HTTP_ADDR="127.0.0.1:%d" % port, **(env or {}))
        name = "gateway%d" % len(self.gateways)
        self.procs[name] = Process(name, [self.binary("gateway")], env, self.tmp)
        self.gateways.append(port)
        return port

    def _check_alive(self):
        for p in self.procs.values():
            if p.proc.poll() is not None:
                tail = p.tail()
                if "cannot listen" in tail or "could not start the gateway" in tail:
                    raise PortTaken("%s exited:\n%s" % (p.name, tail))
                raise RuntimeError("%s exited:\n%s" % (p.name, tail))

    def wait_healthy(self, timeout=30):
        """Every gateway answers /healthz and every service of the stack
        listens; a gateway can be healthy before a service has failed to
        bind, so the services are waited for too."""
        deadline = time.time() + timeout
        last = None
        for port in self.gateways:
            while time.time() < deadline:
                try:
                    last = self.request("GET", "/healthz", port=port)
                    if last.status == 200:
                        break
                except (OSError, http.client.HTTPException) as e:
                    # HTTPException: something else answers on the port
                    last = e
                self._check_alive()
                time.sleep(0.1)
            else:
                raise RuntimeError("gateway not healthy: %r" % (last,))
        for name in self.procs:
            if name not in SERVICE_ENV:
                continue
            host, port = self.env[SERVICE_ENV[name]].rsplit(":", 1)
            while True:
                self._check_alive()
                try:
                    socket.create_connection((host, int(port)), timeout=1).close()
                    break
                except OSError as e:
                    last = e
                if time.time() >= deadline:
                    raise RuntimeError("%s not listening: %r" % (name, last))
                time.sleep(0.1)
        # a process that failed to bind after answering once is seen here
        self._check_alive()

    @property
    def base_url(self):
        return "http://127.0.0.1:%d" % self.gateways[0]

    def request(self, method, path, key=None, body=None, headers=None,
                port=None, raw_body=None, timeout=30, source=None):
        """`source`: the local address to connect from (e.g. 127.0.0.2,
        another client address on the loopback)."""
        conn = http.client.HTTPConnection("127.0.0.1", port or self.gateways[0],
                                          timeout=timeout,
                                          source_address=(source, 0) if source else None)
        hdrs = dict(headers or {})
        data = None
        if key is not None:
            hdrs["X-API-Key"] = key
        if body is not None:
            data = json.dumps(body).encode()
            hdrs["Content-Type"] = "application/json"
        if raw_body is not None:
            data = raw_body
        try:
            conn.request(method, path, body=data, headers=hdrs)
            r = conn.getresponse()
            return Response(r.status, r.getheaders(), r.read())
        finally:
            conn.close()

    def get(self, path, key=None, **kw):
        return self.request("GET", path, key=key, **kw)

    def metrics(self, port=None):
        """GET /metrics with the stack's bearer token."""
        return self.get("/metrics", port=port, headers={
            "Authorization": "Bearer " + self.env["SEO_METRICS_TOKEN"]})

    def seoctl(self, *args, expect_ok=True):
        out = subprocess.run([self.binary("seoctl")] + list(args), env=self.env,
                             capture_output=True, text=True)
        if expect_ok:
            if out.returncode != 0:
                raise AssertionError("seoctl %s failed: %s" % (" ".join(args), out.stderr))
            return json.loads(out.stdout)
        return out

    def workspace(self, credits=1000, email=None):
        email = email or "owner-%d@example.com" % free_port()
        return self.seoctl("workspace", "create", "--name", "Test", "--email", email,
                           "--credits", str(credits))

    def logs(self):
        return "\n".join("--- %s\n%s" % (n, p.tail()) for n, p in self.procs.items())

    def close(self):
        """Stops every process; returns a description of those that did not
        exit cleanly (a sanitizer report exits non-zero), or None."""
        if self.closed:
            return None
        self.closed = True
        bad = []
        # Gateways first, as ./seo down does: a draining gateway refunds
        # through svc-account.
        for name, p in sorted(self.procs.items(),
                              key=lambda kv: not kv[0].startswith("gateway")):
            code = p.stop()
            if code != 0:
                bad.append("%s exited with %s:\n%s" % (name, code, p.tail(60)))
        self.db.close()
        return "\n".join(bad) or None


class Fake:
    """A fake external provider from tests/fakes: prints its port on its
    first line of output."""

    def __init__(self, script, *args):
        path = os.path.join(SOURCE_DIR, "tests", "fakes", script)
        if not os.path.exists(path):
            raise Skip("%s is missing" % script)
        self.log = tempfile.TemporaryFile()
        self.proc = subprocess.Popen([sys.executable, path] + list(args),
                                     stdout=subprocess.PIPE, stderr=self.log, text=True)
        _children.append(self.proc)
        line = self.proc.stdout.readline()
        if not line:
            raise RuntimeError("%s did not start" % script)
        self.port = int(line.split()[-1])

    @property
    def url(self):
        return "http://127.0.0.1:%d" % self.port

    def close(self):
        self.proc.terminate()
        self.proc.wait(5)
        self.log.close()


# ---- a tiny runner -----------------------------------------------------

class PgCluster:
    """A PostgreSQL cluster of this test alone, under a temporary directory
    on a free port, so that it can be stopped and started (as the postgres
    user when run as root, as ./seo pg does)."""

    def __init__(self):
        self.initdb = pg_bin("initdb")
        if not os.path.exists(self.initdb):
            raise Skip("initdb is not installed")
        self.home = tempfile.mkdtemp(prefix="seo-it-pg-")
        self.data = os.path.join(self.home, "data")
        if os.getuid() == 0:
            shutil.chown(self.home, "postgres")
        self.run(self.initdb, "-D", self.data, "-U", "seo", "-A", "trust", "-E", "UTF8",
                 "--no-locale")
        conf = os.path.join(self.data, "postgresql.conf")
        with open(conf) as f:
            base = f.read()
        # The port is free when chosen, and may be taken by another test's
        # process before the server binds it (initdb takes seconds): again,
        # on another port.
        for attempt in range(3):
            self.port = free_port()
            with open(conf, "w") as f:
                f.write(base + "listen_addresses = '127.0.0.1'\nport = %d\n"
                        "unix_socket_directories = ''\n" % self.port)
            try:
                self.start()
                break
            except RuntimeError:
                if attempt == 2 or "already in use" not in self.log_tail():
                    raise
        self.url = "postgresql://seo@127.0.0.1:%d/postgres" % self.port

    def log_tail(self):
        try:
            with open(os.path.join(self.home, "log"), errors="replace") as f:
                return f.read()[-2000:]
        except OSError:
            return ""

    def run(self, *argv):
        if os.getuid() == 0:
            argv = ("runuser", "-u", "postgres", "--") + argv
        r = subprocess.run(argv, capture_output=True, text=True)
        if r.returncode != 0:
            raise RuntimeError("%s failed: %s" % (argv[0], r.stderr[-2000:]))

    def start(self):
        self.run(pg_bin("pg_ctl"), "-D", self.data, "-l",
                 os.path.join(self.home, "log"), "-w", "-t", "60", "start")

    def stop(self):
        self.run(pg_bin("pg_ctl"), "-D", self.data, "-m", "fast", "-w", "stop")

    def close(self):
        try:
            self.stop()
        except RuntimeError:
            pass
        shutil.rmtree(self.home, ignore_errors=True)


def reconcile_tomorrow(s):
    """The reconcile job as of tomorrow: past every settle time and grace.
    How many debits it refunded."""
    at = (datetime.datetime.now(datetime.timezone.utc) + datetime.timedelta(days=1))
    return s.seoctl("job", "run", "reconcile", "--at",
                    at.strftime("%Y-%m-%dT%H:%M:%SZ"))["done"]


def clear_of_the_hourly_job(minute, window=30):
    """svc-agent's scheduler runs its hourly jobs on the real clock
    (svc-agent/lib/jobs.c: freeze at :00, expire at :05, indexnow-retry at
    :35). A test whose data such a run would change starts at least
    `window` s before the run at `minute`, else 5 s after its instant (the
    scheduler wakes within 1 s)."""
    since = (time.time() - minute * 60) % 3600
    if since < 5:
        time.sleep(5 - since)
    elif since > 3600 - window:
        time.sleep(3600 - since + 5)


def open_charges(s, wid):
    """The workspace's debits whose outcome nobody reported yet."""
    return int(s.db.query("SELECT count(*) FROM usage_all WHERE workspace_id = '%s' "
                          "AND outcome IS NULL" % wid))


def wait_reported(s, wid, timeout=60):
    """Waits until every debit of the workspace has its outcome, as once the
    gateways' reports (a 50 ms flush, retries up to 5 s apart) are in; for
    when no debit can have lost its caller (the reconcile job would refund a
    call answered 200 whose report was still on its way). Fails at
    `timeout`."""
    deadline = time.time() + timeout
    while open_charges(s, wid) > 0:
        check(time.time() < deadline, "outcomes reported within %d s" % timeout,
              open_charges(s, wid))
        time.sleep(0.1)


def billed_load(s, path, key, fault, ports=(None,), per_port=8, after_s=2):
    """`per_port` clients per gateway port (None: the first) calling `path`
    with `key` while fault() runs, 1 s into the load and `after_s` before
    its end; their statuses (0: no answer)."""
    stop = threading.Event()
    statuses = []
    lock = threading.Lock()

    def client(port):
        while not stop.is_set():
            try:
                st = s.get(path, key=key, port=port, timeout=60).status
            except OSError:
                st = 0
            with lock:
                statuses.append(st)

    threads = [threading.Thread(target=client, args=(p,))
               for p in ports for _ in range(per_port)]
    for t in threads:
        t.start()
    try:
        time.sleep(1)
        fault()
        time.sleep(after_s)
    finally:
        stop.set()
        for t in threads:
            t.join()
    return statuses


def conserved(s, wid, granted):
    """Checks that the ledger sums to the balance and that the balance plus
    what open credit leases hold (the customer's too, lease.h) plus what
    usage rows say was earned is `granted`, all read in one snapshot (a
    lease's report moves credits between them); (balance, earned)."""
    row = s.db.query(
        "SELECT (SELECT balance FROM workspaces WHERE id = '{w}') || ',' || "
        "(SELECT coalesce(sum(credits_used), 0) FROM usage_all WHERE workspace_id = '{w}') "
        "|| ',' || (SELECT sum(delta) FROM ledger WHERE workspace_id = '{w}') || ',' || "
        "(SELECT coalesce(sum(granted - used), 0) FROM credit_leases "
        "WHERE workspace_id = '{w}' AND closed_at IS NULL)".format(w=wid))
    balance, earned, ledger, held = (int(x) for x in row.split(","))
    eq(ledger, balance, "ledger sum equals the balance")
    eq(balance + held + earned, granted,
       "balance plus leases plus credits earned equals the grant")
    return balance, earned


_tests = []


def test(fn):
    _tests.append(fn)
    return fn


def check(cond, what, *detail):
    if not cond:
        raise AssertionError(what + ("" if not detail else ": " + " ".join(repr(d) for d in detail)))


def eq(actual, expected, what=""):
    if actual != expected:
        raise AssertionError("%s: expected %r, got %r" % (what or "value", expected, actual))


def expect_error(resp, status, code):
    if resp.status != status:
        raise AssertionError("expected %d %s, got %r" % (status, code, resp))
    body = resp.json()
    for field in ("error", "code", "message"):
        check(field in body, "error object lacks %s" % field, body)
    eq(body["code"], code, "error code")
    return body


def run(setup=None, teardown=None):
    """Runs every @test function in order with the object setup() returns.
    Prints one line per test and a closing 'N passed, N failed' line."""
    passed = failed = skipped = 0
    ctx = None
    try:
        ctx = setup() if setup else None
    except Skip as e:
        print("skipped: %s" % e)
        print("0 passed, 0 failed, 1 skipped")
        return 0
    try:
        for fn in _tests:
            name = fn.__name__
            t0 = time.time()
            try:
                fn(ctx) if setup else fn()
                passed += 1
                print("PASS %s (%.2fs)" % (name, time.time() - t0), flush=True)
            except Skip as e:
                skipped += 1
                print("SKIP %s: %s" % (name, e), flush=True)
            except Exception:
                failed += 1
                print("FAIL %s\n%s" % (name, traceback.format_exc()), flush=True)
                if ctx is not None and hasattr(ctx, "logs"):
                    print(ctx.logs())
    finally:
        if teardown and ctx is not None:
            problem = teardown(ctx)
            if problem:
                failed += 1
                print("FAIL teardown\n%s" % problem, flush=True)
    print("%d passed, %d failed, %d skipped" % (passed, failed, skipped))
    return 1 if failed else 0


def parallel(n, fn):
    """Runs fn(i) on n threads at once; returns the results in order."""
    results = [None] * n
    barrier = threading.Barrier(n)

    def work(i):
        barrier.wait()
        try:
            results[i] = fn(i)
        except Exception as e:  # reported by the caller's assertions
            results[i] = e

    threads = [threading.Thread(target=work, args=(i,)) for i in range(n)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    return results

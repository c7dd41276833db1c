"""The supervised local stack (issue 12, finding 11): `./seo up` runs every
process under seo-supervise, on free ports (every SEO_*_ADDR) and its own
state directory (SEO_VAR_DIR). Each process SIGKILLed in turn is back,
/healthz 200, within 2 seconds, and the billed calls that failed meanwhile
charged nothing; `up` again is harmless and prints the same line; a process
that cannot start fails `up` with its log; `./seo down` leaves no process of
the stack. A second stack on a throwaway local
cluster (SEO_LOCAL_PG_PORT) shows that `down` stops the cluster `up`
started, and that a cluster already on that port is named.

`./seo up` builds and runs the release tree (build/), so the test runs in
the release pass of `./seo test` only (the ASan pass would run the same
processes again).
"""

import http.client
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(__file__))
import harness as h  # noqa: E402
from harness import check, eq, test  # noqa: E402

SEO = os.path.join(h.SOURCE_DIR, "seo")
RELEASE_BIN = os.path.join(h.SOURCE_DIR, "build", "bin")
BILLED = "/v1/domain-authority?domain=no-such-domain-in-demo.com"
BACK_WITHIN_S = 2.0


class Local:
    """One `./seo up` stack: its environment, state directory and line."""

    def __init__(self, label, env):
        self.var = tempfile.mkdtemp(prefix="seo-it-%s-" % label)
        # the local cluster runs as the postgres user when we are root
        os.chmod(self.var, 0o755)
        self.env = dict(env, SEO_VAR_DIR=self.var)
        self.env["SEO_HTTP_ADDR"] = "127.0.0.1:%d" % h.free_port()
        for var in h.SERVICE_ENV.values():
            self.env[var] = "127.0.0.1:%d" % h.free_port()
        self.port = int(self.env["SEO_HTTP_ADDR"].rsplit(":", 1)[1])
        self.line = None

    def seo(self, *args, timeout=300):
        return subprocess.run([SEO] + list(args), env=self.env, cwd=h.SOURCE_DIR,
                              capture_output=True, text=True, timeout=timeout)

    def up(self):
        r = self.seo("up")
        if r.returncode != 0:
            raise AssertionError("./seo up failed:\n%s\n%s" % (r.stderr[-3000:], self.logs()))
        return json.loads(r.stdout.strip().splitlines()[-1])

    def status(self):
        with open(os.path.join(self.var, "run", "supervise.json")) as f:
            return json.load(f)

    def pid_of(self, name):
        return {p["name"]: p for p in self.status()["processes"]}[name]

    def get(self, path, key=None, timeout=10):
        conn = http.client.HTTPConnection("127.0.0.1", self.port, timeout=timeout)
        try:
            conn.request("GET", path, headers={"X-API-Key": key} if key else {})
            r = conn.getresponse()
            return h.Response(r.status, r.getheaders(), r.read())
        finally:
            conn.close()

    def logs(self):
        out = []
        logdir = os.path.join(self.var, "log")
        for name in sorted(os.listdir(logdir)) if os.path.isdir(logdir) else []:
            with open(os.path.join(logdir, name), "rb") as f:
                tail = f.read().splitlines()[-15:]
            out.append("--- %s\n%s" % (name, b"\n".join(tail).decode("utf-8", "replace")))
        return "\n".join(out)

    def processes(self):
        """Every live process of this stack: a program of the release tree
        whose environment names this stack's state directory."""
        mark = ("SEO_VAR_DIR=%s" % self.var).encode()
        found = []
        for pid in filter(str.isdigit, os.listdir("/proc")):
            try:
                with open("/proc/%s/stat" % pid) as f:
                    if f.read().rsplit(")", 1)[1].split()[0] == "Z":
                        continue
                exe = os.readlink("/proc/%s/exe" % pid)
                with open("/proc/%s/environ" % pid, "rb") as f:
                    env = f.read().split(b"\0")
            except OSError:
                continue
            if exe.startswith(RELEASE_BIN + os.sep) and mark in env:
                found.append("%s %s" % (pid, os.path.basename(exe)))
        return found

    def close(self):
        if self.line is not None:
            self.seo("down")
        shutil.rmtree(self.var, ignore_errors=True)


def base_env():
    env = dict(os.environ)
    for k in list(env):
        if k.startswith("SEO_") and k not in ("SEO_TEST_PG_URL", "SEO_SOURCE_DIR",
                                              "SEO_BUILD_DIR"):
            del env[k]
    env.update({
        "SEO_LOG_LEVEL": "info",
        "SEO_PAGESPEED_URL": "http://127.0.0.1:9",
        # the test's billed calls come faster than a key's 60 a minute
        "SEO_RATE_LIMIT_PER_MIN": "0",
    })
    return env


class Ctx:
    pass


def setup():
    if os.path.realpath(h.BIN) != os.path.realpath(RELEASE_BIN):
        raise h.Skip("./seo up runs the release tree (build/), tested with that tree")
    # `up` first installs what is missing; a download is not this test's
    # business.
    if not os.path.exists(os.path.join(h.SOURCE_DIR, "var", "npm", "node_modules", ".bin",
                                       "redocly")):
        raise h.Skip("var/npm is not installed (./seo deps)")
    c = Ctx()
    c.db = h.Database("super")
    c.local = None
    c.stack = Local("super", dict(base_env(), SEO_PG_URL=c.db.url))
    try:
        c.stack.line = c.stack.up()
    except BaseException:
        c.stack.close()
        c.db.close()
        raise
    c.key = c.stack.line["api_key"]
    return c


def teardown(c):
    c.stack.close()
    if c.local is not None:
        c.local.close()
    c.db.close()


def credits(c):
    r = c.stack.get("/v1/credits", key=c.key)
    eq(r.status, 200, "credits %r" % r)
    return r.json()["credits"]


@test
def up_prints_the_line(c):
    eq(sorted(c.stack.line), ["api_key", "base_url", "workspace_id"], "the line's fields")
    eq(c.stack.line["base_url"], "http://%s" % c.stack.env["SEO_HTTP_ADDR"], "base_url")
    names = [p["name"] for p in c.stack.status()["processes"]]
    eq(names, h.SERVICES + ["gateway"], "the supervisor runs the registry's processes")
    eq(c.stack.get("/healthz").status, 200, "healthz")


@test
def each_process_killed_is_back_within_two_seconds(c):
    for name in h.SERVICES + ["gateway"]:
        before = credits(c)
        old = c.stack.pid_of(name)
        check(old["state"] == "running" and old["pid"], "%s runs" % name, old)
        os.kill(old["pid"], signal.SIGKILL)
        t0 = time.monotonic()
        spent = 0
        failed = 0
        named = []
        back = None
        # billed calls one after another, none in flight at the kill, until
        # /healthz answers 200 again
        while time.monotonic() - t0 < 10:
            try:
                r = c.stack.get(BILLED, key=c.key, timeout=5)
                if r.status == 200:
                    spent += r.json()["credits_used"]
                else:
                    failed += 1
            except OSError:
                failed += 1
            try:
                hz = c.stack.get("/healthz", timeout=5)
            except OSError:
                hz = None
            if hz is not None and hz.status == 503:
                named.append(hz.json()["services"])
            if hz is not None and hz.status == 200:
                back = time.monotonic() - t0
                break
            time.sleep(0.02)
        check(back is not None and back <= BACK_WITHIN_S,
              "%s back within %.1f s" % (name, BACK_WITHIN_S), back, c.stack.logs())
        # a 503 while it was down names the service that was killed
        svc = name[len("svc-"):] if name.startswith("svc-") else None
        for services in named:
            check(svc is not None and services.get(svc) == "unavailable",
                  "/healthz names %s" % name, services)
        new = c.stack.pid_of(name)
        check(new["pid"] != old["pid"] and new["restarts"] == old["restarts"] + 1,
              "%s restarted once" % name, old, new)
        eq(new["last_exit"], "signal 9", name + " last exit")
        print("  %s killed: back in %.2f s, %d billed calls failed, %d answered 503 on /healthz"
              % (name, back, failed, len(named)), flush=True)
        eq(credits(c), before - spent,
           "%s: the %d calls that failed charged nothing" % (name, failed))


@test
def up_again_is_harmless(c):
    pids = [p["pid"] for p in c.stack.status()["processes"]]
    again = c.stack.up()
    eq(again, c.stack.line, "the same last line")
    eq([p["pid"] for p in c.stack.status()["processes"]], pids, "nothing started again")


@test
def up_fails_when_a_process_exits_at_start(c):
    env = dict(c.stack.env)
    del env["SEO_VAR_DIR"]
    env["SEO_DATA_DIR"] = os.path.join(c.stack.var, "graph")
    held = socket.socket()
    held.bind(("127.0.0.1", 0))
    held.listen(1)
    bad = Local("held", env)
    bad.env["SEO_GRAPH_ADDR"] = "127.0.0.1:%d" % held.getsockname()[1]
    try:
        r = bad.seo("up")
        check(r.returncode != 0, "./seo up fails", r.stdout)
        eq(r.stdout, "", "no JSON line")
        check("cannot listen on" in r.stderr, "its log is shown", r.stderr[-2000:])
        eq(r.stderr.strip().splitlines()[-1],
           "seo: svc-graph did not start (log: %s/log/svc-graph.log)" % bad.var,
           "./seo up's last words")
        eq(bad.processes(), [], "nothing of that stack left running")
    finally:
        held.close()
        bad.close()


@test
def down_leaves_no_process(c):
    check(len(c.stack.processes()) == len(h.SERVICES) + 2, "the stack's processes are found",
          c.stack.processes())
    r = c.stack.seo("down")
    eq(r.returncode, 0, "./seo down: %s" % r.stderr)
    c.stack.line = None
    eq(c.stack.processes(), [], "processes of the stack after down")
    check(not os.path.exists(os.path.join(c.stack.var, "run", "supervise.json")),
          "the status file is gone")
    # the server SEO_PG_URL names was not up's to stop
    eq(c.db.query("SELECT 1"), "1", "the server of SEO_PG_URL still answers")


def pg_listening(port):
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=1):
            return True
    except OSError:
        return False


@test
def down_stops_the_local_cluster_up_started(c):
    if not os.path.isdir("/usr/lib/postgresql"):
        raise h.Skip("postgresql is not installed")
    env = base_env()
    # the demo index the first stack built, not built again
    env["SEO_DATA_DIR"] = os.path.join(c.stack.var, "graph")
    env["SEO_LOCAL_PG_PORT"] = str(h.free_port())
    port = int(env["SEO_LOCAL_PG_PORT"])
    c.local = Local("localpg", env)
    c.local.line = c.local.up()
    check(pg_listening(port), "the local cluster listens")
    eq(c.local.get("/healthz").status, 200, "healthz on the local cluster")

    # another checkout's up on the same port is told which cluster holds it
    other = Local("otherpg", env)
    try:
        r = other.seo("pg", timeout=120)
        check(r.returncode != 0, "a second cluster on the port fails")
        last = r.stderr.strip().splitlines()[-1]
        check(("port %d" % port) in last and c.local.var in last,
              "the message names the cluster holding the port", last)
    finally:
        other.close()

    r = c.local.seo("down", timeout=120)
    eq(r.returncode, 0, "./seo down: %s" % r.stderr)
    c.local.line = None
    eq(c.local.processes(), [], "processes of the stack after down")
    check(not pg_listening(port), "the local cluster stopped")
    check(os.path.exists(os.path.join(c.local.var, "pg", "data", "PG_VERSION")),
          "its data kept")


if __name__ == "__main__":
    sys.exit(h.run(setup, teardown))

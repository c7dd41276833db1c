"""Account/LeaseBatch on the wire: svc-account alone, called as a gateway
calls it (gRPC over cleartext HTTP/2 by curl, with the internal token).

Each report is answered in the request's order: a lease granted, or the
status and error code the single Lease would have failed with (an unknown
workspace NOT_FOUND, a bad report INVALID_ARGUMENT) while the others are
written; a batch naming a workspace twice or mixing holders is refused
whole (INVALID_ARGUMENT) and writes nothing. There is no grpc_tools here:
messages are encoded and read by hand."""

import os
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(__file__))
import harness as h  # noqa: E402
from harness import check, eq, test  # noqa: E402
from pbwire import field, fields  # noqa: E402

PATH = "/seo.account.v1.Account/LeaseBatch"


def call(request_id, charged, used):
    """A LeaseCall."""
    return (field(1, request_id) + field(4, "backlinks") + field(6, charged) +
            field(7, used))


def report(holder, ws, want=0, calls=(), stream="st", first_seq=1):
    """A LeaseRequest."""
    out = field(1, holder) + field(2, ws) + field(4, want)
    for c in calls:
        out += field(3, c)
    if calls:
        out += field(7, stream) + field(8, first_seq)
    return out


def result(data):
    """A LeaseResult as a dict: lease (a dict of LeaseResponse), status,
    error, message."""
    r = {"status": 0, "error": "", "message": "", "lease": None}
    for num, val in fields(data):
        if num == 1:
            names = {1: "lease_id", 2: "granted", 3: "used", 4: "outside", 5: "ttl_ms"}
            r["lease"] = {names[n]: (v.decode() if n == 1 else v)
                          for n, v in fields(val) if n in names}
        else:
            r[{2: "status", 3: "error", 4: "message"}[num]] = \
                val if num == 2 else val.decode()
    return r


def lease_batch(s, reports):
    """The call's grpc-status and its results (a list of dicts)."""
    addr = s.env[h.SERVICE_ENV["svc-account"]]
    msg = b"".join(field(1, r) for r in reports)
    with tempfile.TemporaryDirectory() as tmp:
        req, resp = os.path.join(tmp, "req"), os.path.join(tmp, "resp")
        with open(req, "wb") as f:
            f.write(b"\0" + len(msg).to_bytes(4, "big") + msg)
        out = subprocess.run(
            ["curl", "-s", "--http2-prior-knowledge", "-X", "POST", "-D", "-", "-o", resp,
             "--max-time", "20", "-H", "content-type: application/grpc", "-H", "te: trailers",
             "-H", "seo-internal-token: " + s.env["SEO_INTERNAL_TOKEN"],
             "--data-binary", "@" + req, "http://%s%s" % (addr, PATH)],
            capture_output=True, text=True, timeout=30)
        with open(resp, "rb") as f:
            body = f.read()
    status = None
    for line in out.stdout.splitlines():
        name, _, value = line.partition(":")
        if name.strip().lower() == "grpc-status":
            status = int(value.strip())
    results = []
    if len(body) >= 5:
        results = [result(v) for n, v in fields(body[5:5 + int.from_bytes(body[1:5], "big")])
                   if n == 1]
    return status, results


def setup():
    s = h.Stack("leasebatch", gateways=0, services=["svc-account"])
    s.ws = [s.workspace(credits=100000) for _ in range(3)]
    return s


def q(s, sql):
    return s.db.query(sql)


@test
def each_report_answered_in_order(s):
    a, b, c = (w["workspace_id"] for w in s.ws)
    status, res = lease_batch(s, [
        report("gw1", a, want=1000),
        report("gw1", "ws_nope", want=1000),
        report("gw1", c, want=1000, calls=[call("lb-1", 5, 6)]),
        report("gw1", b, want=2000),
    ])
    eq(status, 0, "grpc-status")
    eq(len(res), 4, "one result per report")
    eq(res[0]["status"], 0, "a: OK")
    eq(res[0]["lease"]["granted"], 1000, "a: granted")
    check(res[0]["lease"]["lease_id"].startswith("lse_"), "a: lease id", res[0])
    eq(res[0]["lease"]["outside"], 99000, "a: outside")
    eq((res[1]["status"], res[1]["error"]), (5, "not_found"), "unknown workspace")
    check(res[1]["lease"] is None, "no lease for the unknown workspace", res[1])
    eq((res[2]["status"], res[2]["error"]), (3, "invalid_parameter"), "bad report")
    check("credits_used" in res[2]["message"], "its message", res[2])
    eq(res[3]["lease"]["granted"], 2000, "b: granted")
    eq(q(s, "SELECT balance FROM workspaces WHERE id = '%s'" % a), "99000")
    eq(q(s, "SELECT balance FROM workspaces WHERE id = '%s'" % b), "98000")
    eq(q(s, "SELECT balance FROM workspaces WHERE id = '%s'" % c), "100000")
    eq(q(s, "SELECT count(*) FROM credit_leases WHERE workspace_id = '%s'" % c), "0")


@test
def calls_reported_on_the_leases(s):
    a, b, _ = (w["workspace_id"] for w in s.ws)
    reports = [report("gw1", a, calls=[call("lb-a1", 7, 7), call("lb-a2", 5, 0)]),
               report("gw1", b, calls=[call("lb-b1", 9, 9)], want=500)]
    for granted in (2500, 3000):  # sent again: the calls written once
        status, res = lease_batch(s, reports)
        eq(status, 0, "grpc-status")
        eq([r["lease"]["used"] for r in res], [7, 9], "used")
        eq(res[1]["lease"]["granted"], granted, "b topped up each time")
    eq(q(s, "SELECT count(*) FROM usage_all WHERE workspace_id IN ('%s', '%s')" % (a, b)),
       "3", "usage rows")


@test
def a_batch_refused_whole(s):
    a, b, _ = (w["workspace_id"] for w in s.ws)
    before = q(s, "SELECT string_agg(balance::text, ',' ORDER BY id) FROM workspaces")
    status, res = lease_batch(s, [report("gw2", a, want=100), report("gw2", a, want=100)])
    eq(status, 3, "a workspace twice: INVALID_ARGUMENT")
    eq(res, [], "no results")
    status, _ = lease_batch(s, [report("gw2", a, want=100), report("gw3", b, want=100)])
    eq(status, 3, "two holders: INVALID_ARGUMENT")
    eq(q(s, "SELECT string_agg(balance::text, ',' ORDER BY id) FROM workspaces"), before,
       "balances unchanged")
    eq(q(s, "SELECT count(*) FROM credit_leases WHERE holder <> 'gw1'"), "0", "no lease")
    status, res = lease_batch(s, [])
    eq((status, res), (0, []), "an empty batch")


if __name__ == "__main__":
    sys.exit(h.run(setup, lambda s: s.close()))

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
from pbwire import field, fields, varint  # noqa: E402

PATH = "/seo.account.v1.Account/LeaseBatch"
COLUMNS = "/seo.account.v1.Account/LeaseBatchColumns"


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


def columns(names, prefix, rows):
    """A LeaseCallColumns of `rows`: (request_no, user, key, endpoint,
    domain, charged, credits_used, created_at) each, names by index."""
    out = b"".join(field(1, n) for n in names) + field(2, prefix)
    for i, num in ((0, 3), (1, 4), (2, 5), (3, 6)):
        out += field(num, b"".join(varint(r[i]) for r in rows))
    out += b"".join(field(7, r[4]) for r in rows)
    for i, num in ((5, 8), (6, 9), (7, 10)):
        out += field(num, b"".join(varint(r[i]) for r in rows))
    return out


def column_report(holder, ws, cols, stream="st", first_seq=1, want=0):
    """A LeaseRequest with its calls as columns."""
    return (field(1, holder) + field(2, ws) + field(4, want) + field(7, stream) +
            field(8, first_seq) + field(9, cols))


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


def lease_batch(s, reports, path=PATH):
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
             "--data-binary", "@" + req, "http://%s%s" % (addr, path)],
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


@test
def calls_as_columns_written_as_calls(s):
    _, _, c = (w["workspace_id"] for w in s.ws)
    status, res = lease_batch(s, [report("gw4", c, want=1000)], COLUMNS)
    eq((status, res[0]["status"]), (0, 0), "opened")
    names = ["usr_col", "key_col", "backlinks", "domain-rank"]
    rows = [(1, 0, 1, 2, "example.com", 3, 3, 1700000000000),
            (0xabc, 0, 1, 3, "", 2, 1, 1700000000001),
            (2**64 - 1, 0, 1, 2, "b.example", 4, 0, 1700000000002)]
    for _ in range(2):  # sent again: the calls written once
        status, res = lease_batch(
            s, [column_report("gw4", c, columns(names, "gwpfx", rows), stream="cs")],
            COLUMNS)
        eq((status, res[0]["status"], res[0]["message"]), (0, 0, ""), "reported")
        eq(res[0]["lease"]["used"], 4, "used")
    eq(q(s, "SELECT string_agg(concat_ws('|', request_id, user_id, key_id, endpoint, "
            "coalesce(domain, '-'), charged, credits_used, outcome, created_at), ';' "
            "ORDER BY created_at) FROM usage_all WHERE workspace_id = '%s'" % c),
       ";".join(["gwpfx0000000000000001|usr_col|key_col|backlinks|example.com|3|3|"
                 "earned|1700000000000",
                 "gwpfx0000000000000abc|usr_col|key_col|domain-rank|-|2|1|"
                 "refunded|1700000000001",
                 "gwpfxffffffffffffffff|usr_col|key_col|backlinks|b.example|4|0|"
                 "refunded|1700000000002"]), "usage rows")


@test
def bad_columns_refused(s):
    a, _, _ = (w["workspace_id"] for w in s.ws)
    before = q(s, "SELECT count(*) FROM usage_all")
    names = ["u", "k", "backlinks"]
    good = [(1, 0, 1, 2, "", 1, 1, 1)]
    short = columns(names, "p", good) + field(4, varint(0))  # two users, one call
    status, _ = lease_batch(s, [column_report("gw5", a, short)], COLUMNS)
    eq(status, 3, "columns of unequal lengths: INVALID_ARGUMENT")
    status, _ = lease_batch(
        s, [column_report("gw5", a, columns(names, "p", [(1, 0, 1, 3, "", 1, 1, 1)]))],
        COLUMNS)
    eq(status, 3, "an index past names: INVALID_ARGUMENT")
    status, _ = lease_batch(
        s, [column_report("gw5", a, columns(names, "p" * 65, good))], COLUMNS)
    eq(status, 3, "a long request_prefix: INVALID_ARGUMENT")
    both = column_report("gw5", a, columns(names, "p", good)) + field(3, call("x", 1, 1))
    status, _ = lease_batch(s, [both], COLUMNS)
    eq(status, 3, "calls both ways: INVALID_ARGUMENT")
    # LeaseBatch would not read them: the report is refused, not taken
    # for one without calls.
    status, res = lease_batch(s, [column_report("gw5", a, columns(names, "p", good))])
    eq((status, res[0]["status"], res[0]["error"]), (0, 3, "invalid_parameter"),
       "columns by LeaseBatch")
    eq(q(s, "SELECT count(*) FROM usage_all"), before, "nothing written")
    eq(q(s, "SELECT count(*) FROM credit_leases WHERE holder = 'gw5'"), "0", "no lease")


if __name__ == "__main__":
    sys.exit(h.run(setup, lambda s: s.close()))

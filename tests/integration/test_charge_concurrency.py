"""The charge path at the service, called with a stock gRPC client
(python3-grpcio): 200 parallel debits on a balance that covers 37 of them.
Exactly 37 succeed, the balance ends at the remainder, the ledger sums to
the balance, and there is one usage row per successful charge; refunds give
credits back once."""

import os
import sys
import hashlib

sys.path.insert(0, os.path.dirname(__file__))
import harness as h  # noqa: E402
from harness import check, eq, test  # noqa: E402

try:
    import grpc
except ImportError:  # Debian's python3-grpcio; ./seo deps installs it
    grpc = None

COST = 2
CALLS = 200
COVERED = 37
REMAINDER = 1


# ---- just enough protobuf for seo.account.v1 -----------------------------

def _varint(n):
    out = bytearray()
    n &= (1 << 64) - 1
    while True:
        b = n & 0x7F
        n >>= 7
        if n:
            out.append(b | 0x80)
        else:
            out.append(b)
            return bytes(out)


def _field(num, wire, payload):
    return _varint(num << 3 | wire) + payload


def enc_str(num, s):
    b = s.encode()
    return _field(num, 2, _varint(len(b)) + b)


def enc_int(num, n):
    return _field(num, 0, _varint(n))


def decode(buf):
    """Returns {field number: [values]} with varints as ints and
    length-delimited values as bytes."""
    out = {}
    i = 0
    while i < len(buf):
        key, i = _read_varint(buf, i)
        num, wire = key >> 3, key & 7
        if wire == 0:
            v, i = _read_varint(buf, i)
        elif wire == 2:
            n, i = _read_varint(buf, i)
            v, i = buf[i:i + n], i + n
        else:
            raise ValueError("wire type %d" % wire)
        out.setdefault(num, []).append(v)
    return out


def _read_varint(buf, i):
    shift = n = 0
    while True:
        b = buf[i]
        i += 1
        n |= (b & 0x7F) << shift
        shift += 7
        if not b & 0x80:
            return n, i


def authorize_request(key, cost, endpoint="backlinks", domain="example.com"):
    return (enc_str(1, hashlib.sha256(key.encode()).hexdigest()) + enc_str(2, endpoint)
            + enc_int(3, cost) + enc_int(4, 0) + enc_str(5, domain) + enc_int(6, 0))


def refund_request(charge_id, amount=0):
    return enc_str(1, charge_id) + enc_int(2, amount)


class Ctx:
    pass


def setup():
    if grpc is None:
        raise h.Skip("python3-grpcio is not installed")
    c = Ctx()
    c.stack = h.Stack("charge")
    c.logs = c.stack.logs
    c.channel = grpc.insecure_channel(c.stack.env["SEO_ACCOUNT_ADDR"])
    # every internal call carries the shared secret (common/rpc)
    c.meta = [("seo-internal-token", c.stack.env["SEO_INTERNAL_TOKEN"])]
    ident = lambda b: b  # noqa: E731
    c.authorize = c.channel.unary_unary("/seo.account.v1.Account/Authorize",
                                        request_serializer=ident, response_deserializer=ident)
    c.refund = c.channel.unary_unary("/seo.account.v1.Account/Refund",
                                     request_serializer=ident, response_deserializer=ident)
    return c


def teardown(c):
    c.channel.close()
    return c.stack.close()


def error_code(err):
    for k, v in err.trailing_metadata() or ():
        if k == "seo-error-code":
            return v
    return None


@test
def exactly_floor_balance_over_cost_succeed(c):
    s = c.stack
    ws = s.workspace(credits=COVERED * COST + REMAINDER)
    key = ws["api_key"]
    futures = [c.authorize.future(authorize_request(key, COST), timeout=30,
                                  metadata=c.meta)
               for _ in range(CALLS)]
    ok, denied = [], []
    for f in futures:
        try:
            ok.append(decode(f.result()))
        except grpc.RpcError as e:
            denied.append((e.code(), error_code(e)))
    eq(len(ok), COVERED, "successful charges")
    eq(set(denied), {(grpc.StatusCode.FAILED_PRECONDITION, "insufficient_credits")},
       "denials")
    charge_ids = {r[5][0].decode() for r in ok}
    eq(len(charge_ids), COVERED, "distinct charge ids")
    remaining = sorted(r.get(6, [0])[0] for r in ok)
    eq(remaining[0], REMAINDER, "last debit leaves the remainder")
    wid = ws["workspace_id"]
    eq(int(s.db.query("SELECT balance FROM workspaces WHERE id = '%s'" % wid)), REMAINDER)
    eq(int(s.db.query("SELECT sum(delta) FROM ledger WHERE workspace_id = '%s'" % wid)),
       REMAINDER, "ledger sum equals the balance")
    eq(int(s.db.query("SELECT count(*) FROM usage_all WHERE workspace_id = '%s'" % wid)), COVERED,
       "one usage row per successful charge")
    eq(s.get("/v1/credits", key=key).json(), {"credits": REMAINDER})
    usage = s.get("/v1/usage?limit=200", key=key).json()
    eq(usage["total"], COVERED)
    check(all(u["credits_used"] == COST and u["endpoint"] == "backlinks"
              and u["domain"] == "example.com" for u in usage["usage"]), "usage rows", usage)
    c.charges = sorted(charge_ids)
    c.key = key
    c.wid = wid


@test
def refunds_give_credits_back_once(c):
    s = c.stack
    first, second = c.charges[0], c.charges[1]
    r = decode(c.refund(refund_request(first), timeout=10, metadata=c.meta))
    eq(r.get(1, [0])[0], REMAINDER + COST, "credits_remaining after a full refund")
    eq(r.get(2, [0])[0], 0, "the call finally cost nothing")
    r = decode(c.refund(refund_request(first), timeout=10, metadata=c.meta))
    eq(r.get(1, [0])[0], REMAINDER + COST, "a second refund adds nothing")
    r = decode(c.refund(refund_request(second, 1), timeout=10, metadata=c.meta))
    eq(r.get(1, [0])[0], REMAINDER + COST + 1, "partial refund")
    eq(r.get(2, [0])[0], COST - 1, "partial cost")
    eq(int(s.db.query("SELECT balance FROM workspaces WHERE id = '%s'" % c.wid)),
       REMAINDER + COST + 1)
    eq(int(s.db.query("SELECT sum(delta) FROM ledger WHERE workspace_id = '%s'" % c.wid)),
       REMAINDER + COST + 1, "ledger sum equals the balance")
    used = s.db.query("SELECT credits_used FROM usage_all WHERE id = '%s'" % first)
    eq(used, "0", "refunded usage row shows 0")
    try:
        c.refund(refund_request("chg_unknown"), timeout=10, metadata=c.meta)
        raise AssertionError("unknown charge refunded")
    except grpc.RpcError as e:
        eq(e.code(), grpc.StatusCode.NOT_FOUND)


@test
def health_check_with_grpcio(c):
    check_fn = c.channel.unary_unary("/grpc.health.v1.Health/Check",
                                     request_serializer=lambda b: b,
                                     response_deserializer=lambda b: b)
    eq(decode(check_fn(b"", timeout=5)), {1: [1]}, "SERVING")


if __name__ == "__main__":
    sys.exit(h.run(setup, teardown))

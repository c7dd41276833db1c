"""A gateway facing an svc-account of an older release (during a rollout)
falls back to the reports it knows and bills exactly as before: without
Account/LeaseBatchColumns to LeaseBatch, a message a call; without
LeaseBatch either to one Account/Lease per workspace.

The older svc-account is the real one behind a gRPC relay (grpcio, raw
bytes) that forwards every call, metadata, status and trailers as they
are, and answers the methods it lacks UNIMPLEMENTED, as a server without
them does."""

import os
import sys
import threading
import time
from concurrent import futures

sys.path.insert(0, os.path.dirname(__file__))
import harness as h  # noqa: E402
from harness import check, eq, test  # noqa: E402

try:
    import grpc
except ImportError as exc:  # grpcio comes with ./seo's packages
    print(f"skipped: cannot import grpc ({exc})")
    sys.exit(0)

COLUMNS = "/seo.account.v1.Account/LeaseBatchColumns"
BATCH = "/seo.account.v1.Account/LeaseBatch"
LEASE = "/seo.account.v1.Account/Lease"
# Metadata grpcio sets itself, or that is no call's own.
OWN = ("user-agent", "grpc-", ":")


class Relay(grpc.GenericRpcHandler):
    """Forwards every unary call to `target` but the methods `unknown`."""

    def __init__(self, target, unknown):
        self.channel = grpc.insecure_channel(target)
        self.unknown = unknown
        self.lock = threading.Lock()
        self.seen = {}
        self.first = {}

    def service(self, details):
        method = details.method
        with self.lock:
            self.seen[method] = self.seen.get(method, 0) + 1
            self.first.setdefault(method, time.monotonic())
        if method in self.unknown:
            return None  # grpcio answers UNIMPLEMENTED
        forward = self.channel.unary_unary(method)

        def handle(request, context):
            meta = [(k, v) for k, v in context.invocation_metadata()
                    if not k.startswith(OWN)]
            try:
                resp, call = forward.with_call(request, metadata=meta,
                                               timeout=context.time_remaining())
            except grpc.RpcError as e:
                context.set_trailing_metadata(e.trailing_metadata() or ())
                context.abort(e.code(), e.details() or "")
            context.send_initial_metadata(call.initial_metadata() or ())
            context.set_trailing_metadata(call.trailing_metadata() or ())
            return resp

        return grpc.unary_unary_rpc_method_handler(handle)

    def count(self, method):
        with self.lock:
            return self.seen.get(method, 0)

    def since(self, method):
        """When `method` was first asked (time.monotonic()), or None."""
        with self.lock:
            return self.first.get(method)


def fallback(unknown, used):
    """Bills through a relay without the methods `unknown`, tried in
    order: the reports go by `used` at once after the last is refused, and
    are never tried by those again."""
    s = h.Stack("lease_fallback", gateways=0, env={"SEO_RATE_LIMIT_PER_MIN": "0"})
    server = None
    try:
        relay = Relay(s.env["SEO_ACCOUNT_ADDR"], unknown)
        server = grpc.server(futures.ThreadPoolExecutor(max_workers=32),
                             handlers=[relay])
        port = server.add_insecure_port("127.0.0.1:0")
        server.start()
        gw = s.start_gateway({"SEO_ACCOUNT_ADDR": "127.0.0.1:%d" % port})
        s.wait_healthy()

        # Far from zero, so that the gateway takes a lease.
        start = 100000
        ws = s.workspace(credits=start)
        key, wid = ws["api_key"], ws["workspace_id"]
        calls = 300
        for i in range(calls):
            r = s.get("/v1/domain-rank?domain=example.com", key=key, port=gw)
            eq(r.status, 200, r)
            eq(r.json()["credits_used"], 1)

        # A usage read waits for the workspace's calls to be reported.
        usage = s.get("/v1/usage?limit=1", key=key, port=gw)
        eq(usage.status, 200, usage)
        for m in unknown:
            check(relay.count(m) >= 1, "%s was never tried" % m)
        check(relay.count(used) >= 1, "no %s after %s was refused" % (used, unknown[-1]))
        # The refused reports go again at once, by the next method: not
        # after the 1 s wait of a failed report (GW_LEASE_RETRY_MS), calls
        # debited one by one meanwhile.
        for a, b in zip(unknown, unknown[1:] + [used]):
            gap = relay.since(b) - relay.since(a)
            check(0 <= gap < 0.5, "%s %.3f s after %s was refused" % (b, gap, a))
        # The fallback holds: the refused methods are not tried again.
        refused = [relay.count(m) for m in unknown]
        # A usage row for every call, those debited alone before the
        # lease and those reported on it.
        eq(s.db.query("SELECT count(*) || ',' || sum(credits_used) FROM usage_all "
                      "WHERE workspace_id = '%s'" % wid), "%d,%d" % (calls, calls))
        check(int(s.db.query("SELECT coalesce(sum(n_calls), 0) FROM usage_batches "
                             "WHERE workspace_id = '%s'" % wid)) > 0,
              "no call was reported on a lease")
        eq(s.get("/v1/credits", key=key, port=gw).json()["credits"], start - calls)
        h.conserved(s, wid, start)

        # Another round, then the lease given back at the gateway's stop:
        # still exact, and still by the same method.
        for i in range(50):
            eq(s.get("/v1/domain-rank?domain=example.com", key=key,
                     port=gw).status, 200)
        s.procs["gateway0"].stop()
        eq([relay.count(m) for m in unknown], refused)
        eq(s.db.query("SELECT balance FROM workspaces WHERE id = '%s'" % wid),
           str(start - calls - 50))
        eq(s.db.query("SELECT count(*) FROM credit_leases WHERE workspace_id = "
                      "'%s' AND closed_at IS NULL" % wid), "0")
    finally:
        if server is not None:
            server.stop(None)
        s.close()


@test
def billed_calls_through_batches_of_messages():
    fallback([COLUMNS], BATCH)


@test
def billed_calls_through_single_leases():
    fallback([COLUMNS, BATCH], LEASE)


if __name__ == "__main__":
    sys.exit(h.run())

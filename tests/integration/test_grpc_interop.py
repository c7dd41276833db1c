#!/usr/bin/python3
"""Stock grpcio against our gRPC server (common/rpc) in tests/rpc_echo_server.

    test_grpc_interop.py path/to/rpc_echo_server

There is no grpc_tools here, so messages are protobuf bytes encoded by hand
and the stubs pass bytes through unchanged. The server runs under an
internal token (SEO_INTERNAL_TOKEN) that the stubs send as metadata, as every
caller of a service must. Exits 0 with a message when
grpcio is missing, else non-zero when a check fails; the last line reads
'N passed, M failed'.
"""
import json
import os
import secrets
import signal
import subprocess
import sys
import threading
import time

try:
    import grpc
except ImportError as exc:  # pragma: no cover - depends on the host
    print(f"skipped: cannot import grpc ({exc})")
    sys.exit(0)


def varint(n):
    out = bytearray()
    while True:
        b = n & 0x7F
        n >>= 7
        if n:
            out.append(b | 0x80)
        else:
            out.append(b)
            return bytes(out)


def enc_service(text):
    """HealthCheckRequest{service=text} (field 1, length-delimited)."""
    raw = text.encode()
    return b"\x0a" + varint(len(raw)) + raw


def dec_field1(data):
    """Field 1 of a message: (wire type, value) or None when absent."""
    i = 0
    while i < len(data):
        key, i = read_varint(data, i)
        num, wt = key >> 3, key & 7
        if wt == 0:
            val, i = read_varint(data, i)
        elif wt == 2:
            n, i = read_varint(data, i)
            val, i = data[i:i + n], i + n
        else:
            raise ValueError(f"unexpected wire type {wt}")
        if num == 1:
            return val
    return None


def read_varint(data, i):
    shift = n = 0
    while True:
        b = data[i]
        i += 1
        n |= (b & 0x7F) << shift
        if not b & 0x80:
            return n, i
        shift += 7


SERVING, NOT_SERVING = 1, 2

TOKEN = secrets.token_urlsafe(32)


class TokenInterceptor(grpc.UnaryUnaryClientInterceptor):
    """Adds the internal token to every call's metadata."""

    def intercept_unary_unary(self, continuation, details, request):
        meta = list(details.metadata or []) + [("seo-internal-token", TOKEN)]
        return continuation(details._replace(metadata=meta), request)


class Server:
    """The echo service in a child process; learns its port from the log."""

    def __init__(self, binary, addr="127.0.0.1:0"):
        self.proc = subprocess.Popen([binary, addr], stderr=subprocess.PIPE,
                                     text=True, env=dict(os.environ,
                                                         SEO_INTERNAL_TOKEN=TOKEN))
        self.lines = []
        self.port = None
        ready = threading.Event()

        def pump():
            for line in self.proc.stderr:
                self.lines.append(line.rstrip("\n"))
                try:
                    msg = json.loads(line).get("msg", "")
                except ValueError:
                    continue
                if msg.startswith("listening on "):
                    self.port = int(msg.rsplit(":", 1)[1])
                    ready.set()
            ready.set()

        threading.Thread(target=pump, daemon=True).start()
        ready.wait(10)

    def stop(self):
        if self.proc.poll() is None:
            self.proc.kill()
        self.proc.wait()


class Checks:
    def __init__(self):
        self.passed = 0
        self.failed = 0

    def run(self, name, fn):
        try:
            fn()
        except Exception as exc:  # report and go on with the next check
            self.failed += 1
            print(f"FAIL - {name}: {exc!r}")
        else:
            self.passed += 1
            print(f"ok - {name}")


def expect(cond, what):
    if not cond:
        raise AssertionError(what)


def expect_error(fn, code):
    try:
        fn()
    except grpc.RpcError as err:
        expect(err.code() == code, f"status {err.code()} != {code}")
        return err
    raise AssertionError(f"no error, expected {code}")


def main():
    if len(sys.argv) != 2:
        print(__doc__)
        return 2
    binary = sys.argv[1]
    checks = Checks()
    srv = Server(binary)
    if srv.port is None:
        print("FAIL - server did not start:\n" + "\n".join(srv.lines))
        srv.stop()
        print("0 passed, 1 failed")
        return 1
    target = f"127.0.0.1:{srv.port}"
    bare = grpc.insecure_channel(target,
                                 options=[("grpc.enable_http_proxy", 0)])
    channel = grpc.intercept_channel(bare, TokenInterceptor())

    def method(path, via=None):
        return (via or channel).unary_unary(path,
                                   request_serializer=lambda b: b,
                                   response_deserializer=lambda b: b)

    check = method("/grpc.health.v1.Health/Check")
    echo = method("/seo.test.Echo/Echo")
    fail = method("/seo.test.Echo/Fail")
    slow = method("/seo.test.Echo/Slow")

    def health():
        expect(dec_field1(check(b"", timeout=5)) == SERVING, "not SERVING")
        resp = check(enc_service("seo.test.Echo"), timeout=5)
        expect(dec_field1(resp) == SERVING, "named service not SERVING")

    def echo_roundtrip():
        resp = echo(enc_service("h\u00e9llo 100%"), timeout=5)
        expect(dec_field1(resp) == "h\u00e9llo 100%".encode(), resp)
        resp = echo(enc_service("meta:x-request-id"), timeout=5,
                    metadata=[("x-request-id", "req-7")])
        expect(dec_field1(resp) == b"req-7", resp)
        expect(dec_field1(echo(b"", timeout=5)) == b"", "empty message")

    def response_metadata():
        resp, call = echo.with_call(enc_service("status:202"), timeout=5)
        expect(dec_field1(resp) == b"status:202", resp)
        initial = dict(call.initial_metadata() or ())
        expect(initial.get("seo-http-status") == "202", initial)
        expect(initial.get("retry-after") == "30", initial)

    def failing():
        err = expect_error(lambda: fail(b"", timeout=5),
                           grpc.StatusCode.FAILED_PRECONDITION)
        expect(err.details() == "balance too low: 100% caf\u00e9",
               f"details {err.details()!r}")
        trailers = dict(err.trailing_metadata() or ())
        expect(trailers.get("seo-error-code") == "insufficient_credits",
               trailers)
        expect(trailers.get("seo-error-extra") == '{"retry_after": 12}',
               trailers)
        expect(trailers.get("retry-after") == "12", trailers)

    def unknown():
        expect_error(lambda: method("/seo.test.Echo/Nope")(b"", timeout=5),
                     grpc.StatusCode.UNIMPLEMENTED)

    def deadline():
        t0 = time.monotonic()
        expect_error(lambda: slow(enc_service("1000"), timeout=0.2),
                     grpc.StatusCode.DEADLINE_EXCEEDED)
        expect(time.monotonic() - t0 < 0.8, "deadline took too long")

    def concurrent():
        futs = [echo.future(enc_service(f"n{i}"), timeout=20)
                for i in range(300)]
        slows = [slow.future(enc_service("100"), timeout=20)
                 for _ in range(8)]
        for i, f in enumerate(futs):
            expect(dec_field1(f.result()) == f"n{i}".encode(), i)
        for f in slows:
            expect(dec_field1(f.result()) == SERVING, "slow")

    def too_big():
        big = enc_service("x" * (5 * 1024 * 1024))
        expect_error(lambda: echo(big, timeout=10),
                     grpc.StatusCode.RESOURCE_EXHAUSTED)
        # The connection is still good afterwards.
        expect(dec_field1(echo(enc_service("after"), timeout=5)) == b"after",
               "call after the refused one")

    def without_token():
        err = expect_error(lambda: method("/seo.test.Echo/Echo", bare)(b"", timeout=5),
                           grpc.StatusCode.UNAUTHENTICATED)
        trailers = dict(err.trailing_metadata() or ())
        expect(trailers.get("seo-error-code") == "internal_error", trailers)
        expect_error(lambda: method("/seo.test.Echo/Nope", bare)(b"", timeout=5),
                     grpc.StatusCode.UNAUTHENTICATED)
        expect_error(lambda: echo(b"", timeout=5, metadata=[("seo-internal-token", "x" * 43)]),
                     grpc.StatusCode.UNAUTHENTICATED)
        # probes send no metadata: the health check stays open
        resp = method("/grpc.health.v1.Health/Check", bare)(b"", timeout=5)
        expect(dec_field1(resp) == SERVING, "health without the token")

    def no_token_no_start():
        env = {k: v for k, v in os.environ.items() if k != "SEO_INTERNAL_TOKEN"}
        other = subprocess.run([binary, "127.0.0.1:0"], stderr=subprocess.PIPE,
                               text=True, timeout=10, env=env)
        expect(other.returncode == 2, f"exit code {other.returncode}")
        expect("SEO_INTERNAL_TOKEN: not set" in other.stderr, other.stderr)

    def bind_failure():
        other = subprocess.run([binary, target], stderr=subprocess.PIPE,
                               text=True, timeout=10,
                               env=dict(os.environ, SEO_INTERNAL_TOKEN=TOKEN))
        expect(other.returncode == 1, f"exit code {other.returncode}")
        expect("cannot listen on" in other.stderr, other.stderr)

    def slow_calls_begun():
        return sum("slow call began" in line for line in srv.lines)

    def graceful_stop():
        before = slow_calls_begun()
        fut = slow.future(enc_service("500"), timeout=10)
        # signalled once the call is in flight, as a fixed pause could not
        # promise on a busy machine
        deadline = time.monotonic() + 5
        while slow_calls_begun() == before:
            expect(time.monotonic() < deadline, "the slow call began")
            time.sleep(0.01)
        srv.proc.send_signal(signal.SIGTERM)
        expect(dec_field1(fut.result()) == SERVING, "call in flight lost")
        rc = srv.proc.wait(timeout=10)
        expect(rc == 0, f"exit code {rc}")
        expect(any('"stopped"' in line for line in srv.lines), srv.lines)

    try:
        checks.run("health check SERVING", health)
        checks.run("unary echo with metadata", echo_roundtrip)
        checks.run("response metadata as initial metadata",
                   response_metadata)
        checks.run("error status, details and seo trailers", failing)
        checks.run("unknown method UNIMPLEMENTED", unknown)
        checks.run("client deadline DEADLINE_EXCEEDED", deadline)
        checks.run("300 concurrent calls", concurrent)
        checks.run("request over 4 MiB RESOURCE_EXHAUSTED", too_big)
        checks.run("without the internal token UNAUTHENTICATED, health open",
                   without_token)
        checks.run("no internal token: the server does not start",
                   no_token_no_start)
        checks.run("second server on the same port exits 1", bind_failure)
        checks.run("SIGTERM finishes calls in flight, exits 0",
                   graceful_stop)
    finally:
        bare.close()
        srv.stop()
    print(f"{checks.passed} passed, {checks.failed} failed")
    return 1 if checks.failed else 0


if __name__ == "__main__":
    sys.exit(main())

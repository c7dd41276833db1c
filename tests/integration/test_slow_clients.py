"""Slow clients are cut off (issue 12, finding 4): 1,000 HTTP/2 streams that
send HEADERS and trickle their body, and 1,000 HTTP/1.1 connections that
trickle theirs, all from 127.0.0.1, each end at its request deadline (408,
or the stream reset) or are refused by the per-address connection cap or
the stream limit, while normal requests from 127.0.0.2 keep p99 under
50 ms.

HTTP/2 is spoken by hand (h2c by prior knowledge, the standard library
only): the preface, SETTINGS, HEADERS as HPACK literals without indexing,
1-byte DATA frames; answers are told apart by their frames (DATA carrying
the error object, RST_STREAM, GOAWAY), so no HPACK decoder is needed."""

import json
import os
import resource
import selectors
import socket
import struct
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(__file__))
import harness as h  # noqa: E402
from harness import check, eq, test  # noqa: E402

DEADLINE_MS = 2000
DEADLINE = DEADLINE_MS / 1000.0
SLACK = 1.5          # seconds past the deadline a cut may take
N_H2_CONNS = 10
STREAMS_PER_CONN = 100
N_H1 = 1000
TRICKLE_EVERY = 1.0  # seconds between the bytes of a slow body
# the bound of a release build; ASan+UBSan make every request slower
P99_MS = 200 if h.sanitized() else 50

# HTTP/2 frame types and error codes (RFC 9113)
DATA, HEADERS, RST_STREAM, SETTINGS, GOAWAY = 0, 1, 3, 4, 7
END_STREAM, END_HEADERS, ACK = 0x1, 0x4, 0x1
REFUSED_STREAM = 7
PREFACE = b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n"


def frame(ftype, flags, sid, payload=b""):
    return struct.pack(">I", len(payload))[1:] + bytes([ftype, flags]) + \
        struct.pack(">I", sid) + payload


def hpack_literal(name, value):
    """A literal header field without indexing, new name (RFC 7541 6.2.2);
    names and values under 127 bytes, not Huffman coded."""
    n, v = name.encode(), value.encode()
    return b"\x00" + bytes([len(n)]) + n + bytes([len(v)]) + v


def request_headers(port):
    return b"".join(hpack_literal(k, v) for k, v in (
        (":method", "POST"), (":scheme", "http"), (":path", "/v1/batch"),
        (":authority", "127.0.0.1:%d" % port),
        ("content-type", "application/json"), ("content-length", "1000")))


def recv_some(sock):
    """What the socket holds: None when nothing yet, b"" once closed."""
    try:
        return sock.recv(65536)
    except BlockingIOError:
        return None
    except OSError:
        return b""


class Slow:
    """What happened to one slow request: `end` is when it was cut off or
    refused (None while open), `how` says which."""

    def __init__(self, start):
        self.start = start
        self.end = None
        self.how = None

    def finish(self, how, now):
        if self.end is None:
            self.end, self.how = now, how


class H2Conn:
    def __init__(self, port, sel):
        self.sock = socket.create_connection(("127.0.0.1", port))
        self.buf = b""
        self.streams = {}
        self.bodies = {}
        self.closed = False
        self.server_spoke = False
        now = time.time()
        out = [PREFACE, frame(SETTINGS, 0, 0)]
        hdr = request_headers(port)
        for i in range(STREAMS_PER_CONN):
            sid = 2 * i + 1
            out.append(frame(HEADERS, END_HEADERS, sid, hdr))
            self.streams[sid] = Slow(now)
            self.bodies[sid] = b""
        try:
            self.sock.sendall(b"".join(out))
        except OSError:
            self.close("refused", time.time())
            return
        self.sock.setblocking(False)
        sel.register(self.sock, selectors.EVENT_READ, self)

    def open_streams(self):
        return [sid for sid, s in self.streams.items() if s.end is None]

    def close(self, how, now):
        self.closed = True
        for s in self.streams.values():
            s.finish(how, now)

    def trickle(self, now):
        data = b"".join(frame(DATA, 0, sid, b" ") for sid in self.open_streams())
        if data:
            self.send(data, now)

    def send(self, data, now):
        try:
            self.sock.sendall(data)
        except OSError:
            self.close("closed", now)

    def readable(self, sel, now):
        got = recv_some(self.sock)
        if got is None:
            return
        if not got:
            sel.unregister(self.sock)
            self.close("closed" if self.server_spoke else "refused", now)
            return
        self.buf += got
        if not self.server_spoke and self.buf.startswith(b"HTTP/1.1 "):
            # refused with an HTTP/1.1 answer before any frame
            sel.unregister(self.sock)
            self.close("refused", now)
            return
        while len(self.buf) >= 9:
            length = int.from_bytes(self.buf[:3], "big")
            if len(self.buf) < 9 + length:
                break
            ftype, flags = self.buf[3], self.buf[4]
            sid = struct.unpack(">I", self.buf[5:9])[0] & 0x7fffffff
            payload = self.buf[9:9 + length]
            self.buf = self.buf[9 + length:]
            self.server_spoke = True
            self.on_frame(ftype, flags, sid, payload, now)

    def on_frame(self, ftype, flags, sid, payload, now):
        s = self.streams.get(sid)
        if ftype == SETTINGS and not flags & ACK:
            self.send(frame(SETTINGS, ACK, 0), now)
        elif ftype == DATA and s is not None:
            self.bodies[sid] += payload
            if flags & END_STREAM:
                s.finish("answered", now)
        elif ftype == HEADERS and s is not None and flags & END_STREAM:
            s.finish("answered", now)
        elif ftype == RST_STREAM and s is not None:
            code = struct.unpack(">I", payload[:4])[0]
            s.finish("refused" if code == REFUSED_STREAM else "reset", now)
        elif ftype == GOAWAY:
            last = struct.unpack(">I", payload[:4])[0] & 0x7fffffff
            for other, st in self.streams.items():
                if other > last:
                    st.finish("refused", now)


class H1Conn:
    HEAD = (b"POST /v1/batch HTTP/1.1\r\nHost: 127.0.0.1\r\n"
            b"Content-Type: application/json\r\nContent-Length: 1000\r\n\r\n")

    def __init__(self, port, sel):
        self.slow = Slow(time.time())
        self.buf = b""
        try:
            self.sock = socket.create_connection(("127.0.0.1", port))
            self.sock.sendall(self.HEAD)
        except OSError:
            self.slow.finish("refused", time.time())
            return
        self.sock.setblocking(False)
        sel.register(self.sock, selectors.EVENT_READ, self)

    def trickle(self, now):
        if self.slow.end is not None:
            return
        try:
            self.sock.send(b" ")
        except BlockingIOError:
            pass
        except OSError:
            self.slow.finish("refused" if not self.buf else "closed", now)

    def readable(self, sel, now):
        got = recv_some(self.sock)
        if got is None:
            return
        if got:
            self.buf += got
            if self.buf.startswith((b"HTTP/1.1 429", b"HTTP/1.1 503")):
                self.slow.finish("refused", now)
            elif b"\r\n\r\n" in self.buf:
                self.slow.finish("answered", now)
            return
        sel.unregister(self.sock)
        self.slow.finish("refused" if not self.buf else "closed", now)


def probe_main(port, seconds):
    """Child process: normal requests from 127.0.0.2, one connection each;
    prints their statuses and latencies in ms as JSON."""
    import http.client
    out = []
    stop = time.time() + seconds
    while time.time() < stop:
        t0 = time.perf_counter()
        conn = http.client.HTTPConnection("127.0.0.1", port, timeout=10,
                                          source_address=("127.0.0.2", 0))
        try:
            conn.request("GET", "/v1/pricing")
            r = conn.getresponse()
            r.read()
            status = r.status
        except OSError as e:
            status = str(e)
        finally:
            conn.close()
        out.append((status, (time.perf_counter() - t0) * 1000.0))
        time.sleep(0.02)
    print(json.dumps(out))


def set_fd_limit(need):
    """Exactly `need` descriptors (soft limit) for this process and the
    stack it starts: the gateway must raise its own for its caps."""
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if hard != resource.RLIM_INFINITY and hard < need:
        raise h.Skip("RLIMIT_NOFILE hard limit %d is under %d" % (hard, need))
    resource.setrlimit(resource.RLIMIT_NOFILE, (need, hard))


def setup():
    set_fd_limit(N_H1 + N_H2_CONNS + 512)
    return h.Stack("slow", env={"SEO_HTTP_REQUEST_TIMEOUT_MS": str(DEADLINE_MS)})


def report(what, results):
    """Prints the latencies of probe results; returns their p99 in ms."""
    lat = [r[1] for r in results]
    p99 = percentile(lat, 99)
    print("%s: %d, p50 %.1f ms, p99 %.1f ms, max %.1f ms"
          % (what, len(lat), percentile(lat, 50), p99, max(lat)))
    return p99


def percentile(values, p):
    values = sorted(values)
    return values[min(len(values) - 1, int(len(values) * p / 100.0))]


@test
def slow_clients_are_cut_off_while_others_are_served(s):
    port = s.gateways[0]
    run_for = DEADLINE + SLACK + 2.0
    probe = subprocess.Popen([sys.executable, __file__, "--probe", str(port),
                              str(run_for + 1.0)], stdout=subprocess.PIPE, text=True)
    # The slow clients share the cores with the gateway here, where an
    # attacker would bring its own: they yield to it (and to the probe).
    os.nice(10)
    sel = selectors.DefaultSelector()
    try:
        h2 = [H2Conn(port, sel) for _ in range(N_H2_CONNS)]
        h1 = [H1Conn(port, sel) for _ in range(N_H1)]
        opened = time.time()
        next_trickle = opened + TRICKLE_EVERY
        slows = [st for c in h2 for st in c.streams.values()] + [c.slow for c in h1]
        while time.time() < opened + run_for and any(x.end is None for x in slows):
            for key, _ in sel.select(timeout=0.05):
                key.data.readable(sel, time.time())
            now = time.time()
            if now >= next_trickle:
                next_trickle = now + TRICKLE_EVERY
                for c in h2:
                    if not c.closed:
                        c.trickle(now)
                for c in h1:
                    c.trickle(now)
        out, _ = probe.communicate(timeout=60)
    finally:
        if probe.poll() is None:
            probe.kill()
        for key in list(sel.get_map().values()):
            key.fileobj.close()
        sel.close()

    def judge(kind, items):
        counts = {}
        for x in items:
            counts[x.how] = counts.get(x.how, 0) + 1
        print("%s: %s" % (kind, counts))
        for x in items:
            check(x.end is not None, "%s still open after %.1f s" % (kind, run_for), counts)
            took = x.end - x.start
            if x.how == "refused":
                continue
            check(took <= DEADLINE + SLACK, "%s cut off after %.2f s (deadline %.1f s)"
                  % (kind, took, DEADLINE), x.how)
            check(took >= DEADLINE * 0.9, "%s cut off early, after %.2f s" % (kind, took), x.how)
        return counts

    c2 = judge("http/2 stream", [st for c in h2 for st in c.streams.values()])
    c1 = judge("http/1.1 connection", [c.slow for c in h1])
    # the streams that were cut were answered 408 with the error object
    timed_out = [b for c in h2 for sid, b in c.bodies.items()
                 if c.streams[sid].how == "answered"]
    check(timed_out, "no http/2 stream was answered", c2)
    for b in timed_out:
        eq(json.loads(b)["code"], "request_timeout", "http/2 answer")
    answered = [c.buf for c in h1 if c.slow.how == "answered"]
    check(answered, "no http/1.1 connection was answered", c1)
    for b in answered:
        check(b.startswith(b"HTTP/1.1 408 "), "http/1.1 answer", b[:200])
        check(b"request_timeout" in b, "http/1.1 error object", b[:400])
    check(c1.get("refused", 0) > 0, "the per-address cap refused nothing", c1)

    pid = s.procs["gateway0"].proc.pid
    with open("/proc/%d/status" % pid) as f:
        mem = dict(line.split(":", 1) for line in f.read().splitlines())
    with open("/proc/%d/limits" % pid) as f:
        soft, hard = [int(x) if x.isdigit() else resource.RLIM_INFINITY for x in
                      [ln for ln in f if ln.startswith("Max open files")][0].split()[3:5]]
    print("gateway: %s peak resident, %d open descriptors at the end, %d allowed"
          % (mem["VmHWM"].strip(), len(os.listdir("/proc/%d/fd" % pid)), soft))
    # it raised its soft limit to what its connection cap (4096) needs
    check(soft >= min(hard, 4096 + 64), "the gateway's descriptor limit", soft, hard)
    results = json.loads(out)
    bad = [r for r in results if r[0] != 200]
    eq(bad, [], "normal requests from 127.0.0.2")
    check(len(results) >= 20, "too few normal requests", len(results))
    p99 = report("normal requests under the slow clients", results)
    if p99 >= P99_MS:
        # A machine that cannot meet the bound with no slow client at all
        # (other tests, other builds on the same cores) says nothing of the
        # gateway: measured again alone (at the slow clients' lower
        # priority), the same requests must meet it.
        alone = subprocess.run([sys.executable, __file__, "--probe", str(port), "3"],
                               capture_output=True, text=True, timeout=60)
        base = report("the same requests alone", json.loads(alone.stdout))
        if base >= P99_MS:
            raise h.Skip("this machine is too busy to judge latency: p99 %.1f ms "
                         "without slow clients" % base)
    check(p99 < P99_MS, "p99 %.1f ms over %d ms" % (p99, P99_MS))


if __name__ == "__main__":
    if len(sys.argv) == 4 and sys.argv[1] == "--probe":
        probe_main(int(sys.argv[2]), float(sys.argv[3]))
        sys.exit(0)
    sys.exit(h.run(setup, lambda s: s.close()))

"""What the fake providers share: a JSON request handler and the serving
loop (a free port, printed on the first line of stdout for the harness,
until killed)."""

import http.server
import json
import sys


class JsonHandler(http.server.BaseHTTPRequestHandler):
    """A keep-alive handler answering JSON; subclasses set `name` (the
    log prefix) and may set `content_type`."""
    protocol_version = "HTTP/1.1"
    name = "fake"
    content_type = "application/json"

    def log_message(self, fmt, *args):
        sys.stderr.write(self.name + ": " + fmt % args + "\n")

    def reply(self, status, body, ctype=None):
        ctype = ctype or self.content_type
        if not isinstance(body, (bytes, str)):
            body = json.dumps(body)
        if isinstance(body, str):
            body = body.encode()
        self.send_response(status)
        self.send_header("Content-Type", ctype)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def body(self):
        n = int(self.headers.get("Content-Length") or 0)
        return self.rfile.read(n) if n > 0 else b""


def serve(host, port, handler):
    """Serves `handler` on host:port (0: a free one) with a thread per
    connection; prints the port first."""
    server = http.server.ThreadingHTTPServer((host, port), handler)
    server.daemon_threads = True
    print(server.server_address[1], flush=True)
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        pass

#!/usr/bin/python3
"""A minimal SMTP server for tests (RFC 5321 subset, no TLS, no AUTH).

Usage:
  fake_smtp.py --dir DIR [--host 127.0.0.1] [--port 0]
               [--fail-first N] [--fail-code CODE]

Prints the port it listens on as stdout line 1 (bind port 0 picks a free
one), then serves until killed (SIGTERM/SIGINT).

Every accepted message is written to DIR as NNNNNN.json (numbered from
000001 in arrival order, written to a temporary name and renamed, so a
reader never sees half a file):
  {"mail_from": "a@b", "rcpt_to": ["c@d", ...], "data": "<message>"}
`data` is the message as sent after DATA, with CRLF line ends and the
dot-stuffing undone.

--fail-first N refuses the first N mail transactions (N < 0: all of them)
by answering MAIL FROM with CODE (default 451, a temporary failure; use 554
for a permanent one); nothing is stored for them. Later transactions are
accepted, so a client's retry can be seen to succeed.

Commands: EHLO, HELO, MAIL FROM, RCPT TO, DATA, RSET, NOOP, QUIT; anything
else gets 502.
"""

import argparse
import json
import os
import re
import socketserver
import sys
import threading

ADDR = re.compile(r"^(?:MAIL FROM|RCPT TO):\s*<([^>]*)>", re.I)


class State:
    def __init__(self, directory, fail_first, fail_code):
        self.lock = threading.Lock()
        self.dir = directory
        self.fail_left = fail_first
        self.fail_code = fail_code
        self.count = 0

    def refuse(self):
        with self.lock:
            if self.fail_left == 0:
                return False
            if self.fail_left > 0:
                self.fail_left -= 1
            return True

    def store(self, mail_from, rcpt_to, data):
        with self.lock:
            self.count += 1
            name = "%06d.json" % self.count
        tmp = os.path.join(self.dir, "." + name + ".tmp")
        with open(tmp, "w", encoding="utf-8") as f:
            json.dump({"mail_from": mail_from, "rcpt_to": rcpt_to,
                       "data": data}, f)
        os.rename(tmp, os.path.join(self.dir, name))


def make_handler(state):
    class Handler(socketserver.StreamRequestHandler):
        def say(self, line):
            self.wfile.write(line.encode() + b"\r\n")
            self.wfile.flush()

        def readline(self):
            line = self.rfile.readline(65536)
            if not line:
                raise EOFError
            return line.decode("utf-8", "replace").rstrip("\r\n")

        def read_data(self):
            lines = []
            while True:
                line = self.readline()
                if line == ".":
                    return "".join(l + "\r\n" for l in lines)
                lines.append(line[1:] if line.startswith(".") else line)

        def handle(self):
            mail_from, rcpt_to = None, []
            self.say("220 fake-smtp ESMTP ready")
            try:
                while True:
                    line = self.readline()
                    verb = line.split(" ", 1)[0].upper()
                    if verb == "EHLO":
                        self.say("250-fake-smtp greets you")
                        self.say("250-8BITMIME")
                        self.say("250 SIZE 10485760")
                    elif verb == "HELO":
                        self.say("250 fake-smtp")
                    elif verb == "MAIL":
                        m = ADDR.match(line)
                        if not m:
                            self.say("501 syntax: MAIL FROM:<address>")
                        elif state.refuse():
                            self.say("%d fake refusal, try again later"
                                     % state.fail_code)
                        else:
                            mail_from, rcpt_to = m.group(1), []
                            self.say("250 OK")
                    elif verb == "RCPT":
                        m = ADDR.match(line)
                        if mail_from is None:
                            self.say("503 need MAIL first")
                        elif not m or "@" not in m.group(1):
                            self.say("501 syntax: RCPT TO:<address>")
                        else:
                            rcpt_to.append(m.group(1))
                            self.say("250 OK")
                    elif verb == "DATA":
                        if mail_from is None or not rcpt_to:
                            self.say("503 need MAIL and RCPT first")
                            continue
                        self.say("354 end data with <CR><LF>.<CR><LF>")
                        state.store(mail_from, rcpt_to, self.read_data())
                        mail_from, rcpt_to = None, []
                        self.say("250 OK queued")
                    elif verb == "RSET":
                        mail_from, rcpt_to = None, []
                        self.say("250 OK")
                    elif verb == "NOOP":
                        self.say("250 OK")
                    elif verb == "QUIT":
                        self.say("221 bye")
                        return
                    else:
                        self.say("502 command not implemented")
            except (EOFError, ConnectionError):
                return

    return Handler


class Server(socketserver.ThreadingTCPServer):
    daemon_threads = True
    allow_reuse_address = True


def main():
    ap = argparse.ArgumentParser(description="fake SMTP server")
    ap.add_argument("--dir", required=True)
    ap.add_argument("--host", default="127.0.0.1")
    ap.add_argument("--port", type=int, default=0)
    ap.add_argument("--fail-first", type=int, default=0)
    ap.add_argument("--fail-code", type=int, default=451)
    args = ap.parse_args()

    os.makedirs(args.dir, exist_ok=True)
    state = State(args.dir, args.fail_first, args.fail_code)
    server = Server((args.host, args.port), make_handler(state))
    print(server.server_address[1], flush=True)
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        pass


if __name__ == "__main__":
    main()

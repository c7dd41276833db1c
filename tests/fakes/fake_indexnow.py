#!/usr/bin/python3
"""A fake IndexNow endpoint (the protocol's JSON submission), for tests.

Usage:
  fake_indexnow.py [--host 127.0.0.1] [--port 0]

Prints the port it listens on as stdout line 1, then serves until killed.
Requests are served on threads.

Provider route:
  POST /indexnow   body {host, key, keyLocation, urlList} as the protocol
                   defines it, Content-Type application/json. In mode "ok"
                   it answers as the protocol does: 400 for a body that is
                   not that object (key of 8 to 128 letters, digits or
                   '-', urlList 1 to 10,000 strings), 422 when a URL or
                   keyLocation is not on `host` or keyLocation does not
                   name the key, else 200 (202 in mode "202"). Any other
                   mode answers that status ("400", "403", "422", "429",
                   "500", "503") to every well-formed body; "close" drops
                   the connection without an answer; "fail_marked" answers
                   503 to a submission with a URL containing "fail" and
                   200 to the others.

Control routes:
  POST /_control   JSON {"mode": ..., "delay": seconds before answering}
  GET  /_requests  JSON array of the bodies received (parsed), oldest first
  POST /_reset     forget them, mode back to "ok", no delay
"""

import argparse
import json
import re
import threading
import time
import urllib.parse

import fakehttp

KEY = re.compile(r"^[A-Za-z0-9-]{8,128}$")
STATUSES = {"202": 202, "400": 400, "403": 403, "422": 422, "429": 429,
            "500": 500, "503": 503}


class State:
    def __init__(self):
        self.lock = threading.Lock()
        self.reset()

    def reset(self):
        self.mode = "ok"
        self.delay = 0.0
        self.requests = []


def host_of(url):
    try:
        u = urllib.parse.urlsplit(url)
    except ValueError:
        return None
    return u.hostname if u.scheme in ("http", "https") else None


def protocol_status(body):
    """The status the protocol gives a submission, before any mode."""
    if not isinstance(body, dict):
        return 400
    host, key, loc, urls = (body.get(k) for k in ("host", "key", "keyLocation", "urlList"))
    if (not isinstance(host, str) or not isinstance(key, str) or not KEY.match(key)
            or not isinstance(loc, str) or not isinstance(urls, list)
            or not 1 <= len(urls) <= 10000 or not all(isinstance(u, str) for u in urls)):
        return 400
    if host_of(loc) != host or not loc.endswith("/" + key + ".txt"):
        return 422
    if any(host_of(u) != host for u in urls):
        return 422
    return 200


def make_handler(state):
    class Handler(fakehttp.JsonHandler):
        name = "fake_indexnow"

        def do_GET(self):
            if self.path == "/_requests":
                with state.lock:
                    self.reply(200, list(state.requests))
            else:
                self.reply(404, {"error": "not found"})

        def do_POST(self):
            raw = self.body()
            if self.path == "/_control":
                c = json.loads(raw or b"{}")
                with state.lock:
                    state.mode = c.get("mode", state.mode)
                    state.delay = float(c.get("delay", state.delay))
                self.reply(200, {"mode": state.mode})
                return
            if self.path == "/_reset":
                with state.lock:
                    state.reset()
                self.reply(200, {})
                return
            if self.path != "/indexnow":
                self.reply(404, {"error": "not found"})
                return
            try:
                body = json.loads(raw)
            except ValueError:
                body = None
            ctype = self.headers.get("Content-Type", "")
            with state.lock:
                state.requests.append(body)
                mode, delay = state.mode, state.delay
            if delay:
                time.sleep(delay)
            status = protocol_status(body)
            if not ctype.startswith("application/json"):
                status = 400
            if mode == "close":
                self.close_connection = True
                self.connection.close()
                return
            if status == 200:
                if mode == "fail_marked":
                    status = 503 if any("fail" in u for u in body["urlList"]) else 200
                elif mode in STATUSES:
                    status = STATUSES[mode]
            self.reply(status, b"", ctype="text/plain")

    return Handler


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--host", default="127.0.0.1")
    ap.add_argument("--port", type=int, default=0)
    args = ap.parse_args()
    fakehttp.serve(args.host, args.port, make_handler(State()))


if __name__ == "__main__":
    main()

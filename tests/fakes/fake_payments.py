#!/usr/bin/python3
"""A fake payment provider speaking the Stripe wire format, for tests.

Usage:
  fake_payments.py [--host 127.0.0.1] [--port 0] [--key sk_test_fake]
                   [--fail MODE]

Prints the port it listens on as stdout line 1 (bind port 0 picks a free
one), then serves until killed (SIGTERM/SIGINT).

Provider routes:
  POST /v1/checkout/sessions   form-encoded, `Authorization: Bearer KEY`.
      Checks the key (401 otherwise) and the fields svc-account sends:
      mode=payment, success_url, cancel_url, client_reference_id,
      line_items[0][quantity]=1, line_items[0][price_data][currency]=usd,
      line_items[0][price_data][unit_amount] (integer > 0),
      line_items[0][price_data][product_data][name], metadata[workspace_id],
      metadata[credits] (400 with a Stripe error object otherwise).
      Answers 200 {"id": "cs_test_...", "object": "checkout.session",
      "url": "http://HOST:PORT/pay/cs_test_...", ...}.
  GET /pay/ID                  a stub payment page (200 text).

Failure modes (--fail MODE at start, or POST /_control/fail?mode=MODE):
  none     normal behaviour (default)
  500      answer 500 with a Stripe error object
  nourl    answer 200 with a session object without "url"
  badjson  answer 200 with a body that is not JSON
  hang     accept, then answer nothing for 30 s

Control routes (no key):
  GET  /_requests              JSON array of the checkout requests received,
                               oldest first: {"path", "authorization",
                               "content_type", "form": {name: value}, "raw"}
  POST /_reset                 forget requests and sessions, mode none
  POST /_control/fail?mode=M   set the failure mode
  GET  /_sessions              JSON object session id -> form of its request
  POST /_complete              JSON body {"session_id", "webhook_url",
                               "secret", optional "event_id",
                               "payment_status" (default "paid"),
                               "header" (default "Stripe-Signature"),
                               "timestamp" (default now)}: signs a
                               checkout.session.completed event for that
                               session as the provider would (v1 = hex
                               HMAC-SHA256 of "<t>.<body>") and POSTs it
                               to webhook_url; answers {"status": HTTP
                               status of the delivery, "body": its text,
                               "event": the event sent}.
"""

import argparse
import hashlib
import hmac
import json
import secrets
import threading
import time
import urllib.error
import urllib.parse
import urllib.request

import fakehttp

REQUIRED = {
    "mode": "payment",
    "line_items[0][quantity]": "1",
    "line_items[0][price_data][currency]": "usd",
}
PRESENT = (
    "success_url",
    "cancel_url",
    "client_reference_id",
    "line_items[0][price_data][product_data][name]",
    "metadata[workspace_id]",
    "metadata[credits]",
)
MODES = ("none", "500", "nourl", "badjson", "hang")


class State:
    def __init__(self, key, mode):
        self.lock = threading.Lock()
        self.key = key
        self.mode = mode
        self.requests = []
        self.sessions = {}


def stripe_error(message, param=None):
    err = {"type": "invalid_request_error", "message": message}
    if param:
        err["param"] = param
    return {"error": err}


def form_problem(form):
    for name, want in REQUIRED.items():
        if form.get(name) != want:
            return name, "%s must be %s" % (name, want)
    for name in PRESENT:
        if not form.get(name):
            return name, "missing required param: %s" % name
    amount = form.get("line_items[0][price_data][unit_amount]", "")
    if not amount.isdigit() or int(amount) <= 0:
        return ("line_items[0][price_data][unit_amount]",
                "unit_amount must be a positive integer")
    if not form["metadata[credits]"].isdigit():
        return "metadata[credits]", "metadata[credits] must be an integer"
    return None


def make_handler(state):
    class Handler(fakehttp.JsonHandler):
        name = "fake_payments"

        def do_GET(self):
            path = urllib.parse.urlsplit(self.path).path
            with state.lock:
                if path == "/_requests":
                    return self.reply(200, state.requests)
                if path == "/_sessions":
                    return self.reply(200, state.sessions)
                known = path.startswith("/pay/") and path[5:] in state.sessions
            if known:
                return self.reply(200, "fake payment page\n", "text/plain")
            self.reply(404, stripe_error("no such route"))

        def do_POST(self):
            url = urllib.parse.urlsplit(self.path)
            raw = self.body()
            if url.path == "/_reset":
                with state.lock:
                    state.requests.clear()
                    state.sessions.clear()
                    state.mode = "none"
                return self.reply(200, {"ok": True})
            if url.path == "/_control/fail":
                mode = urllib.parse.parse_qs(url.query).get("mode", [""])[0]
                if mode not in MODES:
                    return self.reply(400, {"error": "unknown mode"})
                with state.lock:
                    state.mode = mode
                return self.reply(200, {"mode": mode})
            if url.path == "/_complete":
                return self.complete(raw)
            if url.path == "/v1/checkout/sessions":
                return self.create_session(raw)
            self.reply(404, stripe_error("no such route"))

        def create_session(self, raw):
            form = dict(urllib.parse.parse_qsl(raw.decode("utf-8", "replace"),
                                               keep_blank_values=True))
            auth = self.headers.get("Authorization", "")
            with state.lock:
                state.requests.append({
                    "path": self.path,
                    "authorization": auth,
                    "content_type": self.headers.get("Content-Type", ""),
                    "form": form,
                    "raw": raw.decode("utf-8", "replace"),
                })
                mode = state.mode
            if auth != "Bearer " + state.key:
                return self.reply(401, {"error": {
                    "type": "invalid_request_error",
                    "message": "Invalid API Key provided"}})
            if mode == "hang":
                time.sleep(30)
                return self.reply(504, stripe_error("hung"))
            if mode == "500":
                return self.reply(500, {"error": {
                    "type": "api_error", "message": "fake failure"}})
            if mode == "badjson":
                return self.reply(200, "<html>not json</html>", "text/html")
            problem = form_problem(form)
            if problem:
                return self.reply(400, stripe_error(problem[1], problem[0]))
            sid = "cs_test_" + secrets.token_hex(12)
            host = self.headers.get("Host") or "127.0.0.1"
            session = {
                "id": sid,
                "object": "checkout.session",
                "mode": "payment",
                "status": "open",
                "payment_status": "unpaid",
                "amount_total": int(form["line_items[0][price_data][unit_amount]"]),
                "currency": "usd",
                "client_reference_id": form["client_reference_id"],
                "metadata": {
                    "workspace_id": form["metadata[workspace_id]"],
                    "credits": form["metadata[credits]"],
                },
                "success_url": form["success_url"],
                "cancel_url": form["cancel_url"],
                "url": "http://%s/pay/%s" % (host, sid),
            }
            with state.lock:
                state.sessions[sid] = form
            if mode == "nourl":
                del session["url"]
            self.reply(200, session)

        def complete(self, raw):
            try:
                req = json.loads(raw or b"{}")
                sid = req["session_id"]
                target = req["webhook_url"]
                secret = req["secret"]
            except (ValueError, KeyError) as e:
                return self.reply(400, {"error": "bad request: %s" % e})
            with state.lock:
                form = state.sessions.get(sid)
            if form is None:
                return self.reply(404, {"error": "unknown session"})
            event = {
                "id": req.get("event_id") or "evt_test_" + secrets.token_hex(12),
                "object": "event",
                "type": "checkout.session.completed",
                "created": int(time.time()),
                "data": {"object": {
                    "id": sid,
                    "object": "checkout.session",
                    "payment_status": req.get("payment_status", "paid"),
                    "amount_total": int(form["line_items[0][price_data][unit_amount]"]),
                    "client_reference_id": form["client_reference_id"],
                    "metadata": {
                        "workspace_id": form["metadata[workspace_id]"],
                        "credits": form["metadata[credits]"],
                    },
                }},
            }
            body = json.dumps(event).encode()
            t = str(int(req.get("timestamp") or time.time()))
            sig = hmac.new(secret.encode(), t.encode() + b"." + body,
                           hashlib.sha256).hexdigest()
            delivery = urllib.request.Request(target, data=body, method="POST")
            delivery.add_header("Content-Type", "application/json")
            delivery.add_header(req.get("header", "Stripe-Signature"),
                                "t=%s,v1=%s" % (t, sig))
            try:
                with urllib.request.urlopen(delivery, timeout=10) as r:
                    status, text = r.status, r.read().decode("utf-8", "replace")
            except urllib.error.HTTPError as e:
                status, text = e.code, e.read().decode("utf-8", "replace")
            except (urllib.error.URLError, OSError) as e:
                return self.reply(502, {"error": "delivery failed: %s" % e})
            self.reply(200, {"status": status, "body": text, "event": event})

    return Handler


def main():
    ap = argparse.ArgumentParser(description="fake payment provider")
    ap.add_argument("--host", default="127.0.0.1")
    ap.add_argument("--port", type=int, default=0)
    ap.add_argument("--key", default="sk_test_fake")
    ap.add_argument("--fail", default="none", choices=MODES)
    args = ap.parse_args()

    fakehttp.serve(args.host, args.port, make_handler(State(args.key, args.fail)))


if __name__ == "__main__":
    main()

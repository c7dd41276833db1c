#!/usr/bin/python3
"""A fake PageSpeed Insights v5 API (runPagespeed), for tests.

Usage:
  fake_pagespeed.py [--host 127.0.0.1] [--port 0] [--key KEY]

Prints the port it listens on as stdout line 1 (bind port 0 picks a free
one), then serves until killed (SIGTERM/SIGINT). Requests are served on
threads, so that concurrent runs overlap as they would upstream.

Provider route:
  GET /pagespeedonline/v5/runPagespeed?url=U&strategy=S&category=C...[&key=K]
      As the public API: `url` is required (400 with a Google error object
      otherwise), `strategy` MOBILE or DESKTOP (any case; the API's default
      is desktop), `category` repeated (PERFORMANCE, ACCESSIBILITY,
      BEST_PRACTICES, SEO; only performance when none). With --key, `key`
      must equal it (400 "API key not valid"). Answers 200 with a
      pagespeedonline#result: id, loadingExperience (field metrics unless
      switched off), originLoadingExperience, lighthouseResult
      {requestedUrl, finalUrl, fetchTime, lighthouseVersion,
      configSettings, categories (each requested one, {id, title, score}),
      audits (largest-contentful-paint, cumulative-layout-shift,
      first-contentful-paint, server-response-time, speed-index,
      total-blocking-time, and interaction-to-next-paint when switched
      on; each {id, title, score, scoreDisplayMode, numericValue,
      numericUnit, displayValue})}, analysisUTCTimestamp. Values depend on
      the strategy (desktop is faster) and are listed under VALUES.
  GET /                         a small HTML page (a target for page-seo)

Control routes (no key):
  POST /_control               JSON body, every member optional:
                               {"mode": "ok" | "500" | "429" | "garbage" |
                                "nolighthouse" | "runtime_error",
                                "delay": seconds before answering,
                                "missing_categories": [ids left out],
                                "missing_audits": [ids left out],
                                "field_data": bool (default true),
                                "inp": bool (default false)}
  GET  /_requests              JSON array of the runs asked, oldest first:
                               {"url", "strategy", "categories", "key"}
  GET  /_count                 {"count": runs asked}
  POST /_reset                 forget the runs, every control back to its
                               default
"""

import argparse
import json
import threading
import time
import urllib.parse

import fakehttp

API_PATH = "/pagespeedonline/v5/runPagespeed"
MODES = ("ok", "500", "429", "garbage", "nolighthouse", "runtime_error")
TITLES = {
    "performance": "Performance",
    "accessibility": "Accessibility",
    "best-practices": "Best Practices",
    "seo": "SEO",
}
# Lab values per strategy: category scores 0..1 and audit numericValues.
VALUES = {
    "mobile": {
        "scores": {"performance": 0.92, "accessibility": 0.87,
                   "best-practices": 0.96, "seo": 0.9},
        "audits": {"largest-contentful-paint": 2345.6,
                   "cumulative-layout-shift": 0.042,
                   "first-contentful-paint": 1200.5,
                   "server-response-time": 180.25,
                   "interaction-to-next-paint": 150.0,
                   "speed-index": 2100.0,
                   "total-blocking-time": 90.0},
    },
    "desktop": {
        "scores": {"performance": 0.99, "accessibility": 0.87,
                   "best-practices": 0.96, "seo": 0.91},
        "audits": {"largest-contentful-paint": 812.4,
                   "cumulative-layout-shift": 0.001,
                   "first-contentful-paint": 400.2,
                   "server-response-time": 95.5,
                   "interaction-to-next-paint": 40.0,
                   "speed-index": 700.0,
                   "total-blocking-time": 0.0},
    },
}
UNITS = {"cumulative-layout-shift": "unitless"}
PAGE = (b"<!doctype html><html lang=\"en\"><head><title>Fake PageSpeed target "
        b"page for tests</title></head><body><h1>Hello</h1></body></html>")


class State:
    def __init__(self, key):
        self.lock = threading.Lock()
        self.key = key
        self.reset()

    def reset(self):
        self.requests = []
        self.mode = "ok"
        self.delay = 0.0
        self.missing_categories = []
        self.missing_audits = []
        self.field_data = True
        self.inp = False


def google_error(code, message, status):
    return {"error": {"code": code, "message": message, "errors": [
        {"message": message, "domain": "global", "reason": "badRequest"}],
        "status": status}}


def category_id(name):
    return name.strip().lower().replace("_", "-")


def run_result(state, url, strategy, categories):
    values = VALUES[strategy]
    now = time.strftime("%Y-%m-%dT%H:%M:%S.000Z", time.gmtime())
    audits = {}
    for aid, value in values["audits"].items():
        if aid in state.missing_audits:
            continue
        if aid == "interaction-to-next-paint" and not state.inp:
            continue
        unit = UNITS.get(aid, "millisecond")
        audits[aid] = {
            "id": aid, "title": aid.replace("-", " ").title(), "score": 0.9,
            "scoreDisplayMode": "numeric", "numericValue": value,
            "numericUnit": unit,
            "displayValue": ("%.3f" % value) if unit == "unitless" else "%.1f s" % (value / 1000),
        }
    cats = {}
    for cid in categories:
        if cid in state.missing_categories or cid not in TITLES:
            continue
        cats[cid] = {"id": cid, "title": TITLES[cid], "score": values["scores"][cid],
                     "auditRefs": []}
    field = {"id": url, "initial_url": url}
    if state.field_data:
        field.update({
            "metrics": {
                "LARGEST_CONTENTFUL_PAINT_MS": {"percentile": 2100, "category": "AVERAGE",
                                                "distributions": []},
                "CUMULATIVE_LAYOUT_SHIFT_SCORE": {"percentile": 5, "category": "FAST",
                                                  "distributions": []},
            },
            "overall_category": "AVERAGE",
        })
    return {
        "captchaResult": "CAPTCHA_NOT_NEEDED",
        "kind": "pagespeedonline#result",
        "id": url,
        "loadingExperience": field,
        "originLoadingExperience": dict(field, id=url),
        "lighthouseResult": {
            "requestedUrl": url,
            "finalUrl": url,
            "finalDisplayedUrl": url,
            "lighthouseVersion": "12.0.0",
            "userAgent": "fake",
            "fetchTime": now,
            "environment": {"networkUserAgent": "fake", "hostUserAgent": "fake",
                            "benchmarkIndex": 1000},
            "runWarnings": [],
            "configSettings": {"emulatedFormFactor": strategy, "formFactor": strategy,
                               "locale": "en-US", "onlyCategories": categories,
                               "channel": "lr"},
            "audits": audits,
            "categories": cats,
            "categoryGroups": {},
            "timing": {"total": 1234.5},
        },
        "analysisUTCTimestamp": now,
    }


def make_handler(state):
    class Handler(fakehttp.JsonHandler):
        name = "fake_pagespeed"
        content_type = "application/json; charset=UTF-8"

        def do_GET(self):
            url = urllib.parse.urlsplit(self.path)
            if url.path == "/_requests":
                with state.lock:
                    return self.reply(200, state.requests)
            if url.path == "/_count":
                with state.lock:
                    return self.reply(200, {"count": len(state.requests)})
            if url.path == "/":
                return self.reply(200, PAGE, "text/html; charset=utf-8")
            if url.path == API_PATH:
                return self.run(urllib.parse.parse_qs(url.query))
            self.reply(404, google_error(404, "Not Found", "NOT_FOUND"))

        def do_POST(self):
            path = urllib.parse.urlsplit(self.path).path
            if path == "/_reset":
                with state.lock:
                    state.reset()
                return self.reply(200, {"ok": True})
            if path == "/_control":
                try:
                    ctl = json.loads(self.body() or b"{}")
                except ValueError:
                    return self.reply(400, {"error": "body is not json"})
                if ctl.get("mode", "ok") not in MODES:
                    return self.reply(400, {"error": "unknown mode"})
                with state.lock:
                    state.mode = ctl.get("mode", state.mode)
                    state.delay = float(ctl.get("delay", state.delay))
                    state.missing_categories = ctl.get("missing_categories",
                                                       state.missing_categories)
                    state.missing_audits = ctl.get("missing_audits", state.missing_audits)
                    state.field_data = bool(ctl.get("field_data", state.field_data))
                    state.inp = bool(ctl.get("inp", state.inp))
                return self.reply(200, {"ok": True})
            self.reply(404, google_error(404, "Not Found", "NOT_FOUND"))

        def run(self, q):
            target = q.get("url", [""])[0]
            strategy = q.get("strategy", ["DESKTOP"])[0].lower()
            categories = [category_id(c) for c in q.get("category", [])] or ["performance"]
            key = q.get("key", [None])[0]
            with state.lock:
                state.requests.append({"url": target, "strategy": strategy,
                                       "categories": categories, "key": key})
                mode, delay = state.mode, state.delay
            if delay > 0:
                time.sleep(delay)
            if state.key is not None and key != state.key:
                return self.reply(400, google_error(
                    400, "API key not valid. Please pass a valid API key.",
                    "INVALID_ARGUMENT"))
            if not target:
                return self.reply(400, google_error(
                    400, "Invalid value at 'url' (TYPE_STRING), \"\"", "INVALID_ARGUMENT"))
            if strategy not in VALUES:
                return self.reply(400, google_error(
                    400, "Invalid value at 'strategy'", "INVALID_ARGUMENT"))
            if mode == "500":
                return self.reply(500, google_error(
                    500, "Lighthouse returned error: FAILED_DOCUMENT_REQUEST. "
                    "Lighthouse was unable to reliably load the page you requested.",
                    "INTERNAL"))
            if mode == "429":
                return self.reply(429, google_error(
                    429, "Quota exceeded for quota metric 'Queries'", "RESOURCE_EXHAUSTED"))
            if mode == "garbage":
                return self.reply(200, "<html>not json</html>", "text/html")
            result = run_result(state, target, strategy, categories)
            if mode == "nolighthouse":
                del result["lighthouseResult"]
            if mode == "runtime_error":
                result["lighthouseResult"]["runtimeError"] = {
                    "code": "NO_FCP", "message": "The page did not paint any content."}
            self.reply(200, result)

    return Handler


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--host", default="127.0.0.1")
    ap.add_argument("--port", type=int, default=0)
    ap.add_argument("--key", default=None)
    args = ap.parse_args()
    fakehttp.serve(args.host, args.port, make_handler(State(args.key)))


if __name__ == "__main__":
    main()

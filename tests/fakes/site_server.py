#!/usr/bin/env python3
"""A local test site for the fetcher: redirects, gzip, big and slow bodies,
charset variants; a page trickled out slowly (/trickle?ms=); and small
sites for the sitemap walk, the page analyses and site health, chosen by
the Host header (*.test, reached through SEO_FETCH_CONNECT_TO), and
bigsm.test, whose robots.txt names 16 sitemaps of 50 MiB made as they are
sent. For the provider client, GET or POST /echo answers
JSON {method, path, authorization, content_type, x_api_key, body} of the
request, and /flaky?id=X&fail=N&status=S answers S to the first N
requests of id X, then 200 {"attempt": k}; /slow?ms=M[&id=X] answers
after M ms, counting its requests under id X as they begin; /count?id=X is
{"count": k} without counting. Files a test hosts at run time (IndexNow key files):
PUT /_hosted?host=H&path=P[&status=S] stores the body, served as text
with status S (200) to GETs of P with Host H; DELETE /_hosted?host=H&path=P
removes it; GET /_hosted?host=H&path=P is {"count": GETs served}. Listens on 127.0.0.1 on a free port (or argv[1]) and
prints the port on its first stdout line. `--tls CERT KEY` serves HTTPS
instead, with the same sites."""
import gzip
import json
import ssl
import threading
import sys
import time
import urllib.parse
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

PAGE = "<!doctype html><html><head><title>ok page</title></head><body>caf\u00e9</body></html>"


def urlset(*locs):
    return ('<?xml version="1.0"?><urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">'
            + "".join("<url><loc>%s</loc><priority>0.5</priority></url>" % u for u in locs)
            + "</urlset>").encode()


def index(*locs):
    return ('<sitemapindex xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">'
            + "".join("<sitemap><loc>%s</loc></sitemap>" % u for u in locs)
            + "</sitemapindex>").encode()


AUDIT_PAGE = """<!doctype html><html lang="en-GB"><head>
<title>An audit page of exactly forty chars!!</title>
<meta name="description" content="%s">
<link rel="canonical" href="http://pg1.test/">
<meta name="robots" content="noindex, follow">
<meta name="viewport" content="width=device-width">
<link rel="alternate" hreflang="de" href="/de/">
<meta property="og:title" content="OG title"><meta property="og:type" content="website">
<meta name="twitter:card" content="summary">
<link rel="icon" href="/favicon.ico">
<script type="application/ld+json">{"@context": "https://schema.org", "@type": "Organization",
 "@id": "#org", "name": "Org"}</script>
<script type="application/ld+json">{"@graph": [{"@type": ["WebSite", "Thing"], "name": "W"},
 {"@type": "WebPage"}]}</script>
<script type="application/ld+json">{"broken": </script>
</head><body><h1>Main heading</h1><h2>Sub one</h2><h2>Sub two</h2><h3>x</h3>
<p>five words of visible text</p>
<img src="a.png" alt="a"><img src="b.png">
<a href="/inner">in</a><a href="https://elsewhere.example/">out</a>
</body></html>""" % ("d" * 130)

# A WordPress homepage behind Cloudflare with a few third-party scripts,
# for tech-stack.
TECH_PAGE = """<!doctype html><html><head>
<meta name="generator" content="WordPress 6.5.2">
<link rel="stylesheet" href="/wp-content/themes/site/style.css">
<script src="/wp-includes/js/jquery/jquery.min.js"></script>
<script async src="https://www.googletagmanager.com/gtag/js?id=G-TEST"></script>
<script src="https://js.stripe.com/v3/"></script>
<script>window.intercomSettings = {app_id: "x"};</script>
</head><body><p>shop</p></body></html>"""

XML = "application/xml"
# host -> path -> (body, content type); any other path is a 404
SITES = {
    # robots.txt names an index (with a failing, a nested and a plain
    # child) and a gzip urlset served as a file, not Content-Encoding
    "sm1.test": {
        "/robots.txt": (b"User-agent: *\nDisallow: /private\n"
                        b"Sitemap: http://sm1.test/index.xml\n"
                        b"Sitemap: http://sm1.test/b.xml.gz\n", "text/plain"),
        "/index.xml": (index("http://sm1.test/c1.xml", "http://sm1.test/missing.xml",
                             "/nested.xml"), XML),
        "/nested.xml": (index("http://sm1.test/c2.xml"), XML),
        "/c1.xml": (urlset("http://sm1.test/1", "http://sm1.test/2"), XML),
        "/c2.xml": (urlset("http://sm1.test/3"), XML),
        "/b.xml.gz": (gzip.compress(urlset("http://sm1.test/b")), "application/gzip"),
        "/sitemap.xml": (urlset("http://sm1.test/never-read"), XML),
    },
    # no robots.txt, /sitemap.xml is HTML: /sitemap_index.xml is the one
    "sm2.test": {
        "/sitemap.xml": (PAGE.encode(), "text/html"),
        "/sitemap_index.xml": (index("http://sm2.test/s.xml"), XML),
        "/s.xml": (urlset("http://sm2.test/a"), XML),
    },
    # no sitemap at all
    "sm3.test": {
        "/robots.txt": (b"User-agent: *\nAllow: /\n", "text/plain"),
    },
    # pages for page-seo and schema-markup
    "pg1.test": {
        "/": (AUDIT_PAGE.encode(), "text/html; charset=utf-8"),
        "/plain": (PAGE.encode(), "text/html; charset=utf-8"),
    },
    # site health: https only (see HTTPS_ONLY), HSTS and security headers,
    # a robots.txt that shuts every crawler out and declares a sitemap
    "sh1.test": {
        "/": (PAGE.encode(), "text/html; charset=utf-8", [
            ("Strict-Transport-Security", "max-age=31536000; includeSubDomains"),
            ("X-Frame-Options", "DENY"),
            ("X-Content-Type-Options", "nosniff"),
            ("Content-Security-Policy", "default-src 'self'"),
            ("Referrer-Policy", "no-referrer")]),
        "/robots.txt": (b"User-agent: *\nDisallow: /\nSitemap: https://sh1.test/sitemap.xml\n",
                        "text/plain"),
        "/sitemap.xml": (urlset("https://sh1.test/"), XML),
    },
    # a plain http site without any of it
    "sh2.test": {
        "/": (PAGE.encode(), "text/html; charset=utf-8"),
    },
    # tech-stack: served over https
    "ts1.test": {
        "/": (TECH_PAGE.encode(), "text/html; charset=utf-8", [
            ("X-Powered-By", "PHP/8.2.18"),
            ("CF-RAY", "8f00000000000000-AMS"),
            ("Set-Cookie", "PHPSESSID=abc; path=/; HttpOnly")]),
    },
}

# Hosts whose plain-http requests are redirected to https.
HTTPS_ONLY = {"sh1.test"}
# Hosts redirecting every request to another origin.
REDIRECTS = {"www.sh1.test": "https://sh1.test"}


# (host, path) -> [status, body, GETs served]: files hosted by /_hosted.
HOSTED = {}
HOSTED_LOCK = threading.Lock()

# Requests seen per /flaky id.
ATTEMPTS = {}
ATTEMPTS_LOCK = threading.Lock()


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, *args):
        pass

    def send_json(self, status, obj):
        self.send(status, json.dumps(obj).encode(), ctype="application/json")

    def provider_route(self, p, q, body):
        """The provider client's routes; False when `p` is none of them."""
        if p == "/echo":
            self.send_json(200, {"method": self.command, "path": self.path,
                                 "authorization": self.headers.get("Authorization"),
                                 "content_type": self.headers.get("Content-Type"),
                                 "x_api_key": self.headers.get("X-Api-Key"),
                                 "body": body.decode("utf-8", "replace")})
        elif p == "/flaky":
            with ATTEMPTS_LOCK:
                n = ATTEMPTS[q["id"]] = ATTEMPTS.get(q["id"], 0) + 1
            if n <= int(q.get("fail", "0")):
                self.send_json(int(q.get("status", "503")), {"error": "try again"})
            else:
                self.send_json(200, {"attempt": n})
        elif p == "/count":
            with ATTEMPTS_LOCK:
                self.send_json(200, {"count": ATTEMPTS.get(q["id"], 0)})
        else:
            return False
        return True

    def hosted_control(self):
        """PUT, DELETE or GET of /_hosted; False for any other path."""
        u = urllib.parse.urlsplit(self.path)
        if u.path != "/_hosted":
            return False
        q = dict(urllib.parse.parse_qsl(u.query))
        spot = (q["host"], q["path"])
        with HOSTED_LOCK:
            if self.command == "PUT":
                body = self.rfile.read(int(self.headers.get("Content-Length", "0")))
                HOSTED[spot] = [int(q.get("status", "200")), body, 0]
            elif self.command == "DELETE":
                HOSTED.pop(spot, None)
            count = HOSTED[spot][2] if spot in HOSTED else 0
        self.send_json(200, {"count": count})
        return True

    def do_PUT(self):
        if not self.hosted_control():
            self.send(404, b"not found")

    do_DELETE = do_PUT

    def do_POST(self):
        u = urllib.parse.urlsplit(self.path)
        body = self.rfile.read(int(self.headers.get("Content-Length", "0")))
        if not self.provider_route(u.path, dict(urllib.parse.parse_qsl(u.query)), body):
            self.send(404, b"not found")

    def send(self, status, body, ctype="text/html; charset=utf-8", headers=()):
        self.send_response(status)
        self.send_header("Content-Type", ctype)
        self.send_header("Content-Length", str(len(body)))
        for k, v in headers:
            self.send_header(k, v)
        self.end_headers()
        self.wfile.write(body)

    def do_GET(self):
        u = urllib.parse.urlsplit(self.path)
        q = dict(urllib.parse.parse_qsl(u.query))
        p = u.path
        host = self.headers.get("Host", "").split(":")[0]
        site = SITES.get(host)
        with HOSTED_LOCK:
            hosted = HOSTED.get((host, p))
            if hosted is not None:
                hosted[2] += 1
        if self.provider_route(p, q, b"") or self.hosted_control():
            pass
        elif hosted is not None:
            self.send(hosted[0], hosted[1], ctype="text/plain; charset=utf-8")
        elif host in REDIRECTS or (host in HTTPS_ONLY and not self.server.tls):
            to = REDIRECTS.get(host, "https://" + host)
            self.send(301, b"", headers=[("Location", to + self.path)])
        elif site is not None:
            body, ctype, *hdrs = site.get(p, (b"not found", "text/plain"))
            self.send(200 if p in site else 404, body, ctype=ctype,
                      headers=hdrs[0] if hdrs else ())
        elif p == "/ok":
            self.send(200, PAGE.encode(), headers=[("X-Robots-Tag", "noarchive")])
        elif p == "/redirect":
            self.send(int(q.get("status", "302")), b"", headers=[("Location", q["to"])])
        elif p.startswith("/chain/"):
            n = int(p.split("/")[2])
            self.send(301, b"", headers=[("Location", "/chain/%d" % (n - 1) if n > 1 else "/ok")])
        elif p == "/gzip":
            self.send(200, gzip.compress(PAGE.encode()), headers=[("Content-Encoding", "gzip")])
        elif p == "/bomb":
            self.send(200, gzip.compress(b"a" * (20 << 20)), headers=[("Content-Encoding", "gzip")])
        elif p == "/big":
            self.send(200, b"x" * int(q.get("n", "1000")), ctype="text/plain")
        elif p == "/chunked-big":
            self.send_response(200)
            self.send_header("Content-Type", "text/plain")
            self.send_header("Transfer-Encoding", "chunked")
            self.end_headers()
            chunk = b"y" * 65536
            try:
                for _ in range(int(q.get("chunks", "200"))):
                    self.wfile.write(b"%x\r\n%s\r\n" % (len(chunk), chunk))
                self.wfile.write(b"0\r\n\r\n")
            except (BrokenPipeError, ConnectionResetError):
                pass
        elif p == "/trickle":
            # a page that takes `ms` to arrive, a few bytes at a time
            body = PAGE.encode()
            self.send_response(200)
            self.send_header("Content-Type", "text/html; charset=utf-8")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            pause = int(q.get("ms", "5000")) / 1000 / len(body)
            try:
                for i in range(len(body)):
                    self.wfile.write(body[i:i + 1])
                    self.wfile.flush()
                    time.sleep(pause)
            except (BrokenPipeError, ConnectionResetError):
                pass
        elif host == "bigsm.test" and p == "/robots.txt":
            # naming `n` generated sitemaps of `mb` MiB each, over http
            n, mb = int(q.get("n", "16")), int(q.get("mb", "50"))
            base = "http://%s" % host
            lines = "".join("Sitemap: %s/big-sitemap?i=%d&mb=%d\n" % (base, i, mb)
                            for i in range(n))
            self.send(200, ("User-agent: *\n" + lines).encode(), ctype="text/plain")
        elif p == "/big-sitemap":
            # one URL, then comments up to `mb` MiB, made as they are sent
            self.send_response(200)
            self.send_header("Content-Type", XML)
            self.send_header("Transfer-Encoding", "chunked")
            self.end_headers()
            head = urlset("http://%s/u%s" % (self.headers.get("Host", ""), q.get("i", "0")))
            head = head[:head.rindex(b"</urlset>")]
            filler = b"<!--" + b"x" * 65000 + b"-->\n"
            try:
                self.wfile.write(b"%x\r\n%s\r\n" % (len(head), head))
                for _ in range(int(q.get("mb", "50")) * (1 << 20) // len(filler)):
                    self.wfile.write(b"%x\r\n%s\r\n" % (len(filler), filler))
                self.wfile.write(b"9\r\n</urlset>\r\n0\r\n\r\n")
            except (BrokenPipeError, ConnectionResetError):
                pass
        elif p == "/slow":
            if "id" in q:
                with ATTEMPTS_LOCK:
                    ATTEMPTS[q["id"]] = ATTEMPTS.get(q["id"], 0) + 1
            time.sleep(int(q.get("ms", "1000")) / 1000)
            self.send(200, PAGE.encode())
        elif p == "/latin1":
            self.send(200, PAGE.encode("latin-1"), ctype="text/html; charset=ISO-8859-1")
        elif p == "/meta-latin1":
            body = PAGE.replace("<head>", '<head><meta charset="iso-8859-1">')
            self.send(200, body.encode("latin-1"), ctype="text/html")
        elif p == "/utf16":
            self.send(200, b"\xff\xfe" + PAGE.encode("utf-16-le"), ctype="text/html")
        else:
            self.send(404, b"not found")


class Server(ThreadingHTTPServer):
    daemon_threads = True
    # tests open tens of connections at once
    request_queue_size = 128

    def handle_error(self, request, client_address):
        pass  # clients hang up on purpose (size limits, timeouts)


def main():
    args = sys.argv[1:]
    tls = None
    if "--tls" in args:
        i = args.index("--tls")
        tls = args[i + 1:i + 3]
        del args[i:i + 3]
    port = int(args[0]) if args else 0
    srv = Server(("127.0.0.1", port), Handler)
    srv.tls = tls is not None
    if tls:
        ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        ctx.load_cert_chain(tls[0], tls[1])
        srv.socket = ctx.wrap_socket(srv.socket, server_side=True)
    print(srv.server_address[1], flush=True)
    srv.serve_forever()


if __name__ == "__main__":
    main()

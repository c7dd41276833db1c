"""Real-time analyses (page-seo, schema-markup, sitemap, site-health)
through the real gateway, svc-realtime and svc-account, against the local
test sites of tests/fakes/site_server.py over HTTP and HTTPS: every field,
the errors, IDN hosts, domains read as the graph endpoints read them, the
sitemap walk within a caller's deadline, and what each call finally
costs."""

import os
import socket
import sys
import tempfile
import time
import urllib.parse

sys.path.insert(0, os.path.dirname(__file__))
import harness as h  # noqa: E402
import pbwire  # noqa: E402
from harness import check, eq, expect_error, test  # noqa: E402

HTTPS_HOSTS = ["sm1.test", "sm2.test", "sm3.test", "sh1.test", "www.sh1.test", "ts1.test"]
HTTP_HOSTS = ["pg1.test", "sm1.test", "sm2.test", "sh1.test", "sh2.test"]


class Ctx:
    pass


def setup():
    c = Ctx()
    c.tmp = tempfile.mkdtemp(prefix="seo-it-rt-")
    cert, key = h.tls_cert(c.tmp, HTTPS_HOSTS)
    c.plain = h.Fake("site_server.py")
    c.tls = h.Fake("site_server.py", "--tls", cert, key)
    closed = h.closed_port()
    # takes connections and never answers: a walk that has to run out
    c.hole = socket.socket()
    c.hole.bind(("127.0.0.1", 0))
    c.hole.listen(16)
    # 480 entries no test asks for come first: a list of any length is
    # taken, and every hop looks through all of them
    connect_to = (["pad%d.test:80:127.0.0.1:%d" % (i, closed) for i in range(480)] +
                  ["%s:80:127.0.0.1:%d" % (n, c.plain.port) for n in HTTP_HOSTS] +
                  ["%s:443:127.0.0.1:%d" % (n, c.tls.port) for n in HTTPS_HOSTS] +
                  ["down.test:80:127.0.0.1:%d" % closed,
                   "down.test:443:127.0.0.1:%d" % closed,
                   "private.test:443:10.0.0.1:443",
                   "hole.test:443:127.0.0.1:%d" % c.hole.getsockname()[1],
                   "www.sh1.test:80:127.0.0.1:%d" % c.plain.port,
                   # bücher.test, looked up in punycode
                   "xn--bcher-kva.test:80:127.0.0.1:%d" % c.plain.port,
                   "xn--bcher-kva.test:443:127.0.0.1:%d" % closed,
                   "www.xn--bcher-kva.test:443:127.0.0.1:%d" % closed])
    c.stack = h.Stack("realtime", env={
        "SEO_FETCH_ALLOW_NETS": "127.0.0.0/8",
        "SEO_FETCH_CONNECT_TO": ",".join(connect_to),
        "SEO_FETCH_CA_FILE": cert,
        "SEO_RATE_LIMIT_PER_MIN": "100000",
    })
    c.logs = c.stack.logs
    return c


def teardown(c):
    problem = c.stack.close()
    c.plain.close()
    c.tls.close()
    c.hole.close()
    return problem


def fresh_key(c, credits=100):
    return c.stack.workspace(credits=credits)["api_key"]


def balance(c, key):
    r = c.stack.get("/v1/credits", key=key)
    eq(r.status, 200, "credits")
    return r.json()["credits"]


def usage(c, key):
    r = c.stack.get("/v1/usage", key=key)
    eq(r.status, 200, "usage")
    return r.json()["usage"]


def get(c, path, key, **params):
    return c.stack.get(path + "?" + urllib.parse.urlencode(params), key=key)


def billed(c, key, r, cost, endpoint, credits_before):
    body = r.json()
    eq(body["credits_used"], cost, "credits_used")
    eq(body["credits_remaining"], credits_before - cost, "credits_remaining")
    eq(balance(c, key), credits_before - cost, "balance")
    row = usage(c, key)[0]
    eq((row["endpoint"], row["credits_used"]), (endpoint, cost), "usage row")
    return body


@test
def page_seo_fields(c):
    key = fresh_key(c)
    r = get(c, "/v1/page-seo", key, url="http://pg1.test/")
    eq(r.status, 200, "status")
    body = billed(c, key, r, 3, "page-seo", 100)
    eq(sorted(body), ["credits_remaining", "credits_used", "data"])
    d = body["data"]
    eq(sorted(d), sorted(["url", "final_url", "status_code", "response_time_ms", "title",
                          "description", "canonical", "robots", "viewport", "language",
                          "hreflang", "headings", "og", "twitter", "json_ld", "images",
                          "links", "word_count", "favicon"]))
    eq((d["url"], d["final_url"], d["status_code"]), ("http://pg1.test/", "http://pg1.test/", 200))
    title = "An audit page of exactly forty chars!!"
    eq(d["title"], {"text": title, "length": len(title), "optimal": True}, "title")
    eq(d["description"], {"text": "d" * 130, "length": 130, "optimal": True}, "description")
    eq(d["canonical"], {"url": "http://pg1.test/", "self_referential": True}, "canonical")
    eq(d["robots"], {"index": False, "follow": True, "raw": "noindex, follow"}, "robots")
    eq(d["viewport"], "width=device-width")
    eq(d["language"], {"primary": "en", "tag": "en-GB", "source": "html_lang"}, "language")
    eq(d["hreflang"], [{"lang": "de", "url": "http://pg1.test/de/"}], "hreflang")
    eq(d["headings"], {"h1": ["Main heading"], "h2": ["Sub one", "Sub two"], "h3_count": 1})
    eq(sorted(d["og"]), ["description", "image", "title", "type", "url"])
    eq((d["og"]["title"], d["og"]["type"], d["og"]["image"]), ("OG title", "website", ""))
    eq(d["twitter"], {"card": "summary", "title": ""}, "twitter")
    # json_ld items are objects, not strings holding JSON
    eq(len(d["json_ld"]), 2, "json_ld")
    eq(d["json_ld"][0]["@type"], "Organization")
    eq(d["images"], {"total": 2, "missing_alt": 1}, "images")
    eq(d["links"], {"internal": 1, "external": 1}, "links")
    check(d["word_count"] > 0, "word_count", d["word_count"])
    eq(d["favicon"], "http://pg1.test/favicon.ico")


@test
def schema_markup_fields(c):
    key = fresh_key(c)
    r = get(c, "/v1/schema-markup", key, url="http://pg1.test/")
    eq(r.status, 200, "status")
    body = billed(c, key, r, 2, "schema-markup", 100)
    eq(sorted(body), sorted(["data", "final_url", "status_code", "response_time_ms",
                             "has_schema_markup", "types", "block_count", "valid_block_count",
                             "invalid_block_count", "invalid_blocks", "credits_used",
                             "credits_remaining"]))
    eq(body["types"], ["Organization", "Thing", "WebPage", "WebSite"])
    eq((body["block_count"], body["valid_block_count"], body["invalid_block_count"]), (3, 2, 1))
    eq(body["has_schema_markup"], True)
    org = body["data"][0]
    eq(org, {"type": ["Organization"], "id": "#org", "block_index": 0, "source": "top_level",
             "properties": {"@context": "https://schema.org", "@type": "Organization",
                            "@id": "#org", "name": "Org"}}, "entity")
    eq([(e["source"], e["block_index"], e["id"]) for e in body["data"][1:]],
       [("graph", 1, None), ("graph", 1, None)])
    inv = body["invalid_blocks"][0]
    eq(sorted(inv), ["column", "error", "index", "line", "position"])
    eq(inv["index"], 2)
    # no JSON-LD: 200, empty, charged
    r = get(c, "/v1/schema-markup", key, url="http://pg1.test/plain")
    eq(r.status, 200)
    eq((r.json()["data"], r.json()["has_schema_markup"], r.json()["types"]), ([], False, []))


@test
def invalid_url_charges_nothing(c):
    key = fresh_key(c)
    before = usage(c, key)
    for path in ("/v1/page-seo", "/v1/schema-markup"):
        for url in ("ftp://pg1.test/", "http://user:pw@pg1.test/", "http://pg1.test/#top",
                    "pg1.test", "http:///x", "http://pg1.test:99999/", "http://pg 1.test/"):
            expect_error(get(c, path, key, url=url), 400, "invalid_url")
        expect_error(c.stack.get(path, key=key), 400, "invalid_url")
    eq(balance(c, key), 100, "balance")
    eq(usage(c, key), before, "usage")


@test
def private_ip_refunded(c):
    key = fresh_key(c)
    for url in ("http://10.0.0.1/", "http://169.254.169.254/latest/meta-data/",
                "http://[::ffff:10.0.0.1]/"):
        expect_error(get(c, "/v1/page-seo", key, url=url), 400, "private_ip")
    expect_error(get(c, "/v1/schema-markup", key, url="http://10.0.0.1/"), 400, "private_ip")
    expect_error(get(c, "/v1/sitemap", key, domain="private.test"), 400, "private_ip")
    eq(balance(c, key), 100, "balance")
    rows = usage(c, key)
    eq(sorted(set(r["endpoint"] for r in rows)), ["page-seo", "schema-markup", "sitemap"])
    eq([r["credits_used"] for r in rows], [0] * 5, "refunded rows")


@test
def fetch_failed_refunded(c):
    key = fresh_key(c)
    body = expect_error(get(c, "/v1/page-seo", key, url="http://down.test/"), 503, "fetch_failed")
    check("down.test" in body["message"], "message names the URL", body)
    expect_error(get(c, "/v1/schema-markup", key, url="http://down.test/"), 503, "fetch_failed")
    eq(balance(c, key), 100, "balance")
    eq([(r["endpoint"], r["credits_used"]) for r in usage(c, key)],
       [("schema-markup", 0), ("page-seo", 0)])


@test
def sitemap_fields(c):
    key = fresh_key(c)
    r = get(c, "/v1/sitemap", key, domain="sm1.test")
    eq(r.status, 200, "status")
    body = billed(c, key, r, 2, "sitemap", 100)
    eq(sorted(body), sorted(["data", "total", "sitemap_url", "sitemap_type", "child_sitemaps",
                             "child_sitemaps_total", "child_sitemaps_fetched", "truncated",
                             "source", "credits_used", "credits_remaining"]))
    eq((body["source"], body["sitemap_type"]), ("sitemap", "sitemap_index"))
    eq(body["sitemap_url"], "http://sm1.test/index.xml")
    urls = [e["url"] for e in body["data"]]
    eq(sorted(urls), ["http://sm1.test/1", "http://sm1.test/2", "http://sm1.test/3",
                      "http://sm1.test/b"])
    eq(body["total"], 4)
    # present fields only: priority is given, lastmod and changefreq are not
    eq(sorted(body["data"][0]), ["priority", "url"])
    eq(body["data"][0]["priority"], "0.5")
    r = get(c, "/v1/sitemap", key, domain="sm1.test", limit=1)
    eq((r.json()["total"], r.json()["truncated"]), (1, True))
    expect_error(get(c, "/v1/sitemap", key, domain="sm1.test", limit=0), 400,
                 "invalid_parameter")
    expect_error(get(c, "/v1/sitemap", key, domain="sm1.test", limit=1001), 400,
                 "invalid_parameter")


@test
def sitemap_none_found_refunded(c):
    key = fresh_key(c)
    r = get(c, "/v1/sitemap", key, domain="sm3.test")
    eq(r.status, 200, "status")
    body = r.json()
    eq((body["source"], body["sitemap_type"], body["sitemap_url"], body["data"], body["total"]),
       ("none", "none", None, [], 0))
    eq((body["credits_used"], body["credits_remaining"]), (0, 100))
    check("billed" not in body, "billing field hidden", body)
    eq(balance(c, key), 100, "balance")
    eq([(r["endpoint"], r["credits_used"]) for r in usage(c, key)], [("sitemap", 0)])


@test
def domain_errors(c):
    key = fresh_key(c)
    for path in ("/v1/sitemap", "/v1/site-health"):
        for domain in ("10.0.0.1", "https://10.0.0.1/", "localhost", "sm1..test", "sm1.123",
                       "\u2603.test"):
            expect_error(get(c, path, key, domain=domain), 400, "invalid_domain")
        expect_error(c.stack.get(path, key=key), 400, "invalid_domain")
    eq(balance(c, key), 100, "balance")
    eq(usage(c, key), [], "nothing reached the service")


@test
def domains_read_as_the_graph_reads_them(c):
    # a scheme, port or path around the domain is dropped, as for every
    # domain argument; "www." stays: the site's own host is probed
    key = fresh_key(c)
    r = get(c, "/v1/sitemap", key, domain="HTTPS://sm1.test:8443/some/page?x=1")
    eq(r.status, 200, "status")
    body = billed(c, key, r, 2, "sitemap", 100)
    eq((body["sitemap_url"], body["total"]), ("http://sm1.test/index.xml", 4))
    r = get(c, "/v1/site-health", key, domain="https://sh1.test/about")
    eq(r.status, 200, "status")
    eq(billed(c, key, r, 2, "site-health", 98)["data"]["domain"], "sh1.test")
    r = get(c, "/v1/site-health", key, domain="www.sh1.test.")
    eq(r.status, 200, "status")
    d = r.json()["data"]
    eq((d["domain"], d["checks"][0]["url"]), ("www.sh1.test", "https://www.sh1.test/"))
    r = get(c, "/v1/tech-stack", key, domain="https://ts1.test/")
    eq(r.status, 200, "status")
    eq(r.json()["data"]["domain"], "ts1.test")
    # an IDN is probed in punycode (nothing answers there: null statuses)
    r = get(c, "/v1/site-health", key, domain="B\u00fccher.test")
    eq(r.status, 200, "status")
    d = r.json()["data"]
    eq((d["domain"], d["checks"][0]["url"]), ("xn--bcher-kva.test", "https://xn--bcher-kva.test/"))


@test
def idn_urls(c):
    key = fresh_key(c)
    r = get(c, "/v1/page-seo", key, url="http://b\u00fccher.test/ok")
    eq(r.status, 200, "status")
    d = billed(c, key, r, 3, "page-seo", 100)["data"]
    eq((d["url"], d["final_url"]), ("http://b\u00fccher.test/ok", "http://xn--bcher-kva.test/ok"))
    eq(d["title"]["text"], "ok page")
    r = get(c, "/v1/schema-markup", key, url="http://B\u00dcCHER.test/ok")
    eq(r.status, 200, "status")
    eq(r.json()["final_url"], "http://xn--bcher-kva.test/ok")
    # not an IDN: refused before anything is charged
    for url in ("http://\u2603.test/", "http://b\u00fccher.test:x/"):
        expect_error(get(c, "/v1/page-seo", key, url=url), 400, "invalid_url")
    eq(balance(c, key), 95, "balance")
    # the address policy applies to the name the IDN maps to (full-width
    # digits and a full-width dot: 10.0.0.1)
    expect_error(get(c, "/v1/page-seo", key, url="http://\uff11\uff10\uff0e0.0.1/"),
                 400, "private_ip")
    eq(balance(c, key), 95, "private_ip refunded")


def grpc_fields(data):
    """The top-level fields of a protobuf message: {number: last value}."""
    return dict(pbwire.fields(data))


@test
def sitemap_walk_within_the_callers_deadline(c):
    # svc-realtime called directly with a 1.5 s deadline, for a site that
    # never answers: the walk ends before the caller gives up (not at 12 s).
    # Under sanitizers 3 s: the fetch's TLS setup parses the system's CA
    # bundle on the walk's loop, which took 1.3 s of a 1.5 s deadline on a
    # busy machine, and the walk's own deadline could not fire meanwhile.
    deadline = 3.0 if h.sanitized() else 1.5
    try:
        import grpc
    except ImportError:
        raise h.Skip("no grpcio")
    domain = b"hole.test"
    req = b"\x0a" + bytes([len(domain)]) + domain
    with grpc.insecure_channel(c.stack.env["SEO_REALTIME_ADDR"]) as ch:
        call = ch.unary_unary("/seo.realtime.v1.Realtime/Sitemap")
        t0 = time.time()
        resp = call(req, timeout=deadline,
                    metadata=[("seo-internal-token", c.stack.env["SEO_INTERNAL_TOKEN"])])
        took = time.time() - t0
    check(took < deadline, "answered within the deadline", took)
    f = grpc_fields(resp)
    # SitemapResponse: truncated = 8, source = 9, billed = 10
    eq((f.get(8), f.get(9), f.get(10)), (1, b"none", 0), "truncated, none found")


@test
def site_health_fields(c):
    key = fresh_key(c)
    r = get(c, "/v1/site-health", key, domain="sh1.test")
    eq(r.status, 200, "status")
    d = billed(c, key, r, 2, "site-health", 100)["data"]
    eq(sorted(d), ["checks", "domain", "https", "robots_txt", "security_headers",
                   "www_redirect"])
    eq(d["domain"], "sh1.test")
    eq(d["https"], {"enforced": True, "hsts": True, "hsts_max_age": 31536000}, "https")
    eq(d["www_redirect"], {"enabled": True, "target": "https://sh1.test/"}, "www")
    eq([(k["url"], k["status"]) for k in d["checks"]],
       [("https://sh1.test/", 200), ("https://sh1.test/robots.txt", 200),
        ("https://sh1.test/sitemap.xml", 200)])
    eq(sorted(d["checks"][0]), ["content_type", "response_time_ms", "status", "url"])
    eq(d["checks"][0]["content_type"], "text/html; charset=utf-8")
    eq(d["security_headers"], {
        "x_frame_options": "DENY", "x_content_type_options": "nosniff",
        "content_security_policy": True,
        "strict_transport_security": "max-age=31536000; includeSubDomains",
        "referrer_policy": "no-referrer"}, "security headers")
    eq(d["robots_txt"], {"present": True, "disallow_all": True, "sitemap_declared": True})


@test
def site_health_plain_site(c):
    key = fresh_key(c)
    r = get(c, "/v1/site-health", key, domain="sh2.test")
    eq(r.status, 200, "status")
    d = r.json()["data"]
    eq(d["https"], {"enforced": False, "hsts": False, "hsts_max_age": 0}, "https")
    eq(d["www_redirect"], {"enabled": False, "target": None}, "www")
    eq([k["status"] for k in d["checks"]], [None, None, None], "unreachable over https")
    eq(d["robots_txt"], {"present": False, "disallow_all": False, "sitemap_declared": False})
    eq(d["security_headers"]["content_security_policy"], False)


@test
def openapi_describes_routes(c):
    doc = c.stack.get("/v1/openapi.json").json()
    for path, cost in (("/v1/page-seo", 3), ("/v1/schema-markup", 2), ("/v1/sitemap", 2),
                       ("/v1/site-health", 2)):
        check(path in doc["paths"], "path in OpenAPI", path)
        eq(doc["paths"][path]["get"]["x-credit-cost"], cost, path)
    schemas = doc["components"]["schemas"]
    ld = schemas["seo.realtime.v1.PageSeo"]["properties"]["json_ld"]["items"]
    eq((ld["type"], ld["additionalProperties"]), ("object", True), "json_ld items")
    sm = schemas["seo.realtime.v1.SitemapUrl"]
    eq(sm["required"], ["url"], "absent sitemap fields are not required")



@test
def tech_stack_fields(c):
    key = fresh_key(c)
    r = get(c, "/v1/tech-stack", key, domain="ts1.test")
    eq(r.status, 200, "status")
    d = billed(c, key, r, 2, "tech-stack", 100)["data"]
    eq(sorted(d), ["domain", "generator", "response_time_ms", "server", "technologies",
                   "x_powered_by"])
    eq((d["domain"], d["generator"], d["x_powered_by"]), ("ts1.test", "WordPress 6.5.2",
                                                          "PHP/8.2.18"))
    check(d["server"].startswith("BaseHTTP"), "server header", d["server"])
    check(d["response_time_ms"] >= 0, "response_time_ms", d["response_time_ms"])
    # strongest first, then by name
    eq([(t["name"], t["category"], t["confidence"]) for t in d["technologies"]], [
        ("Cloudflare", "cdn", "definite"), ("PHP", "framework", "definite"),
        ("WordPress", "cms", "definite"), ("Google Analytics", "analytics", "high"),
        ("Intercom", "support", "high"), ("jQuery", "framework", "high"),
        ("Stripe", "payments", "high")], "technologies")
    # a page without any known technology: an empty list, nulls
    r = get(c, "/v1/tech-stack", key, domain="sh1.test")
    eq(r.status, 200, "status")
    d = r.json()["data"]
    eq((d["technologies"], d["x_powered_by"], d["generator"]), ([], None, None))


@test
def tech_stack_errors_refunded(c):
    key = fresh_key(c)
    for domain in ("10.0.0.1", "localhost", "ts1..test"):
        expect_error(get(c, "/v1/tech-stack", key, domain=domain), 400, "invalid_domain")
    body = expect_error(get(c, "/v1/tech-stack", key, domain="down.test"), 503, "fetch_failed")
    check("down.test" in body["message"], "message names the URL", body)
    expect_error(get(c, "/v1/tech-stack", key, domain="private.test"), 400, "private_ip")
    eq(balance(c, key), 100, "balance")
    # every call that reached the service is recorded, refunded
    rows = [(r["endpoint"], r["credits_used"]) for r in usage(c, key)]
    check(len(rows) >= 2, "usage rows", rows)
    eq(set(rows), {("tech-stack", 0)}, "refunded rows")
    doc = c.stack.get("/v1/openapi.json").json()
    eq(doc["paths"]["/v1/tech-stack"]["get"]["x-credit-cost"], 2, "OpenAPI cost")


if __name__ == "__main__":
    sys.exit(h.run(setup, teardown))

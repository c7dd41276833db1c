"""Link-graph endpoints through the real gateway, svc-graph (on the demo
crawl that seo-ingest --demo builds) and svc-account: field sets, paging
bounds, domain checks, credits charged per the cost table, the batch and
site-explorer, a release switch without a restart."""

import os
import shutil
import signal
import struct
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(__file__))
import harness as h  # noqa: E402
from harness import check, eq, expect_error, test  # noqa: E402

ENVELOPE = {"credits_used", "credits_remaining"}
PAGE = {"data", "domain", "total", "limit", "offset"} | ENVELOPE
SINGLE = {"data", "domain"} | ENVELOPE
# without score=true: anchor_type and link_quality, optional but never null
# in the specification, are left out; the nullable fields are there
BACKLINK_ROW = {"from_domain", "from_url", "to_url", "anchor_text", "rel", "link_type",
                "domain_host_count", "crawled_at", "from_domain_score"}
LINKING_ROW = {"from_domain", "from_domain_score"}
UNKNOWN = "no-such-domain-in-demo.com"

# path (with {d} for the domain), cost, top-level fields, row fields (or
# None for a single object), field holding the rows
ENDPOINTS = [
    ("/v1/referring-domains?domain={d}", 2, {"data", "domain", "total"} | ENVELOPE,
     {"from_domain", "dofollow_links", "nofollow_links", "total_links", "from_domain_score"}),
    ("/v1/outbound-links?domain={d}", 2, {"data"} | ENVELOPE,
     {"to_domain", "to_url", "anchor_text", "link_type", "edge_count"}),
    ("/v1/similar-domains?domain={d}", 5,
     {"data", "total", "limit", "offset", "crawl_release", "cached"} | ENVELOPE,
     {"similar_domain", "shared_linkers"}),
    ("/v1/url-index?domain={d}", 2, {"data"} | ENVELOPE,
     {"url", "status_code", "mime", "crawled_at"}),
    ("/v1/status-codes?domain={d}", 2, {"data"} | ENVELOPE, {"status_code", "count"}),
    ("/v1/link-intersect?domain_a={d}&domain_b=" + UNKNOWN, 5,
     {"data", "domain_a", "domain_b", "total", "limit", "offset"} | ENVELOPE, LINKING_ROW),
    ("/v1/backlinks?domain={d}", 2, PAGE, BACKLINK_ROW),
    ("/v1/anchor-text?domain={d}", 2, PAGE, {"anchor_text", "link_count", "domain_count"}),
    ("/v1/top-pages?domain={d}", 2, PAGE,
     {"url", "inbound_links", "referring_domains", "status_code", "mime"}),
    ("/v1/domain-overlap?domains={d}," + UNKNOWN, 5,
     {"data", "domains", "total", "limit", "offset"} | ENVELOPE, LINKING_ROW),
    ("/v1/link-gap?domain=" + UNKNOWN + "&competitors={d}", 5,
     {"data", "domain", "competitors", "total", "limit", "offset"} | ENVELOPE,
     {"from_domain", "from_domain_score", "links_to"}),
]

SINGLES = [
    ("/v1/domain-authority?domain={d}", 1,
     {"score", "referring_domains", "total_host_count", "registered_at", "registrar",
      "popularity_rank", "health_score", "risk_flags"}),
    ("/v1/domain-rank?domain={d}", 1,
     {"inbound_edges", "unique_domains", "avg_linking_host_count"}),
    ("/v1/crawl-history?domain={d}", 1, {"first_seen", "last_seen", "total_urls"}),
]

AUDIT = {"domain", "health_score", "risk_flags", "link_quality", "anchor_profile",
         "top_backlinks", "risk_backlinks", "outbound_summary", "crawl_release",
         "cached"} | ENVELOPE


class Ctx:
    pass


def names_by_rank(index_dir):
    """Domain names in importance order, read from the index files
    (docs/index-format.md): byrank.u32 gives ids, domfwd.* their names."""
    def read(name):
        with open(os.path.join(index_dir, name), "rb") as f:
            return f.read()
    byrank = struct.unpack("<%dI" % (len(read("byrank.u32")) // 4), read("byrank.u32"))
    off = read("domfwd.off")
    offs = struct.unpack("<%dQ" % (len(off) // 8), off)
    text = read("domfwd.str")
    return [text[offs[i]:offs[i + 1]].rstrip(b"\0").decode() for i in byrank]


def setup():
    c = Ctx()
    c.stack = h.Stack("graph", env={"SEO_RATE_LIMIT_PER_MIN": "0"})
    s = c.stack
    c.logs = s.logs
    names = names_by_rank(s.env["SEO_DATA_DIR"])
    c.heavy = names[0]
    c.median = names[len(names) // 2]
    c.ws = s.workspace(credits=100000)
    c.key = c.ws["api_key"]
    return c


def teardown(c):
    return c.stack.close()


def credits(c, key=None):
    r = c.stack.get("/v1/credits", key=key or c.key)
    eq(r.status, 200, "credits")
    return r.json()["credits"]


def usage(c, key=None):
    r = c.stack.get("/v1/usage?limit=1", key=key or c.key)
    eq(r.status, 200, "usage")
    return r.json()


def charged(c, path, cost, key=None):
    """GET path; checks the envelope and the balance, usage row and
    credits moved by exactly `cost`. Returns the body."""
    key = key or c.key
    before = credits(c, key)
    n_before = usage(c, key)["total"]
    r = c.stack.get(path, key=key)
    eq(r.status, 200, path)
    body = r.json()
    eq(body["credits_used"], cost, path + " credits_used")
    eq(body["credits_remaining"], before - cost, path + " credits_remaining")
    eq(credits(c, key), before - cost, path + " balance")
    u = usage(c, key)
    eq(u["total"], n_before + 1, path + " one usage row")
    eq(u["usage"][0]["credits_used"], cost, path + " usage row")
    eq(u["usage"][0]["endpoint"], path.split("?")[0][len("/v1/"):], path + " endpoint")
    return body


@test
def every_list_endpoint_fields_and_cost(c):
    for path, cost, fields, row in ENDPOINTS:
        body = charged(c, path.format(d=c.heavy), cost)
        eq(set(body), fields, path + " fields")
        check(len(body["data"]) > 0 or "link-gap" in path or "overlap" in path,
              "heavy domain has rows", path)
        for item in body["data"]:
            eq(set(item), row, path + " row fields")
    u = usage(c)["usage"][0]
    eq(u["domain"], UNKNOWN, "usage domain of link-gap is the queried domain")


@test
def single_object_endpoints(c):
    for path, cost, fields in SINGLES:
        body = charged(c, path.format(d=c.median), cost)
        eq(set(body), SINGLE, path + " fields")
        eq(set(body["data"]), fields, path + " data fields")
        eq(body["domain"], c.median)
    body = charged(c, "/v1/domain-authority?domain=" + UNKNOWN, 1)
    eq(body["data"]["score"], 0)
    eq(body["data"]["risk_flags"], ["no_tranco_presence", "low_authority"])


@test
def score_costs_one_more_credit(c):
    body = charged(c, "/v1/backlinks?score=true&domain=" + c.heavy, 3)
    check(len(body["data"]) > 0, "rows")
    for row in body["data"]:
        check(row["anchor_type"] is not None and row["link_quality"] is not None,
              "score fills the derived fields", row)
    body = charged(c, "/v1/backlinks?score=false&domain=" + c.heavy, 2)
    # optional enums the spec never makes null: left out, not null
    eq({"anchor_type" in row or "link_quality" in row for row in body["data"]},
       {False}, "no score: absent")
    check(all(row["anchor_text"] is None or isinstance(row["anchor_text"], str)
              for row in body["data"]), "anchor_text is nullable: present")


@test
def link_audit_fields(c):
    body = charged(c, "/v1/link-audit?domain=" + c.heavy, 8)
    eq(set(body), AUDIT, "link-audit fields")
    eq(set(body["link_quality"]), {"high", "medium", "low", "total"})
    eq(set(body["anchor_profile"]), {"branded", "partial", "generic", "naked", "image"})
    eq(set(body["outbound_summary"]),
       {"unique_destinations", "top_domain", "top_domain_concentration"})
    q = body["link_quality"]
    eq(q["high"] + q["medium"] + q["low"], q["total"], "quality counts add up")
    check(abs(sum(body["anchor_profile"].values()) - 1.0) < 1e-9, "profile sums to 1")
    for b in body["top_backlinks"] + body["risk_backlinks"]:
        eq(set(b), {"from_domain", "from_domain_score", "anchor_type", "link_quality"})
    for b in body["risk_backlinks"]:
        eq(b["link_quality"], "low")
    eq(body["cached"], False)


@test
def site_explorer_equals_its_parts(c):
    d = c.heavy
    se = charged(c, "/v1/site-explorer?domain=" + d, 10)
    eq(set(se), {"data"} | ENVELOPE)
    data = se["data"]
    eq(set(data), {"backlinks", "backlinks_total", "authority", "top_pages", "anchor_text"})
    bl = c.stack.get("/v1/backlinks?domain=" + d, key=c.key).json()
    au = c.stack.get("/v1/domain-authority?domain=" + d, key=c.key).json()["data"]
    tp = c.stack.get("/v1/top-pages?domain=" + d, key=c.key).json()
    at = c.stack.get("/v1/anchor-text?domain=" + d, key=c.key).json()
    eq(data["backlinks"], bl["data"], "backlinks")
    eq(data["backlinks_total"], bl["total"], "backlinks_total")
    eq(data["authority"], {k: au[k] for k in ("score", "referring_domains",
                                                "total_host_count")}, "authority")
    eq(data["top_pages"], tp["data"], "top pages")
    eq(data["anchor_text"], at["data"], "anchor text")


@test
def unknown_domain_is_empty(c):
    for path, cost, fields, row in ENDPOINTS:
        if "{d}," in path or "competitors" in path:
            continue
        body = charged(c, path.format(d=UNKNOWN), cost)
        eq(body["data"], [], path + " empty")
        if "total" in body:
            eq(body["total"], 0, path + " total")


@test
def normalised_domain_is_echoed(c):
    up = "HTTPS://www." + c.heavy.upper() + "./some/path?x=1"
    r = c.stack.get("/v1/backlinks?domain=" + up.replace("?", "%3F").replace("&", "%26"),
                    key=c.key)
    eq(r.status, 200, r)
    eq(r.json()["domain"], c.heavy)


@test
def paging_bounds(c):
    s, k, d = c.stack, c.key, c.heavy
    before, n_before = credits(c), usage(c)["total"]
    for path in ("/v1/backlinks?domain=%s&limit=0" % d,
                 "/v1/backlinks?domain=%s&limit=1001" % d,
                 "/v1/referring-domains?domain=%s&offset=-1" % d,
                 "/v1/similar-domains?domain=%s&limit=101" % d,
                 "/v1/domain-overlap?domains=%s" % d,
                 "/v1/domain-overlap?domains=a.com,b.com,c.com,d.com,e.com,f.com",
                 "/v1/backlinks?domain=%s&sort=oldest" % d,
                 "/v1/backlinks"):
        expect_error(s.get(path, key=k), 400, "invalid_parameter")
    eq(credits(c), before, "nothing charged")
    eq(usage(c)["total"], n_before, "no usage row")
    body = s.get("/v1/similar-domains?domain=%s&limit=100" % d, key=k).json()
    eq(body["limit"], 100)
    full = s.get("/v1/referring-domains?domain=%s&limit=1000" % d, key=k).json()
    page = s.get("/v1/referring-domains?domain=%s&limit=3&offset=2" % d, key=k).json()
    eq(page["data"], full["data"][2:5], "offset and limit")
    eq(page["total"], full["total"])
    check(full["total"] > 1000, "the heavy domain fills a page", full["total"])
    eq(len(full["data"]), 1000, "a page holds 1000 at most")
    rest = s.get("/v1/referring-domains?domain=%s&limit=1000&offset=1000" % d, key=k).json()
    eq(len(rest["data"]), full["total"] - 1000, "the second page holds the rest")
    past = s.get("/v1/referring-domains?domain=%s&offset=%d" % (d, full["total"]), key=k)
    eq(past.json()["data"], [], "past the end")


@test
def far_offset_is_an_empty_page(c):
    """offset has no upper bound in the specification (>= 0): the largest
    int64 is a page past the end, answered and charged like any other;
    one more does not fit the integer and is refused, free."""
    far = 2 ** 63 - 1
    for path, cost, fields, row in ENDPOINTS:
        if "status-codes" in path:
            continue
        path = path.format(d=c.heavy)
        first = c.stack.get(path, key=c.key).json()
        body = charged(c, path + "&offset=%d" % far, cost)
        eq(body["data"], [], path + " past the end")
        eq(set(body), fields, path + " fields")
        if "total" in body:
            eq(body["total"], first["total"], path + " total")
        if "offset" in body:
            eq(int(body["offset"]), far, path + " offset echoed")
    before, n_before = credits(c), usage(c)["total"]
    expect_error(c.stack.get("/v1/top-pages?domain=%s&offset=%d" % (c.heavy, far + 1),
                             key=c.key), 400, "invalid_parameter")
    eq(credits(c), before, "nothing charged")
    eq(usage(c)["total"], n_before, "no usage row")


@test
def malformed_domain_charges_nothing(c):
    s, k = c.stack, c.key
    before, n_before = credits(c), usage(c)["total"]
    for path in ("/v1/backlinks?domain=not_a%20domain!",
                 "/v1/backlinks?domain=localhost",
                 "/v1/backlinks?domain=10.0.0.1",
                 "/v1/backlinks?domain=a..com",
                 "/v1/backlinks?domain=%s&from_domain=bad!dom" % c.heavy,
                 "/v1/link-audit?domain=-",
                 "/v1/link-intersect?domain_a=%s&domain_b=x%%20y.com" % c.heavy,
                 "/v1/domain-overlap?domains=%s,bad!.com" % c.heavy,
                 "/v1/link-gap?domain=%s&competitors=in%%20valid" % c.heavy,
                 "/v1/domain-authority?domain=" + "a" * 64 + ".com"):
        expect_error(s.get(path, key=k), 400, "invalid_domain")
    eq(credits(c), before, "balance unchanged")
    eq(usage(c)["total"], n_before, "usage unchanged")


@test
def batch_charges_successes_only(c):
    s = c.stack
    before, n_before = credits(c), usage(c)["total"]
    r = s.request("POST", "/v1/batch", key=c.key,
                  body={"domains": [c.heavy, "bad domain!", UNKNOWN, "www." + c.median]})
    eq(r.status, 200, r)
    body = r.json()
    eq(set(body), {"data"} | ENVELOPE, "succeeded is hidden")
    eq(body["credits_used"], 6)
    eq(body["credits_remaining"], before - 6)
    eq(credits(c), before - 6)
    eq([e["success"] for e in body["data"]], [True, False, True, True])
    for e in body["data"]:
        eq(set(e), {"domain", "success", "data", "total"} |
           (set() if e["success"] else {"error"}), "error only on a failure")
    eq(body["data"][1]["error"], "invalid_domain")
    eq(body["data"][1]["data"], [])
    eq(body["data"][2]["data"], [])
    eq(body["data"][3]["domain"], c.median)
    heavy = s.get("/v1/backlinks?domain=" + c.heavy, key=c.key).json()
    eq(body["data"][0]["data"], heavy["data"], "entry equals a backlinks call")
    eq(body["data"][0]["total"], heavy["total"])
    u = usage(c)
    eq(u["total"], n_before + 2)
    eq([x["endpoint"] for x in usage_rows(c, 2)], ["backlinks", "batch"])
    eq(usage_rows(c, 2)[1]["credits_used"], 6)
    for bad in ({"domains": []}, {"domains": ["a.com"] * 51}, {}):
        expect_error(s.request("POST", "/v1/batch", key=c.key, body=bad), 400,
                     "invalid_parameter")
    r = s.request("POST", "/v1/batch", key=c.key, body={"domains": ["bad domain!"]})
    eq(r.json()["credits_used"], 0, "all malformed: refunded in full")


def usage_rows(c, n):
    return c.stack.get("/v1/usage?limit=%d" % n, key=c.key).json()["usage"]


@test
def insufficient_credits(c):
    s = c.stack
    poor = s.workspace(credits=3)
    key = poor["api_key"]
    expect_error(s.get("/v1/site-explorer?domain=" + c.heavy, key=key), 402,
                 "insufficient_credits")
    expect_error(s.request("POST", "/v1/batch", key=key,
                           body={"domains": [c.heavy, c.median]}), 402,
                 "insufficient_credits")
    eq(credits(c, key), 3, "nothing charged")
    eq(usage(c, key)["total"], 0, "no usage row")
    charged(c, "/v1/backlinks?domain=" + c.heavy, 2, key=key)
    expect_error(s.get("/v1/backlinks?domain=" + c.heavy, key=key), 402,
                 "insufficient_credits")


@test
def openapi_lists_graph_routes(c):
    doc = c.stack.get("/v1/openapi.json").json()
    for p in ("/v1/backlinks", "/v1/link-gap", "/v1/domain-overlap", "/v1/batch"):
        check(p in doc["paths"], "openapi has", p)
    schema = doc["paths"]["/v1/batch"]["post"]["responses"]["200"]["content"][
        "application/json"]["schema"]
    check("succeeded" not in str(schema), "hidden billed field not documented", schema)


def served_count(c):
    with open(c.stack.procs["svc-graph"].log_path) as f:
        return f.read().count("serving crawl release")


def wait_served(c, n, what):
    deadline = time.time() + 15
    while served_count(c) < n:
        check(time.time() < deadline, what)
        time.sleep(0.1)


@test
def switches_release_without_restart(c):
    s = c.stack
    data = s.env["SEO_DATA_DIR"]
    old = s.get("/v1/similar-domains?domain=" + c.heavy, key=c.key).json()
    newer = data + ".next"
    r = subprocess.run([os.path.join(h.BIN, "seo-ingest"), "--demo", "--out", newer],
                       env=s.env, capture_output=True, text=True)
    eq(r.returncode, 0, r.stderr[-500:])
    served = served_count(c)
    # The served directory is replaced whole, as a deploy would.
    os.rename(data, data + ".old")
    os.rename(newer, data)
    s.procs["svc-graph"].proc.send_signal(signal.SIGHUP)
    wait_served(c, served + 1, "svc-graph switched")
    again = s.get("/v1/similar-domains?domain=" + c.heavy, key=c.key).json()
    eq(again["data"], old["data"], "same demo, same answer")
    eq(again["cached"], False, "a new release starts with an empty cache")
    shutil.rmtree(data + ".old")


@test
def similar_domains_cached_and_still_billed(c):
    d = c.heavy.upper()  # the cache key is the normalised domain
    first = charged(c, "/v1/similar-domains?domain=%s&limit=10&offset=7" % d, 5)
    second = charged(c, "/v1/similar-domains?domain=%s&limit=10&offset=7" % d, 5)
    check(second["cached"], "the second answer comes from the cache", second)
    eq(second["data"], first["data"], "same rows")
    eq(second["total"], first["total"], "same total")
    eq(second["crawl_release"], first["crawl_release"])


@test
def no_index_answers_503_then_loads_one(c):
    s = c.stack
    data = s.env["SEO_DATA_DIR"]
    os.rename(data, data + ".away")
    try:
        s.stop_service("svc-graph")
        s.start_service("svc-graph")
        s.wait_healthy()
        before = credits(c)
        expect_error(s.get("/v1/backlinks?domain=" + c.heavy, key=c.key), 503,
                     "service_unavailable")
        eq(credits(c), before, "refunded")
        eq(usage(c)["usage"][0]["credits_used"], 0, "the usage row shows the refund")
    finally:
        os.rename(data + ".away", data)
    # Found by the periodic check, no signal needed.
    wait_served(c, 1, "svc-graph loaded the index")
    eq(s.get("/v1/backlinks?domain=" + c.heavy, key=c.key).status, 200)


if __name__ == "__main__":
    if shutil.which("psql") is None and not os.path.exists("/usr/lib/postgresql"):
        print("skipped: no PostgreSQL")
        sys.exit(0)
    sys.exit(h.run(setup, teardown))

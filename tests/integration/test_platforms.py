"""GET /v1/platform-trends and /v1/platform-domains through the real
gateway, svc-graph (on the demo crawl that seo-ingest --demo builds, whose
WAT records show platforms) and svc-account: field sets, orders, filters,
the clamped limit, names and aliases, the errors, and credits charged per
domain returned."""

import json
import os
import sys
import urllib.parse

sys.path.insert(0, os.path.dirname(__file__))
import harness as h  # noqa: E402
from harness import check, eq, expect_error, test  # noqa: E402

SLUGS = ["wix", "wordpress", "squarespace", "webflow", "framer", "tilda", "weebly",
         "strikingly", "bubble", "softr", "carrd", "godaddy_builder", "contentful",
         "sanity", "shopify", "bigcommerce", "kajabi", "thinkific", "paypal"]
ENVELOPE = {"credits_used", "credits_remaining"}
DATA = {"platform", "platform_slug", "total_count", "returned", "credits_used",
        "filters_applied", "domains"}


class Ctx:
    pass


def setup():
    c = Ctx()
    c.stack = h.Stack("platforms", env={"SEO_RATE_LIMIT_PER_MIN": "0"})
    c.logs = c.stack.logs
    with open(os.path.join(c.stack.env["SEO_DATA_DIR"], "manifest.json")) as f:
        c.counts = json.load(f)["platforms"]
    c.key = c.stack.workspace(credits=100000)["api_key"]
    return c


def teardown(c):
    return c.stack.close()


def credits(c):
    r = c.stack.get("/v1/credits", key=c.key)
    eq(r.status, 200, "credits")
    return r.json()["credits"]


def last_usage(c):
    r = c.stack.get("/v1/usage?limit=1", key=c.key)
    eq(r.status, 200, "usage")
    return r.json()


def domains(c, query):
    """GET platform-domains; checks that exactly the domains returned were
    charged (balance, envelope, data, usage row). Returns the body."""
    before = credits(c)
    r = c.stack.get("/v1/platform-domains?" + query, key=c.key)
    eq(r.status, 200, query)
    body = r.json()
    eq(set(body), {"data"} | ENVELOPE, "fields")
    data = body["data"]
    eq(set(data), DATA, "data fields")
    n = len(data["domains"])
    eq(data["returned"], n, "returned")
    eq(data["credits_used"], n, "data.credits_used")
    eq(body["credits_used"], n, "credits_used")
    eq(body["credits_remaining"], before - n, "credits_remaining")
    eq(credits(c), before - n, "balance")
    u = last_usage(c)["usage"][0]
    eq(u["endpoint"], "platform-domains")
    eq(u["credits_used"], n, "usage row")
    for d in data["domains"]:
        eq(set(d), {"domain", "tld", "da_score"}, "domain row")
        check(d["domain"].endswith("." + d["tld"]), "tld is the suffix", d)
        check(0 <= d["da_score"] <= 100, "score range", d)
    return body


@test
def trends_every_platform_by_popularity(c):
    before = credits(c)
    r = c.stack.get("/v1/platform-trends", key=c.key)
    eq(r.status, 200)
    body = r.json()
    eq(set(body), {"data"} | ENVELOPE)
    eq(body["credits_used"], 1)
    eq(credits(c), before - 1, "1 credit")
    rows = body["data"]
    eq(sorted(x["platform_slug"] for x in rows), sorted(SLUGS), "every slug once")
    for x in rows:
        eq(set(x), {"platform", "platform_slug", "category", "count"})
        eq(x["count"], c.counts[x["platform_slug"]], x["platform_slug"] + " count")
    keys = [(-x["count"], x["platform"]) for x in rows]
    eq(keys, sorted(keys), "count desc, then name")
    eq(rows[0]["platform_slug"], "wordpress", "the demo's most used")
    check(rows[0]["count"] > 5 * rows[3]["count"] > 0, "skewed counts", rows[:4])
    cats = {x["platform_slug"]: x["category"] for x in rows}
    eq(cats["wordpress"], "cms")
    eq(cats["shopify"], "ecommerce")
    eq(cats["paypal"], "payments")


@test
def domains_default_order_and_echo(c):
    body = domains(c, "platform=WordPress")
    data = body["data"]
    eq(data["platform"], "WordPress")
    eq(data["platform_slug"], "wordpress")
    eq(data["total_count"], c.counts["wordpress"])
    eq(data["returned"], min(100, c.counts["wordpress"]), "default limit 100")
    eq(data["filters_applied"], {"min_da": None, "max_da": None, "tld": None})
    keys = [(-d["da_score"], d["domain"]) for d in data["domains"]]
    eq(keys, sorted(keys), "authority desc, then name")


@test
def domains_limit_clamped_and_charged_per_domain(c):
    body = domains(c, "platform=wordpress&limit=5000")
    eq(body["data"]["returned"], min(1000, c.counts["wordpress"]), "clamped")
    body = domains(c, "platform=shopify&limit=3")
    eq(body["data"]["returned"], 3)
    body = domains(c, "platform=sanity&limit=0")
    eq(body["data"]["returned"], 1, "below 1 clamps to 1")


@test
def domains_filters_and_sorts(c):
    wp = domains(c, "platform=wordpress&limit=1000")["data"]["domains"]
    body = domains(c, "platform=wordpress&min_da=10&max_da=60&tld=COM&limit=1000")
    data = body["data"]
    eq(data["filters_applied"], {"min_da": 10, "max_da": 60, "tld": "com"})
    eq(data["total_count"], c.counts["wordpress"], "total ignores filters")
    want = [d for d in wp if 10 <= d["da_score"] <= 60 and d["tld"] == "com"]
    eq(data["domains"], want, "the filtered slice of the full list")
    check(len(want) > 0, "demo has such domains")
    asc = domains(c, "platform=wordpress&sort=da_asc&limit=1000")["data"]["domains"]
    keys = [(d["da_score"], d["domain"]) for d in asc]
    eq(keys, sorted(keys), "authority asc, then name")
    byname = domains(c, "platform=wordpress&sort=domain_asc&limit=1000")["data"]["domains"]
    eq([d["domain"] for d in byname], sorted(d["domain"] for d in wp), "name order")
    few = domains(c, "platform=wordpress&sort=domain_asc&min_da=30&limit=5")
    eq(few["data"]["domains"],
       sorted((d for d in wp if d["da_score"] >= 30), key=lambda d: d["domain"])[:5])
    none = domains(c, "platform=wordpress&tld=no-such-suffix")
    eq(none["data"]["domains"], [], "unknown suffix")
    eq(none["credits_used"], 0, "nothing returned, nothing charged")


@test
def names_and_aliases(c):
    for name, slug in [("wp", "wordpress"), ("Word Press", "wordpress"),
                       ("GoDaddy", "godaddy_builder"),
                       ("godaddy website builder", "godaddy_builder"),
                       ("Big Commerce", "bigcommerce"), ("PAYPAL", "paypal")]:
        q = urllib.parse.urlencode({"platform": name, "limit": 1})
        eq(domains(c, q)["data"]["platform_slug"], slug, name)


@test
def errors_cost_nothing(c):
    before = credits(c)
    rows = last_usage(c)["total"]
    for query, code in [("", "missing_platform"), ("platform=", "missing_platform"),
                        ("platform=wordpress&min_da=101", "invalid_parameter"),
                        ("platform=wordpress&max_da=-1", "invalid_parameter"),
                        ("platform=wordpress&sort=popular", "invalid_parameter")]:
        r = c.stack.get("/v1/platform-domains?" + query, key=c.key)
        expect_error(r, 400, code)
    eq(last_usage(c)["total"], rows, "refused before charging: no usage row")
    r = c.stack.get("/v1/platform-domains?platform=drupal", key=c.key)
    body = expect_error(r, 400, "unknown_platform")
    for slug in SLUGS:
        check(slug in body["message"], "message lists " + slug, body["message"])
    eq(credits(c), before, "nothing charged")
    eq(last_usage(c)["total"], rows, "billed after the work: no usage row")


@test
def billed_after_the_work(c):
    # Smaller platforms than the default limit of 100: a balance covering
    # the domains returned suffices; one short of them is 402, free.
    slug = min((s for s in SLUGS if 0 < c.counts.get(s, 0) < 100),
               key=lambda s: c.counts[s])
    n = c.counts[slug]
    key = c.stack.workspace(credits=n)["api_key"]
    r = c.stack.get("/v1/platform-domains?platform=" + slug, key=key)
    eq(r.status, 200, "balance covers what is returned")
    eq(r.json()["credits_used"], n)
    eq(r.json()["credits_remaining"], 0)
    key = c.stack.workspace(credits=n - 1)["api_key"]
    r = c.stack.get("/v1/platform-domains?platform=" + slug, key=key)
    expect_error(r, 402, "insufficient_credits")
    r = c.stack.get("/v1/credits", key=key)
    eq(r.json()["credits"], n - 1, "nothing charged")


@test
def openapi_lists_both_routes(c):
    r = c.stack.get("/v1/openapi.json")
    eq(r.status, 200)
    paths = r.json()["paths"]
    check("/v1/platform-trends" in paths, "platform-trends documented")
    params = {p["name"] for p in paths["/v1/platform-domains"]["get"]["parameters"]}
    eq(params & {"platform", "limit", "min_da", "max_da", "tld", "sort"},
       {"platform", "limit", "min_da", "max_da", "tld", "sort"})


if __name__ == "__main__":
    sys.exit(h.run(setup, teardown))

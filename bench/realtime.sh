#!/usr/bin/env bash
# svc-realtime: analysis CPU time on saved real pages, tech detection beside
# the simple-wappalyzer npm package, fetcher throughput on a local site.
#
#   ./seo bench realtime           (builds first)
#   bash bench/realtime.sh         (after ./seo build release)
#
# 1. rt-bench analyse runs page-seo, schema-markup and tech-stack on every
#    saved page of ../shared/data/pages (skipped when absent).
# 2. bench/wappalyzer.js runs simple-wappalyzer (npm, installed once into
#    var/npm-bench) on the same pages with the same header, as shipped and
#    with its core fed what Wappalyzer's own driver collects without a
#    browser, and compares both with ours.
# 3. rt-bench fetch fetches a page of tests/fakes/site_server.py through
#    seo_fetch_start at each concurrency, then the same bytes from nginx.
# Prints a Markdown table; docs/benchmarks.md describes the method.
#
# Environment:
#   BENCH_REPS         timed runs per page and analysis, ours (default 20)
#   BENCH_NPM_REPS     timed runs per page of simple-wappalyzer (default 3)
#   BENCH_NPM_SCRIPTS=1 also compares with the reference after the pages'
#                      inline scripts ran in happy-dom (no network; happy-dom
#                      is no sandbox, so only on pages you trust)
#   BENCH_FETCHES      fetches per server and concurrency (default 500)
#   BENCH_CONCURRENCY  concurrent fetches (default "1 16 64")
#   BENCH_WRITE_DOCS=1 also inserts the table into docs/benchmarks.md
#   BENCH_KEEP_TMP=1   keeps the temporary directory (logs, detections:
#                      ours.tsv, theirs.tsv)
#   BENCH_BIN          directory of the binaries (default build/bin)
set -euo pipefail

. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

REPS=${BENCH_REPS:-20}
NPM_REPS=${BENCH_NPM_REPS:-3}
FETCHES=${BENCH_FETCHES:-500}
CONCURRENCY=${BENCH_CONCURRENCY:-1 16 64}
# Pinned, and installed without its postinstall script, which would replace
# the shipped rules with the current upstream ones: runs stay comparable.
WAPPALYZER=simple-wappalyzer@1.1.103
NPM_PREFIX="$BENCH_ROOT/var/npm-bench"
PAGES_DIR="$BENCH_ROOT/../shared/data/pages"

for v in "$REPS" "$NPM_REPS" "$FETCHES" $CONCURRENCY; do
  [[ "$v" =~ ^[1-9][0-9]*$ ]] || bench_die "'$v' is not a positive integer (BENCH_REPS, BENCH_NPM_REPS, BENCH_FETCHES, BENCH_CONCURRENCY)"
done
if [ ! -d "$PAGES_DIR" ]; then
  bench_say "bench: realtime skipped: no saved pages in ../shared/data/pages"
  exit 0
fi
bench_need_cmd python3 node npm nginx curl
bench_need_bin rt-bench
cd "$BENCH_ROOT"

bench_traps
bench_tmpdir
mapfile -t pages < <(find "$PAGES_DIR" -name '*.html' | sort)
[ "${#pages[@]}" -gt 0 ] || bench_die "no *.html under $PAGES_DIR"
export SEO_TECH_RULES=${SEO_TECH_RULES:-$BENCH_ROOT/data/tech/rules.json}

# ---- our analyses -------------------------------------------------------------
bench_say "bench: analysing ${#pages[@]} pages, $REPS runs each"
"$BENCH_BIN/rt-bench" analyse --reps "$REPS" --names "$BENCH_TMP/ours.tsv" "${pages[@]}" \
  >"$BENCH_TMP/analyse.tsv" || bench_die "rt-bench analyse failed"

# ---- the npm reference ----------------------------------------------------------
if [ ! -f "$NPM_PREFIX/node_modules/simple-wappalyzer/package.json" ]; then
  bench_say "bench: installing $WAPPALYZER into var/npm-bench"
  npm install --prefix "$NPM_PREFIX" --no-audit --no-fund --ignore-scripts "$WAPPALYZER" \
    >"$BENCH_TMP/log/npm.log" 2>&1 || { tail -20 "$BENCH_TMP/log/npm.log" >&2; bench_die "npm install failed"; }
fi
bench_say "bench: simple-wappalyzer on the same pages, $NPM_REPS runs each"
NODE_PATH="$NPM_PREFIX/node_modules" node "$BENCH_ROOT/bench/wappalyzer.js" \
  "$SEO_TECH_RULES" "$BENCH_TMP/ours.tsv" "$NPM_REPS" "$BENCH_TMP/theirs.tsv" "${pages[@]}" \
  >"$BENCH_TMP/npm.tsv" 2>"$BENCH_TMP/log/npm-diff.log" \
  || { cat "$BENCH_TMP/log/npm-diff.log" >&2; bench_die "bench/wappalyzer.js failed"; }
cat "$BENCH_TMP/log/npm-diff.log" >&2

# ---- fetcher throughput -------------------------------------------------------------
# fetch_rows SERVER URL: one row of $BENCH_TMP/fetch.tsv per concurrency.
fetch_rows() {
  local c
  for c in $CONCURRENCY; do
    bench_say "bench: $FETCHES fetches from $1, $c at once"
    printf '%s\t%s\t' "$1" "$c" >>"$BENCH_TMP/fetch.tsv"
    SEO_FETCH_ALLOW_NETS=127.0.0.0/8 SEO_FETCH_CONNECT_TO="" \
      "$BENCH_BIN/rt-bench" fetch "$2" "$FETCHES" "$c" \
      >>"$BENCH_TMP/fetch.tsv" || bench_die "rt-bench fetch failed"
    bench_check_alive
  done
}

bench_start site python3 "$BENCH_ROOT/tests/fakes/site_server.py"
port=""
for _ in $(seq 1 100); do
  port=$(head -n 1 "$BENCH_TMP/log/site.log" 2>/dev/null || true)
  [[ "$port" =~ ^[0-9]+$ ]] && break
  bench_check_alive
  sleep 0.1
done
[[ "$port" =~ ^[0-9]+$ ]] || bench_die "site_server.py printed no port"
: >"$BENCH_TMP/fetch.tsv"
fetch_rows site_server.py "http://127.0.0.1:$port/ok"
# The same page from nginx: what the fetcher does when the site is no
# bottleneck (site_server.py is one Python process).
mkdir -p "$BENCH_TMP/www"
curl -sf "http://127.0.0.1:$port/ok" >"$BENCH_TMP/www/ok" || bench_die "could not read /ok"
nginx_port=$(bench_free_ports 1)
bench_nginx_start "$nginx_port" "$BENCH_TMP/www"
[ "$(bench_wait_http "http://127.0.0.1:$nginx_port/ok" 10)" = 200 ] || { bench_logs; bench_die "nginx did not answer"; }
fetch_rows nginx "http://127.0.0.1:$nginx_port/ok"

# ---- the table ---------------------------------------------------------------------
report="$BENCH_TMP/report.md"
{
  echo "#### realtime, $(date -u '+%Y-%m-%d %H:%M') UTC"
  echo
  echo "Machine: $(bench_machine). ${#pages[@]} saved pages; $REPS runs per page (ours), $NPM_REPS ($WAPPALYZER, node $(node --version));"
  echo "CPU time per page: the median of its runs, then p50/p99 over the pages. Fetches: GET /ok ($(wc -c <"$BENCH_TMP/www/ok") bytes), $FETCHES per row."
  echo
  python3 - "$BENCH_TMP/analyse.tsv" "$BENCH_TMP/npm.tsv" "$BENCH_TMP/fetch.tsv" <<'PY'
import sys
ours = {l.split("\t")[0]: l.split("\t")[1:] for l in open(sys.argv[1]).read().split("\n") if l}
npm = {l.split("\t")[0]: l.split("\t")[1:] for l in open(sys.argv[2]).read().split("\n") if l}
fetch = [l.split("\t") for l in open(sys.argv[3]).read().split("\n") if l]

def ms(us):
    return "%.2f ms" % (float(us) / 1000)

def met(ok):
    return "met" if ok else "**not met**"

def share(pair):
    k, n = int(pair[0]), int(pair[1])
    return (k / n if n else 0.0), "%d of %d (%.1f %%)" % (k, n, 100.0 * k / n if n else 0.0)

print("| measure | value (p50) | p99 | target | result |")
print("|---|---|---|---|---|")
targets = {"page-seo": 2000, "tech-stack": 5000}
for name in ("page-seo", "schema-markup", "tech-stack"):
    p50, p99 = float(ours[name][0]), float(ours[name][1])
    t = targets.get(name)
    print("| %s, CPU per page | %s | %s | %s | %s |" % (
        name, ms(p50), ms(p99), "p50 under %d ms" % (t // 1000) if t else "-",
        met(p50 < t) if t else ""))
w50, w99 = float(npm["simple-wappalyzer"][0]), float(npm["simple-wappalyzer"][1])
print("| simple-wappalyzer as shipped, CPU per page | %s | %s | - | |" % (ms(w50), ms(w99)))
for key, label in (("wappalyzer-fed", "fed correctly (browser-less)"), ("wappalyzer-scripts", "fed after the inline scripts ran")):
    if key in npm:
        print("| its core %s, CPU per page, one run | %s | %s | - | |" % (
            label, ms(npm[key][0]), ms(npm[key][1])))
r50, r99 = float(ours["tech-stack"][0]) / w50, float(ours["tech-stack"][1]) / w99
print("| time ratio tech-stack / simple-wappalyzer as shipped | %.4f (%.0fx faster) | %.4f (%.0fx faster) | at most 0.1 | %s |" % (
    r50, 1 / r50, r99, 1 / r99, met(r50 <= 0.1)))
both = npm["both-know"][0]
for way, label, target in (("fed", "fed correctly", True), ("scripts", "inline scripts run", False),
                           ("shipped", "as shipped", False)):
    if way + "-theirs-found-by-us" not in npm:
        continue
    s1, t1 = share(npm[way + "-theirs-found-by-us"])
    s2, t2 = share(npm[way + "-ours-found-by-them"])
    print("| their detections (%s; of the %s technologies both know) we also find | %s | | %s | %s |" % (
        label, both, t1, "at least 90 %" if target else "-", met(s1 >= 0.9) if target else ""))
    print("| our detections (%s; of the %s technologies both know) they also find | %s | | %s | %s |" % (
        label, both, t2, "at least 90 %" if target else "-", met(s2 >= 0.9) if target else ""))
for server, c, rate, ok, failed, wall in fetch:
    print("| fetcher from %s, %s concurrent | %s pages/s | | - | %s ok, %s failed in %s s |" % (server, c, rate, ok, failed, wall))
PY
} >"$report" || bench_die "could not build the table"
cat "$report"
if [ "${BENCH_WRITE_DOCS:-0}" = 1 ]; then
  bench_write_docs realtime "$report"
fi

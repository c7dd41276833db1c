#!/usr/bin/env bash
# Gateway throughput and latency against a static nginx baseline.
#
#   ./seo bench gateway            (builds first)
#   bash bench/gateway.sh          (after ./seo build release)
#
# Starts its own stack on non-default ports (gateway 127.0.0.1:18080, services
# 127.0.0.1:19101 and up: each registry port plus 10000) with the rate limit off, against a fresh database
# seo_bench on the server of `./seo pg`, creates a workspace with seoctl, and
# an nginx (127.0.0.1:18081) serving a file with the very body of the
# gateway's answer. Then wrk measures GET /v1/credits (with X-API-Key) on both
# at each connection count, plus one unauthenticated cheap route. Prints a
# Markdown table; docs/benchmarks.md describes the method.
#
# Environment:
#   BENCH_SECONDS      duration of each wrk run (default 10)
#   BENCH_WARMUP       seconds of unreported warm-up per target (default 2)
#   BENCH_CONNECTIONS  connection counts (default "1 64 512")
#   BENCH_WRITE_DOCS=1 also appends the table to docs/benchmarks.md
#   BENCH_KEEP_TMP=1   keeps the temporary directory (logs, wrk output)
#   BENCH_BIN          directory of the binaries (default build/bin)
set -euo pipefail

. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

SECONDS_PER_RUN=${BENCH_SECONDS:-10}
WARMUP=${BENCH_WARMUP:-2}
CONNECTIONS=${BENCH_CONNECTIONS:-1 64 512}
GW_PORT=18080
NGINX_PORT=18081

[[ "$SECONDS_PER_RUN" =~ ^[1-9][0-9]*$ ]] || bench_die "BENCH_SECONDS must be a positive integer"
[[ "$WARMUP" =~ ^[0-9]+$ ]] || bench_die "BENCH_WARMUP must be an integer"
for c in $CONNECTIONS; do
  [[ "$c" =~ ^[1-9][0-9]*$ ]] || bench_die "BENCH_CONNECTIONS: '$c' is not a positive integer"
done

bench_need_cmd wrk nginx curl python3
bench_need_bin gateway seoctl
cd "$BENCH_ROOT"

# Every service of the registry, on its port plus 10000.
SERVICES=()
SVC_PORTS=()
registry=$(bench_registry) || bench_die "seoctl services failed"
while read -r p env port; do
  bench_need_bin "$p"
  SERVICES+=("$p")
  SVC_PORTS+=($((port + 10000)))
  export "$env=127.0.0.1:$((port + 10000))"
done <<<"$registry"

bench_traps
bench_tmpdir
bench_raise_nofile
bench_need_free_ports "$GW_PORT" "$NGINX_PORT" "${SVC_PORTS[@]}"

# ---- database ---------------------------------------------------------------
bench_pg
bench_pg_db "$BENCH_PG_URL" seo_bench

# ---- the stack ----------------------------------------------------------------
export SEO_PG_URL="$BENCH_DB_URL"
export SEO_HTTP_ADDR="127.0.0.1:$GW_PORT"
export SEO_RATE_LIMIT_PER_MIN=0
export SEO_LOG_LEVEL=warn
export SEO_DATA_DIR=${SEO_DATA_DIR:-$BENCH_ROOT/var/graph}
# The source tree's migrations, wherever BENCH_BIN points.
export SEO_MIGRATIONS_DIR=${SEO_MIGRATIONS_DIR:-$BENCH_ROOT/svc-account/migrations}

"$BENCH_BIN/seoctl" migrate >"$BENCH_TMP/log/migrate.log" 2>&1 \
  || { cat "$BENCH_TMP/log/migrate.log" >&2; bench_die "seoctl migrate failed"; }

# svc-graph serves the demo index that ./seo up builds; build it likewise.
if [ -x "$BENCH_BIN/svc-graph" ] && [ ! -d "$SEO_DATA_DIR" ] && [ -x "$BENCH_BIN/seo-ingest" ]; then
  bench_say "bench: building the demo crawl index in $SEO_DATA_DIR"
  mkdir -p "$(dirname "$SEO_DATA_DIR")"
  "$BENCH_BIN/seo-ingest" --demo --out "$SEO_DATA_DIR" >"$BENCH_TMP/log/ingest.log" 2>&1 \
    || { tail -20 "$BENCH_TMP/log/ingest.log" >&2; bench_die "seo-ingest --demo failed"; }
fi

for s in "${SERVICES[@]}"; do
  bench_start "$s" "$BENCH_BIN/$s"
done
bench_start gateway "$BENCH_BIN/gateway"

base="http://127.0.0.1:$GW_PORT"
code=$(bench_wait_http "$base/healthz" 60 200)
if [ "$code" != 200 ]; then
  bench_check_alive
  bench_logs
  bench_die "GET /healthz answered $code instead of 200 after 60 s"
fi
bench_check_alive

# ---- a workspace --------------------------------------------------------------
"$BENCH_BIN/seoctl" workspace create --name Bench --email bench@example.com \
  --credits 1000000000 >"$BENCH_TMP/workspace.json" 2>"$BENCH_TMP/log/seoctl.log" \
  || { cat "$BENCH_TMP/log/seoctl.log" >&2; bench_die "seoctl workspace create failed"; }
key=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["api_key"])' "$BENCH_TMP/workspace.json") \
  || bench_die "seoctl printed no api_key: $(cat "$BENCH_TMP/workspace.json")"

# The bodies nginx serves are the gateway's own answers, byte for byte.
www="$BENCH_TMP/www"
mkdir -p "$www/v1"
code=$(curl -s -o "$www/v1/credits" -w '%{http_code}' -H "X-API-Key: $key" "$base/v1/credits") || code=000
if [ "$code" != 200 ]; then
  bench_logs
  bench_die "GET /v1/credits answered $code: $(head -c 300 "$www/v1/credits" 2>/dev/null)"
fi

# The unauthenticated comparison row: GET /v1/pricing, else GET /healthz.
cheap=/v1/pricing
code=$(curl -s -o "$www/v1/pricing" -w '%{http_code}' "$base/v1/pricing") || code=000
if [ "$code" != 200 ]; then
  bench_say "bench: GET /v1/pricing answered $code; comparing GET /healthz instead"
  cheap=/healthz
  curl -s -o "$www/healthz" "$base/healthz" || true
fi

# The billed comparison row: one credit debited (group commit) per call.
billed=/v1/domain-rank
curl -s -o "$www$billed" -H "X-API-Key: $key" "$base$billed?domain=example.com" || true

bench_nginx_start "$NGINX_PORT" "$www"
ngx="http://127.0.0.1:$NGINX_PORT"
[ "$(bench_wait_http "$ngx/v1/credits" 10 200)" = 200 ] \
  || { bench_logs; bench_die "nginx did not serve the baseline file"; }

# ---- measurements -------------------------------------------------------------
bench_say "bench: gateway vs nginx, ${SECONDS_PER_RUN}s per run, connections: $CONNECTIONS"
if [ "$WARMUP" -gt 0 ]; then
  bench_wrk 64 "$WARMUP" "$base/v1/credits" -H "X-API-Key: $key" >/dev/null
  bench_wrk 64 "$WARMUP" "$ngx/v1/credits" -H "X-API-Key: $key" >/dev/null
fi

rows=()
notes=()
# measure LABEL CONNS PATH [wrk args...]
measure() {
  local label=$1 conns=$2 path=$3
  shift 3
  local g n
  bench_say "bench:   $label: gateway $path"
  g=$(bench_wrk "$conns" "$SECONDS_PER_RUN" "$base$path" "$@")
  bench_check_alive
  bench_say "bench:   $label: nginx $path"
  n=$(bench_wrk "$conns" "$SECONDS_PER_RUN" "$ngx$path" "$@")
  read -r g_rps g_p50 g_p99 g_bad g_err <<<"$g"
  read -r n_rps n_p50 n_p99 n_bad n_err <<<"$n"
  local ratio
  ratio=$(awk -v a="$g_rps" -v b="$n_rps" 'BEGIN { if (b > 0) printf "%.2f", a / b; else print "-" }')
  rows+=("$(printf '| %s | %.0f | %s ms | %s ms | %.0f | %s ms | %s ms | %s |' \
    "$label" "$g_rps" "$g_p50" "$g_p99" "$n_rps" "$n_p50" "$n_p99" "$ratio")")
  [ "$g_bad" = 0 ] || notes+=("$label: the gateway answered $g_bad non-2xx responses")
  [ "$g_err" = 0 ] || notes+=("$label: wrk counted $g_err socket errors against the gateway")
  [ "$n_err" = 0 ] || notes+=("$label: wrk counted $n_err socket errors against nginx")
}

for c in $CONNECTIONS; do
  measure "$c" "$c" /v1/credits -H "X-API-Key: $key"
done
cheap_conns=64
measure "$cheap_conns, GET $cheap (no key)" "$cheap_conns" "$cheap"
# Billed one call at a time (each waits for a commit of its own) and many
# at once (debits share commits).
for c in 1 "$cheap_conns"; do
  measure "$c, GET $billed (billed, 1 credit)" "$c" "$billed?domain=example.com" -H "X-API-Key: $key"
done

# ---- report ---------------------------------------------------------------------
report="$BENCH_TMP/report.md"
{
  echo "#### gateway, $(date -u '+%Y-%m-%d %H:%M UTC')"
  echo
  echo "Machine: $(bench_machine). wrk --latency -t2, ${SECONDS_PER_RUN}s per run, on the same machine;"
  echo "GET /v1/credits with X-API-Key (rows by connections) unless stated; nginx serves the same body as a static file."
  echo
  echo "| connections | gateway req/s | p50 | p99 | nginx req/s | p50 | p99 | ratio |"
  echo "|---|---|---|---|---|---|---|---|"
  printf '%s\n' "${rows[@]}"
  for n in ${notes[@]+"${notes[@]}"}; do
    echo
    echo "Note: $n."
  done
} >"$report"
cat "$report"

if [ "${BENCH_WRITE_DOCS:-0}" = 1 ]; then bench_write_docs gateway "$report"; fi


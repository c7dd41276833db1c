#!/usr/bin/env bash
# Gateway throughput and latency against a static nginx baseline, and a
# billed route against the same route unbilled.
#
#   ./seo bench gateway            (builds first)
#   bash bench/gateway.sh          (after ./seo build release)
#
# Starts its own stack on non-default ports (gateway 127.0.0.1:18080, services
# 127.0.0.1:19101 and up: each registry port plus 10000; BENCH_PORT moves
# them all) with the rate limit off (BENCH_RATE_LIMIT turns it on), against
# a fresh database
# seo_bench (seo_bench_PORT with BENCH_PORT) on the server of `./seo pg`,
# creates a workspace with seoctl, and
# an nginx (127.0.0.1:18081) serving a file with the very body of the
# gateway's answer, and gateway-unbilled (127.0.0.1:18082: the same gateway
# with every route free) on the same services. Then wrk measures, at each
# connection count, GET /v1/credits (with X-API-Key) and GET /v1/pricing
# (no key) on the gateway and nginx, and GET /v1/domain-rank (1 credit) on
# the gateway and on gateway-unbilled, counting the context switches of
# the gateway, svc-account and svc-graph per request. Prints Markdown
# tables with the issue 14 targets judged; docs/benchmarks.md describes the
# method.
#
# Environment:
#   BENCH_SECONDS      duration of each wrk run (default 10)
#   BENCH_SLICES       runs of each side of the billed row, alternated
#                      (default 5): its figures are their medians
#   BENCH_WORKSPACES   workspaces of one more billed row, the calls spread
#                      over their keys (default 200; 0: no such row)
#   BENCH_WARMUP       seconds of unreported warm-up per target (default 2)
#   BENCH_CONNECTIONS  connection counts (default "16 64")
#   BENCH_PORT         the gateway's port (default 18080): nginx the next,
#                      gateway-unbilled the one after, the services the
#                      registry's shifted alike
#   BENCH_RATE_LIMIT   SEO_RATE_LIMIT_PER_MIN of the stack (default 0: off);
#                      high enough never to refuse (e.g. 100000000), it
#                      shows what counting the rate costs a call
#   BENCH_WRITE_DOCS=1 also appends the table to docs/benchmarks.md
#   BENCH_KEEP_TMP=1   keeps the temporary directory (logs, wrk output)
#   BENCH_BIN          directory of the binaries (default build/bin)
set -euo pipefail

. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

SECONDS_PER_RUN=${BENCH_SECONDS:-10}
WARMUP=${BENCH_WARMUP:-2}
SLICES=${BENCH_SLICES:-5}
WORKSPACES=${BENCH_WORKSPACES:-200}
CONNECTIONS=${BENCH_CONNECTIONS:-16 64}
GW_PORT=${BENCH_PORT:-18080}
NGINX_PORT=$((GW_PORT + 1))
FREE_PORT=$((GW_PORT + 2))
# The services' ports are the registry's shifted as the gateway's from 8080.
SHIFT=$((GW_PORT - 8080))

[[ "$GW_PORT" =~ ^[1-9][0-9]*$ ]] && [ "$GW_PORT" -gt 8080 ] && [ "$GW_PORT" -lt 55000 ] \
  || bench_die "BENCH_PORT must be a port between 8081 and 54999"
[[ "$SECONDS_PER_RUN" =~ ^[1-9][0-9]*$ ]] || bench_die "BENCH_SECONDS must be a positive integer"
[[ "$SLICES" =~ ^[1-9][0-9]*$ ]] || bench_die "BENCH_SLICES must be a positive integer"
[[ "$WORKSPACES" =~ ^[0-9]+$ ]] || bench_die "BENCH_WORKSPACES must be an integer"
[[ "$WARMUP" =~ ^[0-9]+$ ]] || bench_die "BENCH_WARMUP must be an integer"
for c in $CONNECTIONS; do
  [[ "$c" =~ ^[1-9][0-9]*$ ]] || bench_die "BENCH_CONNECTIONS: '$c' is not a positive integer"
done

bench_need_cmd wrk nginx curl python3
bench_need_bin gateway gateway-unbilled seoctl
cd "$BENCH_ROOT"

# Every service of the registry, on its port plus SHIFT.
SERVICES=()
SVC_PORTS=()
registry=$(bench_registry) || bench_die "seoctl services failed"
while read -r p env port; do
  bench_need_bin "$p"
  SERVICES+=("$p")
  SVC_PORTS+=($((port + SHIFT)))
  export "$env=127.0.0.1:$((port + SHIFT))"
done <<<"$registry"

bench_traps
bench_tmpdir
bench_raise_nofile
bench_need_free_ports "$GW_PORT" "$NGINX_PORT" "$FREE_PORT" "${SVC_PORTS[@]}"

# ---- database ---------------------------------------------------------------
bench_pg
bench_pg_db "$BENCH_PG_URL" "seo_bench${BENCH_PORT:+_$BENCH_PORT}"

# ---- the stack ----------------------------------------------------------------
export SEO_PG_URL="$BENCH_DB_URL"
export SEO_HTTP_ADDR="127.0.0.1:$GW_PORT"
RATE_LIMIT=${BENCH_RATE_LIMIT:-0}
[[ "$RATE_LIMIT" =~ ^[0-9]+$ ]] || bench_die "BENCH_RATE_LIMIT must be an integer"
export SEO_RATE_LIMIT_PER_MIN=$RATE_LIMIT
# The gateways' /metrics, read for their Authorize calls.
export SEO_METRICS_TOKEN=${SEO_METRICS_TOKEN:-bench-metrics-token-$$}
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
SEO_HTTP_ADDR="127.0.0.1:$FREE_PORT" bench_start gateway-unbilled "$BENCH_BIN/gateway-unbilled"

base="http://127.0.0.1:$GW_PORT"
free="http://127.0.0.1:$FREE_PORT"
for u in "$base" "$free"; do
  code=$(bench_wait_http "$u/healthz" 60 200)
  if [ "$code" != 200 ]; then
    bench_check_alive
    bench_logs
    bench_die "GET $u/healthz answered $code instead of 200 after 60 s"
  fi
done
bench_check_alive

# ---- a workspace --------------------------------------------------------------
"$BENCH_BIN/seoctl" workspace create --name Bench --email bench@example.com \
  --credits 1000000000 >"$BENCH_TMP/workspace.json" 2>"$BENCH_TMP/log/seoctl.log" \
  || { cat "$BENCH_TMP/log/seoctl.log" >&2; bench_die "seoctl workspace create failed"; }
key=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["api_key"])' "$BENCH_TMP/workspace.json") \
  || bench_die "seoctl printed no api_key: $(cat "$BENCH_TMP/workspace.json")"

# The many-workspace row's keys, a workspace each (bench/keys.lua).
export KEYS_FILE="$BENCH_TMP/keys.txt"
: >"$KEYS_FILE"
for ((i = 1; i <= WORKSPACES; i++)); do
  "$BENCH_BIN/seoctl" workspace create --name "Bench $i" --email "bench$i@example.com" \
    --credits 1000000000 2>>"$BENCH_TMP/log/seoctl.log" \
    | python3 -c 'import json,sys; print(json.load(sys.stdin)["api_key"])' >>"$KEYS_FILE" \
    || { cat "$BENCH_TMP/log/seoctl.log" >&2; bench_die "seoctl workspace create failed"; }
done

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
bench_say "bench: gateway vs nginx, billed vs unbilled, ${SECONDS_PER_RUN}s per run, connections: $CONNECTIONS"
if [ "$WARMUP" -gt 0 ]; then
  bench_wrk 64 "$WARMUP" "$base/v1/credits" -H "X-API-Key: $key" >/dev/null
  bench_wrk 64 "$WARMUP" "$ngx/v1/credits" -H "X-API-Key: $key" >/dev/null
  bench_wrk 64 "$WARMUP" "$free$billed?domain=example.com" -H "X-API-Key: $key" >/dev/null
fi

# The processes whose context switches are counted: the gateway measured
# (the billed one or gateway-unbilled), svc-account and svc-graph.
pid_gateway=$(bench_pid gateway)
pid_unbilled=$(bench_pid gateway-unbilled)
pid_account=$(bench_pid svc-account) || pid_account=""
pid_graph=$(bench_pid svc-graph) || pid_graph=""

rows=()
brows=()
crows=()
urows=()
arows=()
notes=()
verdicts=()
# ctxsw_all GATEWAY_PID: the switches of the three processes, six numbers.
ctxsw_all() {
  local p
  for p in "$1" "$pid_account" "$pid_graph"; do
    if [ -n "$p" ]; then printf '%s ' "$(bench_ctxsw "$p")"; else printf '0 0 '; fi
  done
  echo
}
# cpu_all GATEWAY_PID "PG_PIDS": the CPU time and the time waiting for a
# CPU (ns) of the gateway, svc-account, svc-graph and the bench database's
# PostgreSQL sessions, then the machine's idle time: nine numbers.
cpu_all() {
  local p
  for p in "$1" "$pid_account" "$pid_graph"; do
    printf '%s ' "$(bench_cpu_ns $p)"
  done
  printf '%s ' "$(bench_cpu_ns $2)"
  bench_idle_ns
}
# timed_wrk LABEL GATEWAY_PID CONNS URL [wrk args...]: bench_wrk's line in
# $wrk_line, and a row of context switches and system calls per request
# of the three processes in crows.
timed_wrk() {
  local label=$1 gpid=$2 conns=$3 url=$4
  shift 4
  local before after p i=0 counters=() calls=""
  for p in "$gpid" "$pid_account" "$pid_graph"; do
    BENCH_SYSCALLS_PID=""
    [ -z "$p" ] || bench_syscalls_start "$p" "$BENCH_TMP/log/syscalls-$i.csv" "$SECONDS_PER_RUN"
    counters+=("$BENCH_SYSCALLS_PID")
    i=$((i + 1))
  done
  local pg cpu_before cpu_after
  pg=$(bench_pg_backends)
  before=$(ctxsw_all "$gpid")
  cpu_before=$(cpu_all "$gpid" "$pg")
  wrk_line=$(bench_wrk "$conns" "$SECONDS_PER_RUN" "$url" "$@")
  cpu_after=$(cpu_all "$gpid" "$pg")
  after=$(ctxsw_all "$gpid")
  urows+=("$(awk -v l="$label" -v b="$cpu_before" -v a="$cpu_after" -v r="${wrk_line##* }" 'BEGIN {
    split(b, x, " "); split(a, y, " "); if (r <= 0) r = 1; printf "| %s |", l
    for (i = 1; i <= 7; i += 2) printf " %.1f |", (y[i] - x[i]) / 1e3 / r
    printf " %.1f | %.1f |", (y[2] - x[2]) / 1e3 / r, (y[9] - x[9]) / 1e3 / r }')")
  for i in 0 1 2; do
    bench_syscalls_wait "${counters[$i]}" "$BENCH_TMP/log/syscalls-$i.csv"
    calls+="$BENCH_SYSCALLS "
    rm -f "$BENCH_TMP/log/syscalls-$i.csv"
  done
  crows+=("$(awk -v l="$label" -v b="$before" -v a="$after" -v c="$calls" -v r="${wrk_line##* }" 'BEGIN {
    split(b, x, " "); split(a, y, " "); split(c, s, " "); if (r <= 0) r = 1; printf "| %s | %d |", l, r
    for (i = 1; i <= 6; i += 2) printf " %.2f + %.2f |", (y[i] - x[i]) / r, (y[i + 1] - x[i + 1]) / r
    for (i = 1; i <= 3; i++) if (s[i] == "-") printf " - |"; else printf " %.1f |", s[i] / r }')")
}
# check LABEL NAME NON2XX ERRS: notes a row that did not measure successes.
check() {
  [ "$3" = 0 ] || notes+=("$1: $2 answered $3 non-2xx responses")
  [ "$4" = 0 ] || notes+=("$1: wrk counted $4 socket errors against $2")
}

# measure LABEL CONNS PATH [wrk args...]: the gateway against nginx; leaves
# their requests/s in g_rps and n_rps.
measure() {
  local label=$1 conns=$2 path=$3
  shift 3
  local g n
  bench_say "bench:   $label: gateway $path"
  timed_wrk "$label" "$pid_gateway" "$conns" "$base$path" "$@"
  g=$wrk_line
  bench_check_alive
  bench_say "bench:   $label: nginx $path"
  n=$(bench_wrk "$conns" "$SECONDS_PER_RUN" "$ngx$path" "$@")
  read -r g_rps g_p50 g_p99 g_bad g_err _ <<<"$g"
  read -r n_rps n_p50 n_p99 _ n_err _ <<<"$n"
  ratio=$(awk -v a="$g_rps" -v b="$n_rps" 'BEGIN { if (b > 0) printf "%.2f", a / b; else print "-" }')
  rows+=("$(printf '| %s | %.0f | %s ms | %s ms | %.0f | %s ms | %s ms | %s |' \
    "$label" "$g_rps" "$g_p50" "$g_p99" "$n_rps" "$n_p50" "$n_p99" "$ratio")")
  check "$label" "the gateway" "$g_bad" "$g_err"
  check "$label" nginx 0 "$n_err"
}

# authorize_calls URL: "CALLS ASKS", the gateway's Authorize calls so far
# and those of them that only asked ahead for a key's rate tokens ("-":
# not counted by this gateway).
authorize_calls() {
  curl -s -H "Authorization: Bearer $SEO_METRICS_TOKEN" "$1/metrics" \
    | awk '$1 == "seo_account_authorize_total" { n = $2 } $1 == "seo_rate_ask_total" { k = $2 }
           END { print (n == "" ? "-" : n), (k == "" ? "-" : k) }'
}

# median_wrk LINE...: bench_wrk's lines of one side's slices folded into
# one: requests/s, p50 and p99 each the median of the slices' (a stall of
# the shared machine spoils one slice, not the row), the non-2xx answers,
# socket errors and requests summed.
median_wrk() {
  printf '%s\n' "$@" | awk '{ for (i = 1; i <= 6; i++) v[i, NR] = $i }
    END {
      for (i = 1; i <= 6; i++) {
        if (i > 3) { o[i] = 0; for (r = 1; r <= NR; r++) o[i] += v[i, r]; continue }
        for (r = 1; r <= NR; r++) {
          x = v[i, r]; k = r - 1
          while (k > 0 && a[k] > x) { a[k + 1] = a[k]; k-- }
          a[k + 1] = x
        }
        o[i] = a[int((NR + 1) / 2)]
      }
      printf "%s %s %s %d %d %d\n", o[1], o[2], o[3], o[4], o[5], o[6] }'
}

# slice_warm CONNS BASE WRK_ARGS...: a second of the billed route before a
# slice, unmeasured, so that a slice measures the steady state: the keys
# seen and the leases open again (the other side's run left them idle
# for as long as GW_LEASE_IDLE_MS: given back).
slice_warm() {
  local conns=$1 at=$2
  shift 2
  [ "$WARMUP" = 0 ] || bench_wrk "$conns" 1 "$at$billed?domain=example.com" "$@" >/dev/null
}

# billed_vs_free CONNS LABEL WRK_ARGS...: the billed route on the gateway
# and on gateway-unbilled, the same services behind both, in SLICES runs a
# side alternated (billed, unbilled, billed, ...), wrk given WRK_ARGS (the
# key); the CPU, switches and Authorize rows are the first slice's.
billed_vs_free() {
  local conns=$1 row=$2 b f label="$2, GET $billed" a0 a1 i bs=() fs=()
  shift 2
  for ((i = 0; i < SLICES; i++)); do
    bench_say "bench:   $label: billed ($((i + 1)) of $SLICES)"
    slice_warm "$conns" "$base" "$@"
    if [ "$i" = 0 ]; then
      a0=$(authorize_calls "$base")
      timed_wrk "$label (billed)" "$pid_gateway" "$conns" "$base$billed?domain=example.com" "$@"
      a1=$(authorize_calls "$base")
      arows+=("$(awk -v c="$row" -v a="$a0" -v z="$a1" -v l="$wrk_line" 'BEGIN {
        split(l, w, " "); n = w[6]; split(a, x, " "); split(z, y, " ")
        if (x[1] == "-" || y[1] == "-" || n <= 0) printf "| %s | - |", c
        else printf "| %s | %.4f |", c, (y[1] - x[1]) / n
        if (x[2] == "-" || y[2] == "-" || n <= 0) printf " - |"
        else printf " %.4f |", (y[2] - x[2]) / n }')")
      bs+=("$wrk_line")
    else
      bs+=("$(bench_wrk "$conns" "$SECONDS_PER_RUN" "$base$billed?domain=example.com" "$@")")
    fi
    bench_check_alive
    bench_say "bench:   $label: unbilled ($((i + 1)) of $SLICES)"
    slice_warm "$conns" "$free" "$@"
    if [ "$i" = 0 ]; then
      timed_wrk "$label (unbilled)" "$pid_unbilled" "$conns" "$free$billed?domain=example.com" "$@"
      fs+=("$wrk_line")
    else
      fs+=("$(bench_wrk "$conns" "$SECONDS_PER_RUN" "$free$billed?domain=example.com" "$@")")
    fi
    bench_check_alive
  done
  b=$(median_wrk "${bs[@]}")
  f=$(median_wrk "${fs[@]}")
  read -r b_rps b_p50 b_p99 b_bad b_err _ <<<"$b"
  read -r f_rps f_p50 f_p99 f_bad f_err _ <<<"$f"
  local over
  over=$(awk -v a="$b_p50" -v b="$f_p50" 'BEGIN { if (b > 0) printf "%+.0f %%", (a / b - 1) * 100; else print "-" }')
  brows+=("$(printf '| %s | %.0f | %s ms | %s ms | %.0f | %s ms | %s ms | %s |' \
    "$row" "$b_rps" "$b_p50" "$b_p99" "$f_rps" "$f_p50" "$f_p99" "$over")")
  verdicts+=("$(awk -v c="$row" -v a="$b_p50" -v b="$f_p50" 'BEGIN {
    printf "| billed p50 within 10 %% of unbilled | %s | %.3f ms against %.3f ms | %s |", c, a, b, ((b > 0 && a <= b * 1.1) ? "PASS" : "FAIL") }')")
  check "$label (billed)" "the gateway" "$b_bad" "$b_err"
  check "$label (unbilled)" gateway-unbilled "$f_bad" "$f_err"
}

for c in $CONNECTIONS; do
  measure "$c" "$c" /v1/credits -H "X-API-Key: $key"
  verdicts+=("$(awk -v c="$c" -v g="$g_rps" -v n="$n_rps" 'BEGIN {
    printf "| GET /v1/credits at least 0.5x nginx | %s | %.2fx | %s |", c, (n > 0 ? g / n : 0), ((n > 0 && g / n >= 0.5) ? "PASS" : "FAIL") }')")
  measure "$c, GET $cheap (no key)" "$c" "$cheap"
  billed_vs_free "$c" "$c" -H "X-API-Key: $key"
  [ "$WORKSPACES" = 0 ] ||
    billed_vs_free "$c" "$c, $WORKSPACES workspaces" -s "$BENCH_ROOT/bench/keys.lua"
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
  echo
  echo "GET $billed?domain=example.com with X-API-Key (1 credit a call) on the gateway, and the same route unbilled on gateway-unbilled (the same gateway with every route free: the key checked, nothing debited, no outcome reported), the same services behind both; $SLICES runs of ${SECONDS_PER_RUN} s a side, alternated, each figure the median of its side's runs; the rows of $WORKSPACES workspaces spread the calls over as many keys, a workspace each (bench/keys.lua):"
  echo
  echo "| connections | billed req/s | p50 | p99 | unbilled req/s | p50 | p99 | billed p50 over unbilled |"
  echo "|---|---|---|---|---|---|---|---|"
  printf '%s\n' "${brows[@]}"
  echo
  echo "Authorize calls the gateway sent per billed request above (its /metrics' seo_account_authorize_total over wrk's requests, and seo_rate_ask_total, the asks ahead among them; \"-\": a gateway that does not count them), the rate limit $([ "$RATE_LIMIT" = 0 ] && echo off || echo "on at $RATE_LIMIT a minute per key"):"
  echo
  echo "| connections | Authorize calls per request | of them asks ahead for rate tokens |"
  echo "|---|---|---|"
  printf '%s\n' "${arows[@]}"
  echo
  echo "Context switches and system calls per request during each gateway run above: context switches voluntary + involuntary, summed over every thread of the process (/proc/PID/task/*/status), system calls counted by perf stat on the raw_syscalls:sys_enter tracepoint for the run's ${SECONDS_PER_RUN} s (\"-\" where perf cannot count them); the gateway columns are gateway-unbilled's on the unbilled rows:"
  echo
  echo "| run | requests | gateway switches | svc-account switches | svc-graph switches | gateway syscalls | svc-account syscalls | svc-graph syscalls |"
  echo "|---|---|---|---|---|---|---|---|"
  printf '%s\n' "${crows[@]}"
  echo
  echo "CPU time per request during each gateway run above, in microseconds (every thread's time on a CPU as the scheduler counts it, /proc/PID/task/*/schedstat, or clock ticks of /proc/PID/stat where that is missing), of the gateway (gateway-unbilled on the unbilled rows), svc-account, svc-graph and the PostgreSQL sessions connected to the bench database (svc-account's pool; the server's own background processes left out), the time the gateway waited runnable for a CPU while others held both, and the time the machine's CPUs stood idle, summed over them (/proc/stat, clock ticks):"
  echo
  echo "| run | gateway | svc-account | svc-graph | PostgreSQL sessions | gateway waiting for a CPU | CPUs idle |"
  echo "|---|---|---|---|---|---|---|"
  printf '%s\n' "${urows[@]}"
  echo
  echo "The targets of issue 14:"
  echo
  echo "| target | connections | measured | verdict |"
  echo "|---|---|---|---|"
  printf '%s\n' "${verdicts[@]}"
  for n in ${notes[@]+"${notes[@]}"}; do
    echo
    echo "Note: $n."
  done
} >"$report"
cat "$report"

if [ "${BENCH_WRITE_DOCS:-0}" = 1 ]; then bench_write_docs gateway "$report"; fi

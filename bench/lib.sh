# bench/lib.sh: helpers shared by the bench/*.sh scripts. Source it:
#   . "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
# `./seo bench` runs every bench/*.sh, this file included: run on its own it
# does nothing.
if [ "${BASH_SOURCE[0]}" = "$0" ]; then exit 0; fi

BENCH_ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
BENCH_BIN=${BENCH_BIN:-$BENCH_ROOT/build/bin} # binaries under test
BENCH_PG_PORT=${SEO_LOCAL_PG_PORT:-55432}
BENCH_PIDS=()
BENCH_NAMES=()
BENCH_TMP=""
BENCH_DB=""          # database created by bench_pg_db, dropped on exit
BENCH_DB_ADMIN_URL="" # the server's URL it was created through
BENCH_PG_STARTED=0   # 1 when bench_pg started the local cluster
# The stack a bench starts refuses internal calls without a shared secret:
# one per run unless the caller gives one.
SEO_INTERNAL_TOKEN=${SEO_INTERNAL_TOKEN:-$(python3 -c 'import secrets; print(secrets.token_urlsafe(32))')}
export SEO_INTERNAL_TOKEN

bench_say() { printf '%s\n' "$*" >&2; }
bench_die() {
  bench_say "bench: error: $*"
  exit 1
}

# Temporary directory removed on exit.
bench_tmpdir() {
  BENCH_TMP=$(mktemp -d "${TMPDIR:-/tmp}/seo-bench.XXXXXX")
  mkdir -p "$BENCH_TMP/log"
}

# Raises the open-file limit as far as allowed (512 connections need it).
bench_raise_nofile() {
  ulimit -n 65536 2>/dev/null || ulimit -n "$(ulimit -Hn)" 2>/dev/null || true
}

bench_need_cmd() {
  local c
  for c in "$@"; do
    command -v "$c" >/dev/null 2>&1 || bench_die "'$c' is not installed (./seo deps installs it)"
  done
}

# Exits unless build/bin/NAME exists.
bench_need_bin() {
  local b
  for b in "$@"; do
    [ -x "$BENCH_BIN/$b" ] || bench_die "${BENCH_BIN#$BENCH_ROOT/}/$b is missing: run ./seo build release (or ./seo bench, which builds first)"
  done
}

# True when something accepts TCP connections on 127.0.0.1:PORT.
bench_port_busy() {
  (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null
}

bench_need_free_ports() {
  local p
  for p in "$@"; do
    if bench_port_busy "$p"; then
      bench_die "port 127.0.0.1:$p is in use (a previous bench still running? another stack?)"
    fi
  done
}

# bench_start NAME CMD [ARGS...]: runs CMD in the background, output in
# $BENCH_TMP/log/NAME.log; stopped by bench_cleanup.
bench_start() {
  local name=$1
  shift
  "$@" >"$BENCH_TMP/log/$name.log" 2>&1 &
  BENCH_PIDS+=($!)
  BENCH_NAMES+=("$name")
}

# Exits with the last lines of every log when a started process has died.
bench_check_alive() {
  local i dead=0
  for i in "${!BENCH_PIDS[@]}"; do
    if ! kill -0 "${BENCH_PIDS[$i]}" 2>/dev/null; then
      bench_say "bench: ${BENCH_NAMES[$i]} (pid ${BENCH_PIDS[$i]}) exited"
      dead=1
    fi
  done
  if [ "$dead" = 1 ]; then
    bench_logs
    bench_die "a process of the bench stack died"
  fi
}

bench_logs() {
  local f
  [ -n "$BENCH_TMP" ] && [ -d "$BENCH_TMP/log" ] || return 0
  for f in "$BENCH_TMP"/log/*.log; do
    [ -s "$f" ] || continue
    bench_say "---- $(basename "$f") (last lines)"
    tail -n 15 "$f" >&2
  done
}

# Stops everything bench_start started, one at a time and newest first
# (TERM, then KILL after 5 s): the gateways stop while the services they
# give their credit leases back to still answer. Then drops the bench
# database, stops the local cluster if this run started it, removes the
# temporary directory. Safe to call twice.
bench_cleanup() {
  local rc=$?
  set +e
  local i pid n
  for ((i = ${#BENCH_PIDS[@]} - 1; i >= 0; i--)); do
    pid=${BENCH_PIDS[$i]}
    kill "$pid" 2>/dev/null
    for n in $(seq 1 50); do
      kill -0 "$pid" 2>/dev/null || break
      sleep 0.1
    done
    if kill -0 "$pid" 2>/dev/null; then
      bench_say "bench: ${BENCH_NAMES[$i]} did not stop, killing it"
      kill -KILL "$pid" 2>/dev/null
    fi
    wait "$pid" 2>/dev/null
  done
  BENCH_PIDS=()
  BENCH_NAMES=()
  if [ -n "$BENCH_DB" ] && [ -n "$BENCH_DB_ADMIN_URL" ] && [ "${BENCH_KEEP_DB:-0}" != 1 ]; then
    "$(bench_pg_bin)/dropdb" --if-exists --force --maintenance-db="$BENCH_DB_ADMIN_URL" "$BENCH_DB" >/dev/null 2>&1
    BENCH_DB=""
  fi
  if [ "$BENCH_PG_STARTED" = 1 ]; then
    bench_pg_run "$(bench_pg_bin)/pg_ctl" -D "$BENCH_ROOT/var/pg/data" -m fast -w stop >/dev/null 2>&1
    BENCH_PG_STARTED=0
  fi
  if [ -n "$BENCH_TMP" ] && [ "${BENCH_KEEP_TMP:-0}" != 1 ]; then
    rm -rf "$BENCH_TMP"
    BENCH_TMP=""
  fi
  return $rc
}

# Installs bench_cleanup on exit, including Ctrl-C and failures.
bench_traps() {
  trap bench_cleanup EXIT
  trap 'exit 130' INT
  trap 'exit 143' TERM
}

bench_pg_bin() { ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -1; }

# Runs a PostgreSQL server binary as the cluster's owner (never as root), as
# ./seo does.
bench_pg_run() {
  if [ "$(id -u)" = 0 ]; then runuser -u postgres -- "$@"; else "$@"; fi
}

# Sets BENCH_PG_URL to the stack's PostgreSQL (./seo pg: SEO_PG_URL, else the
# local cluster under var/pg, started when needed and then stopped on exit).
# Not in a $(...): it records what it started.
bench_pg() {
  [ -n "$(bench_pg_bin)" ] || bench_die "postgresql is not installed (./seo deps)"
  if [ -z "${SEO_PG_URL:-}" ] && ! bench_port_busy "$BENCH_PG_PORT"; then
    BENCH_PG_STARTED=1
  fi
  BENCH_PG_URL=$("$BENCH_ROOT/seo" pg) || bench_die "./seo pg failed"
  [ -n "$BENCH_PG_URL" ] || bench_die "./seo pg printed no URL"
}

# bench_pg_db ADMIN_URL NAME: drops and creates database NAME on the server
# of ADMIN_URL and sets BENCH_DB_URL to the new database's URL (dropped on
# exit unless BENCH_KEEP_DB=1). Not in a $(...).
bench_pg_db() {
  local admin=$1 name=$2 bin
  bin=$(bench_pg_bin)
  PGOPTIONS='-c client_min_messages=warning' \
    "$bin/dropdb" --if-exists --force --maintenance-db="$admin" "$name" \
    || bench_die "could not drop database $name"
  "$bin/createdb" --maintenance-db="$admin" "$name" \
    || bench_die "could not create database $name"
  BENCH_DB=$name
  BENCH_DB_ADMIN_URL=$admin
  BENCH_DB_URL=$(python3 - "$admin" "$name" <<'PY'
import sys
from urllib.parse import urlsplit, urlunsplit
url, name = sys.argv[1], sys.argv[2]
if url.startswith(("postgres://", "postgresql://")):
    print(urlunsplit(urlsplit(url)._replace(path="/" + name)))
else:  # key=value connection string: a later dbname wins
    print(url + " dbname=" + name)
PY
  ) || bench_die "could not derive the URL of database $name"
}

# bench_wait_http URL SECONDS [STATUS]: waits until URL answers STATUS
# (default 200; "any" for any HTTP answer). Prints the last status seen.
bench_wait_http() {
  local url=$1 secs=$2 want=${3:-200} code=000 i
  for ((i = 0; i < secs * 5; i++)); do
    code=$(curl -s -o /dev/null -w '%{http_code}' --max-time 2 "$url" 2>/dev/null) || true
    if [ "$want" = any ] && [ "$code" != 000 ]; then break; fi
    [ "$code" = "$want" ] && break
    sleep 0.2
  done
  echo "$code"
}

# bench_nginx_start PORT DOCROOT: nginx (Debian nginx-light) in the
# foreground of a background job, with its own config, pid file, logs and
# temp paths under $BENCH_TMP/nginx; serves DOCROOT as application/json.
bench_nginx_start() {
  local port=$1 root=$2 d="$BENCH_TMP/nginx" user_line=""
  bench_need_cmd nginx
  mkdir -p "$d/tmp"
  # As root nginx drops its workers to "nobody", which cannot read the
  # private temp directory: keep them root (this nginx only serves loopback).
  [ "$(id -u)" = 0 ] && user_line="user root;"
  cat >"$d/nginx.conf" <<CONF
$user_line
worker_processes 2;
worker_rlimit_nofile 16384;
daemon off;
master_process on;
pid $d/nginx.pid;
error_log $d/error.log warn;
events {
  worker_connections 8192;
}
http {
  access_log off;
  server_tokens off;
  sendfile on;
  tcp_nodelay on;
  keepalive_timeout 75s;
  keepalive_requests 1000000;
  client_body_temp_path $d/tmp/client;
  proxy_temp_path $d/tmp/proxy;
  fastcgi_temp_path $d/tmp/fastcgi;
  uwsgi_temp_path $d/tmp/uwsgi;
  scgi_temp_path $d/tmp/scgi;
  types { }
  default_type application/json;
  server {
    listen 127.0.0.1:$port;
    root $root;
  }
}
CONF
  nginx -t -q -p "$d" -e "$d/error.log" -c "$d/nginx.conf" >/dev/null 2>&1 \
    || { cat "$d/error.log" >&2; bench_die "nginx rejected its configuration"; }
  bench_start nginx nginx -p "$d" -e "$d/error.log" -c "$d/nginx.conf"
}

# Latency as wrk prints it (123.45us, 1.23ms, 1.02s, 2.00m) -> milliseconds.
bench_to_ms() {
  awk -v v="$1" 'BEGIN {
    n = v + 0; u = v; sub(/^[0-9.]+/, "", u)
    if (u == "us") n /= 1000; else if (u == "s") n *= 1000; else if (u == "m") n *= 60000
    printf "%.3f", n }'
}

# bench_wrk CONNS SECONDS URL [wrk args...]: runs wrk --latency and prints
# one line "REQ_PER_SEC P50_MS P99_MS NON2XX SOCKET_ERRORS REQUESTS"; the raw
# output is kept in $BENCH_TMP/log/wrk-*.txt.
bench_wrk() {
  local conns=$1 secs=$2 url=$3
  shift 3
  local threads=2 out
  [ "$conns" -lt "$threads" ] && threads=$conns
  out="$BENCH_TMP/log/wrk-$(date +%s%N).txt"
  wrk --latency -t"$threads" -c"$conns" -d"${secs}s" "$@" "$url" >"$out" 2>&1 \
    || { cat "$out" >&2; bench_die "wrk failed against $url"; }
  local rps p50 p99 non2xx errs reqs
  rps=$(awk '/^Requests\/sec:/ {print $2}' "$out")
  reqs=$(awk '/ requests in / {print $1}' "$out")
  p50=$(awk '$1 == "50%" {print $2}' "$out")
  p99=$(awk '$1 == "99%" {print $2}' "$out")
  non2xx=$(awk '/Non-2xx or 3xx responses:/ {print $NF}' "$out")
  errs=$(awk '/Socket errors:/ {s = 0; for (i = 3; i <= NF; i++) { x = $i; gsub(/,/, "", x); if (x ~ /^[0-9]+$/) s += x } print s}' "$out")
  [ -n "$rps" ] && [ -n "$p50" ] && [ -n "$p99" ] \
    || { cat "$out" >&2; bench_die "could not parse wrk's output"; }
  echo "$rps $(bench_to_ms "$p50") $(bench_to_ms "$p99") ${non2xx:-0} ${errs:-0} ${reqs:-0}"
}

# bench_ctxsw PID: "VOLUNTARY INVOLUNTARY", the context switches of every
# thread of PID so far (/proc/PID/task/*/status; a thread's count goes
# with it when it exits, and the services' threads live as long as they
# do). perf stat counts the same events but needs perf and the right to
# read other processes' counters; this needs neither and splits the two
# kinds: voluntary ones are waits (a wake-up handed across threads or
# processes), involuntary ones preemption.
bench_ctxsw() {
  cat /proc/"$1"/task/*/status 2>/dev/null | awk '
    /^voluntary_ctxt_switches:/ { v += $2 } /^nonvoluntary_ctxt_switches:/ { n += $2 }
    END { printf "%d %d\n", v, n }'
}

# bench_cpu_ns PID...: the CPU time every thread of the processes has
# used so far and the time it waited runnable for a CPU, in nanoseconds,
# summed: two numbers; gone ones count 0. The scheduler's own account
# (/proc/PID/task/*/schedstat) is exact where /proc/PID/stat counts clock
# ticks, and it holds the waiting, which a saturated machine makes long.
# Without schedstat the time is the ticks', the waiting 0.
bench_cpu_ns() {
  local p
  if [ -r /proc/self/schedstat ]; then
    for p in "$@"; do cat /proc/"$p"/task/*/schedstat 2>/dev/null; done |
      awk '{ c += $1; w += $2 } END { printf "%.0f %.0f\n", c, w }'
    return
  fi
  local t=0 stat rest hz
  hz=$(getconf CLK_TCK)
  for p in "$@"; do
    stat=$(cat /proc/"$p"/stat 2>/dev/null) || continue
    rest=${stat##*) }
    set -- $rest
    t=$((t + ${12} + ${13}))
  done
  awk -v t="$t" -v hz="$hz" 'BEGIN { printf "%.0f 0\n", t * 1e9 / hz }'
}

# bench_idle_ns: the time every CPU of the machine has spent idle so far
# (idle and iowait of /proc/stat, clock ticks), in nanoseconds. A billed
# run that leaves the CPUs idle longer than the unbilled one loses its
# time waiting, not working.
bench_idle_ns() {
  awk -v hz="$(getconf CLK_TCK)" '$1 == "cpu" { printf "%.0f\n", ($5 + $6) * 1e9 / hz; exit }' /proc/stat
}

# bench_pg_backends: the pids of the PostgreSQL backends connected to the
# bench database (svc-account's and the other services' sessions).
bench_pg_backends() {
  "$(bench_pg_bin)/psql" -Atq "$BENCH_DB_ADMIN_URL" -c \
    "SELECT pid FROM pg_stat_activity WHERE datname = '$BENCH_DB' AND pid <> pg_backend_pid()" 2>/dev/null | tr '\n' ' '
}

# bench_syscalls_start PID FILE SECONDS: counts PID's system calls (every
# thread, perf stat on the raw_syscalls:sys_enter tracepoint) for SECONDS
# from now into FILE; sets BENCH_SYSCALLS_PID to the counter's pid, empty
# when perf cannot count them here (not installed, no tracepoints, no
# right to). Not in a $(...): the counter must be this shell's child.
BENCH_PERF_OK=""
bench_syscalls_start() {
  BENCH_SYSCALLS_PID=""
  if [ -z "$BENCH_PERF_OK" ]; then
    BENCH_PERF_OK=0
    command -v perf >/dev/null 2>&1 &&
      perf stat -x, -e raw_syscalls:sys_enter -o /dev/null -- true >/dev/null 2>&1 &&
      BENCH_PERF_OK=1
  fi
  [ "$BENCH_PERF_OK" = 1 ] || return 0
  # Timed by a command, not stopped by a signal: a child dying of SIGINT
  # would make bash act as if Ctrl-C had been pressed.
  perf stat -x, -e raw_syscalls:sys_enter -p "$1" -o "$2" -- sleep "$3" >/dev/null 2>&1 &
  BENCH_SYSCALLS_PID=$!
}

# bench_syscalls_wait PERF_PID FILE: waits for the count and sets
# BENCH_SYSCALLS to it, "-" when there is none. Not in a $(...).
bench_syscalls_wait() {
  [ -z "$1" ] || wait "$1" 2>/dev/null
  BENCH_SYSCALLS=$(awk -F, '$3 ~ /raw_syscalls/ && $1 ~ /^[0-9]+$/ { n = $1 } END { print (n == "" ? "-" : n) }' "$2" 2>/dev/null) || BENCH_SYSCALLS=-
}

# bench_pid NAME: the pid bench_start gave NAME.
bench_pid() {
  local i
  for i in "${!BENCH_NAMES[@]}"; do
    [ "${BENCH_NAMES[$i]}" = "$1" ] && { echo "${BENCH_PIDS[$i]}"; return 0; }
  done
  return 1
}

# One line describing the machine, for result tables.
bench_machine() {
  local cpu
  cpu=$(awk -F': ' '/^model name/ {print $2; exit}' /proc/cpuinfo 2>/dev/null)
  echo "$(nproc) CPU (${cpu:-unknown}), $(awk '/MemTotal/ {printf "%.0f GiB", $2/1048576}' /proc/meminfo), $(uname -sr)"
}

# bench_time FILE CMD [ARGS...]: runs CMD under GNU time, its figures in FILE
# (read them with bench_time_figures).
bench_time() {
  local out=$1
  shift
  /usr/bin/time -o "$out" -f '%e %U %S %M' "$@"
}

# bench_time_figures FILE: "WALL_S CPU_S MAXRSS_KB" of a bench_time run.
bench_time_figures() {
  awk 'END { printf "%s %.2f %s\n", $1, $2 + $3, $4 }' "$1"
}

# bench_registry: "PROCESS ADDR_ENV PORT" for each service of the registry
# (registry/services.def, as `seoctl services` prints it), one a line.
bench_registry() {
  "$BENCH_BIN/seoctl" services | python3 -c 'import json, sys
for s in json.load(sys.stdin)["services"]: print(s["process"], s["addr_env"], s["port"])'
}

# bench_free_ports N: N distinct TCP ports of 127.0.0.1 free right now, on
# one line (the kernel's picks, held together so that they differ).
bench_free_ports() {
  python3 - "$1" <<'PY'
import socket, sys
socks = [socket.socket() for _ in range(int(sys.argv[1]))]
for s in socks:
    s.bind(("127.0.0.1", 0))
print(" ".join(str(s.getsockname()[1]) for s in socks))
PY
}

# bench_write_docs NAME REPORT_FILE: inserts the report above the marker
# "<!-- NAME results: bench/NAME.sh inserts new runs above this line -->" of
# docs/benchmarks.md, or appends it when the marker is missing.
bench_write_docs() {
  python3 - "$BENCH_ROOT/docs/benchmarks.md" "$1" "$2" <<'PY'
import sys
docs, name, report = sys.argv[1], sys.argv[2], open(sys.argv[3]).read()
marker = "<!-- %s results: bench/%s.sh inserts new runs above this line -->" % (name, name)
text = open(docs).read()
if marker in text:
    text = text.replace(marker, report + "\n" + marker, 1)
else:
    text = text.rstrip("\n") + "\n\n" + report + "\n" + marker + "\n"
open(docs, "w").write(text)
PY
  bench_say "bench: inserted into docs/benchmarks.md"
}

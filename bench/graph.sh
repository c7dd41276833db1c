#!/usr/bin/env bash
# Link-graph ingest and query latencies against PostgreSQL on the same data.
#
#   ./seo bench graph            (builds first)
#   bash bench/graph.sh          (after ./seo build release)
#
# graph-bench writes a synthetic crawl (domain vertices, edges, ranks and a
# WAT file of URL-level links); seo-ingest indexes it under /usr/bin/time,
# with the default --mem-mb and again with BENCH_MEM_MB (the same index,
# byte for byte, in bounded memory); graph-bench dump writes what the index
# serves (per-domain facts, URL-level links, captures) through the library;
# that and the crawl's vertices, edges and ranks are loaded into a fresh
# database seo_graph_bench on the server of `./seo pg` with its best
# indexes; then graph-bench times every graph query on the library and as
# SQL for a heavy, a 100k-linker, a median and an empty domain and the
# heavy/100k pair, failing when an SQL answer differs from the library's,
# and again for BENCH_COMPUTED_TARGETS on PostgreSQL's second baseline
# (the issue's: its answers computed at query time, no aggregate table);
# then svc-graph serves the index and the gateway fronts it (svc-account in
# that database, on free ports, the rate limit off) and graph-bench times
# the same queries over gRPC and over HTTP/1.1 keep-alive, and under load
# (BENCH_LOAD_CONNECTIONS at once) through the gateway, billed, beside the
# same questions on PostgreSQL (on both baselines for
# BENCH_COMPUTED_TARGETS), the issue 14 targets judged; every row of
# the service, the gateway and PostgreSQL is timed beside its transport's
# null round trip (a null call before each of the query's calls), and its
# work is its latency minus that null. Prints Markdown tables;
# docs/benchmarks.md describes the method.
#
# Environment:
#   BENCH_DOMAINS      domains of the synthetic crawl (default 1000000)
#   BENCH_EDGES        domain edges asked for (default 50000000)
#   BENCH_MEM_MB       --mem-mb of the second ingest (default 256)
#   BENCH_REPS         timed runs per query and domain (default 200)
#   BENCH_BUDGET_MS    time after which a query stops early (default 5000)
#   BENCH_LOAD_CONNECTIONS  connection counts of the load tables (default
#                      "16 64"; "" for none)
#   BENCH_LOAD_SECONDS seconds of each load row and side (default 5)
#   BENCH_LOAD_TARGETS the domains of the load tables (default "heavy 100k
#                      median empty heavy+100k")
#   BENCH_COMPUTED_TARGETS the domains also timed (alone and under load)
#                      on PostgreSQL's computed baseline (default "heavy";
#                      "" for none)
#   BENCH_WRITE_DOCS=1 also inserts the table into docs/benchmarks.md
#   BENCH_KEEP_TMP=1   keeps the temporary directory (crawl, index, logs)
#   BENCH_KEEP_DB=1    keeps the database
#   BENCH_BIN          directory of the binaries (default build/bin)
#   BENCH_GRAPH_DIR    keeps the crawl and the index there and reuses them
#                      on the next run with the same BENCH_DOMAINS and
#                      BENCH_EDGES while graph-bench (the crawl) and
#                      seo-ingest (the index) are not rebuilt (the ingest
#                      figures are those of the run that built it)
set -euo pipefail

. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

DOMAINS=${BENCH_DOMAINS:-1000000}
EDGES=${BENCH_EDGES:-50000000}
MEM_MB=${BENCH_MEM_MB:-256}
REPS=${BENCH_REPS:-200}
BUDGET_MS=${BENCH_BUDGET_MS:-5000}
LOAD_CONNECTIONS=${BENCH_LOAD_CONNECTIONS-16 64}
LOAD_SECONDS=${BENCH_LOAD_SECONDS:-5}
LOAD_TARGETS=${BENCH_LOAD_TARGETS:-heavy 100k median empty heavy+100k}
COMPUTED_TARGETS=${BENCH_COMPUTED_TARGETS-heavy}
# The full release the ingest rate is projected to.
FULL_DOMAINS=134000000
FULL_EDGES=5400000000

for v in DOMAINS EDGES MEM_MB REPS BUDGET_MS LOAD_SECONDS; do
  [[ "${!v}" =~ ^[1-9][0-9]*$ ]] || bench_die "BENCH_$v must be a positive integer"
done
for c in $LOAD_CONNECTIONS; do
  [[ "$c" =~ ^[1-9][0-9]*$ ]] || bench_die "BENCH_LOAD_CONNECTIONS: '$c' is not a positive integer"
done
for l in $LOAD_TARGETS; do
  [[ " heavy 100k median empty heavy+100k " == *" $l "* ]] \
    || bench_die "BENCH_LOAD_TARGETS: '$l' is not one of heavy 100k median empty heavy+100k"
done
for l in $COMPUTED_TARGETS; do
  [[ " heavy 100k median empty " == *" $l "* ]] \
    || bench_die "BENCH_COMPUTED_TARGETS: '$l' is not one of heavy 100k median empty"
done

bench_need_cmd python3 curl /usr/bin/time
bench_need_bin graph-bench seo-ingest svc-graph svc-account gateway seoctl
cd "$BENCH_ROOT"

# The source tree's technology rules, wherever BENCH_BIN points.
export SEO_TECH_RULES=${SEO_TECH_RULES:-$BENCH_ROOT/data/tech/rules.json}

bench_traps
bench_tmpdir
# Where the crawl, the index and the figures of building them live: the
# temporary directory, or BENCH_GRAPH_DIR to keep them for the next run.
store=${BENCH_GRAPH_DIR:-$BENCH_TMP}
mkdir -p "$store"
crawl="$store/crawl"
index="$store/index"
if [ -n "${BENCH_GRAPH_DIR:-}" ] && [ -f "$store/params" ] &&
  [ "$(cat "$store/params")" != "$DOMAINS $EDGES" ]; then
  bench_die "$store holds a crawl of $(cat "$store/params") (domains edges), not $DOMAINS $EDGES: remove it or set BENCH_GRAPH_DIR elsewhere"
fi

# ---- the crawl and our index --------------------------------------------------
# A crawl is reused only if graph-bench (the generator) has not been rebuilt
# since: a newer one may write another crawl.
if [ -f "$store/synth.time" ] && [ "$store/synth.time" -nt "$BENCH_BIN/graph-bench" ]; then
  bench_say "bench: reusing the synthetic crawl of $store"
else
  bench_say "bench: writing a synthetic crawl: $DOMAINS domains, $EDGES edges"
  rm -rf "$crawl" "$index" "$store/ingest.json" "$store/ingest.time" "$store/ingest-mem.time"
  echo "$DOMAINS $EDGES" >"$store/params"
  bench_time "$BENCH_TMP/log/synth.time" "$BENCH_BIN/graph-bench" synth --out "$crawl" \
    --domains "$DOMAINS" --edges "$EDGES" >"$BENCH_TMP/log/synth.log" 2>&1 \
    || { cat "$BENCH_TMP/log/synth.log" >&2; bench_die "graph-bench synth failed"; }
  cp "$BENCH_TMP/log/synth.time" "$store/synth.time"
fi

# An index (and its figures) is reused only if seo-ingest has not been
# rebuilt since: a newer one may write another format or other figures.
if [ -f "$store/ingest.time" ] && [ -f "$index/manifest.json" ] &&
  [ "$store/ingest.time" -nt "$BENCH_BIN/seo-ingest" ]; then
  bench_say "bench: reusing the index of $store"
else
  bench_say "bench: seo-ingest"
  rm -rf "$index" "$store/ingest-mem.time"
  bench_time "$BENCH_TMP/log/ingest.time" "$BENCH_BIN/seo-ingest" --out "$index" --release synthetic \
    --domain-vertices "$crawl/domain-vertices.txt" --domain-edges "$crawl/domain-edges.txt" \
    --domain-ranks "$crawl/domain-ranks.txt" --wat "$crawl/synth.warc.wat.gz" \
    >"$BENCH_TMP/ingest.json.new" 2>"$BENCH_TMP/log/ingest.log" \
    || { tail -20 "$BENCH_TMP/log/ingest.log" >&2; bench_die "seo-ingest failed"; }
  mv "$BENCH_TMP/ingest.json.new" "$store/ingest.json"
  cp "$BENCH_TMP/log/ingest.time" "$store/ingest.time"
fi
read -r n_domains n_edges n_links bpe ingest_s index_bytes < <(python3 -c '
import json, sys
j = json.load(open(sys.argv[1]))
print(j["domains"], j["domain_edges"], j["links"], j["bytes_per_edge"], j["seconds"], j["index_bytes"])
' "$store/ingest.json")
read -r ingest_wall ingest_cpu ingest_rss_kb < <(bench_time_figures "$store/ingest.time")
read -r synth_wall _ _ < <(bench_time_figures "$store/synth.time")

# The same crawl within BENCH_MEM_MB: its peak memory, and the index it
# writes compared with the first one.
if [ -f "$store/ingest-mem.time" ] && [ "$(cat "$store/ingest-mem.params" 2>/dev/null)" = "$MEM_MB" ] &&
  [ "$store/ingest-mem.time" -nt "$BENCH_BIN/seo-ingest" ]; then
  bench_say "bench: reusing the --mem-mb $MEM_MB figures of $store"
else
  bench_say "bench: seo-ingest --mem-mb $MEM_MB"
  rm -rf "$BENCH_TMP/index-mem"
  bench_time "$BENCH_TMP/log/ingest-mem.time" "$BENCH_BIN/seo-ingest" --out "$BENCH_TMP/index-mem" \
    --release synthetic --domain-vertices "$crawl/domain-vertices.txt" \
    --domain-edges "$crawl/domain-edges.txt" --domain-ranks "$crawl/domain-ranks.txt" \
    --wat "$crawl/synth.warc.wat.gz" --mem-mb "$MEM_MB" \
    >/dev/null 2>"$BENCH_TMP/log/ingest-mem.log" \
    || { tail -20 "$BENCH_TMP/log/ingest-mem.log" >&2; bench_die "seo-ingest --mem-mb $MEM_MB failed"; }
  if diff -r -q "$index" "$BENCH_TMP/index-mem" >/dev/null; then
    echo "the same index, byte for byte" >"$store/ingest-mem.same"
  else
    echo "**another index**" >"$store/ingest-mem.same"
  fi
  rm -rf "$BENCH_TMP/index-mem"
  echo "$MEM_MB" >"$store/ingest-mem.params"
  cp "$BENCH_TMP/log/ingest-mem.time" "$store/ingest-mem.time"
fi
read -r mem_wall mem_cpu mem_rss_kb < <(bench_time_figures "$store/ingest-mem.time")
# Full speed wants resident what is read at random: three u32 columns per
# domain at once and one name in 32 of the vertices file (with its two
# offsets); the edges are sorted runs on disk.
dom_bytes=$(awk -v s="$(stat -c %s "$index/domrev.str")" -v n="$n_domains" \
  'BEGIN { printf "%.1f", 12 + (s / n + 12) / 32 }')

# ---- the domains measured -------------------------------------------------------
# domain-ranks.txt lists the linked domains by in-degree (harmonicc_val is
# 1e5 times it): the heaviest first; the "100k" one is the other domain
# closest to 100,000 referring domains; the median of all domains by
# in-degree is its line n/2 when more than half are linked, else an empty
# one.
ranks="$crawl/domain-ranks.txt"
fwd() { awk -v s="$1" 'BEGIN { n = split(s, a, "."); o = a[n]; for (i = n - 1; i >= 1; i--) o = o "." a[i]; print o }'; }
rank_line() { awk -F'\t' -v n="$1" 'NR == n + 1 { printf "%s %.0f\n", $5, $2 / 1e5; exit }' "$ranks"; }
read -r heavy heavy_rd < <(rank_line 1)
read -r near100k near100k_rd < <(awk -F'\t' 'NR > 2 { d = $2 / 1e5 - 100000; if (d < 0) d = -d
  if (best == "" || d < best) { best = d; name = $5; rd = $2 / 1e5 } } END { printf "%s %.0f\n", name, rd }' "$ranks")
median=$(rank_line $((n_domains / 2)) || true)
read -r median median_rd <<<"${median:-- 0}"
empty=$(awk -F'\t' 'NR == FNR { if (FNR > 1) r[$5] = 1; next } !($2 in r) { print $2; exit }' "$ranks" "$crawl/domain-vertices.txt")
[ "$median" != - ] || median=$empty
# The two-domain queries ask about the heavy domain and the 100k one.
targets=("heavy=$(fwd "$heavy")" "100k=$(fwd "$near100k")" "median=$(fwd "$median")" "empty=$(fwd "$empty")"
  "heavy+100k=$(fwd "$heavy"),$(fwd "$near100k")")
declare -A referrers=([heavy]=$heavy_rd [100k]=$near100k_rd [median]=$median_rd [empty]=0
  [heavy+100k]="$heavy_rd, $near100k_rd")

# ---- what the index serves, for PostgreSQL --------------------------------------
bench_say "bench: graph-bench dump"
dump="$BENCH_TMP/dump"
bench_time "$BENCH_TMP/log/dump.time" "$BENCH_BIN/graph-bench" dump --index "$index" \
  --vertices "$crawl/domain-vertices.txt" --out "$dump" >"$BENCH_TMP/dump.json" 2>"$BENCH_TMP/log/dump.log" \
  || { tail -20 "$BENCH_TMP/log/dump.log" >&2; bench_die "graph-bench dump failed"; }
read -r dump_links dump_urls dump_captures < <(python3 -c '
import json, sys
j = json.load(open(sys.argv[1]))
print(j["links"], j["urls"], j["captures"])
' "$BENCH_TMP/dump.json")
[ "$dump_links" = "$n_links" ] || bench_die "graph-bench dump wrote $dump_links links, the index holds $n_links"
read -r dump_wall _ _ < <(bench_time_figures "$BENCH_TMP/log/dump.time")

# ---- PostgreSQL -------------------------------------------------------------------
bench_need_cmd psql
bench_pg
bench_pg_db "$BENCH_PG_URL" seo_graph_bench
# Every statement here is short: compiling it (JIT, on by default above a
# plan cost that the 1M tables reach) or starting a parallel worker for it
# would cost more than running it, 25 to 40 ms a statement; and one query
# takes one core on both sides.
psql "$BENCH_DB_URL" -X -q -c "ALTER DATABASE seo_graph_bench SET jit = off" \
  -c "ALTER DATABASE seo_graph_bench SET max_parallel_workers_per_gather = 0" >/dev/null \
  || bench_die "could not turn JIT and parallel workers off for seo_graph_bench"
bench_say "bench: loading PostgreSQL"
pg_t0=$(date +%s.%N)
psql "$BENCH_DB_URL" -X -q -v ON_ERROR_STOP=1 >"$BENCH_TMP/log/pg-load.log" 2>&1 <<SQL \
  || { tail -20 "$BENCH_TMP/log/pg-load.log" >&2; bench_die "loading PostgreSQL failed"; }
SET maintenance_work_mem = '1GB';
SET max_parallel_maintenance_workers = 1;
SET work_mem = '256MB';
-- the crawl's own files, as seo-ingest read them
CREATE TABLE vertices (id int NOT NULL, rev text NOT NULL, n_hosts int NOT NULL);
CREATE TABLE raw_edges (src int NOT NULL, dst int NOT NULL);
CREATE TABLE ranks (hc_pos bigint NOT NULL, hc_val float8, pr_pos bigint, pr_val float8,
  rev text NOT NULL, n_hosts int);
\copy vertices FROM '$crawl/domain-vertices.txt'
\copy raw_edges FROM '$crawl/domain-edges.txt'
\copy ranks FROM '$crawl/domain-ranks.txt' WITH (HEADER true)
-- what the index serves, through the library (graph-bench dump)
CREATE TABLE facts (id int NOT NULL, name text NOT NULL, hosts int NOT NULL,
  score smallint NOT NULL, tranco int, registered date, registrar text,
  first_seen bigint NOT NULL, last_seen bigint NOT NULL, total_urls int NOT NULL);
CREATE TABLE raw_links (dst int NOT NULL, seq int NOT NULL, src int NOT NULL,
  from_url int NOT NULL, to_url int NOT NULL, anchor int, rel text,
  link_type text NOT NULL, crawled_at bigint NOT NULL);
CREATE TABLE urls (id int NOT NULL, url text COLLATE "C" NOT NULL);
CREATE TABLE anchors (id int NOT NULL, anchor text COLLATE "C" NOT NULL);
CREATE TABLE captures (dom int NOT NULL, url text COLLATE "C" NOT NULL,
  status smallint NOT NULL, mime text, crawled_at bigint NOT NULL);
CREATE TABLE status (dom int NOT NULL, status smallint NOT NULL, n int NOT NULL);
-- the heaviest domains' similar domains, stored as our index stores them
CREATE TABLE sim_top (dom int NOT NULL, pos int NOT NULL, sim int NOT NULL,
  shared int NOT NULL);
CREATE TABLE sim_total (dom int NOT NULL, total bigint NOT NULL);
\copy facts FROM '$dump/facts.tsv'
\copy raw_links FROM '$dump/links.tsv'
\copy urls FROM '$dump/urls.tsv'
\copy anchors FROM '$dump/anchors.tsv'
\copy captures FROM '$dump/captures.tsv'
\copy status FROM '$dump/status.tsv'
\copy sim_top FROM '$dump/similar.tsv'
\copy sim_total FROM '$dump/simtotal.tsv'
ALTER TABLE urls ADD PRIMARY KEY (id);
ALTER TABLE anchors ADD PRIMARY KEY (id);
-- statistics before the tables below are derived: planned without them,
-- the joins take nested loops over materialised rows (half an hour at 1M)
ANALYZE vertices, raw_edges, ranks, facts, raw_links, urls, anchors;
-- the per-domain aggregates our index precomputes (anchortext.bin,
-- pages.bin, outl.bin), computed here from the links
CREATE TABLE anchor_agg AS
  SELECT l.dst, a.anchor, count(*)::int AS links, count(DISTINCT l.src)::int AS domains
  FROM raw_links l JOIN anchors a ON a.id = l.anchor GROUP BY l.dst, a.anchor;
CREATE TABLE page_agg AS
  SELECT l.dst, u.url, count(*)::int AS links, count(DISTINCT l.src)::int AS domains
  FROM raw_links l JOIN urls u ON u.id = l.to_url GROUP BY l.dst, u.url;
CREATE TABLE out_agg AS
  SELECT src, dst, to_url, anchor, link_type, count(*)::int AS n
  FROM raw_links GROUP BY src, dst, to_url, anchor, link_type;
ANALYZE anchor_agg, page_agg, out_agg;
-- one row per domain with the figures our domains.bin precomputes, the
-- importance position (rank) included
CREATE TABLE dom AS
WITH i AS (SELECT e.dst AS id, count(*) AS rd, sum(f.hosts) AS hosts_sum
           FROM raw_edges e JOIN facts f ON f.id = e.src GROUP BY e.dst),
     o AS (SELECT src AS id, count(*) AS outd FROM raw_edges GROUP BY src),
     li AS (SELECT dst AS id, count(DISTINCT src) AS url_referrers, count(*) AS inbound_links
            FROM raw_links GROUP BY dst),
     lo AS (SELECT DISTINCT ON (src) src AS id, dst AS top_out, n AS top_out_links,
              sum(n) OVER (PARTITION BY src) AS out_links
            FROM (SELECT src, dst, count(*) AS n FROM raw_links GROUP BY src, dst) p
            ORDER BY src, n DESC, dst),
     na AS (SELECT dst AS id, count(*) AS n FROM anchor_agg GROUP BY dst),
     np AS (SELECT dst AS id, count(*) AS n FROM page_agg GROUP BY dst),
     nb AS (SELECT src AS id, count(*) AS n FROM out_agg GROUP BY src)
SELECT f.id, f.name, f.hosts, f.score, f.tranco, f.registered, f.registrar,
  f.first_seen, f.last_seen, f.total_urls,
  coalesce(i.rd, 0)::int AS rd, coalesce(o.outd, 0)::int AS outd,
  coalesce(i.hosts_sum, 0)::bigint AS hosts_sum,
  coalesce(li.url_referrers, 0)::int AS url_referrers,
  coalesce(li.inbound_links, 0)::int AS inbound_links,
  coalesce(lo.out_links, 0)::int AS out_links, lo.top_out,
  coalesce(lo.top_out_links, 0)::int AS top_out_links,
  coalesce(na.n, 0)::int AS n_anchors, coalesce(np.n, 0)::int AS n_pages,
  coalesce(nb.n, 0)::int AS n_outbound,
  (row_number() OVER (ORDER BY f.score DESC, coalesce(i.rd, 0) DESC,
     coalesce(r.hc_pos, 4294967295), f.id) - 1)::int AS rank
FROM facts f JOIN vertices v USING (id) LEFT JOIN ranks r ON r.rev = v.rev
  LEFT JOIN i USING (id) LEFT JOIN o USING (id) LEFT JOIN li USING (id)
  LEFT JOIN lo USING (id) LEFT JOIN na USING (id) LEFT JOIN np USING (id)
  LEFT JOIN nb USING (id);
ALTER TABLE dom ADD PRIMARY KEY (id);
CREATE UNIQUE INDEX dom_name ON dom (name);
CREATE UNIQUE INDEX dom_rank ON dom (rank);
ANALYZE dom;
CREATE TABLE meta AS SELECT coalesce(max(last_seen), 0) AS as_of FROM dom;
-- the domain graph in importance positions, as our in- and out-lists
CREATE TABLE edges AS
  SELECT s.rank AS src, d.rank AS dst
  FROM raw_edges e JOIN dom s ON s.id = e.src JOIN dom d ON d.id = e.dst;
CREATE INDEX edges_dst_src ON edges (dst, src);
CREATE INDEX edges_src_dst ON edges (src, dst);
-- URL-level links by target, in our order: the source's position, then
-- seq (newest first)
CREATE TABLE links AS
  SELECT l.dst, s.rank AS src_rank, l.seq, l.from_url, l.to_url, l.anchor, l.rel,
    l.link_type, l.crawled_at
  FROM raw_links l JOIN dom s ON s.id = l.src;
CREATE INDEX links_dst ON links (dst, src_rank, seq)
  INCLUDE (from_url, to_url, anchor, rel, link_type, crawled_at);
-- for the computed baseline: a source's links in out_agg's grouping
-- order, read index-only (outbound-links, link-audit's summary)
CREATE INDEX links_src ON links (src_rank, dst, to_url, anchor, link_type);
-- and the referrers' host counts summed index-only (domain-rank)
CREATE INDEX dom_rank_hosts ON dom (rank) INCLUDE (hosts);
CREATE INDEX anchor_agg_order ON anchor_agg (dst, domains DESC, links DESC, anchor);
CREATE INDEX page_agg_order ON page_agg (dst, domains DESC, links DESC, url);
CREATE INDEX out_agg_order ON out_agg (src, n DESC, dst, to_url, anchor, link_type);
CREATE UNIQUE INDEX captures_dom_url ON captures (dom, url) INCLUDE (status, mime, crawled_at);
ALTER TABLE status ADD PRIMARY KEY (dom, status);
ALTER TABLE sim_top ADD PRIMARY KEY (dom, pos);
ALTER TABLE sim_total ADD PRIMARY KEY (dom);
DROP TABLE raw_edges, raw_links, facts, vertices, ranks;
VACUUM ANALYZE;
-- the load's dirty pages written now, not by a checkpoint during timing
CHECKPOINT;
SQL
pg_load_s=$(awk -v a="$pg_t0" -v b="$(date +%s.%N)" 'BEGIN { printf "%.1f", b - a }')
# The links table as the strict baseline has it: the computed baseline's
# own indexes counted apart.
read -r pg_edge_bytes pg_link_bytes pg_url_bytes pg_computed_bytes < <(psql "$BENCH_DB_URL" -X -A -t -F ' ' -c "
  SELECT pg_total_relation_size('edges'),
    pg_total_relation_size('links') - pg_relation_size('links_src'),
    pg_total_relation_size('links') - pg_relation_size('links_src')
    + pg_total_relation_size('urls')
    + pg_total_relation_size('anchors') + pg_total_relation_size('anchor_agg')
    + pg_total_relation_size('page_agg') + pg_total_relation_size('out_agg'),
    pg_relation_size('links_src') + pg_relation_size('dom_rank_hosts')")

# ---- queries ------------------------------------------------------------------------
bench_say "bench: timing the queries ($REPS runs each, at most ${BUDGET_MS} ms per query and side; SQL answers checked)"
"$BENCH_BIN/graph-bench" query --index "$index" --pg "$BENCH_DB_URL" --reps "$REPS" \
  --budget-ms "$BUDGET_MS" "${targets[@]}" >"$BENCH_TMP/queries.tsv" 2>"$BENCH_TMP/log/query.log" \
  || { cat "$BENCH_TMP/log/query.log" >&2; bench_die "graph-bench query failed"; }

# The computed baseline's own statements, for the domains asked, their
# answers checked against the library's alike.
computed_targets=()
for t in "${targets[@]}"; do
  [[ " $COMPUTED_TARGETS " == *" ${t%%=*} "* ]] && computed_targets+=("$t")
done
: >"$BENCH_TMP/computed.tsv"
if [ ${#computed_targets[@]} -gt 0 ]; then
  bench_say "bench: timing the computed baseline's statements (${COMPUTED_TARGETS}; SQL answers checked)"
  "$BENCH_BIN/graph-bench" query --index "$index" --pg "$BENCH_DB_URL" --baseline computed \
    --reps "$REPS" --budget-ms "$BUDGET_MS" "${computed_targets[@]}" >"$BENCH_TMP/computed.tsv" \
    2>"$BENCH_TMP/log/computed.log" \
    || { cat "$BENCH_TMP/log/computed.log" >&2; bench_die "graph-bench query --baseline computed failed"; }
fi

# ---- the service and the gateway ----------------------------------------------------
# Every address on a free port, the services the graph routes do not use
# included, so that nothing of another stack is reached.
registry=$(bench_registry) || bench_die "seoctl services failed"
read -r -a ports < <(bench_free_ports $(($(wc -l <<<"$registry") + 1)))
export SEO_HTTP_ADDR="127.0.0.1:${ports[0]}"
i=1
while read -r _ env _; do
  export "$env=127.0.0.1:${ports[$i]}"
  i=$((i + 1))
done <<<"$registry"
export SEO_PG_URL="$BENCH_DB_URL"
export SEO_DATA_DIR="$index"
export SEO_RATE_LIMIT_PER_MIN=0
export SEO_LOG_LEVEL=warn
export SEO_MIGRATIONS_DIR=${SEO_MIGRATIONS_DIR:-$BENCH_ROOT/svc-account/migrations}
"$BENCH_BIN/seoctl" migrate >"$BENCH_TMP/log/migrate.log" 2>&1 \
  || { cat "$BENCH_TMP/log/migrate.log" >&2; bench_die "seoctl migrate failed"; }
"$BENCH_BIN/seoctl" workspace create --name Bench --email bench@example.com \
  --credits 1000000000 >"$BENCH_TMP/workspace.json" 2>"$BENCH_TMP/log/seoctl.log" \
  || { cat "$BENCH_TMP/log/seoctl.log" >&2; bench_die "seoctl workspace create failed"; }
key=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["api_key"])' "$BENCH_TMP/workspace.json") \
  || bench_die "seoctl printed no api_key: $(cat "$BENCH_TMP/workspace.json")"
bench_start svc-graph "$BENCH_BIN/svc-graph"
bench_start svc-account "$BENCH_BIN/svc-account"
bench_start gateway "$BENCH_BIN/gateway"
# Ready when a billed graph route answers: key, credits and index in place.
probe="http://$SEO_HTTP_ADDR/v1/domain-rank?domain=$(fwd "$heavy")"
for ((i = 0; i < 300; i++)); do
  code=$(curl -s -o /dev/null -w '%{http_code}' --max-time 2 -H "X-API-Key: $key" "$probe") || true
  [ "$code" = 200 ] && break
  sleep 0.2
done
bench_check_alive
[ "$code" = 200 ] || { bench_logs; bench_die "GET $probe answered $code instead of 200 after 60 s"; }

bench_say "bench: timing the queries at svc-graph (gRPC) and through the gateway (HTTP/1.1)"
"$BENCH_BIN/graph-bench" grpc --addr "$SEO_GRAPH_ADDR" --reps "$REPS" --budget-ms "$BUDGET_MS" \
  "${targets[@]}" >"$BENCH_TMP/grpc.tsv" 2>"$BENCH_TMP/log/grpc.log" \
  || { cat "$BENCH_TMP/log/grpc.log" >&2; bench_logs; bench_die "graph-bench grpc failed"; }
"$BENCH_BIN/graph-bench" http --addr "$SEO_HTTP_ADDR" --key "$key" --reps "$REPS" --budget-ms "$BUDGET_MS" \
  "${targets[@]}" >"$BENCH_TMP/http.tsv" 2>"$BENCH_TMP/log/http.log" \
  || { cat "$BENCH_TMP/log/http.log" >&2; bench_logs; bench_die "graph-bench http failed"; }
# Under load: each connection count, each row through the gateway then
# on PostgreSQL, in the same minute.
load_targets=()
for t in "${targets[@]}"; do
  [[ " $LOAD_TARGETS " == *" ${t%%=*} "* ]] && load_targets+=("$t")
done
for c in $LOAD_CONNECTIONS; do
  bench_say "bench: $c connections at once, ${LOAD_SECONDS} s a row and side, through the gateway and on PostgreSQL"
  "$BENCH_BIN/graph-bench" load --pg "$BENCH_DB_URL" --addr "$SEO_HTTP_ADDR" --key "$key" \
    --conns "$c" --seconds "$LOAD_SECONDS" --computed "$(echo $COMPUTED_TARGETS | tr ' ' ,)" \
    "${load_targets[@]}" >"$BENCH_TMP/load-$c.tsv" \
    2>"$BENCH_TMP/log/load-$c.log" \
    || { cat "$BENCH_TMP/log/load-$c.log" >&2; bench_logs; bench_die "graph-bench load failed"; }
  bench_check_alive
done
# One line per (domain, query) in the same order on every side: label,
# query, total, library p50 p99, PostgreSQL p50 p99 and its null's p50
# p99 (queries.tsv); label, query, service p50 p99, null p50 p99
# (grpc.tsv); the same for the gateway (http.tsv).
paste "$BENCH_TMP/queries.tsv" "$BENCH_TMP/grpc.tsv" "$BENCH_TMP/http.tsv" >"$BENCH_TMP/all.tsv"
awk -F'\t' '$1 != $10 || $2 != $11 || $1 != $16 || $2 != $17 || NF != 21 { exit 1 }' "$BENCH_TMP/all.tsv" \
  || bench_die "the library, gRPC and HTTP timings do not line up"

# ---- report -------------------------------------------------------------------------
fmt_us() { awk -v v="$1" 'BEGIN { if (v == "-") print "-"; else if (v >= 1000) printf "%.1f ms", v / 1000; else printf "%.1f us", v }'; }
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { if (a == "-" || b == "-" || b <= 0) print "-"; else printf "%.2g", a / b }'; }
# A latency minus its row's null round trip (p50), at least 0.
work() { awk -v v="$1" -v z="$2" 'BEGIN { if (v == "-" || z == "-") print "-"; else printf "%.1f", (v > z ? v - z : 0) }'; }
row_name() { if [ "$1" = null ]; then echo -; else echo "$1 (${referrers[$1]})"; fi; }
# A null's p50 and p99 in one cell.
fmt_null() { if [ "$1" = - ]; then echo -; else echo "$(fmt_us "$1") / $(fmt_us "$2")"; fi; }
# The p50s of the nulls timed beside the rows in column $1 of all.tsv:
# "lowest to highest (median M)".
null_range() {
  awk -F'\t' -v c="$1" '$1 != "null" && $c != "-" { print $c }' "$BENCH_TMP/all.tsv" | sort -g |
    awk '{ v[NR] = $1 } END { if (!NR) { print "-"; exit }
      printf "%.1f to %.1f us (median %.1f us)\n", v[1], v[NR], v[int((NR + 1) / 2)] }'
}
# The null round trips timed alone before the first row: svc-graph's
# health check, the gateway's 404, SELECT 1.
read -r null_s50 null_s99 null_g50 null_g99 null_p50 null_p99 < <(awk -F'\t' '$1 == "null" { print $12, $13, $18, $19, $6, $7 }' "$BENCH_TMP/all.tsv")
rate=$(awk -v e="$n_edges" -v s="$ingest_wall" 'BEGIN { printf "%.0f", e / s }')
proj_h=$(awk -v r="$rate" -v e="$FULL_EDGES" 'BEGIN { printf "%.1f", e / r / 3600 }')
report="$BENCH_TMP/report.md"
{
  echo "#### graph, $(date -u '+%Y-%m-%d %H:%M UTC')"
  echo
  echo "Machine: $(bench_machine). Synthetic crawl: $n_domains domains, $n_edges domain edges, $n_links URL-level links (written in ${synth_wall} s)."
  echo
  echo "| ingest | |"
  echo "|---|---|"
  echo "| wall time | ${ingest_wall} s (${ingest_cpu} s CPU) |"
  echo "| rate | $rate domain edges/s |"
  echo "| peak memory (ru_maxrss) | $((ingest_rss_kb / 1024)) MiB (--mem-mb 2048, the default) |"
  echo "| with --mem-mb $MEM_MB | $((mem_rss_kb / 1024)) MiB peak, ${mem_wall} s (${mem_cpu} s CPU); $(cat "$store/ingest-mem.same") |"
  echo "| index | $index_bytes bytes; $bpe bytes per domain edge |"
  echo "| graph-bench dump (what the index serves, through the library) | ${dump_wall} s; $dump_links links, $dump_urls URLs, $dump_captures captured URLs |"
  echo "| PostgreSQL load, indexes, aggregates | ${pg_load_s} s; edges table with its two indexes $(awk -v b="$pg_edge_bytes" -v e="$n_edges" 'BEGIN { printf "%.1f", b / e }') bytes per edge; links table with its index $(awk -v b="$pg_link_bytes" -v e="$n_links" 'BEGIN { printf "%.1f", b / e }') bytes per link, $(awk -v b="$pg_url_bytes" -v e="$n_links" 'BEGIN { printf "%.1f", b / e }') with urls, anchors and the three aggregates; the computed baseline's two indexes (links_src, dom_rank_hosts) $pg_computed_bytes bytes more |"
  echo "| projected full release ($FULL_DOMAINS domains, $FULL_EDGES edges) | $proj_h h at the measured rate |"
  echo "| projected full-release memory | $(awk -v b="$dom_bytes" -v n="$FULL_DOMAINS" 'BEGIN { printf "%.1f", b * n / 2^30 }') GiB resident for full speed: $dom_bytes bytes a domain (rank columns, name index), none an edge (sorted runs on disk); all within --mem-mb, of which 4096 leaves the sorts $(awk -v b="$dom_bytes" -v n="$FULL_DOMAINS" 'BEGIN { printf "%.1f", 4 - b * n / 2^30 }') GiB |"
  echo
  echo "Latency, first page of 100 rows, one request at a time: on the library (graph-bench, one thread, index in the page cache), at svc-graph over gRPC (one HTTP/2 connection), through the gateway over HTTP/1.1 (one keep-alive connection, API key, credits debited), and of the same question as prepared SQL statements (libpq; every answer checked equal to the library's); the ratio is library / PostgreSQL. Each row of the service, the gateway and PostgreSQL is timed beside its transport's null round trip, the calls alternated (a null call before each of the query's calls, warm-up included), and the null's p50 / p99 is printed beside it: svc-graph's gRPC health check, a \`GET\` the gateway answers 404 from its route table (no service asked), and \`SELECT 1\`. The rows' nulls (p50) ranged from $(null_range 14) at the service, $(null_range 20) at the gateway and $(null_range 8) on PostgreSQL. The row \`null round trip\` is each null timed alone, before the first row:"
  echo
  echo "| domain (referring domains) | query | total | library p50 | library p99 | service p50 | service p99 | service null p50 / p99 | gateway p50 | gateway p99 | gateway null p50 / p99 | PostgreSQL p50 | PostgreSQL p99 | PostgreSQL null p50 / p99 | ratio p50 | ratio p99 |"
  echo "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|"
  while IFS=$'\t' read -r label q total o50 o99 p50 p99 pn50 pn99 _ _ s50 s99 sn50 sn99 _ _ g50 g99 gn50 gn99; do
    printf '| %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s |\n' \
      "$(row_name "$label")" "$q" "$total" "$(fmt_us "$o50")" "$(fmt_us "$o99")" \
      "$(fmt_us "$s50")" "$(fmt_us "$s99")" "$(fmt_null "$sn50" "$sn99")" \
      "$(fmt_us "$g50")" "$(fmt_us "$g99")" "$(fmt_null "$gn50" "$gn99")" \
      "$(fmt_us "$p50")" "$(fmt_us "$p99")" "$(fmt_null "$pn50" "$pn99")" \
      "$(ratio "$o50" "$p50")" "$(ratio "$o99" "$p99")"
  done <"$BENCH_TMP/all.tsv"
  echo
  echo "The same latencies as ratios ours / PostgreSQL at the service and through the gateway, and the work of the service, of PostgreSQL and of the gateway: each latency, p50 and p99, minus the p50 of the null timed beside it in its row (the p99 too: a null's p99 is mostly scheduling noise), at least 0; the work ratio is service work / PostgreSQL work. The gateway's work is what a call costs beyond its HTTP round trip: authorisation and the debit through svc-account, and the call to svc-graph with its round trip. Timed alone before the first row, the nulls were $(fmt_null "$null_s50" "$null_s99") (p50 / p99) at the service, $(fmt_null "$null_g50" "$null_g99") at the gateway and $(fmt_null "$null_p50" "$null_p99") on PostgreSQL:"
  echo
  echo "| domain (referring domains) | query | service / PostgreSQL p50 | service / PostgreSQL p99 | gateway / PostgreSQL p50 | gateway / PostgreSQL p99 | service work p50 | PostgreSQL work p50 | work ratio p50 | service work p99 | PostgreSQL work p99 | work ratio p99 | gateway work p50 | gateway work p99 |"
  echo "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|"
  while IFS=$'\t' read -r label q _ _ _ p50 p99 pn50 _ _ _ s50 s99 sn50 _ _ _ g50 g99 gn50 _; do
    [ "$label" != null ] && [ "$p50" != - ] || continue
    sw50=$(work "$s50" "$sn50") pw50=$(work "$p50" "$pn50") gw50=$(work "$g50" "$gn50")
    sw99=$(work "$s99" "$sn50") pw99=$(work "$p99" "$pn50") gw99=$(work "$g99" "$gn50")
    printf '| %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s |\n' "$(row_name "$label")" "$q" \
      "$(ratio "$s50" "$p50")" "$(ratio "$s99" "$p99")" "$(ratio "$g50" "$p50")" "$(ratio "$g99" "$p99")" \
      "$(fmt_us "$sw50")" "$(fmt_us "$pw50")" "$(ratio "$sw50" "$pw50")" \
      "$(fmt_us "$sw99")" "$(fmt_us "$pw99")" "$(ratio "$sw99" "$pw99")" \
      "$(fmt_us "$gw50")" "$(fmt_us "$gw99")"
  done <"$BENCH_TMP/all.tsv"
  if [ -s "$BENCH_TMP/computed.tsv" ]; then
    echo
    echo "PostgreSQL's computed baseline (issue 14's measurement: its best indexes over the base tables, no materialised answer), one request at a time, for ${COMPUTED_TARGETS}: the rows whose strict statements read a precomputed aggregate (anchor_agg, page_agg, out_agg, dom's counts) timed again with statements that compute the same answer at query time from edges, links, urls, anchors and dom's own columns, every first answer checked equal to the library's; the library timed again beside them; the ratio is library / PostgreSQL computed; the strict p50 is the first table's. The other rows have one statement serving both baselines:"
    echo
    echo "| domain (referring domains) | query | total | library p50 | library p99 | PostgreSQL computed p50 | PostgreSQL computed p99 | PostgreSQL null p50 / p99 | ratio p50 | ratio p99 | PostgreSQL strict p50 |"
    echo "|---|---|---|---|---|---|---|---|---|---|---|"
    while IFS=$'\t' read -r label q total o50 o99 p50 p99 pn50 pn99; do
      strict=$(awk -F'\t' -v l="$label" -v q="$q" '$1 == l && $2 == q { print $6; exit }' "$BENCH_TMP/queries.tsv")
      printf '| %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s |\n' \
        "$(row_name "$label")" "$q" "$total" "$(fmt_us "$o50")" "$(fmt_us "$o99")" \
        "$(fmt_us "$p50")" "$(fmt_us "$p99")" "$(fmt_null "$pn50" "$pn99")" \
        "$(ratio "$o50" "$p50")" "$(ratio "$o99" "$p99")" "$(fmt_us "${strict:--}")"
    done <"$BENCH_TMP/computed.tsv"
  fi
  for c in $LOAD_CONNECTIONS; do
    echo
    echo "Under load, $c connections at once, ${LOAD_SECONDS} s a row and side: graph-bench load, one thread and one connection each, every thread asking again as soon as it has its answer, the row's time cut in three slices alternated between the sides, each figure the median of its side's slices (a stall of the shared machine spoils one slice, not the row); through the gateway over HTTP/1.1 keep-alive with the API key, every call billed (the similar-domains and link-audit rows: svc-graph's cached answer), then PostgreSQL over libpq with prepared statements on the same tables (the computed statement for the cached rows), in the same minute; the ratio is the gateway's requests/s over PostgreSQL's. The columns \`computed\` are PostgreSQL's computed baseline (issue 14's: no aggregate table read; for ${COMPUTED_TARGETS:-no domain}), its own statements timed as a third side of the row's slices, or, marked (same), the strict figures where one statement serves both:"
    echo
    echo "| domain (referring domains) | query | gateway req/s | p50 | p99 | PostgreSQL req/s | p50 | p99 | ratio | computed req/s | computed p50 | computed p99 | computed ratio |"
    echo "|---|---|---|---|---|---|---|---|---|---|---|---|---|"
    while IFS=$'\t' read -r label q g g50 g99 p p50 p99 cr c50 c99 own; do
      mark=""
      [ "$own" = same ] && mark=" (same)"
      printf '| %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s |\n' "$(row_name "$label")" "$q" \
        "$g" "$(fmt_us "$g50")" "$(fmt_us "$g99")" "$p" "$(fmt_us "$p50")" "$(fmt_us "$p99")" "$(ratio "$g" "$p")" \
        "$cr$mark" "$(fmt_us "$c50")" "$(fmt_us "$c99")" "$(ratio "$g" "$cr")"
    done <"$BENCH_TMP/load-$c.tsv"
  done
  if [ -n "$LOAD_CONNECTIONS" ]; then
    echo
    echo "The targets of issue 14 (ratios of requests/s under load, the null round trip left out). Every query at least 0.5x is judged against PostgreSQL's strict baseline (precomputed aggregates), the heaviest domain's median at least 20x against the issue's own, the computed baseline (docs/decisions.md); the median against the strict baseline is shown for reference:"
    echo
    echo "| target | connections | measured | verdict |"
    echo "|---|---|---|---|"
    for c in $LOAD_CONNECTIONS; do
      awk -F'\t' -v c="$c" '$1 != "null" && $6 > 0 { r = $3 / $6
          if (!n++ || r < low) { low = r; at = $1 " " $2 } }
        END { if (n) printf "| every query at least 0.5x PostgreSQL | %s | lowest %.2gx (%s) | %s |\n", c, low, at, (low >= 0.5 ? "PASS" : "FAIL") }' \
        "$BENCH_TMP/load-$c.tsv"
      # column 6: the strict baseline's requests/s, 9: the computed one's
      for col in 6 9; do
        if [ $col = 6 ]; then what="strict baseline (precomputed aggregates), for reference"
        else what="the issue's baseline (computed at query time)"; fi
        awk -F'\t' -v k=$col '$1 == "heavy" && $k != "-" && $k > 0 { print $3 / $k }' "$BENCH_TMP/load-$c.tsv" | sort -g |
          awk -v c="$c" -v what="$what" '{ v[NR] = $1 } END { if (!NR) exit
            m = NR % 2 ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2
            printf "| median of the heaviest domain'"'"'s queries at least 20x PostgreSQL, %s | %s | %.3gx (%d queries) | %s |\n", what, c, m, NR, (m >= 20 ? "PASS" : "FAIL") }'
      done
    done
  fi
} >"$report"
cat "$report"

if [ "${BENCH_WRITE_DOCS:-0}" = 1 ]; then bench_write_docs graph "$report"; fi


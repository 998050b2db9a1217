#!/usr/bin/env bash
# The gateway benchmark: throughput and p99 latency of one trivial upstream (nginx answering 201 with
# one worker of its own; UPSTREAM=java for the JDK server of DemoUpstream) reached
#   (a) directly, (b) through nginx proxy_pass, (c) through the gateway with no route covering POST,
#   (c0) through ProxyFloor, a minimal Netty proxy: the JVM's floor for (c), if BENCH_JAR is built,
#   (c1) through ProxyFloorJetty: the same on Jetty's server and I/O layer as the gateway has them, with
#       an upstream connection of its own in place of Jetty's client,
#   (d) through the gateway on its embedded store, (e) on Redis, (f) on PostgreSQL,
#   (g) replays on the embedded store (each wrk thread cycles through 64 keys: all but the first 64
#       requests are replays), (h) the embedded case while 1,000 slow clients trickle request bodies
#       (trickle.py), with /health probed twice a second meanwhile,
#   (b1, d1, e1, g1) as (b), (d), (e), (g) with one client (wrk -t1 -c1): the latency each adds,
#       as the requests' own latencies (keys.lua, BENCH_LATENCY): wrk's percentiles add synthetic
#       samples for coordinated omission, which with one client multiply every slow request (a
#       p99 of 4.7-5.0 ms where the requests' own was 0.71-0.72 ms, 2026-11-29); the rows with 50
#       clients give wrk's (keys.lua cannot pair a request with its answer across connections),
#       which the correction moves less where the tail lies nearer the mean,
# all in one run, with wrk on loopback. Every POST carries a fresh Idempotency-Key (keys.lua) but in (g).
# Each row also gives the serving process's own CPU time per request (utime+stime from /proc over the
# measured requests; the upstream's for (a), nginx's worker's for (b), the gateway's for the rest),
# and the upstream's; on Redis and PostgreSQL the store server's too; and the serving process's
# context switches per request (its threads' voluntary and involuntary ones: each is a thread that
# stopped, mostly to wait for another's hand-off); and the row against nginx in the same round, as
# issue 33's targets are stated (throughput and CPU as multiples of (b)'s; a one-client row's p50 and
# p99 added over (b1)'s). Before the rounds: the disk's sync time and
# SQLite's own floor for the embedded store's claim+finish (sqlite_floor.py), on the disk the
# embedded store writes to.
#
# Usage (from the repository root, after building the jar):
#   mvn -B -q -pl once-gateway -am package -DskipTests
#   once-bench/gateway/run.sh            # DURATION=10s ROUNDS=3 CONNECTIONS=50 THREADS=2 WARMUP=5s GATEWAY_WARMUP=40s
#   CASES="b c e" JAR=/tmp/other.jar once-bench/gateway/run.sh   # some cases only, another build
#   mvn -B -q -pl once-bench -am package -DskipTests   # for (c0, c1): once-bench/target/benchmarks.jar
#   BASE_JAR=/tmp/old.jar once-bench/gateway/run.sh   # A/B: every gateway case also runs on BASE_JAR,
#                                                     # as "<case>@base", in the same round: after JAR in
#                                                     # odd rounds, before it in even ones
#   cp JAR /tmp/same.jar; BASE_JAR=/tmp/same.jar BASE_GC=G1GC once-bench/gateway/run.sh   # A/B of the
#                                                     # collector (GC=... for every JVM; jvm_flags, common.sh)
#   cp JAR /tmp/same.jar; CORE=netty BASE_JAR=/tmp/same.jar BASE_CORE=jetty once-bench/gateway/run.sh
#                                                     # A/B of the proxy's cores (--core) in one build
#   GATEWAY_JAVA_OPTS="-XX:StartFlightRecording=filename=/tmp/gw-%p.jfr,settings=profile" ...   # profile each gateway
#
# Every case runs once per round, the cases interleaved, and the table shows each case's median
# round by throughput: on a shared machine, load from elsewhere then hits all cases alike.
#
# Builds nothing. Installs wrk and nginx from Debian if they are missing. Only 127.0.0.1 is ever a
# target; every run is bounded by DURATION. Redis (127.0.0.1:6379) and PostgreSQL (127.0.0.1:5432,
# user postgres, database test) are used if they answer, else their rows say n/a.
set -euo pipefail

ROOT="$(cd "$(dirname "$0")/../.." && pwd)"
JAR="${JAR:-$ROOT/once-gateway/target/once-gateway.jar}"
BENCH_JAR="${BENCH_JAR:-$ROOT/once-bench/target/benchmarks.jar}"
HERE="$ROOT/once-bench/gateway"
DURATION="${DURATION:-10s}"
ROUNDS="${ROUNDS:-3}"
WARMUP="${WARMUP:-5s}"
# Each gateway case is a fresh JVM: its JIT needs far longer than nginx to reach steady state
# (measured: 160 → 890 req/s over the first 25 s at load average 20; on a quiet 2-core VM the C2
# compiler still took a third of a core 20-30 s into the Redis case, and under a twentieth after
# 40 s, -XX:+PrintCompilation).
GATEWAY_WARMUP="${GATEWAY_WARMUP:-40s}"
CONNECTIONS="${CONNECTIONS:-50}"
THREADS="${THREADS:-2}"
# nginx answering 201 (default), or java: the JDK HTTP server of DemoUpstream, as before 2026-11-28.
UPSTREAM="${UPSTREAM:-nginx}"
UPSTREAM_PORT=19000 NGINX_PORT=19001 GATEWAY_PORT=19002 MANAGEMENT_PORT=19003 FLOOR_PORT=19004
WORK="$(mktemp -d /tmp/once-gateway-bench.XXXXXX)"
PIDS=()

[ -z "${BASE_JAR:-}" ] || [ -f "$BASE_JAR" ] || { echo "missing $BASE_JAR" >&2; exit 1; }
[ -f "$JAR" ] || { echo "missing $JAR: build it first (mvn -B -q -pl once-gateway -am package -DskipTests)" >&2; exit 1; }
if ! command -v wrk >/dev/null || ! command -v nginx >/dev/null; then
  echo "installing wrk and nginx from Debian" >&2
  (apt-get update -qq && apt-get install -y -qq wrk nginx-light) >/dev/null
  # Debian starts the packaged nginx service on port 80; this benchmark runs its own.
  (service nginx stop || true) >/dev/null 2>&1
fi

# The Redis cases write under a key prefix of their own (--store-table), deleted after each run and
# on exit (drop_redis_records, common.sh).
REDIS_PREFIX="once_gateway_bench_$$"

# shellcheck source=common.sh
. "$HERE/common.sh"

cleanup() {
  for pid in "${PIDS[@]}"; do kill "$pid" 2>/dev/null || true; done
  [ -f "$WORK/nginx.pid" ] && kill "$(cat "$WORK/nginx.pid")" 2>/dev/null || true
  [ -f "$WORK/upstream.pid" ] && kill "$(cat "$WORK/upstream.pid")" 2>/dev/null || true
  wait 2>/dev/null || true
  drop_redis_records
  rm -rf "$WORK"
}
trap cleanup EXIT
# A run stopped by a signal exits, so that the cleanup above runs.
trap "exit 143" TERM
trap "exit 130" INT

if [ "$UPSTREAM" = java ]; then
  java -Xms256m -Xmx512m -cp "$JAR" dev.once.gateway.DemoUpstream "$UPSTREAM_PORT" >"$WORK/upstream.log" 2>&1 &
  UPSTREAM_PID=$!
  PIDS+=("$UPSTREAM_PID")
else
  start_nginx_upstream "$UPSTREAM_PORT"
  UPSTREAM_PID="$(pgrep -P "$(cat "$WORK/upstream.pid")" | head -n 1)"
fi
wait_for "http://127.0.0.1:$UPSTREAM_PORT/ping"

nginx_conf nginx "proxy_temp_path $WORK/nginx-proxy;
  upstream demo { server 127.0.0.1:$UPSTREAM_PORT; keepalive 64; }
  server {
    listen 127.0.0.1:$NGINX_PORT;
    location / { proxy_pass http://demo; proxy_http_version 1.1; proxy_set_header Connection \"\"; }
  }"
nginx -c "$WORK/nginx.conf"
wait_for "http://127.0.0.1:$NGINX_PORT/ping"

write_uncovered_config

RESULTS="$WORK/results.tsv"
: >"$RESULTS"

# CPU time (utime + stime, in clock ticks) processes have used so far, summed.
cpu_ticks() {
  local total=0 pid
  for pid in "$@"; do total=$((total + $(ticks "/proc/$pid" 2>/dev/null || echo 0))); done
  echo "$total"
}
# Context switches (voluntary and not) of a process's threads so far: each is a thread that stopped
# running, mostly to wait for another's hand-off.
switches() { cat /proc/"$1"/task/*/status 2>/dev/null | awk '/ctxt_switches/ {n += $2} END {print n + 0}'; }
# The store's server processes, if the case has one (STORE=redis|postgres): their CPU is the
# machine's too.
store_pids() {
  case "${STORE:-}" in
    redis) pgrep -x redis-server || true ;;
    postgres) pgrep -x postgres || pgrep -f 'postgres:' || true ;;
  esac
}

measure() { # name url [warm-up] [pid]   (BENCH_CYCLE=N: replays, see keys.lua)
  local name="$1" url="$2" warmup="${3:-$WARMUP}" pid="${4:-}" cycle="${BENCH_CYCLE:-0}" out
  BENCH_CYCLE="$cycle" wrk -t"$THREADS" -c"$CONNECTIONS" -d"$warmup" -s "$HERE/keys.lua" "$url" >/dev/null 2>&1 || true
  local before=0 after=0 up_before up_after cs_before=0 cs_after=0 st_before st_after stores
  stores="$(store_pids)"
  # shellcheck disable=SC2086
  st_before="$(cpu_ticks $stores)"
  [ -n "$pid" ] && before="$(cpu_ticks "$pid")" && cs_before="$(switches "$pid")"
  up_before="$(cpu_ticks "$UPSTREAM_PID")"
  # One connection per wrk thread: the requests' own latencies (keys.lua), not wrk's percentiles.
  local own=0
  [ "$THREADS" = "$CONNECTIONS" ] && own=1
  out="$(BENCH_LATENCY="$own" BENCH_CYCLE="$cycle" BENCH_RUN="$name-$RANDOM$RANDOM" wrk -t"$THREADS" -c"$CONNECTIONS" -d"$DURATION" --latency -s "$HERE/keys.lua" "$url")"
  [ -n "$pid" ] && after="$(cpu_ticks "$pid")" && cs_after="$(switches "$pid")"
  up_after="$(cpu_ticks "$UPSTREAM_PID")"
  # shellcheck disable=SC2086
  st_after="$(cpu_ticks $stores)"
  local rps p50 p99 errors requests cpu="n/a" up_cpu="n/a" cs="n/a" st_cpu="n/a"
  rps="$(awk '/Requests\/sec/ {print $2}' <<<"$out")"
  if [ "$own" = 1 ]; then
    p50="$(awk '/^requests. own latency/ {print $7}' <<<"$out")"
    p99="$(awk '/^requests. own latency/ {print $11}' <<<"$out")"
  else
    p50="$(awk '$1 == "50%" {print $2}' <<<"$out")"
    p99="$(awk '$1 == "99%" {print $2}' <<<"$out")"
  fi
  errors="$(awk '/Non-2xx or 3xx/ {print $5} /Socket errors/ {print "socket:" $0}' <<<"$out" | paste -sd' ')"
  requests="$(awk '/requests in/ {print $1}' <<<"$out")"
  if [ -n "$pid" ] && [ "${requests:-0}" -gt 0 ]; then
    # The serving process's own CPU per request, in microseconds: what the machine pays for it.
    cpu="$(per_request "$((after - before))" "$requests")"
    cs="$(awk -v s="$((cs_after - cs_before))" -v n="$requests" 'BEGIN {printf "%.2f", s / n}')"
  fi
  if [ -n "$stores" ] && [ "${requests:-0}" -gt 0 ]; then
    st_cpu="$(per_request "$((st_after - st_before))" "$requests")"
  fi
  if [ "${requests:-0}" -gt 0 ]; then
    up_cpu="$(per_request "$((up_after - up_before))" "$requests")"
  fi
  versus "$name" "$rps" "$cpu" "$p50" "$p99"
  printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$name" "$rps" "$p50" "$p99" "$cpu" "$up_cpu" "$st_cpu" "$cs" \
    "$VERSUS" "${errors:-0}" | tee -a "$RESULTS"
}

# wrk's latency (75.00us, 1.40ms, 1.20s) in microseconds.
micros() { awk -v l="$1" 'BEGIN {
  if (l ~ /us$/) f = 1; else if (l ~ /ms$/) f = 1000; else if (l ~ /s$/) f = 1000000; else { print "n/a"; exit }
  printf "%.0f", l * f }'; }

# The row against nginx in the same round, as the targets are stated: throughput and CPU per request
# as multiples of (b)'s; a one-client row as the p50 and p99 it adds over (b1)'s. (b) and (b1) run
# first among the rows they are compared with, so each round compares with its own nginx.
NGINX_RPS="" NGINX_CPU="" NGINX1_P50="" NGINX1_P99="" VERSUS=""
versus() { # name rps cpu p50 p99 -> VERSUS (set here, not printed: (b)'s figures must outlive the call)
  VERSUS="n/a"
  case "$1" in
    a-*) return ;;
    b-*) NGINX_RPS="$2" NGINX_CPU="$3" VERSUS="1x"; return ;;
    b1-*) NGINX1_P50="$(micros "$4")" NGINX1_P99="$(micros "$5")" VERSUS="0"; return ;;
  esac
  if [ "$THREADS" = 1 ] && [ "$CONNECTIONS" = 1 ]; then
    [ -n "$NGINX1_P50" ] || return 0
    VERSUS="$(awk -v p50="$(micros "$4")" -v p99="$(micros "$5")" -v n50="$NGINX1_P50" -v n99="$NGINX1_P99" \
      'BEGIN {printf "%+.2f ms p50, %+.2f ms p99", (p50 - n50) / 1000, (p99 - n99) / 1000}')"
  elif [ -n "$NGINX_RPS" ] && [ "$3" != n/a ] && [ -n "$2" ]; then
    VERSUS="$(awk -v r="$2" -v c="$3" -v nr="$NGINX_RPS" -v nc="$NGINX_CPU" \
      'BEGIN {printf "%.2fx req/s, %.1fx cpu", r / nr, (nc > 0 ? c / nc : 0)}')"
  fi
}

per_request() { # ticks requests -> microseconds per request
  awk -v t="$1" -v hz="$(getconf CLK_TCK)" -v n="$2" 'BEGIN {printf "%.0f", t / hz * 1e6 / n}'
}

# (c0, c1): the same forwarding as (c) with nothing of a gateway's own, in a JVM warmed up as long.
proxy_floor() { # name class
  # shellcheck disable=SC2046
  java $(jvm_flags "${GC:-}") -cp "$BENCH_JAR" "dev.once.bench.gateway.$2" "$FLOOR_PORT" "$UPSTREAM_PORT" \
    >"$WORK/$1.log" 2>&1 &
  local pid=$!
  PIDS+=("$pid")
  if wait_for "http://127.0.0.1:$FLOOR_PORT/ping"; then
    measure "$1" "http://127.0.0.1:$FLOOR_PORT/ping" "$GATEWAY_WARMUP" "$pid"
  fi
  kill "$pid" 2>/dev/null || true
  wait "$pid" 2>/dev/null || true
}

# The two builds of an A/B swap places every round, and each run starts on an empty store
# (run_gateway), so that nothing that drifts within a round (the machine, what the store holds)
# always favours the same build.
gateway() { # name extra-args...
  if [ -z "${BASE_JAR:-}" ]; then run_gateway "$JAR" "$@"; return; fi
  local name="$1"; shift
  if [ $((round % 2)) = 1 ]; then
    run_gateway "$JAR" "$name" "$@"; run_gateway "$BASE_JAR" "$name@base" "$@"
  else
    run_gateway "$BASE_JAR" "$name@base" "$@"; run_gateway "$JAR" "$name" "$@"
  fi
}

run_gateway() { # jar name extra-args...
  local jar="$1" name="$2"; shift 2
  rm -rf "$WORK/data"
  # GATEWAY_JAVA_OPTS, e.g. a JFR recording: -XX:StartFlightRecording=filename=/tmp/gw-%p.jfr,settings=profile
  local gc="${GC:-}" core="${CORE:-}"
  [ "$jar" = "${BASE_JAR:-}" ] && gc="${BASE_GC:-$gc}" && core="${BASE_CORE:-$core}"
  # shellcheck disable=SC2086,SC2046
  java $(jvm_flags "$gc") ${GATEWAY_JAVA_OPTS:-} -jar "$jar" --bind 127.0.0.1 --port "$GATEWAY_PORT" --management-port "$MANAGEMENT_PORT" \
    --upstream "http://127.0.0.1:$UPSTREAM_PORT" --data-dir "$WORK/data" --access-log false ${core:+--core "$core"} "$@" \
    >"$WORK/gateway-$name.log" 2>&1 &
  local pid=$!
  if wait_for "http://127.0.0.1:$MANAGEMENT_PORT/health"; then
    local slow_pid="" probe_pid=""
    if [ "${SLOW_CLIENTS:-0}" -gt 0 ]; then
      local seconds=$(( ${GATEWAY_WARMUP%s} + ${DURATION%s} + 5 ))
      python3 "$HERE/trickle.py" "$GATEWAY_PORT" "$SLOW_CLIENTS" "$seconds" 2 >"$WORK/trickle-$name.log" 2>&1 &
      slow_pid=$!
      sleep 3
      ( end=$((SECONDS + seconds - 3)); while [ "$SECONDS" -lt "$end" ]; do
          curl -s -o /dev/null -m 5 -w '%{time_total}\n' "http://127.0.0.1:$MANAGEMENT_PORT/health" || echo timeout
          sleep 0.5
        done ) >"$WORK/health-$name.txt" &
      probe_pid=$!
    fi
    measure "$name" "http://127.0.0.1:$GATEWAY_PORT/ping" "$GATEWAY_WARMUP" "$pid"
    if [ -n "$slow_pid" ]; then
      kill "$probe_pid" 2>/dev/null || true; wait "$slow_pid" 2>/dev/null || true
      printf '# %s: /health during the run, %s probes: median %s s, max %s s; %s\n' "$name" \
        "$(grep -c . "$WORK/health-$name.txt")" \
        "$(sort -g "$WORK/health-$name.txt" | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}')" \
        "$(sort -g "$WORK/health-$name.txt" | tail -n 1)" "$(cat "$WORK/trickle-$name.log")" >&2
    fi
  else
    printf '%s\tn/a\tn/a\tn/a\tn/a\tn/a\tn/a\tn/a\tn/a\tgateway did not start (see log)\n' "$name" | tee -a "$RESULTS"
    cat "$WORK/gateway-$name.log" >&2
  fi
  kill "$pid"; wait "$pid" 2>/dev/null || true
  # Each run starts on an empty store, as the embedded one does with its data directory removed.
  if [ "${STORE:-}" = redis ]; then drop_redis_records; fi
}

reachable() { timeout 1 bash -c "exec 3<>/dev/tcp/127.0.0.1/$1" 2>/dev/null; }

CASES="${CASES:-a b c0 c1 c d d2 e f g h b1 d1 e1 g1}"
want() { [[ " $CASES " == *" $1 "* ]]; }

echo "# wrk -t$THREADS -c$CONNECTIONS -d$DURATION (after a $WARMUP warm-up), POST /ping with a fresh key each, $ROUNDS rounds, $UPSTREAM upstream" >&2
if command -v python3 >/dev/null; then
  # The disk's sync time and SQLite's own floor for claim+finish, on the disk the embedded store uses.
  python3 "$HERE/sqlite_floor.py" "$WORK/floor" 3 | awk -F'\t' '
    $1 == "sync" {printf "# disk: one 4 KiB write + fsync, median %s us, p99 %s us\n", $2, $3}
    $1 == "floor" {printf "# SQLite floor (claim, then finish, WAL, synchronous=FULL): %s keys/s one at a time, %s in 8s, %s in 50s\n", $2, $3, $4}' >&2
fi
for round in $(seq 1 "$ROUNDS"); do
  echo "# round $round (load average: $(cut -d' ' -f1-3 /proc/loadavg))" >&2
  if want a; then measure "a-direct" "http://127.0.0.1:$UPSTREAM_PORT/ping" "$WARMUP" "$UPSTREAM_PID"; fi
  if want b; then measure "b-nginx" "http://127.0.0.1:$NGINX_PORT/ping" "$WARMUP" "$(pgrep -P "$(cat "$WORK/nginx.pid")" | head -n 1)"; fi
  for floor in "c0 c0-jvm-floor-netty ProxyFloor" "c1 c1-jvm-floor-jetty ProxyFloorJetty"; do
    read -r id name class <<<"$floor"
    if ! want "$id"; then :
    elif [ -f "$BENCH_JAR" ]; then proxy_floor "$name" "$class"
    else printf '%s\tn/a\tn/a\tn/a\tn/a\tn/a\tn/a\tn/a\tn/a\tno %s\n' "$name" "$BENCH_JAR" | tee -a "$RESULTS"; fi
  done
  if want c; then gateway "c-gateway-uncovered" --config "$WORK/uncovered.yaml"; fi
  if want d; then gateway "d-gateway-embedded" --store embedded; fi
  if want d2; then gateway "d2-gateway-embedded-process-crash" --store embedded --durability process-crash; fi
  if ! want e; then :
  elif reachable 6379; then STORE=redis gateway "e-gateway-redis" --store redis://127.0.0.1:6379 --store-table "$REDIS_PREFIX"
  else printf 'e-gateway-redis\tn/a\tn/a\tn/a\tn/a\tn/a\tn/a\tn/a\tn/a\tRedis not reachable\n' | tee -a "$RESULTS"; fi
  if ! want f; then :
  elif reachable 5432; then
    # A table of its own per build: the two may not share a schema.
    builds="new base"; [ $((round % 2)) = 0 ] && builds="base new"   # swapped as in gateway()
    for build in $builds; do
      [ "$build" = base ] && [ -z "${BASE_JAR:-}" ] && continue
      TABLE="once_gateway_bench_$$_${round}_$build"
      if [ "$build" = new ]; then jar="$JAR" name="f-gateway-postgres"; else jar="$BASE_JAR" name="f-gateway-postgres@base"; fi
      STORE=postgres run_gateway "$jar" "$name" --store postgres://postgres@127.0.0.1:5432/test --store-table "$TABLE"
      if command -v psql >/dev/null; then
        psql -q -h 127.0.0.1 -U postgres -d test -c "DROP TABLE IF EXISTS $TABLE CASCADE; DROP SEQUENCE IF EXISTS ${TABLE}_seq" >/dev/null 2>&1 || true
      fi
    done
  else printf 'f-gateway-postgres\tn/a\tn/a\tn/a\tn/a\tn/a\tn/a\tn/a\tn/a\tPostgreSQL not reachable\n' | tee -a "$RESULTS"; fi
  if want g; then BENCH_CYCLE=64 gateway "g-gateway-embedded-replays" --store embedded; fi
  if want h; then SLOW_CLIENTS=1000 gateway "h-gateway-embedded-1000-slow-clients" --store embedded; fi
  # One client at a time: the latency each layer adds, with nothing queued behind it.
  if want b1; then THREADS=1 CONNECTIONS=1 measure "b1-nginx-one-client" "http://127.0.0.1:$NGINX_PORT/ping" "$WARMUP" "$(pgrep -P "$(cat "$WORK/nginx.pid")" | head -n 1)"; fi
  if want d1; then THREADS=1 CONNECTIONS=1 gateway "d1-gateway-embedded-one-client" --store embedded; fi
  if want e1 && reachable 6379; then
    STORE=redis THREADS=1 CONNECTIONS=1 gateway "e1-gateway-redis-one-client" --store redis://127.0.0.1:6379 --store-table "$REDIS_PREFIX"
  fi
  if want g1; then THREADS=1 CONNECTIONS=1 BENCH_CYCLE=64 gateway "g1-gateway-embedded-replays-one-client" --store embedded; fi
done

echo >&2
echo "median round per case (by req/s):" >&2
printf 'case\treq/s\tp50\tp99\tcpu_us/req\tupstream_cpu_us/req\tstore_cpu_us/req\tswitches/req\tvs_nginx_same_round\terrors\n'
sort -t$'\t' -k1,1 -k2,2g "$RESULTS" | awk -F'\t' -v r="$ROUNDS" '
  { rows[$1] = rows[$1] $0 "\n"; n[$1]++ }
  END { for (c in rows) { split(rows[c], lines, "\n"); print lines[int((n[c] + 1) / 2)] } }' | sort
cp "$RESULTS" "${RESULTS_OUT:-/tmp/once-gateway-bench-results.tsv}"
echo "results also in ${RESULTS_OUT:-/tmp/once-gateway-bench-results.tsv}" >&2

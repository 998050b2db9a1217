#!/usr/bin/env bash
# Side by side: the same POST /payments endpoint guarded by Once and by another library, driven by
# wrk on loopback in interleaved rounds, pooled. docs/benchmarks.md ("Side by side with
# idempotency4j") has the figures and how they were taken.
#
#   once-bench/side-by-side/run.sh ONCE_JAR OTHER_JAR [ROUNDS] [SECONDS] [STORES]
#
# ONCE_JAR   once-bench/side-by-side/endpoint/target/once-endpoint.jar (mvn -pl ... -am package)
# OTHER_JAR  a Spring Boot jar of the other library serving the same endpoint: POST /payments with
#            the JSON body of payments.lua, key in Idempotency-Key, replays marked
#            "Idempotent-Replayed: true"; its in-memory store by default, PostgreSQL
#            (127.0.0.1:5432/test, user postgres) under --spring.profiles.active=postgres. This
#            repository neither builds nor ships it.
# ROUNDS     rounds per row (default 9); each round runs both sides, the first side alternating
# SECONDS    seconds per side per round (default 10)
# STORES     "memory postgres" (default), or one of them
#
# A third side, "bare", is the Once endpoint with the starter turned off (once.enabled=false): the
# framework's own cost, the floor both libraries stand on (in memory, new keys). The three JVMs run at once on their own
# ports (8081 Once, 8082 other, 8083 bare) with the same flags (JAVA, default java on PATH; HEAP,
# default 4g: every new key stays in an in-memory store for its 24 h TTL, and a full run adds about
# two million, so a small heap would end in back-to-back collections); only the side being measured
# gets requests. Every wrk run is bounded by its duration.
set -euo pipefail

once_jar=$1
other_jar=$2
rounds=${3:-9}
seconds=${4:-10}
stores=${5:-memory postgres}
java=${JAVA:-java}
heap=${HEAP:-4g}
here=$(cd "$(dirname "$0")" && pwd)
script=$here/payments.lua
work=$(mktemp -d)
pids=()

stop() {
  for pid in "${pids[@]}"; do kill "$pid" 2>/dev/null || true; done
  wait 2>/dev/null || true
}
trap stop EXIT

start() { # name jar port profile [argument]
  local log=$work/$1-$4.log
  if curl -s -o /dev/null "http://127.0.0.1:$3/"; then
    echo "port $3 is taken: stop what listens there first" >&2
    exit 1
  fi
  "$java" -Xms"$heap" -Xmx"$heap" -jar "$2" --server.port="$3" --spring.profiles.active="$4" \
    --logging.level.root=WARN ${5:+"$5"} >"$log" 2>&1 &
  pids+=($!)
  for _ in $(seq 1 120); do
    if curl -s -o /dev/null "http://127.0.0.1:$3/"; then return; fi
    sleep 0.5
  done
  echo "$1 did not start on port $3; its log:" >&2
  tail -20 "$log" >&2
  exit 1
}

drive() { # port keys seconds -> "requests/s replayed answers failed"
  local out
  out=$(KEYS=$2 THREADS=2 wrk -t2 -c50 -d"$3"s -s "$script" "http://127.0.0.1:$1/payments")
  local rate answers replayed failed
  rate=$(awk '/^Requests\/sec:/ {print $2}' <<<"$out")
  read -r answers replayed failed < <(awk '/^answers/ {print $2, $4, $6}' <<<"$out")
  echo "$rate $replayed $answers $failed"
}

declare -A port_of=([once]=8081 [other]=8082 [bare]=8083)

row() { # store keys sides...
  local store=$1 keys=$2
  shift 2
  local sides=("$@")
  declare -A sum=()
  for r in $(seq 1 "$rounds"); do
    # Each round starts with another side, so that a burst of load from elsewhere, or a drift over
    # the run, falls on every side alike.
    local order=("${sides[@]:$(((r - 1) % ${#sides[@]}))}" "${sides[@]:0:$(((r - 1) % ${#sides[@]}))}")
    for side in "${order[@]}"; do
      read -r rate replayed answers failed < <(drive "${port_of[$side]}" "$keys" "$seconds")
      echo "$store $keys round $r $side: $rate req/s, $replayed of $answers replayed," \
        "$failed failed (load $(cut -d' ' -f1 /proc/loadavg))"
      sum[$side]=$(echo "${sum[$side]:-0} + $rate" | bc -l)
    done
  done
  local line
  line=$(printf 'ROW %-8s %-6s' "$store" "$keys")
  for side in "${sides[@]}"; do
    line+=$(printf '  %s %6.0f req/s' "$side" "$(echo "${sum[$side]} / $rounds" | bc -l)")
  done
  line+=$(printf '  once/other %.2f' "$(echo "${sum[once]} / ${sum[other]}" | bc -l)")
  if [[ -n ${sum[bare]:-} ]]; then
    line+=$(printf '  once/bare %.2f  other/bare %.2f' "$(echo "${sum[once]} / ${sum[bare]}" | bc -l)" \
      "$(echo "${sum[other]} / ${sum[bare]}" | bc -l)")
  fi
  echo "$line"
}

echo "side by side: $rounds rounds of $seconds s per side; $(nproc) cores; load $(cut -d' ' -f1-3 /proc/loadavg)"
for store in $stores; do
  start once "$once_jar" 8081 "$store"
  start other "$other_jar" 8082 "$store"
  if [[ $store == memory ]]; then
    start bare "$once_jar" 8083 "$store" --once.enabled=false
    drive 8083 new 10 >/dev/null
  fi
  for port in 8081 8082; do
    drive "$port" new 10 >/dev/null # warm-up: the JIT, the pools, the table
    drive "$port" prime 6 >/dev/null # every key of "spread" once
    curl -s -o /dev/null -X POST -H 'Content-Type: application/json' -H 'Idempotency-Key: hot' \
      --data '{"amount":1000,"currency":"EUR","source":"acct_1","destination":"acct_2"}' \
      "http://127.0.0.1:$port/payments"
  done
  # Without the starter nothing is replayed, and nothing touches the database: the bare side runs
  # only the in-memory new-key row, where it is the floor.
  if [[ $store == memory ]]; then row "$store" new once other bare; else row "$store" new once other; fi
  for keys in spread hot; do row "$store" "$keys" once other; done
  stop
  pids=()
done

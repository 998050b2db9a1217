#!/usr/bin/env bash
# Two gateway builds side by side, loaded at the same time: each round starts both JVMs, warms both
# up under load together, then measures both together (one wrk -t1 -c25 each, on loopback), and
# gives each build's CPU time per request (utime+stime from /proc over the requests it served) and
# throughput. Whatever else the machine does in a round (another VM on the host, the JIT, the disk)
# falls on both builds alike, which back-to-back runs cannot promise: on a 2-core VM a build's CPU
# per request moved by 40 % from one run to the next, where paired rounds moved a few percent.
# The builds swap ports every round.
#
# Usage (from the repository root):
#   once-bench/gateway/pair.sh A.jar B.jar                  # 4 rounds of case (c): no route covers POST
#   ROUNDS=6 once-bench/gateway/pair.sh A.jar B.jar -- --store embedded   # any gateway options
#   once-bench/gateway/pair.sh A.jar B.jar -- --store redis://127.0.0.1:6379   # a key prefix of its own
#   GC_A=G1GC once-bench/gateway/pair.sh A.jar B.jar    # A on another collector (jvm_flags, common.sh);
#                                                       # for one build, give two copies of its jar
#   B_ARGS="--access-log true" once-bench/gateway/pair.sh A.jar B.jar   # options for B alone (A_ARGS
#                                                       # for A), after the shared ones: with two copies of
#                                                       # one jar, what an option costs
#
# Needs wrk and nginx (run.sh installs them). Only 127.0.0.1 is a target; every run is bounded by
# its durations.
set -euo pipefail

[ $# -ge 2 ] || { sed -n '2,17p' "$0" >&2; exit 2; }
A="$1" B="$2"; shift 2
[ "${1:-}" = "--" ] && shift
for jar in "$A" "$B"; do [ -f "$jar" ] || { echo "missing $jar" >&2; exit 1; }; done
ROOT="$(cd "$(dirname "$0")/../.." && pwd)"
HERE="$ROOT/once-bench/gateway"
ROUNDS="${ROUNDS:-4}"
WARMUP="${WARMUP:-35}"
DURATION="${DURATION:-15}"
UPSTREAM_PORT=19020 PORT_1=19022 PORT_2=19032
WORK="$(mktemp -d /tmp/once-gateway-pair.XXXXXX)"
PIDS=()

# On Redis the builds write under a key prefix of the run's own (their keys differ), deleted after every
# round and on exit.
REDIS_PREFIX="once_gateway_pair_$$"

# shellcheck source=common.sh
. "$HERE/common.sh"

cleanup() {
  for pid in "${PIDS[@]}"; do kill "$pid" 2>/dev/null || true; done
  [ -f "$WORK/upstream.pid" ] && kill "$(cat "$WORK/upstream.pid")" 2>/dev/null || true
  drop_redis_records
  rm -rf "$WORK"
}
trap cleanup EXIT

start_nginx_upstream "$UPSTREAM_PORT"
write_uncovered_config
[ $# -gt 0 ] || set -- --config "$WORK/uncovered.yaml"

start() { # jar port -> pid
  local table=() gc="${GC_A:-}" own=()
  read -r -a own <<<"${A_ARGS:-}"
  [ "$1" = "$B" ] && gc="${GC_B:-}" && read -r -a own <<<"${B_ARGS:-}"
  # Any store URL on Redis: redis://, rediss:// or redis-cluster://.
  [[ " ${GATEWAY_ARGS[*]}" =~ \ redis(s|-cluster)?:// ]] && table=(--store-table "$REDIS_PREFIX")
  # shellcheck disable=SC2046
  java $(jvm_flags "$gc") -jar "$1" --bind 127.0.0.1 --port "$2" --management-port "$(($2 + 1))" \
    --upstream "http://127.0.0.1:$UPSTREAM_PORT" --data-dir "$WORK/data-$2" --access-log false "${GATEWAY_ARGS[@]}" \
    "${table[@]}" "${own[@]}" >"$WORK/gateway-$2.log" 2>&1 &
  echo $!
}
ready() { for _ in $(seq 1 100); do curl -s -o /dev/null "http://127.0.0.1:$(($1 + 1))/health" && return 0; sleep 0.2; done; return 1; }
load() { # seconds port-a out-a port-b out-b: both at once
  BENCH_RUN="a-$RANDOM$RANDOM" wrk -t1 -c25 -d"$1s" -s "$HERE/keys.lua" "http://127.0.0.1:$2/ping" >"$3" &
  local first=$!
  BENCH_RUN="b-$RANDOM$RANDOM" wrk -t1 -c25 -d"$1s" -s "$HERE/keys.lua" "http://127.0.0.1:$4/ping" >"$5"
  wait "$first"
}
GATEWAY_ARGS=("$@")
HZ="$(getconf CLK_TCK)"

echo "# A $A ${A_ARGS:-}, B $B ${B_ARGS:-}, ${GATEWAY_ARGS[*]}; $ROUNDS rounds, ${WARMUP}s warm-up, ${DURATION}s measured, wrk -t1 -c25 on each at once" >&2
printf 'round\tload\tA req/s\tA cpu_us/req\tB req/s\tB cpu_us/req\tB/A cpu\n'
for round in $(seq 1 "$ROUNDS"); do
  if [ $((round % 2)) = 1 ]; then pa=$PORT_1 pb=$PORT_2; else pa=$PORT_2 pb=$PORT_1; fi
  rm -rf "$WORK"/data-*
  a="$(start "$A" "$pa")"; b="$(start "$B" "$pb")"; PIDS=("$a" "$b")
  ready "$pa" && ready "$pb" || { cat "$WORK"/gateway-*.log >&2; exit 1; }
  load "$WARMUP" "$pa" /dev/null "$pb" /dev/null
  la="$(cut -d' ' -f1 /proc/loadavg)" ca="$(ticks "/proc/$a")" cb="$(ticks "/proc/$b")"
  load "$DURATION" "$pa" "$WORK/a.txt" "$pb" "$WORK/b.txt"
  ca=$(($(ticks "/proc/$a") - ca)) cb=$(($(ticks "/proc/$b") - cb))
  na="$(awk '/requests in/ {print $1}' "$WORK/a.txt")" nb="$(awk '/requests in/ {print $1}' "$WORK/b.txt")"
  awk -v r="$round" -v l="$la" -v na="$na" -v nb="$nb" -v ca="$ca" -v cb="$cb" -v hz="$HZ" -v d="$DURATION" 'BEGIN {
    ua = ca / hz * 1e6 / na; ub = cb / hz * 1e6 / nb
    printf "%d\t%s\t%.0f\t%.1f\t%.0f\t%.1f\t%.3f\n", r, l, na / d, ua, nb / d, ub, ub / ua }'
  kill "$a" "$b"; wait "$a" "$b" 2>/dev/null || true; PIDS=()
  drop_redis_records
done

#!/usr/bin/env bash
# What the embedded store's writer thread does for each request under load, counted rather than
# timed: its write system calls and the bytes they write (read from /proc/PID/task/TID/io), its CPU
# time, the gateway's CPU time, and whether SQLite holds a temporary file (its names start with
# etilqs_). Counts hold whatever else the machine does, so two builds compare in one run of each.
#
# Usage (from the repository root; Linux, with nginx and wrk as run.sh installs them):
#   once-bench/gateway/writer-io.sh A.jar [B.jar ...]      # each build: ROUNDS runs on new keys
#   ROUNDS=3 WARMUP=30 DURATION=10 once-bench/gateway/writer-io.sh A.jar
#
# Only 127.0.0.1 is a target; every run is bounded by its durations.
set -euo pipefail

[ $# -ge 1 ] || { sed -n '2,10p' "$0" >&2; exit 2; }
for jar in "$@"; do [ -f "$jar" ] || { echo "missing $jar" >&2; exit 1; }; done
ROOT="$(cd "$(dirname "$0")/../.." && pwd)"
HERE="$ROOT/once-bench/gateway"
ROUNDS="${ROUNDS:-2}"
WARMUP="${WARMUP:-30}"
DURATION="${DURATION:-10}"
UPSTREAM_PORT=19040 PORT=19042 MANAGEMENT_PORT=19043
WORK="$(mktemp -d /tmp/once-writer-io.XXXXXX)"
PID=""

# shellcheck source=common.sh
. "$HERE/common.sh"

cleanup() {
  [ -n "$PID" ] && kill "$PID" 2>/dev/null || true
  [ -f "$WORK/upstream.pid" ] && kill "$(cat "$WORK/upstream.pid")" 2>/dev/null || true
  rm -rf "$WORK"
}
trap cleanup EXIT

start_nginx_upstream "$UPSTREAM_PORT"

field() { awk -v f="$1" '$1 == f ":" {print $2}' "$2/io"; }

printf 'build\trun\trequests\twriter_write_calls/req\twriter_bytes/req\twriter_cpu_us/req\tgateway_cpu_us/req\tsqlite_temp_files\n'
for round in $(seq 1 "$ROUNDS"); do
  for jar in "$@"; do
    rm -rf "$WORK/data"
    # shellcheck disable=SC2046
    java $(jvm_flags) -jar "$jar" --bind 127.0.0.1 --port "$PORT" --management-port "$MANAGEMENT_PORT" \
      --upstream "http://127.0.0.1:$UPSTREAM_PORT" --data-dir "$WORK/data" --access-log false \
      >"$WORK/gateway.log" 2>&1 &
    PID=$!
    wait_for "http://127.0.0.1:$MANAGEMENT_PORT/health"
    wrk -t2 -c50 -d"${WARMUP}s" -s "$HERE/keys.lua" "http://127.0.0.1:$PORT/ping" >/dev/null
    # The writer: of the store's threads, the one that has written the most.
    writer=""
    best=-1
    for task in /proc/"$PID"/task/*; do
      case "$(cat "$task/comm")" in once-embedded-s*) ;; *) continue ;; esac
      calls="$(field syscw "$task")"
      if [ "$calls" -gt "$best" ]; then best="$calls" writer="$task"; fi
    done
    calls0="$(field syscw "$writer")" bytes0="$(field wchar "$writer")"
    wcpu0="$(ticks "$writer")" gcpu0="$(ticks "/proc/$PID")"
    requests="$(wrk -t2 -c50 -d"${DURATION}s" -s "$HERE/keys.lua" "http://127.0.0.1:$PORT/ping" |
      awk '/requests in/ {print $1}')"
    calls1="$(field syscw "$writer")" bytes1="$(field wchar "$writer")"
    wcpu1="$(ticks "$writer")" gcpu1="$(ticks "/proc/$PID")"
    temp="$(find /proc/"$PID"/fd -lname '*etilqs_*' 2>/dev/null | wc -l)"
    awk -v b="$(basename "$jar")" -v r="$round" -v n="$requests" -v c="$((calls1 - calls0))" \
      -v w="$((bytes1 - bytes0))" -v wc="$((wcpu1 - wcpu0))" -v gc="$((gcpu1 - gcpu0))" \
      -v hz="$(getconf CLK_TCK)" -v t="$temp" 'BEGIN {
        printf "%s\t%d\t%d\t%.2f\t%.0f\t%.0f\t%.0f\t%d\n", b, r, n, c / n, w / n, wc / hz * 1e6 / n,
          gc / hz * 1e6 / n, t }'
    kill "$PID"
    wait "$PID" 2>/dev/null || true
    PID=""
  done
done

#!/usr/bin/env bash
# Concurrent duplicates through the gateway on a shared store: two gateways on one PostgreSQL table
# (the way users scale out), 100 new keys each sent 2 and then 4 times at the same moment, the
# copies spread over both gateways (herd.py); the demo upstream's ledger then says how many times
# each key was charged. Exits non-zero if any key was charged twice.
#
# Usage (from the repository root, after building the jar):
#   mvn -B -q -pl once-gateway -am package -DskipTests
#   once-bench/gateway/herd.sh                        # KEYS=100 COPIES="2 4" GATEWAYS=2
#   STORE=redis://127.0.0.1:6379 once-bench/gateway/herd.sh   # another shared store
#   JAR=/tmp/other.jar once-bench/gateway/herd.sh     # another build
#
# Builds nothing. Only 127.0.0.1 is a target; each request times out after 30 s.
set -euo pipefail

ROOT="$(cd "$(dirname "$0")/../.." && pwd)"
JAR="${JAR:-$ROOT/once-gateway/target/once-gateway.jar}"
HERE="$ROOT/once-bench/gateway"
STORE="${STORE:-postgres://postgres@127.0.0.1:5432/test}"
KEYS="${KEYS:-100}"
COPIES="${COPIES:-2 4}"
GATEWAYS="${GATEWAYS:-2}"
UPSTREAM_PORT=19100
TABLE="once_herd_$$"
WORK="$(mktemp -d /tmp/once-herd.XXXXXX)"
PIDS=()

[ -f "$JAR" ] || { echo "missing $JAR: build it first (mvn -B -q -pl once-gateway -am package -DskipTests)" >&2; exit 1; }

cleanup() {
  for pid in "${PIDS[@]}"; do kill "$pid" 2>/dev/null || true; done
  wait 2>/dev/null || true
  if [[ "$STORE" == postgres* ]]; then
    psql -q -h 127.0.0.1 -U postgres -d test -c "DROP TABLE IF EXISTS $TABLE CASCADE; DROP SEQUENCE IF EXISTS ${TABLE}_seq" >/dev/null 2>&1 || true
  fi
  rm -rf "$WORK"
}
trap cleanup EXIT

wait_for() { # url
  for _ in $(seq 1 150); do curl -sf -o /dev/null "$1" && return 0; sleep 0.2; done
  echo "timed out waiting for $1" >&2; return 1
}

java -Xmx256m -cp "$JAR" dev.once.gateway.DemoUpstream "$UPSTREAM_PORT" >"$WORK/upstream.log" 2>&1 &
PIDS+=($!)
wait_for "http://127.0.0.1:$UPSTREAM_PORT/ping"

PORTS=()
for g in $(seq 1 "$GATEWAYS"); do
  port=$((19100 + 2 * g)) management=$((19101 + 2 * g))
  extra=()
  if [[ "$STORE" == postgres* ]]; then extra=(--store-table "$TABLE"); fi
  java -Xmx512m -XX:+ExitOnOutOfMemoryError -jar "$JAR" --bind 127.0.0.1 --port "$port" --management-port "$management" \
    --upstream "http://127.0.0.1:$UPSTREAM_PORT" --data-dir "$WORK/data-$g" --access-log false \
    --store "$STORE" "${extra[@]}" >"$WORK/gateway-$g.log" 2>&1 &
  PIDS+=($!)
  wait_for "http://127.0.0.1:$management/health" || { cat "$WORK/gateway-$g.log" >&2; exit 1; }
  PORTS+=("$port")
done

status=0
echo "# store $STORE, load average $(cut -d' ' -f1-3 /proc/loadavg)"
for copies in $COPIES; do
  python3 "$HERE/herd.py" "$UPSTREAM_PORT" "$(IFS=,; echo "${PORTS[*]}")" "$KEYS" "$copies" || status=1
done
exit "$status"

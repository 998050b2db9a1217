# Shared by run.sh and pair.sh (sourced, with WORK set): the trivial upstream both measure against,
# the gateway configuration of case (c), and the clean-up of what a run wrote to Redis.

# The JVM flags of a gateway (and of the JVM floors beside it): those docs/gateway.md runs it with
# ("Running it": the throughput collector, exit on OutOfMemoryError), and a fixed heap so that runs
# compare. An argument names another collector (G1GC, SerialGC), for an A/B of the flag itself.
jvm_flags() { # [collector]
  echo "-Xms512m -Xmx512m -XX:+Use${1:-ParallelGC} -XX:+ExitOnOutOfMemoryError"
}

# The CPU time a process or one of its threads has used so far (utime + stime, in clock ticks).
ticks() { # /proc/PID or /proc/PID/task/TID
  awk '{print $14 + $15}' "$1/stat"
}

wait_for() { # url
  for _ in $(seq 1 150); do curl -sf -o /dev/null "$1" && return 0; sleep 0.2; done
  echo "timed out waiting for $1" >&2; return 1
}

# An nginx of its own, one worker, no access log: WORK/NAME.conf with the http block's rest.
nginx_conf() { # name http-block-rest
  mkdir -p "$WORK/$1-body"
  cat >"$WORK/$1.conf" <<NGINX
worker_processes 1;
pid $WORK/$1.pid;
error_log $WORK/$1-error.log warn;
events { worker_connections 4096; }
http {
  access_log off;
  client_body_temp_path $WORK/$1-body;
  $2
}
NGINX
}

# nginx answering 201 with a small JSON body, one worker of its own: a trivial upstream that takes a
# small share of the machine, so the proxies' ratios are not compressed by a busy upstream. Its pid
# file is WORK/upstream.pid.
start_nginx_upstream() { # port
  nginx_conf upstream "keepalive_requests 1000000;
  server {
    listen 127.0.0.1:$1;
    location / { default_type application/json; return 201 '{\"id\":\"pay_1\",\"status\":\"ok\"}'; }
  }"
  nginx -c "$WORK/upstream.conf"
  wait_for "http://127.0.0.1:$1/ping"
}

# Case (c)'s configuration, WORK/uncovered.yaml: no route covers POST, so nothing is guarded.
write_uncovered_config() {
  printf 'defaults:\n  methods: [DELETE]\n' >"$WORK/uncovered.yaml"
}

# Deletes the records a run wrote to Redis, under the key prefix REDIS_PREFIX. A run on new keys
# leaves hundreds of thousands of records that live a day, and a database that size slows every
# later run, and any other user of this Redis that scans its keys (the store's tests do).
drop_redis_records() {
  command -v redis-cli >/dev/null || return 0
  redis-cli --scan --pattern "$REDIS_PREFIX:*" | xargs -r -d '\n' -n 2000 redis-cli unlink >/dev/null || true
}

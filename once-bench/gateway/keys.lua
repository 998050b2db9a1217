-- wrk script: every request is a JSON POST with an Idempotency-Key no other request has, so every
-- guarded request is a first request (claim, forward, record), never a replay. With BENCH_CYCLE=N
-- each wrk thread cycles through N keys instead: after the first N requests, every one is a replay.
local threads = 0
local run = os.getenv("BENCH_RUN") or tostring(os.time())
local cycle = tonumber(os.getenv("BENCH_CYCLE") or "0")

function setup(thread)
  thread:set("tid", threads)
  threads = threads + 1
end

function init(args)
  prefix = run .. "-" .. tid .. "-"
  n = 0
end

function request()
  n = n + 1
  local key = prefix .. (cycle > 0 and (n % cycle) or n)
  return wrk.format("POST", "/ping", {
    ["Idempotency-Key"] = key,
    ["Api-Key"] = "bench-merchant",
    ["Content-Type"] = "application/json",
  }, '{"amount":1000,"currency":"EUR"}')
end

-- wrk script: every request is a JSON POST with an Idempotency-Key no other request has, so every
-- guarded request is a first request (claim, forward, record), never a replay.
local threads = 0
local run = os.getenv("BENCH_RUN") or tostring(os.time())

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
  return wrk.format("POST", "/ping", {
    ["Idempotency-Key"] = prefix .. n,
    ["Api-Key"] = "bench-merchant",
    ["Content-Type"] = "application/json",
  }, '{"amount":1000,"currency":"EUR"}')
end

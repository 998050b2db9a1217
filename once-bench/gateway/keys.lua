-- wrk script: every request is a JSON POST with an Idempotency-Key no other request has, so every
-- guarded request is a first request (claim, forward, record), never a replay. With BENCH_CYCLE=N
-- each wrk thread cycles through N keys instead: after the first N requests, every one is a replay.
--
-- With BENCH_LATENCY=1 (one connection per wrk thread only), each request's own latency, from its
-- making to its answer, is kept, and done() prints their percentiles on a line of its own
-- ("requests' own latency: ..."). wrk's own percentiles are not that: before printing them it adds
-- synthetic samples for coordinated omission (stats_correct in wrk.c), as if requests were due at
-- the mean rate, so with one connection every request slower than the mean is counted many times
-- over, and its p90 and p99 describe a client that does not exist.
local threads = 0
local all = {}
local run = os.getenv("BENCH_RUN") or tostring(os.time())
local cycle = tonumber(os.getenv("BENCH_CYCLE") or "0")
local timing = os.getenv("BENCH_LATENCY") == "1"

function setup(thread)
  thread:set("tid", threads)
  threads = threads + 1
  table.insert(all, thread)
end

function init(args)
  prefix = run .. "-" .. tid .. "-"
  n = 0
  samples = {}
end

local now
if timing then
  local ffi = require("ffi")
  ffi.cdef [[
    typedef struct { long tv_sec; long tv_nsec; } bench_timespec;
    int clock_gettime(int clock, bench_timespec *tp);
  ]]
  local ts = ffi.new("bench_timespec")
  local CLOCK_MONOTONIC = 1
  now = function()
    ffi.C.clock_gettime(CLOCK_MONOTONIC, ts)
    return tonumber(ts.tv_sec) * 1e6 + tonumber(ts.tv_nsec) / 1e3
  end
end

function request()
  n = n + 1
  if timing then
    started = now()
  end
  local key = prefix .. (cycle > 0 and (n % cycle) or n)
  return wrk.format("POST", "/ping", {
    ["Idempotency-Key"] = key,
    ["Api-Key"] = "bench-merchant",
    ["Content-Type"] = "application/json",
  }, '{"amount":1000,"currency":"EUR"}')
end

if timing then
  function response(status, headers, body)
    samples[#samples + 1] = now() - started
  end
end

function done(summary, latency, requests)
  if not timing then
    return
  end
  local s = {}
  for _, t in ipairs(all) do
    for _, v in ipairs(t:get("samples")) do
      s[#s + 1] = v
    end
  end
  if #s == 0 then
    return
  end
  table.sort(s)
  local function at(p)
    return string.format("%.0fus", s[math.max(1, math.ceil(#s * p))])
  end
  print(string.format("requests' own latency: n %d p50 %s p90 %s p99 %s p99.9 %s max %s",
    #s, at(0.5), at(0.9), at(0.99), at(0.999), at(1)))
end

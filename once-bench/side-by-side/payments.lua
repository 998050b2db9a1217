-- wrk script of the side-by-side comparison: POST /payments with one constant JSON body and an
-- Idempotency-Key chosen by KEYS (environment):
--   new     a key never sent before (the full path: claim, handler, record)
--   prime   the keys of "spread", each once, in order (run before "spread")
--   spread  a random key of SPREAD (10,000) primed keys: replays of finished requests
--   hot     one key for every request: a client hammering one retry
-- done() prints how many answers were replays, so that a replay row that executed (keys not primed)
-- or a new-key row that replayed (keys reused) is seen, not averaged in.

local mode = os.getenv("KEYS") or "new"
local spread = tonumber(os.getenv("SPREAD") or "10000")
local wrk_threads = tonumber(os.getenv("THREADS") or "2")
local body = '{"amount":1000,"currency":"EUR","source":"acct_1","destination":"acct_2"}'
local threads = {}
local count = 0

function setup(thread)
  thread:set("id", #threads)
  thread:set("run", tostring(os.time()) .. "-" .. tostring(math.random(1000000)))
  table.insert(threads, thread)
end

function init(args)
  replayed = 0
  answered = 0
  failed = 0
  wrk.method = "POST"
  wrk.body = body
  wrk.headers["Content-Type"] = "application/json"
end

local function key()
  count = count + 1
  if mode == "new" then
    return "n-" .. run .. "-" .. id .. "-" .. count
  elseif mode == "prime" then
    -- Thread i of n takes keys i, i+n, i+2n, ...: together the threads send each key once.
    return "s-" .. ((id + wrk_threads * (count - 1)) % spread)
  elseif mode == "spread" then
    return "s-" .. math.random(0, spread - 1)
  end
  return "hot"
end

function request()
  wrk.headers["Idempotency-Key"] = key()
  return wrk.format()
end

function response(status, headers, body)
  answered = answered + 1
  if status >= 300 then
    failed = failed + 1
  end
  local flag = headers["Idempotent-Replayed"] or headers["idempotent-replayed"]
  if flag == "true" then
    replayed = replayed + 1
  end
end

function done(summary, latency, requests)
  local r, a, f = 0, 0, 0
  for _, t in ipairs(threads) do
    r = r + t:get("replayed")
    a = a + t:get("answered")
    f = f + t:get("failed")
  end
  io.write(string.format("answers %d replayed %d failed %d\n", a, r, f))
end

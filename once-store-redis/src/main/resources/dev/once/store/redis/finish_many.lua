-- KEYS: records, all in one hash slot; ARGV: retention us, then per key its token, state (C or F),
-- result, ttl us and channel. Returns per record, in order, 1 or 0 as finish.lua answers, or
-- {3, error} for one that failed (see each_key).
local now = now_us()
local retention = tonumber(ARGV[1])
return each_key(function(key, i)
  local a = 2 + (i - 1) * 5
  return finish(key, ARGV[a], ARGV[a + 1], ARGV[a + 2], tonumber(ARGV[a + 3]), retention,
    ARGV[a + 4], now)
end)

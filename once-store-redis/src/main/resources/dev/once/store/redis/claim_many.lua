-- KEYS: records, all in one hash slot; ARGV: retention us, then per key its fingerprint, lease us,
-- ttl us and channel. Returns each record's claim (as claim.lua answers) in order, or {3, error}
-- for one that failed (see each_key). One TIME for the batch, as heartbeat_many.
local now = now_us()
local retention = tonumber(ARGV[1])
return each_key(function(key, i)
  local a = 2 + (i - 1) * 4
  return claim(key, ARGV[a], tonumber(ARGV[a + 1]), tonumber(ARGV[a + 2]), retention, ARGV[a + 3],
    now)
end)

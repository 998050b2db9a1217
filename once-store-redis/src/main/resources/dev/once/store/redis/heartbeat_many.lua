-- KEYS: records, all in one hash slot; ARGV: lease us, retention us, then one token per key.
-- Returns one 1 or 0 per key, in order: whether that token held its record and the lease was extended.
-- One TIME for the batch: every lease in it ends at the same instant.
local now = now_us()
local lease, retention = tonumber(ARGV[1]), tonumber(ARGV[2])
local extended = {}
for i, key in ipairs(KEYS) do
  extended[i] = extend_lease(key, ARGV[i + 2], now, lease, retention)
end
return extended

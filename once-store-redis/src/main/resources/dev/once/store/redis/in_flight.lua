-- KEYS[1] a key the in-flight scan found; ARGV: the bound, us.
-- Returns {2, state, fingerprint, token, lease end, expiry, has recovery point 0|1, now, created or
-- false} if it is a live in-progress record created at least the bound before now, or at a time the
-- record does not say (written before the store recorded it: listed, so it cannot hide), else {0}.
-- Metadata only: the recovery point stays in Redis.
local now = now_us()
local key = KEYS[1]
local h = redis.call('HMGET', key, 's', 'f', 't', 'l', 'e', 'c')
if h[1] ~= 'P' or now >= tonumber(h[5]) then
  return {0}
end
if h[6] and tonumber(h[6]) > now - tonumber(ARGV[1]) then
  return {0}
end
return {2, h[1], h[2], tonumber(h[3]), tonumber(h[4]), tonumber(h[5]), redis.call('HEXISTS', key, 'r'),
  now, time_or_false(h[6])}

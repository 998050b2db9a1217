-- KEYS[1] record; ARGV: token, lease us, retention us, recovery point (optional: a checkpoint).
-- Returns 1 if the caller held the lease and it was extended, else 0.
local now = now_us()
local key = KEYS[1]
local expires = held(key, ARGV[1], now)
if not expires then
  return 0
end
local lease_until = now + tonumber(ARGV[2])
redis.call('HSET', key, 'l', int(lease_until))
if ARGV[4] then
  redis.call('HSET', key, 'r', ARGV[4])
end
if lease_until > expires then
  redis.call('HSET', key, 'e', int(lease_until))
  expire_physically(key, lease_until, tonumber(ARGV[3]))
end
return 1

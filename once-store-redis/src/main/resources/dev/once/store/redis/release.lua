-- KEYS[1] record; ARGV: token, retention us, channel.
-- Returns 1 if the caller held the lease and the record is now absent, else 0.
local now = now_us()
local key = KEYS[1]
local live, notify = held(key, ARGV[1], now)
if not live then
  return 0
end
redis.call('DEL', key)
local retention = tonumber(ARGV[2])
if retention > 0 then
  -- A tombstone that only remembers the token (see the prelude).
  redis.call('HSET', key, 's', 'R', 't', ARGV[1], 'e', int(now))
  expire_physically(key, now, retention)
end
if notify then
  redis.call('PUBLISH', ARGV[3], 'released')
end
return 1

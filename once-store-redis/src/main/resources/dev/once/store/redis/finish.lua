-- KEYS[1] record; ARGV: token, state (C or F), result, ttl us, retention us, channel.
-- Returns 1 if the caller held the lease and the record is now final, else 0.
local now = now_us()
local key = KEYS[1]
if not held(key, ARGV[1], now) then
  return 0
end
local expires = now + tonumber(ARGV[4])
redis.call('HDEL', key, 'r')
redis.call('HSET', key, 's', ARGV[2], 'v', ARGV[3], 'e', int(expires))
expire_physically(key, expires, tonumber(ARGV[5]))
if watched(key) then
  redis.call('PUBLISH', ARGV[6], 'finished')
end
return 1

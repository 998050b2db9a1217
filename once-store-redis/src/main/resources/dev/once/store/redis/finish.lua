-- KEYS[1] record; ARGV: token, state (C or F), result, ttl us, retention us, channel.
-- Returns 1 if the caller held the lease and the record is now final, else 0.
local now = now_us()
local key = KEYS[1]
local live, watched_now, recovering = held(key, ARGV[1], now)
if not live then
  return 0
end
local expires = now + tonumber(ARGV[4])
if recovering then
  redis.call('HDEL', key, 'r')
end
redis.call('HSET', key, 's', ARGV[2], 'v', ARGV[3], 'e', int(expires))
expire_physically(key, expires, tonumber(ARGV[5]))
if watched_now then
  redis.call('PUBLISH', ARGV[6], 'finished')
end
return 1

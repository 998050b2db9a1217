-- KEYS[1] a key the purge scan found; ARGV: retention us, channel.
-- Returns 1 if it was an expired record and is now a tombstone, else 0.
local now = now_us()
local key = KEYS[1]
local h = redis.call('HMGET', key, 's', 't', 'e')
if not (h[1] == 'P' or h[1] == 'C' or h[1] == 'F') or now < tonumber(h[3]) then
  return 0
end
local notify = watched(key)
redis.call('DEL', key)
redis.call('HSET', key, 's', 'R', 't', h[2], 'e', h[3])
expire_physically(key, tonumber(h[3]), tonumber(ARGV[1]))
if notify then
  redis.call('PUBLISH', ARGV[2], 'purged')
end
return 1

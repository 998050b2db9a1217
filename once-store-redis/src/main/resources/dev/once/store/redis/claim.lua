-- KEYS[1] record; ARGV: fingerprint, lease us, ttl us, retention us, channel.
-- Returns {1, token, lease end, stolen 0|1, recovery point} or the live record (live_record).
local now = now_us()
local key = KEYS[1]
local lease_until = now + tonumber(ARGV[2])
local h = read(key)
if is_live(h, now) then
  if h[1] ~= 'P' or now < tonumber(h[4]) or h[2] ~= ARGV[1] then
    return live_record(h, now)
  end
  -- Steal: the lease ended and the same request asks again. The record keeps its recovery point
  -- and its creation time (the work has been running since then), and never loses life it had.
  local token = math.max(now, tonumber(h[3]) + 1)
  local expires = math.max(tonumber(h[5]), lease_until)
  redis.call('HSET', key, 't', int(token), 'l', int(lease_until), 'e', int(expires))
  expire_physically(key, expires, tonumber(ARGV[4]))
  if h[9] then
    redis.call('PUBLISH', ARGV[5], 'stolen')
  end
  return {1, token, lease_until, 1, h[6]}
end
-- Absent, released or expired: a fresh record. The token is the server clock in us, or one more
-- than the last token this key had if that is larger (a burst within one us, or a clock step back).
local token = now
if h[3] then
  token = math.max(now, tonumber(h[3]) + 1)
end
local expires = math.max(now + tonumber(ARGV[3]), lease_until)
local notify = h[9]
if h[1] then
  redis.call('DEL', key) -- the old fields (a result, a recovery point) must not leak into the new record
end
redis.call('HSET', key, 's', 'P', 'f', ARGV[1], 't', int(token), 'l', int(lease_until), 'e', int(expires),
  'c', int(now))
expire_physically(key, expires, tonumber(ARGV[4]))
if notify then
  redis.call('PUBLISH', ARGV[5], 'claimed')
end
return {1, token, lease_until, 0, false}

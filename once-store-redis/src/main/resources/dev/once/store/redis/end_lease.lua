-- KEYS[1] record; ARGV: token, channel.
-- Ends the lease now if the caller holds it; the rest of the record stays, so the next claim steals
-- it with its recovery point. A waiter is told, so that it can be that claim.
-- Returns 1 if it did, else 0.
local now = now_us()
local live, notify = held(KEYS[1], ARGV[1], now)
if not live then
  return 0
end
redis.call('HSET', KEYS[1], 'l', int(now))
if notify then
  redis.call('PUBLISH', ARGV[2], 'ended')
end
return 1

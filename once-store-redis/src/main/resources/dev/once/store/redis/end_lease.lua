-- KEYS[1] record; ARGV: token.
-- Ends the lease now if the caller holds it; the rest of the record stays, so the next claim steals
-- it with its recovery point. Publishes nothing: waiters see it at their next look.
-- Returns 1 if it did, else 0.
local now = now_us()
if not held(KEYS[1], ARGV[1], now) then
  return 0
end
redis.call('HSET', KEYS[1], 'l', int(now))
return 1

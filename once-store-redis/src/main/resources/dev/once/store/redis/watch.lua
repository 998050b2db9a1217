-- KEYS[1] record. Marks it watched (the w field) so that its changes are published, if it exists: a
-- mark on an absent key would create a hash that never expires. Returns 1 if it marked it.
if redis.call('EXISTS', KEYS[1]) == 0 then
  return 0
end
redis.call('HSET', KEYS[1], 'w', '1')
return 1

-- KEYS[1] record; ARGV: fingerprint, lease us, ttl us, retention us, channel.
-- Returns {1, token, lease end, stolen 0|1, recovery point} or the live record (live_record).
return claim(KEYS[1], ARGV[1], tonumber(ARGV[2]), tonumber(ARGV[3]), tonumber(ARGV[4]), ARGV[5],
  now_us())

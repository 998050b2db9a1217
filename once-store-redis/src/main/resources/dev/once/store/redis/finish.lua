-- KEYS[1] record; ARGV: token, state (C or F), result, ttl us, retention us, channel.
-- Returns 1 if the caller held the lease and the record is now final, else 0.
return finish(KEYS[1], ARGV[1], ARGV[2], ARGV[3], tonumber(ARGV[4]), tonumber(ARGV[5]), ARGV[6],
  now_us())

-- KEYS[1] record; ARGV: token, lease us, retention us, recovery point (optional: a checkpoint).
-- Returns 1 if the caller held the lease and it was extended, else 0.
return extend_lease(KEYS[1], ARGV[1], now_us(), tonumber(ARGV[2]), tonumber(ARGV[3]), ARGV[4])

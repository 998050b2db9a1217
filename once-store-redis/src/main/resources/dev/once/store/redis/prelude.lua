-- Shared by every script (LuaScript prepends it). A record is one hash:
--   s  state: P in progress, C completed, F failed final, R released or purged (a tombstone)
--   f  fingerprint          t  token of the current or last lease
--   l  lease end, us        e  expiry, us (logical: at or after it the record is absent)
--   r  recovery point       v  result
--   c  created, us: when the first lease was granted (a steal keeps it); absent on records
--      written before the store recorded it
--   w  set while a caller waits for a change (watch.lua); changes are published only then
-- Times are the server's clock in microseconds since the epoch (below 2^53, so exact in Lua numbers).
-- Redis deletes the hash by itself `retention` after e: until then it keeps the last token, so a
-- new lease on the key is granted a larger one even if the server clock steps back.
local function now_us()
  local t = redis.call('TIME')
  return tonumber(t[1]) * 1000000 + tonumber(t[2])
end

-- Integers as Redis stores them: tostring() would print 1.7e+15 and lose digits. Redis's Lua 5.1
-- formats %d from a C long, 64 bits wherever Redis runs, so every integer below 2^53 prints exact;
-- '%.0f' does too, but glibc formats doubles by a slower path (about 1 us against 0.45 us a call,
-- measured in EVALSHA: five of these per claim).
local function int(x)
  return string.format('%d', x)
end

local function expire_physically(key, expires_us, retention_us)
  redis.call('PEXPIREAT', key, int(math.ceil((expires_us + retention_us) / 1000)))
end

-- The record's expiry if the caller's token holds the live in-progress record, else nil; then
-- whether a caller watches it (see watched) and whether it holds a recovery point, read by the same
-- HMGET so that a completion needs no second look. Tokens compare as strings: Java sends
-- Long.toString, the hash holds int(), the same digits.
local function held(key, token, now)
  local h = redis.call('HMGET', key, 's', 't', 'e', 'w', 'r')
  if h[1] ~= 'P' or h[2] ~= token then
    return nil
  end
  local expires = tonumber(h[3])
  if now >= expires then
    return nil
  end
  return expires, h[4] ~= false, h[5] ~= false
end

-- Extends the lease of the record at key if token holds it (see held): it ends lease_us from now, and
-- the record lives at least that long. Saves the recovery point too, if one is given (a checkpoint).
-- Returns 1 if it did, else 0.
local function extend_lease(key, token, now, lease_us, retention_us, recovery_point)
  local expires = held(key, token, now)
  if not expires then
    return 0
  end
  local lease_until = now + lease_us
  redis.call('HSET', key, 'l', int(lease_until))
  if recovery_point then
    redis.call('HSET', key, 'r', recovery_point)
  end
  if lease_until > expires then
    redis.call('HSET', key, 'e', int(lease_until))
    expire_physically(key, lease_until, retention_us)
  end
  return 1
end

-- A time field as a number, or false (absent, as Redis replies nil) if the hash has none.
local function time_or_false(x)
  if x then
    return tonumber(x)
  end
  return false
end

-- The record as the Java side parses it (Replies.record): false marks an absent field.
local function live_record(h, now)
  return {2, h[1], h[2], tonumber(h[3]), tonumber(h[4]), tonumber(h[5]), h[6], h[7], now,
    time_or_false(h[8])}
end

-- The record's fields, and as the ninth whether a caller watches it (see watched).
local function read(key)
  return redis.call('HMGET', key, 's', 'f', 't', 'l', 'e', 'r', 'v', 'c', 'w')
end

-- A record in a state this version does not know (a later version's, while two share the store)
-- is live too: the Java side answers it as unreadable, and nothing here overwrites it.
local function is_live(h, now)
  return h[1] and h[1] ~= 'R' and now < tonumber(h[5])
end

-- Whether a caller waits for a change of the record (see watch.lua): read before a script deletes
-- the hash, since the mark goes with it. The hot scripts (claim, finish) take the mark from the
-- HMGET they make anyway (read, held): each Redis call is a few microseconds of the server's one
-- thread.
local function watched(key)
  return redis.call('HEXISTS', key, 'w') == 1
end

-- Claims the record at key at time now (claim.lua's answer): a lease on an absent, released or
-- expired record, or on a stale one of the same fingerprint (a steal); else the live record.
-- Returns {1, token, lease end, stolen 0|1, recovery point} or the live record (live_record).
local function claim(key, fingerprint, lease_us, ttl_us, retention_us, channel, now)
  local lease_until = now + lease_us
  local h = read(key)
  if is_live(h, now) then
    if h[1] ~= 'P' or now < tonumber(h[4]) or h[2] ~= fingerprint then
      return live_record(h, now)
    end
    -- Steal: the lease ended and the same request asks again. The record keeps its recovery point
    -- and its creation time (the work has been running since then), and never loses life it had.
    local token = math.max(now, tonumber(h[3]) + 1)
    local expires = math.max(tonumber(h[5]), lease_until)
    redis.call('HSET', key, 't', int(token), 'l', int(lease_until), 'e', int(expires))
    expire_physically(key, expires, retention_us)
    if h[9] then
      redis.call('PUBLISH', channel, 'stolen')
    end
    return {1, token, lease_until, 1, h[6]}
  end
  -- Absent, released or expired: a fresh record. The token is the server clock in us, or one more
  -- than the last token this key had if that is larger (a burst within one us, or a clock step
  -- back).
  local token = now
  if h[3] then
    token = math.max(now, tonumber(h[3]) + 1)
  end
  local expires = math.max(now + ttl_us, lease_until)
  local notify = h[9]
  if h[1] then
    redis.call('DEL', key) -- the old fields (a result, a recovery point) must not leak into the new record
  end
  redis.call('HSET', key, 's', 'P', 'f', fingerprint, 't', int(token), 'l', int(lease_until),
    'e', int(expires), 'c', int(now))
  expire_physically(key, expires, retention_us)
  if notify then
    redis.call('PUBLISH', channel, 'claimed')
  end
  return {1, token, lease_until, 0, false}
end

-- Finishes the record at key at time now if token holds its lease (finish.lua's answer): state C
-- or F, the result, living ttl_us from now. Returns 1 if it did, else 0.
local function finish(key, token, state, result, ttl_us, retention_us, channel, now)
  local live, watched_now, recovering = held(key, token, now)
  if not live then
    return 0
  end
  local expires = now + ttl_us
  if recovering then
    redis.call('HDEL', key, 'r')
  end
  redis.call('HSET', key, 's', state, 'v', result, 'e', int(expires))
  expire_physically(key, expires, retention_us)
  if watched_now then
    redis.call('PUBLISH', channel, 'finished')
  end
  return 1
end

-- The message of an error caught by pcall: Redis raises a table with the message in err, Lua a
-- string.
local function failure(e)
  if type(e) == 'table' and e.err then
    return e.err
  end
  return tostring(e)
end

-- A batch script's answers: fn(key, i) for every key of KEYS in order, each under pcall, so that a
-- record that fails (its key holds something that is not a record's hash, which fails at the
-- record's first HMGET, before it writes) answers {3, error} for itself and the others still run.
-- An error that ended the script would leave what it wrote before unknown to the caller, since
-- Redis does not undo a script's writes.
local function each_key(fn)
  local answers = {}
  for i, key in ipairs(KEYS) do
    local ok, answer = pcall(fn, key, i)
    if ok then
      answers[i] = answer
    else
      answers[i] = {3, failure(answer)}
    end
  end
  return answers
end

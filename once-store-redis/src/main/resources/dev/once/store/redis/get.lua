-- KEYS[1] record. Returns the live record (live_record), or {0} if it is absent or expired.
local now = now_us()
local h = read(KEYS[1])
if is_live(h, now) then
  return live_record(h, now)
end
return {0}

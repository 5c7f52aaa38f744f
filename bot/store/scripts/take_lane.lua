-- The lane's value: 'take:<token>:<until ms>' (a delivery has it) or 'hold:<entry id>:<until ms>'.
-- The channel's pause: '<until ms>' (Slack's Retry-After), then '<until ms>:<next ms>' once lanes start again.
-- KEYS: lane_key, pause_key (its channel's). ARGV: token (this delivery's), now_ms, lease_ms, first_entry: the
-- first entry it would send, pace_ms: how far apart lanes of a channel start after a pause.
-- Returns -1 when the lane is taken for this delivery, 0 while another delivery is sending to it (for under a
-- second), -2 - how many ms to wait while its channel is paused or starting again after a pause, else how many ms to
-- wait (held for an entry put back, a delivery slow or dead).
-- A lane held for an entry may be taken by a delivery starting with that entry or an earlier one
-- (entry ids order entries by the time they were queued).
-- After a pause, while its key lasts, the channel's lanes start one per pace: all at once, every waiting thread of the
-- channel hit the limit again the instant the pause ended.
local now = tonumber(now_ms)
local pause = redis.call('GET', pause_key)
local paused_until, next_ms
if pause then
  paused_until, next_ms = string.match(pause, '^(%d+):?(%d*)$')
  paused_until = tonumber(paused_until)
  next_ms = tonumber(next_ms) or paused_until
  if paused_until and paused_until > now then return -2 - (paused_until - now) end
  if next_ms and next_ms > now then return -2 - (next_ms - now) end
end
local holder = redis.call('GET', lane_key)
if holder then
  local kind, who, until_ms = string.match(holder, '^(%a+):(.*):(%d+)$')
  until_ms = tonumber(until_ms)
  if until_ms and until_ms > now and not (kind == 'hold' and first_entry <= who) then
    if kind == 'take' then
      -- A delivery in progress is over in moments, whatever its lease says: look again at once. One that has had
      -- the lane for over a second is slow, or dead (its lease frees the lane): look again each second.
      if tonumber(lease_ms) - (until_ms - now) < 1000 then return 0 end
      return math.min(until_ms - now, 1000)
    end
    return until_ms - now
  end
end
if paused_until then
  redis.call('SET', pause_key, paused_until .. ':' .. (now + tonumber(pace_ms)), 'KEEPTTL')
end
local until_ms = now + tonumber(lease_ms)
redis.call('SET', lane_key, 'take:' .. token .. ':' .. until_ms, 'PX', tonumber(lease_ms) + LANE_KEPT_MS)
return -1

-- KEYS: lane_key. ARGV: token: this delivery's, put_back: the entry put back ('' = none), now_ms, hold_ms.
-- Frees the lane, or holds it for the entry put back; only while this delivery still has it.
local holder = redis.call('GET', lane_key)
local kind, who = string.match(holder or '', '^(%a+):(.*):%d+$')
if kind ~= 'take' or who ~= token then return 0 end
if put_back == '' then
  redis.call('DEL', lane_key)
else
  local until_ms = tonumber(now_ms) + tonumber(hold_ms)
  redis.call('SET', lane_key, 'hold:' .. put_back .. ':' .. until_ms, 'PX', tonumber(hold_ms) + LANE_KEPT_MS)
end
return 1

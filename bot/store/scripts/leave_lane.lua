-- KEYS: 1 the lane. ARGV: 1 this delivery's token, 2 the entry put back ('' = none), 3 now ms, 4 hold ms.
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

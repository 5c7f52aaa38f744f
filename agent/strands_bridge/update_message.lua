-- Updates one message of the messages hash if it is still at expected_version (kept in the versions hash; a message
-- never updated is at 1). Same returns as update_record.lua.
if redis.call('HEXISTS', messages_key, message_id) == 0 then return {-2, 0} end
local raw = redis.call('HGET', versions_key, message_id) or '1'
local current = tonumber(raw)
if current == nil then return {-1, raw} end
if current ~= tonumber(expected_version) then return {0, current} end
redis.call('HSET', messages_key, message_id, record)
redis.call('HSET', versions_key, message_id, current + 1)
return {1, current + 1}

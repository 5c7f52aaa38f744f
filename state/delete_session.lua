-- Deletes a session if it is still at expected_version, and its interrupted index entry. Returns {1, 0}, {0,
-- actual_version} on conflict, {-1, what} when the key holds corrupted or foreign data (``read_version``).
local current, refused = read_version(session_key, format)
if refused then return refused end
if current ~= tonumber(expected_version) then return {0, current} end
redis.call('DEL', session_key)
redis.call('ZREM', interrupted_key, session_id)
return {1, 0}

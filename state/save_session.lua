-- Writes a session if it is still at expected_version: the hash, its TTL (none while interrupted: ttl_ms 0, or
-- interrupted '1') and its entry in the shard's interrupted index (interrupted_key). Returns {1, new_version}, {0,
-- actual_version} on conflict, {-1, what} when the key holds corrupted or foreign data (``read_version``).
-- The same write sent again (its reply was lost to a connection error and it was retried, by the caller or by the
-- client) finds its own result one version on: it is answered as written.
local current, refused = read_version(session_key, format)
if refused then return refused end
if current == tonumber(expected_version) + 1 then
  local stored = redis.call('HMGET', session_key, 'messages', 'agent_state', 'interrupt_state')
  if stored[1] == messages and stored[2] == agent_state and stored[3] == interrupt_state then return {1, current} end
end
if current ~= tonumber(expected_version) then return {0, current} end
local new_version = current + 1
redis.call('HSET', session_key, 'version', new_version, 'format', format, 'updated_at_ms', now_ms,
  'messages', messages, 'agent_state', agent_state, 'interrupt_state', interrupt_state)
if tonumber(ttl_ms) > 0 and interrupted ~= '1' then
  redis.call('PEXPIRE', session_key, ttl_ms)
else
  redis.call('PERSIST', session_key)
end
if interrupted == '1' and current == 0 then
  -- A new session: an index entry left by an expired namesake must not keep its old time.
  redis.call('ZADD', interrupted_key, now_ms, session_id)
elseif interrupted == '1' then
  redis.call('ZADD', interrupted_key, 'NX', now_ms, session_id)
else
  redis.call('ZREM', interrupted_key, session_id)
end
return {1, new_version}

-- KEYS: the outbox's due_key, entries_key, claims_key; cooling_key: the person's home cooling.
-- ARGV: entry_id, mark: the change mark the published tab was built after, now_ms, cooling_ms.
-- After an App Home was published: starts the person's cooling, and completes the entry unless a change came while
-- it was built (its mark differs): then the entry stays, due when the cooling ends, so that change is shown too.
-- Returns 1 if completed, 0 if kept for the change.
if tonumber(cooling_ms) > 0 then redis.call('SET', cooling_key, '1', 'PX', cooling_ms) end
local stored = redis.call('HGET', entries_key, entry_id)
redis.call('HDEL', claims_key, entry_id)
if (not stored) or string.find(stored, mark, 1, true) then
  redis.call('ZREM', due_key, entry_id)
  redis.call('HDEL', entries_key, entry_id)
  return 1
end
redis.call('ZADD', due_key, tonumber(now_ms) + tonumber(cooling_ms), entry_id)
return 0

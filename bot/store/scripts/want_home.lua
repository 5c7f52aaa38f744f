-- KEYS: the outbox's due_key, entries_key, wake_key; cooling_key: the person's home cooling.
-- ARGV: entry_id, entry (JSON), now_ms, wake_kept: the wake tokens kept.
-- Asks for one App Home rebuild: the entry is written anew (its change mark tells its holder that something changed
-- while it was building), and queued only when not queued yet, due when the person's cooling ends. Returns 1 if
-- queued, 0 if it merged into the one already waiting or being built.
local queued = redis.call('HEXISTS', entries_key, entry_id) == 1
redis.call('HSET', entries_key, entry_id, entry)
if queued then return 0 end
local due = tonumber(now_ms)
local cooling = redis.call('PTTL', cooling_key)
if cooling > 0 then due = due + cooling end
redis.call('ZADD', due_key, due, entry_id)
if redis.call('LLEN', wake_key) < tonumber(wake_kept) then redis.call('LPUSH', wake_key, '1') end
return 1

-- The outbox's writes in other owners' scripts (``bot.store.queues.outbox``).

-- queue_outbox(due_key, entries_key, wake_key, run): queues the run of one or more ``Outbox.script_entry`` (all of
-- one shard, one after the other) on that shard's outbox (``Outbox.script_keys``).
local function queue_outbox(due_key, entries_key, wake_key, run)
  for at = run[1], run[2], 4 do  -- each entry: id, entry JSON, due ms, wake tokens kept
    redis.call('HSET', entries_key, ARGV[at], ARGV[at + 1])
    redis.call('ZADD', due_key, ARGV[at + 2], ARGV[at])
    -- A full wake list wakes the dispatcher as well: a token more is one write (and one AOF line) for nothing.
    if redis.call('LLEN', wake_key) < tonumber(ARGV[at + 3]) then redis.call('LPUSH', wake_key, '1') end
  end
end

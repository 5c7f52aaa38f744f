-- The schedule's writes in other owners' scripts (``bot.store.queues.schedule``).

-- push_back(due_key, entry_id, until_ms): the step ``entry_id``, if still scheduled, comes no sooner than
-- ``until_ms``.
local function push_back(due_key, entry_id, until_ms)
  redis.call('ZADD', due_key, 'XX', 'GT', until_ms, entry_id)
end

-- drop_steps(due_key, steps_key, run): unschedules the steps whose entry ids are the run (one call for every kind
-- of step).
local function drop_steps(due_key, steps_key, run)
  redis.call('ZREM', due_key, unpack(ARGV, run[1], run[2]))
  redis.call('HDEL', steps_key, unpack(ARGV, run[1], run[2]))
end

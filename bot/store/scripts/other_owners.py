"""The Lua functions a script that writes another owner's records starts with (``OTHER_OWNERS``).

Each owner makes its record for a script as a run of arguments (``bot.store.scripts.ScriptRecord``); these
functions write a run as that owner would, so that no script spells another owner's format.
"""

from typing import Final

# runs_from(first): the runs of ARGV from index ``first`` on (each a length, then that many arguments), as
#   {first index, last index} pairs.
# queue_outbox: args (outbox due zset, entries hash, wake list: Outbox.script_keys; the run of one or more
#   Outbox.script_entry, one after the other, all of that shard).
# queue_job: args (jobs stream, the run of JobQueue.script_resume, the values to append to its fields).
# add_audit: args (audit stream, the run of one of Audit.script_events, optionally a function each value goes
#   through: it fills in what only the script knows).
OTHER_OWNERS: Final = """
local function runs_from(first)
  local runs, at = {}, first
  while at <= #ARGV do
    local count = tonumber(ARGV[at])
    runs[#runs + 1] = {at + 1, at + count}
    at = at + count + 1
  end
  return runs
end
local function queue_outbox(due_key, entries_key, wake_key, run)
  for at = run[1], run[2], 4 do  -- each entry: id, entry JSON, due ms, wake tokens kept
    redis.call('HSET', entries_key, ARGV[at], ARGV[at + 1])
    redis.call('ZADD', due_key, ARGV[at + 2], ARGV[at])
    -- A full wake list wakes the dispatcher as well: a token more is one write (and one AOF line) for nothing.
    if redis.call('LLEN', wake_key) < tonumber(ARGV[at + 3]) then redis.call('LPUSH', wake_key, '1') end
  end
end
local function queue_job(stream_key, run, ...)
  local fields = {unpack(ARGV, run[1] + 1, run[2])}  -- after the stream's max length: field, value, ...
  for _, value in ipairs({...}) do fields[#fields + 1] = value end
  redis.call('XADD', stream_key, 'MAXLEN', '~', ARGV[run[1]], '*', unpack(fields))
end
local function add_audit(stream_key, run, fill)
  if not fill then return redis.call('XADD', stream_key, '*', unpack(ARGV, run[1], run[2])) end
  local fields = {unpack(ARGV, run[1], run[2])}
  for index, value in ipairs(fields) do fields[index] = fill(value) end
  redis.call('XADD', stream_key, '*', unpack(fields))
end
"""

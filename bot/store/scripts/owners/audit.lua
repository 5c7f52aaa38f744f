-- The audit's writes in other owners' scripts (``bot.store.audit``).

-- add_audit(stream_key, run, fill): adds the event of the run of one of ``Audit.script_events``; ``fill``, if
-- given, is a function each value goes through (it fills in what only the script knows).
local function add_audit(stream_key, run, fill)
  if not fill then return redis.call('XADD', stream_key, '*', unpack(ARGV, run[1], run[2])) end
  local fields = {unpack(ARGV, run[1], run[2])}
  for index, value in ipairs(fields) do fields[index] = fill(value) end
  redis.call('XADD', stream_key, '*', unpack(fields))
end

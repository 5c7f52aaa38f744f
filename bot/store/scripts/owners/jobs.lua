-- The job queue's writes in other owners' scripts (``bot.store.queues.jobs``).

-- queue_job(stream_key, run, ...): adds the job of the run of ``JobQueue.script_resume``, the values ``...``
-- appended to its fields.
local function queue_job(stream_key, run, ...)
  local fields = {unpack(ARGV, run[1] + 1, run[2])}  -- after the stream's max length: field, value, ...
  for _, value in ipairs({...}) do fields[#fields + 1] = value end
  redis.call('XADD', stream_key, 'MAXLEN', '~', ARGV[run[1]], '*', unpack(fields))
end

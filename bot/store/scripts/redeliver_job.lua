-- KEYS: stream_key (the jobs'). ARGV: group, consumer, job_id, mode: "count" or "keep".
-- Claims the job again for the consumer only if it still holds it (another worker may have taken
-- it over); "count" counts a delivery, "keep" does not. Returns {fields, deliveries}, or false.
local pending = redis.call('XPENDING', stream_key, group, job_id, job_id, 1)
if #pending == 0 or pending[1][2] ~= consumer then return false end
if mode == 'keep' then
  redis.call('XCLAIM', stream_key, group, consumer, 0, job_id, 'JUSTID')
  local entry = redis.call('XRANGE', stream_key, job_id, job_id)
  if #entry == 0 then return false end
  return {entry[1][2], pending[1][4]}
end
local claimed = redis.call('XCLAIM', stream_key, group, consumer, 0, job_id)
if #claimed == 0 or not claimed[1][2] then return false end
return {claimed[1][2], pending[1][4] + 1}

-- KEYS: stream_key (the jobs'). ARGV: group, leaving: the consumer.
-- Deletes the consumer if it holds no job (else its jobs wait for another worker to claim them).
-- Returns 1 if it is gone (or never was), 0 if it still holds jobs.
for _, consumer in ipairs(redis.call('XINFO', 'CONSUMERS', stream_key, group)) do
  local info = {}
  for index = 1, #consumer, 2 do info[consumer[index]] = consumer[index + 1] end
  if info['name'] == leaving then
    if tonumber(info['pending']) > 0 then return 0 end
    return redis.call('XGROUP', 'DELCONSUMER', stream_key, group, leaving) + 1
  end
end
return 1

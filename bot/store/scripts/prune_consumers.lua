-- KEYS: stream_key (the jobs'). ARGV: group, idle_ms, keep: the consumer to keep.
-- Deletes every other consumer with nothing pending and idle longer than idle_ms; returns how
-- many. One script, so no job can be delivered to a consumer between the check and the delete
-- (deleting a consumer drops its pending entries).
local removed = 0
for _, consumer in ipairs(redis.call('XINFO', 'CONSUMERS', stream_key, group)) do
  local info = {}
  for index = 1, #consumer, 2 do info[consumer[index]] = consumer[index + 1] end
  if info['name'] ~= keep and tonumber(info['pending']) == 0 and tonumber(info['idle']) > tonumber(idle_ms) then
    redis.call('XGROUP', 'DELCONSUMER', stream_key, group, info['name'])
    removed = removed + 1
  end
end
return removed

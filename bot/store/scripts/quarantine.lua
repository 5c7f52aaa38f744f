-- KEYS: approval_key, open_key and open_by_key: the open and open-by indexes of its shard, notes_key: the shard's
--       quarantine notes. ARGV: approval_id, note (JSON). Takes an unreadable approval out of what waits: the open
--       index and its open-by entries (the ones its 'indexed' field lists: the workspace's, its approvers', its rule's,
--       which the pending gauges count), and records why. The record itself is left untouched, for inspection.
redis.call('ZREM', open_key, approval_id)
for _, member in ipairs(open_entries(redis.call('HGET', approval_key, 'indexed'), approval_id)) do
  redis.call('ZREM', open_by_key, member)
end
redis.call('HSET', notes_key, approval_id, note)
return 0

-- KEYS: approval_key, open_by_key: the open-by index of its shard. ARGV: indexed: its 'indexed' field
--       (``approval_index.open_record``), then from ARGV_MORE its open-by members. Lists a waiting approval stored
--       before the indexes (``python -m bot migrate --indexes``), unless it is decided or gone: atomic with its
--       decision, so a decided one is never listed. Idempotent.
-- Returns how many of its entries were missing.
if redis.call('HEXISTS', approval_key, 'request') == 0 or redis.call('HEXISTS', approval_key, 'decision') == 1 then
  return 0
end
redis.call('HSET', approval_key, 'indexed', indexed)
local added = 0
for index = ARGV_MORE, #ARGV do added = added + redis.call('ZADD', open_by_key, 0, ARGV[index]) end
return added

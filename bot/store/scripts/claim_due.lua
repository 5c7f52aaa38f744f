-- KEYS: due_key (zset), entries_key (hash), [the claims hash]. ARGV: now_ms, lease_ms, limit.
-- Moves each due entry's time to now + lease (and counts the claim, with a claims hash) and returns
-- a flat list id1, entry1, claims1, id2, entry2, claims2, ... (claims 0 without a claims hash).
local claims_key = KEYS[KEYS_MORE]  -- none: claims are not counted
local ids = redis.call('ZRANGEBYSCORE', due_key, '-inf', now_ms, 'LIMIT', 0, tonumber(limit))
local out = {}
for _, id in ipairs(ids) do
  local entry = redis.call('HGET', entries_key, id)
  if entry then
    redis.call('ZADD', due_key, tonumber(now_ms) + tonumber(lease_ms), id)
    table.insert(out, id)
    table.insert(out, entry)
    if claims_key then table.insert(out, redis.call('HINCRBY', claims_key, id, 1)) else table.insert(out, 0) end
  else
    redis.call('ZREM', due_key, id)
  end
end
return out

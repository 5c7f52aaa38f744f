-- KEYS: fence_key, then from KEYS_MORE more: the fences of one session's uses of a revoked grant
--       (``keys.grant_revoked``, one slot).
-- ARGV: kept_s: how long each fence is kept.
-- Writes each fence (the decide script then refuses the grant's decision of that use's call). Returns how many.
redis.call('SET', fence_key, '1', 'EX', tonumber(kept_s))
for index = KEYS_MORE, #KEYS do
  redis.call('SET', KEYS[index], '1', 'EX', tonumber(kept_s))
end
return #KEYS

-- Drops an interrupted index entry whose session expired (TTL) or was removed behind the store's back. Returns 1 if
-- dropped.
if redis.call('EXISTS', session_key) == 0 then
  return redis.call('ZREM', interrupted_key, session_id)
end
return 0

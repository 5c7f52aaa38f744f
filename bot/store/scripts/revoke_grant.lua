-- KEYS: grants_key: the channel's grants (hash), calls_key: the index listing the grant (grants_key again when it is
--       not live: nothing to take out), in_flight_key: the channel's uses in flight (zset, by Redis' time of the use).
-- ARGV: grant_id, kept_ms: how long after its use a use can still decide its call (older ones are dropped), actor: who
--       ends it (kept in '<grant id>:revoked-by' while the revoke is owed: whoever finishes it audits it as theirs).
-- The first step of a revoke: the grant stops covering calls, and the revoke is owed until its uses in flight are
-- fenced (the '<grant id>:revoking' field holds the grant until then; ``GrantStore`` removes it once they are).
-- Run again for a grant being revoked (or gone), it only reads what is owed.
-- Returns {1 if this call ended the grant else 0, the grant's JSON ('' if neither live nor being revoked), the
-- members of in_flight_key the grant's uses are listed under, who ended it ('' if unknown)}.
local time = redis.call('TIME')
local now = tonumber(time[1]) * 1000 + math.floor(tonumber(time[2]) / 1000)
local owed_field = grant_id .. ':revoking'
local text = redis.call('HGET', grants_key, grant_id)
local ended = 0
if text then
  redis.call('HSET', grants_key, owed_field, text, grant_id .. ':revoked-by', actor)
  redis.call('HDEL', grants_key, grant_id)  -- from here on no call is covered (USE_GRANT reads this field)
  if calls_key ~= grants_key then redis.call('ZREM', calls_key, grant_id) end
  ended = 1
else
  text = redis.call('HGET', grants_key, owed_field) or ''
end
-- Uses older than kept_ms decide nothing any more: they need no fence.
redis.call('ZREMRANGEBYSCORE', in_flight_key, '-inf', '(' .. (now - tonumber(kept_ms)))
local prefix = grant_id .. ':'
local uses = {}
for _, member in ipairs(redis.call('ZRANGE', in_flight_key, 0, -1)) do
  if string.sub(member, 1, #prefix) == prefix then uses[#uses + 1] = member end
end
return {ended, text, uses, redis.call('HGET', grants_key, grant_id .. ':revoked-by') or ''}

-- KEYS: grants_key: the channel's grants (hash), exact_key: the grants covering the exact call (zset, by expiry
--       ms), fields_key: the grants on picked fields of the call's tool for its asker (zset, by expiry ms; exact_key
--       again when none may cover it), counted_key: which grant the approval the call is asked in counted a use of,
--       in_flight_key: the channel's uses in flight (zset).
-- ARGV: clock_offset_ms: how far the bot's clock is from Redis' TIME (0 but in a sandbox or a test), rule: the
--       call's, requester ('' = none), self_allowed: '1' when the rule allows self-approval, terms: the digest of
--       who may decide under the rule now (``GrantTerms``), longest_ms: the rule's longest duration now,
--       field_digests: the call's (JSON object: ``field_digests``), use_member: '<session id>:<approval id>' (the use's
--       member in in_flight_key, after '<grant id>:'), kept_ms: how long after its use a use can still decide its call.
-- Now is Redis' TIME (plus clock_offset_ms): one clock for every process that grants, uses and lists grants.
-- Returns {the first live grant that covers the call (its JSON), Redis' TIME (ms, without clock_offset_ms)}, its use
-- counted once per approval (a publish tried again counts nothing more: counted_key names the grant counted, for a
-- day) and listed in flight, scored by Redis' TIME, until the decision is written (a revoke fences every use listed;
-- uses older than kept_ms are dropped on every use: they decide nothing any more); or false: one on the
-- exact call, else one whose every picked field the call has with the same value. Expired ids and ids whose grant is
-- gone (revoked: the hash entry is deleted first) are dropped on the way. Atomic with a revoke: once a revoke has
-- deleted the grant, no call is covered by it.
local time = redis.call('TIME')
local now = tonumber(time[1]) * 1000 + math.floor(tonumber(time[2]) / 1000) + tonumber(clock_offset_ms)
local call_fields = cjson.decode(field_digests)
local function fields_match(grant)
  if type(grant.fields) ~= 'table' or next(grant.fields) == nil then return false end
  for name, digest in pairs(grant.fields) do
    if call_fields[name] ~= digest then return false end
  end
  return true
end
for index, index_key in ipairs({exact_key, fields_key}) do  -- 1: the exact call's, 2: the tool's
  if index == 2 and fields_key == exact_key then break end
  for _, id in ipairs(redis.call('ZRANGEBYSCORE', index_key, '(' .. now, '+inf')) do
    local text = redis.call('HGET', grants_key, id)
    if not text then
      redis.call('ZREM', index_key, id)
    else
      local ok, grant = pcall(cjson.decode, text)
      if not ok or type(grant) ~= 'table' then  -- an unreadable record covers nothing, and blinds nothing
        redis.call('ZREM', index_key, id)
      else
        local requester_ok = grant.requester == cjson.null or grant.requester == requester
        local self_ok = self_allowed == '1' or grant.granted_by ~= requester
        -- Granted under the rule as it is now (same deciders), and no longer ago than its longest duration now.
        local terms_ok = grant.terms == terms and tonumber(grant.granted_ms or '') ~= nil
          and now <= tonumber(grant.granted_ms) + tonumber(longest_ms)
        -- The exact call's index lists whole-input grants only; the tool's, grants on picked fields only.
        local shape_ok = (index == 1) == (type(grant.fields) ~= 'table') and (index == 1 or fields_match(grant))
        if grant.rule == rule and requester_ok and self_ok and terms_ok and shape_ok then
          if redis.call('GET', counted_key) ~= id then
            redis.call('SET', counted_key, id, 'EX', 86400)
            redis.call('HINCRBY', grants_key, id .. ':uses', 1)
          end
          local used = tonumber(time[1]) * 1000 + math.floor(tonumber(time[2]) / 1000)
          redis.call('ZREMRANGEBYSCORE', in_flight_key, '-inf', '(' .. (used - tonumber(kept_ms)))
          redis.call('ZADD', in_flight_key, used, id .. ':' .. use_member)
          redis.call('PEXPIRE', in_flight_key, tonumber(kept_ms))  -- every member is younger
          return {text, used}
        end
      end
    end
  end
  redis.call('ZREMRANGEBYSCORE', index_key, '-inf', now)
end
return false

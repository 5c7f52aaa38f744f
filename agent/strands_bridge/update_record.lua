-- Updates a versioned record's hash if it is still at expected_version.
-- Returns {1, new}, {0, actual} on conflict, {-2, 0} when missing, {-1, what} when corrupted.
-- The same update sent again (its reply was lost and it was retried) is answered as written.
local raw = redis.call('HGET', record_key, 'version')
if not raw then
  if redis.call('EXISTS', record_key) == 1 then return {-1, 'missing version'} end
  return {-2, 0}
end
local current = tonumber(raw)
if current == nil then return {-1, raw} end
if current == tonumber(expected_version) + 1 and redis.call('HGET', record_key, 'record') == record then
  return {1, current}
end
if current ~= tonumber(expected_version) then return {0, current} end
redis.call('HSET', record_key, 'version', current + 1, 'record', record)
return {1, current + 1}

-- KEYS: shown_key (the version shown), lease_key (the update's). ARGV: token (the lease's), version, ttl_s.
-- Records the version shown only while the caller still holds the lease. Returns 1 if recorded.
if redis.call('GET', lease_key) ~= token then return 0 end
redis.call('SET', shown_key, version, 'EX', tonumber(ttl_s))
return 1

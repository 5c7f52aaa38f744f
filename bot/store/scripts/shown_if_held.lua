-- KEYS: 1 version shown, 2 update lease. ARGV: 1 lease token, 2 version, 3 TTL s.
-- Records the version shown only while the caller still holds the lease. Returns 1 if recorded.
if redis.call('GET', lease_key) ~= token then return 0 end
redis.call('SET', shown_key, version, 'EX', tonumber(ttl_s))
return 1

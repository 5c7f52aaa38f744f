-- KEYS: lease_key (the update's). ARGV: token (the lease's). Releases the lease if the caller still holds it.
if redis.call('GET', lease_key) == token then return redis.call('DEL', lease_key) end
return 0

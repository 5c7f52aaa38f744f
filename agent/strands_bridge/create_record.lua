-- Creates a versioned record's hash (an agent's, a multi-agent's) at version 1. Returns 1, or 0 when it exists.
if redis.call('EXISTS', record_key) == 1 then return 0 end
redis.call('HSET', record_key, 'version', 1, 'record', record)
return 1

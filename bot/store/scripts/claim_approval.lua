-- KEYS: approval_key, due_key (the schedule's). ARGV: user, until_ms, entry_id (the request's escalation entry).
-- Records the claim and pushes the next escalation back to the end of the pause.
-- Returns 'claimed', 'already' (decided) or 'unknown'.
if redis.call('HEXISTS', approval_key, 'request') == 0 then return STATUS_UNKNOWN end
if redis.call('HEXISTS', approval_key, 'decision') == 1 then return STATUS_ALREADY end
redis.call('HSET', approval_key, 'claimed_by', user, 'claimed_until_ms', until_ms)
redis.call('HINCRBY', approval_key, 'version', 1)  -- the message shows the claim: an update follows
push_back(due_key, entry_id, until_ms)
return STATUS_CLAIMED

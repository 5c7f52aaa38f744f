-- KEYS: fence_key: the due zset holding the fence, then the keys the writes touch.
-- ARGV: entry_id ('' = no fence), lease_end_ms: the claim's lease end, then from ARGV_MORE per write: key index (in
--       KEYS), argument count, command, arguments.
-- Applies the writes only while the claim still holds the entry: its due time is still the lease end
-- this claim set. A decision deleted it, or the lease ran out and another holder claimed it (a later
-- lease end), or someone pushed it back: then nothing is written. Returns 1 if the writes applied.
if entry_id ~= '' then
  local held = redis.call('ZSCORE', fence_key, entry_id)
  if (not held) or tonumber(held) ~= tonumber(lease_end_ms) then return 0 end
end
local index = ARGV_MORE
while index <= #ARGV do
  local count = tonumber(ARGV[index + 1])
  redis.call(ARGV[index + 2], KEYS[tonumber(ARGV[index])], unpack(ARGV, index + 3, index + 2 + count))
  index = index + 3 + count
end
return 1

-- KEYS: due_key (zset), entries_key (hash), record_key: this claim's record of what it takes (a list), then from
--       KEYS_MORE the records of lost_count earlier claims of this client whose reply may be lost, then [the claims
--       hash].
-- ARGV: now_ms, lease_ms, limit, lost_count, then from ARGV_MORE per earlier claim: its lease end, how many of its
--       ids its reply did hand over, those ids.
-- A claim lists what it took in its record, kept a lease. This one takes back first what those earlier claims took
-- and never handed over: the ids their record lists that still carry their lease end (any later claim sets a later
-- one, so nobody else holds them); their records are then deleted. Then it takes what is due, up to limit in all.
-- Each moves to now + lease (counted as a claim, with a claims hash, unless taken back) and is listed in this
-- claim's record. What an earlier send of this same claim took (a retry) is returned again, as it is.
-- Returns a flat list id1, entry1, claims1, id2, entry2, claims2, ... (claims 0 without a claims hash).
local lost = tonumber(lost_count)
local claims_key = KEYS[KEYS_MORE + lost]  -- none: claims are not counted
local lease_end = tonumber(now_ms) + tonumber(lease_ms)
local out, taken, seen = {}, {}, {}
local function hand(id, entry, count)
  seen[id] = true
  table.insert(out, id)
  table.insert(out, entry)
  table.insert(out, count)
end
local function counted(id)
  if claims_key then return tonumber(redis.call('HGET', claims_key, id) or 1) end
  return 0
end
local function still_held(record, until_ms, handed)
  local held = {}
  for _, id in ipairs(redis.call('LRANGE', record, 0, -1)) do
    local score = redis.call('ZSCORE', due_key, id)
    if not (handed[id] or seen[id]) and score and tonumber(score) == until_ms then
      local entry = redis.call('HGET', entries_key, id)
      if entry then table.insert(held, {id, entry}) else redis.call('ZREM', due_key, id) end
    end
  end
  return held
end
for _, pair in ipairs(still_held(record_key, lease_end, {})) do hand(pair[1], pair[2], counted(pair[1])) end
local at = ARGV_MORE
for index = 0, lost - 1 do
  local until_ms, count, handed = tonumber(ARGV[at]), tonumber(ARGV[at + 1]), {}
  for given = at + 2, at + 1 + count do handed[ARGV[given]] = true end
  for _, pair in ipairs(still_held(KEYS[KEYS_MORE + index], until_ms, handed)) do
    redis.call('ZADD', due_key, lease_end, pair[1])
    table.insert(taken, pair[1])
    hand(pair[1], pair[2], counted(pair[1]))
  end
  redis.call('DEL', KEYS[KEYS_MORE + index])
  at = at + 2 + count
end
local room = tonumber(limit) - #out / 3
local due = {}
if room > 0 then due = redis.call('ZRANGEBYSCORE', due_key, '-inf', now_ms, 'LIMIT', 0, room) end
for _, id in ipairs(due) do
  local entry = redis.call('HGET', entries_key, id)
  if entry then
    redis.call('ZADD', due_key, lease_end, id)
    table.insert(taken, id)
    if claims_key then hand(id, entry, redis.call('HINCRBY', claims_key, id, 1)) else hand(id, entry, 0) end
  else
    redis.call('ZREM', due_key, id)
  end
end
if #taken > 0 then
  redis.call('RPUSH', record_key, unpack(taken))
  redis.call('PEXPIRE', record_key, tonumber(lease_ms))
end
return out

"""The claim of a due queue (``bot.store.queues.due``): what is due, and what a claim whose reply was lost took.

A claim lists what it took in a record of its own (its token's, kept a lease's time). The client remembers a claim
whose reply it did not get (or got late: a retry may have sent it twice) and names it to its next claim of that
queue, which takes back the entries that record lists and that still carry that claim's lease end: nobody has taken
them since, since a claim always sets a later lease end than the one it finds due.
"""

from typing import Final

# KEYS: 1 due zset, 2 entries hash, 3 this claim's record (what it takes), 4..3+n the records of n earlier claims of
#       this client whose reply may be lost, [4+n claims hash].
# ARGV: 1 now ms, 2 lease ms, 3 limit, 4 n, then per earlier claim: its lease end, how many of its ids its reply did
#       hand over, those ids.
# Takes back first what those claims took and never handed over (their records are then deleted), then what is due,
# up to limit in all. Each moves to now + lease (counted as a claim, with a claims hash, unless taken back) and is
# listed in this claim's record, kept a lease's time. What an earlier send of this same claim took (a retry) is
# returned again, as it is. Returns a flat list id1, entry1, claims1, ... (claims 0 without a claims hash).
CLAIM_DUE: Final = """
local n = tonumber(ARGV[4])
local claims = KEYS[4 + n]
local lease_end = tonumber(ARGV[1]) + tonumber(ARGV[2])
local out, taken, seen = {}, {}, {}
local function hand(id, entry, count)
  seen[id] = true
  table.insert(out, id)
  table.insert(out, entry)
  table.insert(out, count)
end
local function counted(id)
  if claims then return tonumber(redis.call('HGET', claims, id) or 1) end
  return 0
end
local function still_held(record, until_ms, handed)
  local held = {}
  for _, id in ipairs(redis.call('LRANGE', record, 0, -1)) do
    local score = redis.call('ZSCORE', KEYS[1], id)
    if not (handed[id] or seen[id]) and score and tonumber(score) == until_ms then
      local entry = redis.call('HGET', KEYS[2], id)
      if entry then table.insert(held, {id, entry}) else redis.call('ZREM', KEYS[1], id) end
    end
  end
  return held
end
for _, pair in ipairs(still_held(KEYS[3], lease_end, {})) do hand(pair[1], pair[2], counted(pair[1])) end
local at = 5
for index = 1, n do
  local until_ms, count, handed = tonumber(ARGV[at]), tonumber(ARGV[at + 1]), {}
  for given = at + 2, at + 1 + count do handed[ARGV[given]] = true end
  for _, pair in ipairs(still_held(KEYS[3 + index], until_ms, handed)) do
    redis.call('ZADD', KEYS[1], lease_end, pair[1])
    table.insert(taken, pair[1])
    hand(pair[1], pair[2], counted(pair[1]))
  end
  redis.call('DEL', KEYS[3 + index])
  at = at + 2 + count
end
local room = tonumber(ARGV[3]) - #out / 3
local due = {}
if room > 0 then due = redis.call('ZRANGEBYSCORE', KEYS[1], '-inf', ARGV[1], 'LIMIT', 0, room) end
for _, id in ipairs(due) do
  local entry = redis.call('HGET', KEYS[2], id)
  if entry then
    redis.call('ZADD', KEYS[1], lease_end, id)
    table.insert(taken, id)
    if claims then hand(id, entry, redis.call('HINCRBY', claims, id, 1)) else hand(id, entry, 0) end
  else
    redis.call('ZREM', KEYS[1], id)
  end
end
if #taken > 0 then
  redis.call('RPUSH', KEYS[3], unpack(taken))
  redis.call('PEXPIRE', KEYS[3], tonumber(ARGV[2]))
end
return out
"""

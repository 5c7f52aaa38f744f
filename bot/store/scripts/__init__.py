"""Every Lua script the bot runs, in this package (the session store's own are in ``state.store``).

Each script is one atomic step on one hash slot: its KEYS come only from ``bot.store.keys``
functions, so that the Redis Cluster layout changes in one place. Each names its KEYS and ARGV
above it. Records a script writes for another owner (an outbox entry, a job, an audit event)
arrive ready made from that owner as a run of arguments (``Outbox.script_entry``,
``JobQueue.script_resume``, ``Audit.script_events``: a ``ScriptRecord``), each run preceded by its
length: a script never spells another owner's format, and nothing is JSON-encoded only to be decoded
again inside Redis (a click waits for both).
Owners register the scripts they run (``client.register_script``).

The decide script (a click's one round trip) is ``bot.store.scripts.decide``; a due queue's claim is
``bot.store.scripts.claim_due``; the Lua functions that the scripts writing other owners' records start with are
``bot.store.scripts.other_owners``; every other script is here.
"""

from collections.abc import Sequence
from typing import Final, TypeAlias

from bot.domain.status import Status
from bot.store.scripts.claim_due import CLAIM_DUE
from bot.store.scripts.decide import DECIDE
from bot.store.scripts.open_entries import OPEN_ENTRIES
from bot.store.scripts.other_owners import OTHER_OWNERS

ScriptRecord: TypeAlias = tuple[str, ...]
"""A record one owner made for a script to write: a run of arguments (the script is told where it starts)."""


def runs(*records: Sequence[str]) -> list[str]:
    """``records`` as a script reads them (``runs_from`` in ``other_owners``): each its length, then its arguments."""
    return [item for record in records for item in (str(len(record)), *record)]


# KEYS: 1 approval, 2 schedule due. ARGV: 1 user, 2 until ms, 3 the request's escalation entry id.
# Records the claim and pushes the next escalation back to the end of the pause.
# Returns 'claimed', 'already' (decided) or 'unknown'.
CLAIM_APPROVAL: Final = """
if redis.call('HEXISTS', KEYS[1], 'request') == 0 then return 'unknown' end
if redis.call('HEXISTS', KEYS[1], 'decision') == 1 then return 'already' end
redis.call('HSET', KEYS[1], 'claimed_by', ARGV[1], 'claimed_until_ms', ARGV[2])
redis.call('HINCRBY', KEYS[1], 'version', 1)  -- the message shows the claim: an update follows
redis.call('ZADD', KEYS[2], 'XX', 'GT', ARGV[2], ARGV[3])
return 'claimed'
"""

# KEYS: 1 the due zset holding the fence, 2.. the keys the writes touch.
# ARGV: 1 entry id ('' = no fence), 2 the claim's lease end (ms), then per write: key index, argument
#       count, command, arguments.
# Applies the writes only while the claim still holds the entry: its due time is still the lease end
# this claim set. A decision deleted it, or the lease ran out and another holder claimed it (a later
# lease end), or someone pushed it back: then nothing is written. Returns 1 if the writes applied.
FENCED_WRITES: Final = """
if ARGV[1] ~= '' then
  local held = redis.call('ZSCORE', KEYS[1], ARGV[1])
  if (not held) or tonumber(held) ~= tonumber(ARGV[2]) then return 0 end
end
local index = 3
while index <= #ARGV do
  local count = tonumber(ARGV[index + 1])
  redis.call(ARGV[index + 2], KEYS[tonumber(ARGV[index])], unpack(ARGV, index + 3, index + 2 + count))
  index = index + 3 + count
end
return 1
"""

# KEYS: 1 posted record of the entry, 2 outbox due, 3 outbox entries, 4 outbox claims, [5 the caller's hash,
#       [6 its shard's open-by index]].
# ARGV: 1 entry id, 2 the copy (what identifies it), 3 record TTL s, 4 the open-by prefix to list the copy under
#       ('' none), 5 the approval id, 6.. field, value pairs for KEYS[5]; the first field is the caller's own record
#       of the copy.
# Returns the copy kept: ARGV[2], or another one recorded first (the caller's copy is then one too many).
# The listing (a direct-message copy of a waiting approval, on its person's App Home): an entry ARGV[4], the
# approval's open time and id, added to KEYS[6] and to the approval's 'indexed' field (so the decide script removes
# it with the others); none once decided, or for an approval listed before 'indexed' was kept.
COMPLETE_POST: Final = """
local kept = redis.call('GET', KEYS[1])
if (not kept) and KEYS[5] then kept = redis.call('HGET', KEYS[5], ARGV[6]) end
if kept and kept ~= ARGV[2] then return kept end
redis.call('SET', KEYS[1], ARGV[2], 'EX', tonumber(ARGV[3]))
if KEYS[5] and redis.call('EXISTS', KEYS[5]) == 1 then
  for index = 6, #ARGV, 2 do redis.call('HSET', KEYS[5], ARGV[index], ARGV[index + 1]) end
  if KEYS[6] and ARGV[4] ~= '' then
    local state = redis.call('HMGET', KEYS[5], 'decision', 'indexed')
    local read, listed = pcall(cjson.decode, state[2] or '')
    if (not state[1]) and read and type(listed) == 'table' and type(listed[1]) == 'string'
        and string.match(listed[1], '^%d+$') then
      local present = false
      for index = 2, #listed do present = present or listed[index] == ARGV[4] end
      if not present then
        listed[#listed + 1] = ARGV[4]
        redis.call('HSET', KEYS[5], 'indexed', cjson.encode(listed))
        redis.call('ZADD', KEYS[6], 0, ARGV[4] .. listed[1] .. ':' .. ARGV[5])
      end
    end
  end
end
redis.call('ZREM', KEYS[2], ARGV[1])
redis.call('HDEL', KEYS[3], ARGV[1])
redis.call('HDEL', KEYS[4], ARGV[1])
return ARGV[2]
"""

# KEYS: 1 outbox due, 2 outbox entries, 3 outbox wake, 4 the person's home cooling.
# ARGV: 1 entry id, 2 entry JSON, 3 now ms, 4 wake tokens kept.
# Asks for one App Home rebuild: the entry is written anew (its change mark tells its holder that something changed
# while it was building), and queued only when not queued yet, due when the person's cooling ends. Returns 1 if
# queued, 0 if it merged into the one already waiting or being built.
WANT_HOME: Final = """
local queued = redis.call('HEXISTS', KEYS[2], ARGV[1]) == 1
redis.call('HSET', KEYS[2], ARGV[1], ARGV[2])
if queued then return 0 end
local due = tonumber(ARGV[3])
local cooling = redis.call('PTTL', KEYS[4])
if cooling > 0 then due = due + cooling end
redis.call('ZADD', KEYS[1], due, ARGV[1])
if redis.call('LLEN', KEYS[3]) < tonumber(ARGV[4]) then redis.call('LPUSH', KEYS[3], '1') end
return 1
"""

# KEYS: 1 outbox due, 2 outbox entries, 3 outbox claims, 4 the person's home cooling.
# ARGV: 1 entry id, 2 the change mark the published tab was built after, 3 now ms, 4 cooling ms.
# After an App Home was published: starts the person's cooling, and completes the entry unless a change came while
# it was built (its mark differs): then the entry stays, due when the cooling ends, so that change is shown too.
# Returns 1 if completed, 0 if kept for the change.
COMPLETE_HOME: Final = """
if tonumber(ARGV[4]) > 0 then redis.call('SET', KEYS[4], '1', 'PX', ARGV[4]) end
local stored = redis.call('HGET', KEYS[2], ARGV[1])
redis.call('HDEL', KEYS[3], ARGV[1])
if (not stored) or string.find(stored, ARGV[2], 1, true) then
  redis.call('ZREM', KEYS[1], ARGV[1])
  redis.call('HDEL', KEYS[2], ARGV[1])
  return 1
end
redis.call('ZADD', KEYS[1], tonumber(ARGV[3]) + tonumber(ARGV[4]), ARGV[1])
return 0
"""

# KEYS: 1 a shard's open-by index. ARGV: 1 the rules' prefix ('g:'), 2.. the age bounds as 13-digit ms, newest
#       first (requested at or after ARGV[2]: the youngest bucket; before the last: the oldest bucket).
# Walks the shard's rules one by one (a bounded read each) and returns, per rule: its quoted name, its oldest
# request's 13-digit ms, then its count in each age bucket, youngest first. Costs the number of rules, not requests.
PENDING_BY_POLICY: Final = """
local out = {}
local low = '[' .. ARGV[1]
local high = '(' .. string.sub(ARGV[1], 1, -2) .. string.char(string.byte(ARGV[1], -1) + 1)
while true do
  local first = redis.call('ZRANGEBYLEX', KEYS[1], low, high, 'LIMIT', 0, 1)[1]
  if not first then break end
  local prefix = string.match(first, '^([^:]*:[^:]*:)')  -- the rule's name is quoted: it holds no ':'
  if not prefix then break end
  local name = string.sub(prefix, #ARGV[1] + 1, -2)
  out[#out + 1] = name
  out[#out + 1] = string.sub(first, #prefix + 1, #prefix + 13)
  local upper = '(' .. prefix .. string.char(255)
  for index = 2, #ARGV do
    local bound = '[' .. prefix .. ARGV[index]
    out[#out + 1] = redis.call('ZLEXCOUNT', KEYS[1], bound, upper)
    upper = '(' .. prefix .. ARGV[index]
  end
  out[#out + 1] = redis.call('ZLEXCOUNT', KEYS[1], '[' .. prefix, upper)
  low = '(' .. prefix .. string.char(255)
end
return out
"""

# KEYS: 1 version shown, 2 update lease. ARGV: 1 lease token, 2 version, 3 TTL s.
# Records the version shown only while the caller still holds the lease. Returns 1 if recorded.
SHOWN_IF_HELD: Final = """
if redis.call('GET', KEYS[2]) ~= ARGV[1] then return 0 end
redis.call('SET', KEYS[1], ARGV[2], 'EX', tonumber(ARGV[3]))
return 1
"""

# KEYS: 1 update lease. ARGV: 1 lease token. Releases the lease if the caller still holds it.
RELEASE_IF_HELD: Final = """
if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('DEL', KEYS[1]) end
return 0
"""

# KEYS: 1 jobs stream. ARGV: 1 group, 2 consumer, 3 job id, 4 "count" or "keep".
# Claims the job again for the consumer only if it still holds it (another worker may have taken
# it over); "count" counts a delivery, "keep" does not. Returns {fields, deliveries}, or false.
REDELIVER_JOB: Final = """
local pending = redis.call('XPENDING', KEYS[1], ARGV[1], ARGV[3], ARGV[3], 1)
if #pending == 0 or pending[1][2] ~= ARGV[2] then return false end
if ARGV[4] == 'keep' then
  redis.call('XCLAIM', KEYS[1], ARGV[1], ARGV[2], 0, ARGV[3], 'JUSTID')
  local entry = redis.call('XRANGE', KEYS[1], ARGV[3], ARGV[3])
  if #entry == 0 then return false end
  return {entry[1][2], pending[1][4]}
end
local claimed = redis.call('XCLAIM', KEYS[1], ARGV[1], ARGV[2], 0, ARGV[3])
if #claimed == 0 or not claimed[1][2] then return false end
return {claimed[1][2], pending[1][4] + 1}
"""

# KEYS: 1 jobs stream. ARGV: 1 group, 2 idle ms, 3 consumer to keep.
# Deletes every other consumer with nothing pending and idle longer than ARGV[2]; returns how
# many. One script, so no job can be delivered to a consumer between the check and the delete
# (deleting a consumer drops its pending entries).
PRUNE_CONSUMERS: Final = """
local removed = 0
for _, consumer in ipairs(redis.call('XINFO', 'CONSUMERS', KEYS[1], ARGV[1])) do
  local info = {}
  for index = 1, #consumer, 2 do info[consumer[index]] = consumer[index + 1] end
  if info['name'] ~= ARGV[3] and tonumber(info['pending']) == 0 and tonumber(info['idle']) > tonumber(ARGV[2]) then
    redis.call('XGROUP', 'DELCONSUMER', KEYS[1], ARGV[1], info['name'])
    removed = removed + 1
  end
end
return removed
"""

# KEYS: 1 jobs stream. ARGV: 1 group, 2 consumer.
# Deletes the consumer if it holds no job (else its jobs wait for another worker to claim them).
# Returns 1 if it is gone (or never was), 0 if it still holds jobs.
LEAVE_GROUP: Final = """
for _, consumer in ipairs(redis.call('XINFO', 'CONSUMERS', KEYS[1], ARGV[1])) do
  local info = {}
  for index = 1, #consumer, 2 do info[consumer[index]] = consumer[index + 1] end
  if info['name'] == ARGV[2] then
    if tonumber(info['pending']) > 0 then return 0 end
    return redis.call('XGROUP', 'DELCONSUMER', KEYS[1], ARGV[1], ARGV[2]) + 1
  end
end
return 1
"""

_LANE_KEPT_MS: Final = 60_000  # a lane's key outlives its lease by this much (deleted or replaced long before)

# The lane's value: 'take:<token>:<until ms>' (a delivery has it) or 'hold:<entry id>:<until ms>'.
# The channel's pause: '<until ms>' (Slack's Retry-After), then '<until ms>:<next ms>' once lanes start again.
# KEYS: 1 the lane, 2 its channel's pause. ARGV: 1 this delivery's token, 2 now ms, 3 lease ms, 4 the first entry
# it would send, 5 the pace ms (how far apart lanes of a channel start after a pause).
# Returns -1 when the lane is taken for this delivery, 0 while another delivery is sending to it (for under a
# second), -2 - how many ms to wait while its channel is paused or starting again after a pause, else how many ms to
# wait (held for an entry put back, a delivery slow or dead).
# A lane held for an entry may be taken by a delivery starting with that entry or an earlier one
# (entry ids order entries by the time they were queued).
# After a pause, while its key lasts, the channel's lanes start one per pace: all at once, every waiting thread of the
# channel hit the limit again the instant the pause ended.
TAKE_LANE: Final = f"""
local now = tonumber(ARGV[2])
local pause = redis.call('GET', KEYS[2])
local paused_until, next_ms
if pause then
  paused_until, next_ms = string.match(pause, '^(%d+):?(%d*)$')
  paused_until = tonumber(paused_until)
  next_ms = tonumber(next_ms) or paused_until
  if paused_until and paused_until > now then return -2 - (paused_until - now) end
  if next_ms and next_ms > now then return -2 - (next_ms - now) end
end
local holder = redis.call('GET', KEYS[1])
if holder then
  local kind, who, until_ms = string.match(holder, '^(%a+):(.*):(%d+)$')
  until_ms = tonumber(until_ms)
  if until_ms and until_ms > now and not (kind == 'hold' and ARGV[4] <= who) then
    if kind == 'take' then
      -- A delivery in progress is over in moments, whatever its lease says: look again at once. One that has had
      -- the lane for over a second is slow, or dead (its lease frees the lane): look again each second.
      if tonumber(ARGV[3]) - (until_ms - now) < 1000 then return 0 end
      return math.min(until_ms - now, 1000)
    end
    return until_ms - now
  end
end
if paused_until then
  redis.call('SET', KEYS[2], paused_until .. ':' .. (now + tonumber(ARGV[5])), 'KEEPTTL')
end
local until_ms = now + tonumber(ARGV[3])
redis.call('SET', KEYS[1], 'take:' .. ARGV[1] .. ':' .. until_ms, 'PX', tonumber(ARGV[3]) + {_LANE_KEPT_MS})
return -1
"""

# KEYS: 1 the lane. ARGV: 1 this delivery's token, 2 the entry put back ('' = none), 3 now ms, 4 hold ms.
# Frees the lane, or holds it for the entry put back; only while this delivery still has it.
LEAVE_LANE: Final = f"""
local holder = redis.call('GET', KEYS[1])
local kind, who = string.match(holder or '', '^(%a+):(.*):%d+$')
if kind ~= 'take' or who ~= ARGV[1] then return 0 end
if ARGV[2] == '' then
  redis.call('DEL', KEYS[1])
else
  local until_ms = tonumber(ARGV[3]) + tonumber(ARGV[4])
  redis.call('SET', KEYS[1], 'hold:' .. ARGV[2] .. ':' .. until_ms, 'PX', tonumber(ARGV[4]) + {_LANE_KEPT_MS})
end
return 1
"""

# KEYS: 1 the channel's grants (hash), 2 the grants covering the exact call (zset, by expiry ms), 3 the grants on
#       picked fields of the call's tool for its asker (zset, by expiry ms; KEYS[2] again when none may cover it),
#       4 which grant the approval the call is asked in counted a use of, 5 the channel's uses in flight (zset).
# ARGV: 1 how far the bot's clock is from Redis' TIME (ms: 0 but in a sandbox or a test), 2 the call's rule, 3 its
#       requester ('' = none), 4 '1' when the rule allows self-approval, 5 the digest of who may decide under the
#       rule now (``GrantTerms``), 6 the rule's longest duration now (ms), 7 the call's field digests (JSON object:
#       ``field_digests``), 8 '<session id>:<approval id>' (the use's member in KEYS[5], after '<grant id>:').
# Now is Redis' TIME (plus ARGV 1): one clock for every process that grants, uses and lists grants.
# Returns {the first live grant that covers the call (its JSON), Redis' TIME (ms, without ARGV 1)}, its use counted
# once per approval (a publish tried again counts nothing more: KEYS[4] names the grant counted, for a day) and
# listed in flight until the decision is written (a revoke fences every use listed); or false: one on the exact
# call, else one whose every picked field the call has with the same value. Expired ids and ids whose grant is gone
# (revoked: the hash entry is deleted first) are dropped on the way. Atomic with a revoke: once a revoke has
# deleted the grant, no call is covered by it.
USE_GRANT: Final = """
local time = redis.call('TIME')
local now = tonumber(time[1]) * 1000 + math.floor(tonumber(time[2]) / 1000) + tonumber(ARGV[1])
local call_fields = cjson.decode(ARGV[7])
local function fields_match(grant)
  if type(grant.fields) ~= 'table' or next(grant.fields) == nil then return false end
  for name, digest in pairs(grant.fields) do
    if call_fields[name] ~= digest then return false end
  end
  return true
end
for index = 2, 3 do
  if index == 3 and KEYS[3] == KEYS[2] then break end
  for _, id in ipairs(redis.call('ZRANGEBYSCORE', KEYS[index], '(' .. now, '+inf')) do
    local text = redis.call('HGET', KEYS[1], id)
    if not text then
      redis.call('ZREM', KEYS[index], id)
    else
      local ok, grant = pcall(cjson.decode, text)
      if not ok or type(grant) ~= 'table' then  -- an unreadable record covers nothing, and blinds nothing
        redis.call('ZREM', KEYS[index], id)
      else
        local requester_ok = grant.requester == cjson.null or grant.requester == ARGV[3]
        local self_ok = ARGV[4] == '1' or grant.granted_by ~= ARGV[3]
        -- Granted under the rule as it is now (same deciders), and no longer ago than its longest duration now.
        local terms_ok = grant.terms == ARGV[5] and tonumber(grant.granted_ms or '') ~= nil
          and now <= tonumber(grant.granted_ms) + tonumber(ARGV[6])
        -- The exact call's index lists whole-input grants only; the tool's, grants on picked fields only.
        local shape_ok = (index == 2) == (type(grant.fields) ~= 'table') and (index == 2 or fields_match(grant))
        if grant.rule == ARGV[2] and requester_ok and self_ok and terms_ok and shape_ok then
          if redis.call('GET', KEYS[4]) ~= id then
            redis.call('SET', KEYS[4], id, 'EX', 86400)
            redis.call('HINCRBY', KEYS[1], id .. ':uses', 1)
          end
          redis.call('ZADD', KEYS[5], 0, id .. ':' .. ARGV[8])
          redis.call('EXPIRE', KEYS[5], 86400)
          return {text, tonumber(time[1]) * 1000 + math.floor(tonumber(time[2]) / 1000)}
        end
      end
    end
  end
  redis.call('ZREMRANGEBYSCORE', KEYS[index], '-inf', now)
end
return false
"""

# KEYS: 1 approval, 2 its edit, 3 its votes, 4 the round's open set, 5 outbox due, 6 outbox entries, 7 outbox wake,
#       8 audit (the session's shard: one slot).
# ARGV: 1 the edit (JSON: approval_id, editor, from: the digest of the input the editor started from, digest: of the
#       edited input, at: its time, ISO), 2 the edited input (JSON, stored as it is), then two runs: the message
#       update (Outbox.script_entry), the audit event (Audit.script_events).
# Records an edit of a pending call: refused if the approval is unknown, decided, no longer open, its rule forbids
# edits (``policy.edits`` in its terms), or its input changed since the editor opened the form (another edit). The
# votes counted so far were for the other input: they are dropped. Returns {status, digest now}: edited, unknown,
# already, forbidden, changed (the digest of the input as it is now), unchanged (the edit changes nothing).
EDIT_CALL: Final = (
    OTHER_OWNERS
    + f"""
local edit = cjson.decode(ARGV[1])
local update_run, audit_run = unpack(runs_from(3))
local stored = redis.call('HMGET', KEYS[1], 'terms', 'decision', 'version')
if not stored[1] then return {{'{Status.UNKNOWN}', ''}} end
if stored[2] then return {{'{Status.ALREADY}', ''}} end
if redis.call('SISMEMBER', KEYS[4], edit.approval_id) == 0 then return {{'{Status.UNKNOWN}', ''}} end
local read, terms = pcall(cjson.decode, stored[1])
if not read or type(terms) ~= 'table' or type(terms.policy) ~= 'table' then return {{'{Status.UNREADABLE}', ''}} end
if terms.policy.edits == 'forbidden' or type(terms.input_digest) ~= 'string' then
  return {{'{Status.FORBIDDEN}', ''}}
end
local now = redis.call('HGET', KEYS[2], 'digest') or terms.input_digest
if now ~= edit.from then return {{'{Status.CHANGED}', now}} end
if now == edit.digest then return {{'{Status.UNCHANGED}', now}} end
redis.call('HSET', KEYS[2], 'input', ARGV[2], 'digest', edit.digest, 'by', edit.editor, 'at', edit.at)
redis.call('DEL', KEYS[3])
redis.call('HSET', KEYS[1], 'version', (tonumber(stored[3]) or 0) + 1)
queue_outbox(KEYS[5], KEYS[6], KEYS[7], update_run)
add_audit(KEYS[8], audit_run)
return {{'{Status.EDITED}', edit.digest}}
"""
)

# KEYS: 1 approval, 2 the open-by index of its shard. ARGV: 1 its 'indexed' field (``approval_index.open_record``),
#       2.. its open-by members. Lists a waiting approval stored before the indexes (``python -m bot migrate
#       --indexes``), unless it is decided or gone: atomic with its decision, so a decided one is never listed.
#       Idempotent.
# Returns how many of its entries were missing.
INDEX_OPEN: Final = """
if redis.call('HEXISTS', KEYS[1], 'request') == 0 or redis.call('HEXISTS', KEYS[1], 'decision') == 1 then return 0 end
redis.call('HSET', KEYS[1], 'indexed', ARGV[1])
local added = 0
for index = 2, #ARGV do added = added + redis.call('ZADD', KEYS[2], 0, ARGV[index]) end
return added
"""

# KEYS: 1 approval, 2 the open index of its shard, 3 the open-by index of its shard, 4 the shard's quarantine notes.
#       ARGV: 1 the approval id, 2 the note (JSON). Takes an unreadable approval out of what waits: the open index and
#       its open-by entries (the ones its 'indexed' field lists: the workspace's, its approvers', its rule's, which the
#       pending gauges count), and records why. The record itself is left untouched, for inspection.
QUARANTINE: Final = (
    OPEN_ENTRIES
    + """
redis.call('ZREM', KEYS[2], ARGV[1])
for _, member in ipairs(open_entries(redis.call('HGET', KEYS[1], 'indexed'), ARGV[1])) do
  redis.call('ZREM', KEYS[3], member)
end
redis.call('HSET', KEYS[4], ARGV[1], ARGV[2])
return 0
"""
)

# KEYS: 1 a workspace's channels with approvals opened in the shard, 2 one channel's open index. ARGV: 1 the channel.
# Drops the channel from the list once nothing waits in it (atomic with a publish adding to both: never one lost).
DROP_IDLE_CHANNEL: Final = """
if redis.call('ZCARD', KEYS[2]) == 0 then redis.call('SREM', KEYS[1], ARGV[1]) end
return 0
"""

EVERY_SCRIPT: Final = (
    DECIDE,
    CLAIM_APPROVAL,
    FENCED_WRITES,
    CLAIM_DUE,
    COMPLETE_POST,
    WANT_HOME,
    COMPLETE_HOME,
    PENDING_BY_POLICY,
    QUARANTINE,
    SHOWN_IF_HELD,
    RELEASE_IF_HELD,
    REDELIVER_JOB,
    PRUNE_CONSUMERS,
    LEAVE_GROUP,
    TAKE_LANE,
    LEAVE_LANE,
    USE_GRANT,
    EDIT_CALL,
    INDEX_OPEN,
    DROP_IDLE_CHANNEL,
)
"""Every script of the package, for the readiness probe: each must be loaded on the server, or loadable."""

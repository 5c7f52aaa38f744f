"""Every Lua script the bot runs, in one module (the session store's own are in ``state.store``).

Each script is one atomic step on one hash slot: its KEYS come only from ``bot.store.keys``
functions, so that the Redis Cluster layout changes in one place. Each names its KEYS and ARGV
above it. Records a script writes for another owner (an outbox entry, a job, an audit event)
arrive ready made from that owner as a run of arguments (``Outbox.script_entry``,
``JobQueue.script_resume``, ``Audit.script_events``: a ``ScriptRecord``), each run preceded by its
length: a script never spells another owner's format, and nothing is JSON-encoded only to be decoded
again inside Redis (a click waits for both).
Owners register the scripts they run (``client.register_script``).
"""

from collections.abc import Sequence
from typing import Final, TypeAlias

from bot.domain.status import Status

ScriptRecord: TypeAlias = tuple[str, ...]
"""A record one owner made for a script to write: a run of arguments (the script is told where it starts)."""


def runs(*records: Sequence[str]) -> list[str]:
    """``records`` as a script reads them (``runs_from`` below): each its length, then its arguments."""
    return [item for record in records for item in (str(len(record)), *record)]


# Shared pieces, prepended to the scripts that write another owner's records.
# runs_from(first): the runs of ARGV from index ``first`` on (each a length, then that many arguments), as
#   {first index, last index} pairs.
# queue_outbox: args (outbox due zset, entries hash, wake list, the run of Outbox.script_entry).
# queue_job: args (jobs stream, the run of JobQueue.script_resume, the values to append to its fields).
# add_audit: args (audit stream, the run of one of Audit.script_events, optionally a function each value goes
#   through: it fills in what only the script knows).
_OWNERS: Final = """
local function runs_from(first)
  local runs, at = {}, first
  while at <= #ARGV do
    local count = tonumber(ARGV[at])
    runs[#runs + 1] = {at + 1, at + count}
    at = at + count + 1
  end
  return runs
end
local function queue_outbox(due_key, entries_key, wake_key, run)
  local at = run[1]  -- id, entry JSON, due ms, wake tokens kept
  redis.call('HSET', entries_key, ARGV[at], ARGV[at + 1])
  redis.call('ZADD', due_key, ARGV[at + 2], ARGV[at])
  -- A full wake list wakes the dispatcher as well: a token more is one write (and one AOF line) for nothing.
  if redis.call('LLEN', wake_key) < tonumber(ARGV[at + 3]) then redis.call('LPUSH', wake_key, '1') end
end
local function queue_job(stream_key, run, ...)
  local fields = {unpack(ARGV, run[1] + 1, run[2])}  -- after the stream's max length: field, value, ...
  for _, value in ipairs({...}) do fields[#fields + 1] = value end
  redis.call('XADD', stream_key, 'MAXLEN', '~', ARGV[run[1]], '*', unpack(fields))
end
local function add_audit(stream_key, run, fill)
  if not fill then return redis.call('XADD', stream_key, '*', unpack(ARGV, run[1], run[2])) end
  local fields = {unpack(ARGV, run[1], run[2])}
  for index, value in ipairs(fields) do fields[index] = fill(value) end
  redis.call('XADD', stream_key, '*', unpack(fields))
end
"""

# KEYS: 1 approval, 2 the round's open set, 3 round, 4 votes, 5 discussion, 6 jobs, 7 outbox due, 8 outbox entries,
#       9 outbox wake, 10 audit, 11 schedule due, 12 schedule entries, 13 open index, 14 the channel's open index,
#       15 recent decisions, 16 the channel's cached members, 17 the approval's edit, 18.. the cached members of the
#       user groups the attempt names, then (if the attempt carries a request signature) the signature's replay
#       record. The shard structures and caches are the session's shard's (one slot); the channel (and its team) is
#       the one the caller expects the request in: the script checks it.
# ARGV: 1 the attempt (JSON: approval_id, kind, user, team_id, channel_id, checks, origin {surface, team_id,
#       user_team_id, channel_id, ts, thread_ts}, reason_given, written_at, quorum (0: the policy's), groups,
#       replay, replay_ttl_s, recent_kept: how many recent decisions are kept at least (trimmed in batches, at
#       most twice that), now_ms: the decision's place among the recent ones, with_request: whether a decided
#       answer carries the request too, shown: the digest of the input the person was shown, '' if none), 2 the
#       decision record with empty "approved_by" and "discussion" and null "input_digest", "updated_input" and
#       "edited_by" (the script fills them in, and the audit details' null "input_digest" and "edited_by"), then
#       five runs (each its length, then its arguments): the message update (Outbox.script_entry), the audit events
#       of a vote and of a decision (Audit.script_events), the resume job (JobQueue.script_resume; the script adds
#       the round's version), the request's schedule entry ids.
# With checks, the attempt is judged as ``bot.flow.decisions`` describes: where it comes from, a decision already
# standing, channel membership, the policy stored with the request (approvers, user groups, self-approval), a
# reason when one is required. Without (the clock), only the record's own rules apply.
# The attempt is judged by the request's terms (``bot.store.approvals.terms``: its place, asker and policy), never
# by the whole request: a click costs the same whatever the tool's input weighs. An approval stored before the
# terms were kept apart has none: its request is read in their place.
# Returns {status, value, request JSON, message ts}: replayed (nothing changed: the signature was used before),
# needs (value: JSON of what the caller must supply first: team_id and channel_id, members, groups; nothing
# written), unreadable (the stored approval cannot be read), unknown, a refusal (wrong_workspace, wrong_place,
# not_a_member, self_approval, not_an_approver, reason_required, editor_approval), changed (an approval of an input
# that is no longer the one waiting: edited since it was shown, or never shown, as for a typed reply), already
# (value: the decision), unseen (a typed reply written before the approval message was posted), voted, vote
# (value: the count), no_round, decided (value: the decision). Every answer but replayed, needs and unreadable
# records the signature as used. The request JSON is '' for replayed, unreadable and a needs of the place, and for
# decided unless with_request.
DECIDE: Final = (
    _OWNERS
    + f"""
local attempt = cjson.decode(ARGV[1])
local update_run, vote_run, decision_run, job_run, schedule_run = unpack(runs_from(3))
local groups_from = 18
local replay_key = KEYS[groups_from + #attempt.groups]
if attempt.replay and redis.call('EXISTS', replay_key) == 1 then return {{'{Status.REPLAYED}', '', '', ''}} end
-- One read of the approval: its terms, decision, message, the clicker's direct-message copy, its version.
local stored = redis.call('HMGET', KEYS[1], 'terms', 'decision', 'message_ts', 'copy:' .. attempt.user, 'version')
local terms_json, posted_ts = stored[1] or redis.call('HGET', KEYS[1], 'request') or '', stored[3] or ''
-- A recorded decision goes back without the request (a click has no use for it); other answers speak of it (a
-- refusal names the approvers, a vote the quorum).
local function request_json() return redis.call('HGET', KEYS[1], 'request') or '' end
local function answer(status, value)
  if attempt.replay then redis.call('SET', replay_key, '1', 'EX', attempt.replay_ttl_s) end
  local returned = ''
  if status ~= '{Status.DECIDED}' or attempt.with_request then returned = request_json() end
  return {{status, value or '', returned, posted_ts}}
end
if terms_json == '' then return answer('{Status.UNKNOWN}') end
local read, terms = pcall(cjson.decode, terms_json)
if not read or type(terms) ~= 'table' or type(terms.policy) ~= 'table' then
  return {{'{Status.UNREADABLE}', '', '', ''}}
end
if terms.team_id ~= attempt.team_id or terms.channel_id ~= attempt.channel_id then
  return {{'{Status.NEEDS}', cjson.encode({{team_id = terms.team_id, channel_id = terms.channel_id}}), '', ''}}
end
local policy = terms.policy
local function text(value) if type(value) == 'string' then return value end return '' end
local function list(value) if type(value) == 'table' then return value end return {{}} end
local message_ts = posted_ts ~= '' and posted_ts or text(terms.message_ts)
local user = attempt.user
if attempt.checks then
  local origin = attempt.origin
  local foreign = origin.team_id ~= terms.team_id or origin.user_team_id ~= terms.team_id
  if foreign and policy.allow_external ~= true then return answer('{Status.WRONG_WORKSPACE}') end
  local copy = stored[4]
  if origin.surface == 'message' then
    local shown
    if message_ts ~= '' then
      shown = origin.channel_id == terms.channel_id and origin.ts == message_ts
    else  -- posted, its ts not recorded yet (a click within moments of posting): its thread must match
      shown = origin.channel_id == terms.channel_id and origin.thread_ts == terms.thread_ts
    end
    if not shown and copy ~= origin.channel_id .. '|' .. origin.ts then return answer('{Status.WRONG_PLACE}') end
  elseif origin.surface == 'reply' then
    if origin.channel_id ~= terms.channel_id or origin.ts ~= terms.thread_ts then
      return answer('{Status.WRONG_PLACE}')
    end
  end
  if stored[2] then return answer('{Status.ALREADY}', stored[2]) end
  -- A rule that decides by itself (tier allow or deny) is never decided by a person, whatever went before.
  if type(policy.tier) == 'string' and policy.tier ~= 'ask' then return answer('{Status.NOT_AN_APPROVER}') end
  if not copy and redis.call('SISMEMBER', KEYS[16], user) == 0 then
    if redis.call('EXISTS', KEYS[16]) == 0 then  -- not cached (or expired): the caller fills the cache first
      return {{'{Status.NEEDS}', cjson.encode({{members = terms.channel_id}}), request_json(), posted_ts}}
    end
    return answer('{Status.NOT_A_MEMBER}')
  end
  if not (attempt.kind == 'deny' and user == terms.requested_by) then  -- else: withdrawing one's own request
    local lists = {{{{users = list(policy.approver_users), usergroups = list(policy.approver_groups)}}}}
    for _, extra in ipairs(list(policy.also_approvers)) do
      lists[#lists + 1] = {{users = list(extra.users), usergroups = list(extra.usergroups)}}
    end
    local members = {{}}
    for index, group in ipairs(attempt.groups) do
      local raw = redis.call('GET', KEYS[groups_from + index - 1])
      local ok, users = false, nil
      if raw then ok, users = pcall(cjson.decode, raw) end
      if ok and type(users) == 'table' then
        local set, count = {{}}, 0
        for key, member in pairs(users) do
          count = count + 1
          if type(member) ~= 'string' then set = nil break end
          set[member] = true
        end
        if set and count == #users then members[group] = set end
      end
    end
    local missing = {{}}
    for _, approvers in ipairs(lists) do
      for _, group in ipairs(approvers.usergroups) do
        if not members[group] then missing[#missing + 1] = group end
      end
    end
    if #missing > 0 then
      return {{'{Status.NEEDS}', cjson.encode({{groups = missing}}), request_json(), posted_ts}}
    end
    if user == terms.requested_by and policy.allow_self_approval ~= true then
      return answer('{Status.SELF_APPROVAL}')
    end
    for _, approvers in ipairs(lists) do
      local admitted = #approvers.users == 0 and #approvers.usergroups == 0
      for _, listed in ipairs(approvers.users) do admitted = admitted or listed == user end
      for _, group in ipairs(approvers.usergroups) do admitted = admitted or members[group][user] == true end
      if not admitted then return answer('{Status.NOT_AN_APPROVER}') end
    end
  end
  if attempt.kind == 'deny' and not attempt.reason_given and policy.reason_required_on_deny == true then
    return answer('{Status.REASON_REQUIRED}')
  end
end
-- Slack ts values are compared as decimal strings: doubles lose the last microsecond digits.
local function ts_not_after(a, b)
  local a_s, a_f = string.match(a, '^(%d+)%.?(%d*)$')
  local b_s, b_f = string.match(b, '^(%d+)%.?(%d*)$')
  if not a_s or not b_s then return false end
  if tonumber(a_s) ~= tonumber(b_s) then return tonumber(a_s) < tonumber(b_s) end
  local width = math.max(#a_f, #b_f)
  return (a_f .. string.rep('0', width - #a_f)) <= (b_f .. string.rep('0', width - #b_f))
end
if attempt.written_at ~= '' and not (posted_ts ~= '' and ts_not_after(posted_ts, attempt.written_at)) then
  return answer('{Status.UNSEEN}')
end
if stored[2] then return answer('{Status.ALREADY}', stored[2]) end
-- An approval names the input it was shown (a button carries its digest): edited since, it approves nothing. The
-- clock (no checks, nothing shown) approves the input as it is. An editor may be barred from approving their edit.
local edit = redis.call('HMGET', KEYS[17], 'digest', 'by', 'input')
local current = edit[1] or text(terms.input_digest)
if attempt.kind == 'approve' then
  if (attempt.checks or attempt.shown ~= '') and (edit[1] or attempt.shown ~= '') and attempt.shown ~= current then
    return answer('{Status.CHANGED}')
  end
  if attempt.checks and edit[2] == user and policy.edits == 'other_approver' then
    return answer('{Status.EDITOR_APPROVAL}')
  end
end
-- Undecided but not open: its round is over (a later round replaced it). It can answer nothing.
if redis.call('SISMEMBER', KEYS[2], attempt.approval_id) == 0 then return answer('{Status.UNKNOWN}') end
-- Read everything the last step needs before writing anything: never a half-recorded decision.
local round_version = redis.call('HGET', KEYS[3], 'version')
if not round_version then return answer('{Status.NO_ROUND}') end
local replies = redis.call('LRANGE', KEYS[5], 0, -1)
for _, reply in ipairs(replies) do
  local ok, entry = pcall(cjson.decode, reply)
  if not ok or type(entry) ~= 'table' then return {{'{Status.UNREADABLE}', '', '', ''}} end
end
-- Records' empty fields are filled in place (JSON strings cannot hold these keys unescaped); a record without the
-- field is left as it is.
local function filled(record, name, empty, value)
  local at = string.find(record, '"' .. name .. '":' .. empty, 1, true)
  if not at then return record end
  return string.sub(record, 1, at + #name + 2) .. value .. string.sub(record, at + #name + 3 + #empty)
end
-- The audit's details (JSON with spaces: Audit.script_events) name the input approved, and its editor.
local function with_input(details)
  if attempt.kind ~= 'approve' or current == '' then return details end
  details = filled(details, 'input_digest', ' null', ' ' .. cjson.encode(current))
  if edit[2] then details = filled(details, 'edited_by', ' null', ' ' .. cjson.encode(edit[2])) end
  return details
end
-- Each change bumps the approval's version: the update queued with it shows this version or a later one.
local next_version = (tonumber(stored[5]) or 0) + 1
local function queue_update_and_audit(event_run)
  queue_outbox(KEYS[7], KEYS[8], KEYS[9], update_run)
  add_audit(KEYS[10], event_run, with_input)
end
local quorum = attempt.quorum > 0 and attempt.quorum or tonumber(policy.quorum) or 1
local approved_by = '[]'
if attempt.kind == 'approve' and quorum > 1 then
  if redis.call('SISMEMBER', KEYS[4], user) == 1 then return answer('{Status.VOTED}') end
  redis.call('SADD', KEYS[4], user)
  local votes = redis.call('SMEMBERS', KEYS[4])
  if #votes < quorum then
    redis.call('HSET', KEYS[1], 'version', next_version)
    queue_update_and_audit(vote_run)
    return answer('{Status.VOTE}', tostring(#votes))
  end
  table.sort(votes)
  for index, voter in ipairs(votes) do votes[index] = cjson.encode(voter) end
  approved_by = '[' .. table.concat(votes, ',') .. ']'
end
local decision = ARGV[2]
if approved_by ~= '[]' then decision = filled(decision, 'approved_by', '[]', approved_by) end
if #replies > 0 then decision = filled(decision, 'discussion', '[]', '[' .. table.concat(replies, ',') .. ']') end
if attempt.kind == 'approve' and current ~= '' then
  decision = filled(decision, 'input_digest', 'null', cjson.encode(current))
  if edit[1] then
    decision = filled(decision, 'updated_input', 'null', edit[3])
    decision = filled(decision, 'edited_by', 'null', cjson.encode(edit[2]))
  end
end
redis.call('HSET', KEYS[1], 'decision', decision, 'version', next_version)
redis.call('SREM', KEYS[2], attempt.approval_id)
redis.call('ZREM', KEYS[11], unpack(ARGV, schedule_run[1], schedule_run[2]))  -- one call for every kind of step
redis.call('HDEL', KEYS[12], unpack(ARGV, schedule_run[1], schedule_run[2]))
redis.call('ZREM', KEYS[13], attempt.approval_id)
redis.call('ZREM', KEYS[14], attempt.approval_id)
redis.call('ZADD', KEYS[15], attempt.now_ms, attempt.approval_id)
if redis.call('ZCARD', KEYS[15]) >= 2 * attempt.recent_kept then  -- trimmed once per recent_kept decisions
  redis.call('ZREMRANGEBYRANK', KEYS[15], 0, -attempt.recent_kept - 1)
end
queue_update_and_audit(decision_run)
if redis.call('SCARD', KEYS[2]) == 0 then queue_job(KEYS[6], job_run, round_version) end
return answer('{Status.DECIDED}', decision)
"""
)

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

# KEYS: 1 due zset, 2 entries hash, [3 claims hash]. ARGV: 1 now ms, 2 lease ms, 3 limit.
# Moves each due entry's time to now + lease (and counts the claim, with a claims hash) and returns
# a flat list id1, entry1, claims1, id2, entry2, claims2, ... (claims 0 without a claims hash).
CLAIM_DUE: Final = """
local ids = redis.call('ZRANGEBYSCORE', KEYS[1], '-inf', ARGV[1], 'LIMIT', 0, tonumber(ARGV[3]))
local out = {}
for _, id in ipairs(ids) do
  local entry = redis.call('HGET', KEYS[2], id)
  if entry then
    redis.call('ZADD', KEYS[1], tonumber(ARGV[1]) + tonumber(ARGV[2]), id)
    table.insert(out, id)
    table.insert(out, entry)
    if KEYS[3] then table.insert(out, redis.call('HINCRBY', KEYS[3], id, 1)) else table.insert(out, 0) end
  else
    redis.call('ZREM', KEYS[1], id)
  end
end
return out
"""

# KEYS: 1 posted record of the entry, 2 outbox due, 3 outbox entries, 4 outbox claims, [5 the caller's hash].
# ARGV: 1 entry id, 2 the copy (what identifies it), 3 record TTL s, 4.. field, value pairs for KEYS[5]; the
#       first field is the caller's own record of the copy.
# Returns the copy kept: ARGV[2], or another one recorded first (the caller's copy is then one too many).
COMPLETE_POST: Final = """
local kept = redis.call('GET', KEYS[1])
if (not kept) and KEYS[5] then kept = redis.call('HGET', KEYS[5], ARGV[4]) end
if kept and kept ~= ARGV[2] then return kept end
redis.call('SET', KEYS[1], ARGV[2], 'EX', tonumber(ARGV[3]))
if KEYS[5] and redis.call('EXISTS', KEYS[5]) == 1 then
  for index = 4, #ARGV, 2 do redis.call('HSET', KEYS[5], ARGV[index], ARGV[index + 1]) end
end
redis.call('ZREM', KEYS[2], ARGV[1])
redis.call('HDEL', KEYS[3], ARGV[1])
redis.call('HDEL', KEYS[4], ARGV[1])
return ARGV[2]
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
# KEYS: 1 the lane, 2 its channel's pause. ARGV: 1 this delivery's token, 2 now ms, 3 lease ms, 4 the first entry
# it would send.
# Returns -1 when the lane is taken for this delivery, 0 while another delivery is sending to it (for under a
# second), else how many ms to wait (held for an entry put back, its channel paused, a delivery slow or dead).
# A lane held for an entry may be taken by a delivery starting with that entry or an earlier one
# (entry ids order entries by the time they were queued).
TAKE_LANE: Final = f"""
local now = tonumber(ARGV[2])
local paused_until = tonumber(redis.call('GET', KEYS[2]) or '')
if paused_until and paused_until > now then return paused_until - now end
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
#       picked fields of the call's tool for its asker (zset, by expiry ms; KEYS[2] again when none may cover it).
# ARGV: 1 now ms, 2 the call's rule, 3 its requester ('' = none), 4 '1' when the rule allows self-approval,
#       5 the digest of who may decide under the rule now (``GrantTerms``), 6 the rule's longest duration now (ms),
#       7 the call's field digests (JSON object: ``field_digests``).
# Returns the first live grant that covers the call (its JSON), its use counted; or false: one on the exact call,
# else one whose every picked field the call has with the same value. Expired ids and ids whose grant is gone
# (revoked: the hash entry is deleted first) are dropped on the way. Atomic with a revoke: once a revoke has
# deleted the grant, no call is covered by it.
USE_GRANT: Final = """
local now = tonumber(ARGV[1])
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
          redis.call('HINCRBY', KEYS[1], id .. ':uses', 1)
          return text
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
    _OWNERS
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

EVERY_SCRIPT: Final = (
    DECIDE,
    CLAIM_APPROVAL,
    FENCED_WRITES,
    CLAIM_DUE,
    COMPLETE_POST,
    SHOWN_IF_HELD,
    RELEASE_IF_HELD,
    REDELIVER_JOB,
    PRUNE_CONSUMERS,
    LEAVE_GROUP,
    TAKE_LANE,
    LEAVE_LANE,
    USE_GRANT,
    EDIT_CALL,
)
"""Every script above, for the readiness probe: each must be loaded on the server, or loadable."""

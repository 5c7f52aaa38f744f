-- The decide script: one click (or typed reply, or the clock) judged and recorded in one atomic step.
-- KEYS (named in ``bot.store.scripts.decide.DECIDE``): the approval, the round's open set, the round, the votes, the
--       discussion, the jobs, the outbox's due, entries and wake, the audit, the schedule's due and steps, the open
--       index, the channel's open index, the channel's cached members, the approval's edit, the open-by and recent-by
--       indexes (``bot.store.approvals.approval_index``); then, from KEYS_MORE, the cached members of the user groups
--       the attempt names, then (if the attempt carries a request signature) the signature's replay record, then (if a
--       standing approval decides it) its revoke's fence (``keys.grant_revoked``). The shard structures and caches
--       are the session's shard's (one slot); the channel (and its team) is the one the caller expects the request
--       in: the script checks it.
-- ARGV: the attempt, a field an argument (attempt_*, and origin_* for its origin; flags '1' or '0', lists JSON):
--       approval_id, kind, user, team_id, channel_id, checks, origin {surface, team_id, user_team_id, channel_id, ts,
--       thread_ts}, reason_given, written_at, quorum (0: the policy's), groups, replay, replay_ttl_s, recent_kept: how
--       many recent decisions are kept at least (trimmed in batches, at most twice that; per workspace and person in
--       recent-by), decided_stamp: the decision's time (ms) as 13 digits, its place among the recent ones,
--       with_request: whether a decided answer carries the request too, shown: the digest of the input the person was
--       shown, '' if none, trust: whether the approval also trusts the tool for the session, answer_kind: how an
--       answer answers the question (text, choice, form), choices: the indexes (from 0) of the options a choice answer
--       picks, answer_by_ms: 0, or the Redis time (unix ms) after which the caller no longer waits for the answer,
--       check: judge only, grant: the standing approval that decides it, '' for none; decision_record: the decision
--       record with empty "approved_by" and "discussion" and null "input_digest", "updated_input" and "edited_by" (the
--       script fills them in, and the audit details' null "input_digest" and "edited_by"; for a choice answer, its
--       null "answer" with the labels chosen, as the audit details' too), then from ARGV_MORE five runs (each its
--       length, then its arguments): the message update (Outbox.script_entry), the audit events of a vote and of a
--       decision (Audit.script_events), the resume job (JobQueue.script_resume; the script adds the round's version),
--       the request's schedule entry ids.
-- With checks, the attempt is judged as ``bot.flow.decisions`` describes: where it comes from, a decision already
-- standing, channel membership, the policy stored with the request (approvers, user groups, self-approval), a
-- reason when one is required. Without (the clock), only the record's own rules apply.
-- A check (``check``; ARGV is the attempt alone, decision_record '') is the one judge of everything that decides
-- nothing (a claim, a form opened, App Home): judged as the same attempt would be, it writes nothing, not even the
-- signature, and answers ``allowed`` where the attempt would go on to be recorded (a deny's reason not yet asked). Its
-- kind may also be ``decide`` (whichever the request takes: an answer or an approval) or ``discuss``: anyone who could
-- see the request, decided or not (in its channel, sent a copy, its asker, a voter or decider).
-- The attempt is judged by the request's terms (``bot.store.approvals.decide_call.terms``: its place, asker and
-- policy), never by the whole request: a click costs the same whatever the tool's input weighs. An approval stored
-- before the terms were kept apart has none: its request is read in their place.
-- Returns {status, value, request JSON, message ts}: too late (``TOO_LATE``: it ran after answer_by_ms, nothing
-- written, not even the signature: its caller already told the person nothing was recorded), replayed (nothing
-- changed: the signature was used before),
-- needs (value: JSON of what the caller must supply first: team_id and channel_id, members, groups; nothing
-- written), unreadable (the stored approval cannot be read), unknown, a refusal (wrong_workspace, wrong_place,
-- not_a_member, self_approval, not_an_approver, reason_required, editor_approval, wrong_action: an answer to an
-- approval that offers none (or not in words), an approval or a denial of a question, an answer of another kind than
-- the question's (words for options are one only with ``other``) or choosing what it does not offer), changed (an
-- approval of an input that is no longer the one waiting: edited since it was shown, or never shown, as for a typed
-- reply), already (value: the decision), unseen (a typed reply written before the approval message was posted),
-- voted, vote (value: the count), no_round, decided (value: the decision), allowed (a check), revoked (a standing
-- approval's decision, its use fenced by a revoke: nothing written; the request waits for people). Every answer but
-- replayed, needs and unreadable records the signature as used. The request JSON is '' for replayed, unreadable, a
-- needs of the place, a check's answers, and for decided unless with_request.
-- The attempt, from its arguments (flags are '1' or '0', numbers digits, lists JSON).
local attempt = {
  approval_id = attempt_approval_id, kind = attempt_kind, user = attempt_user, team_id = attempt_team_id,
  channel_id = attempt_channel_id, checks = attempt_checks == '1',
  origin = {surface = origin_surface, team_id = origin_team_id, user_team_id = origin_user_team_id,
    channel_id = origin_channel_id, ts = origin_ts, thread_ts = origin_thread_ts},
  reason_given = attempt_reason_given == '1', written_at = attempt_written_at, quorum = tonumber(attempt_quorum),
  groups = cjson.decode(attempt_groups), replay = attempt_replay == '1', replay_ttl_s = attempt_replay_ttl_s,
  recent_kept = tonumber(attempt_recent_kept), decided_stamp = attempt_decided_stamp,
  with_request = attempt_with_request == '1', shown = attempt_shown, trust = attempt_trust == '1',
  answer_kind = attempt_answer_kind, choices = cjson.decode(attempt_choices),
  answer_by_ms = tonumber(attempt_answer_by_ms), check = attempt_check == '1', grant = attempt_grant,
}
local update_run, vote_run, decision_run, job_run, schedule_run = unpack(runs_from(ARGV_MORE))
local groups_from = KEYS_MORE
if attempt.answer_by_ms > 0 then
  local now = redis.call('TIME')
  if tonumber(now[1]) * 1000 + math.floor(tonumber(now[2]) / 1000) > attempt.answer_by_ms then
    return {TOO_LATE, '', '', ''}
  end
end
local replay_key = KEYS[groups_from + #attempt.groups]
local fence_key = KEYS[groups_from + #attempt.groups + (attempt.replay and 1 or 0)]
if attempt.replay and redis.call('EXISTS', replay_key) == 1 then return {STATUS_REPLAYED, '', '', ''} end
-- One read of the approval: its terms, decision, message, the clicker's direct-message copy, its version, its
-- open-by entries (``indexed``: dropped once decided).
local stored = redis.call('HMGET', approval_key, 'terms', 'decision', 'message_ts', 'copy:' .. attempt.user, 'version',
  'indexed')
local terms_json, posted_ts = stored[1] or redis.call('HGET', approval_key, 'request') or '', stored[3] or ''
-- A recorded decision goes back without the request (a click has no use for it); other answers speak of it (a
-- refusal names the approvers, a vote the quorum).
local function request_json() return redis.call('HGET', approval_key, 'request') or '' end
local function answer(status, value)
  if attempt.replay then redis.call('SET', replay_key, '1', 'EX', attempt.replay_ttl_s) end
  local returned = ''  -- a check's caller read the approval with it
  if not attempt.check and (status ~= STATUS_DECIDED or attempt.with_request) then returned = request_json() end
  return {status, value or '', returned, posted_ts}
end
if terms_json == '' then return answer(STATUS_UNKNOWN) end
local read, terms = pcall(cjson.decode, terms_json)
if not read or type(terms) ~= 'table' or type(terms.policy) ~= 'table' then
  return {STATUS_UNREADABLE, '', '', ''}
end
if terms.team_id ~= attempt.team_id or terms.channel_id ~= attempt.channel_id then
  return {STATUS_NEEDS, cjson.encode({team_id = terms.team_id, channel_id = terms.channel_id}), '', ''}
end
local policy = terms.policy
local function text(value) if type(value) == 'string' then return value end return '' end
local function list(value) if type(value) == 'table' then return value end return {} end
local message_ts = posted_ts ~= '' and posted_ts or text(terms.message_ts)
local user = attempt.user
-- A check of ``decide``: the decision this request takes (an answer to a question, else an approval), for App Home.
if attempt.check and attempt.kind == 'decide' then
  attempt.kind = type(terms.question) == 'table' and 'answer' or 'approve'
end
local chosen = nil  -- a choice answer's labels, as JSON (judged with the checks below)
if attempt.checks then
  local origin = attempt.origin
  local foreign = origin.team_id ~= terms.team_id or origin.user_team_id ~= terms.team_id
  if foreign and policy.allow_external ~= true then return answer(STATUS_WRONG_WORKSPACE) end
  local copy = stored[4]
  if origin.surface == 'message' then
    local shown
    if message_ts ~= '' then
      shown = origin.channel_id == terms.channel_id and origin.ts == message_ts
    else  -- posted, its ts not recorded yet (a click within moments of posting): its thread must match
      shown = origin.channel_id == terms.channel_id and origin.thread_ts == terms.thread_ts
    end
    if not shown and copy ~= origin.channel_id .. '|' .. origin.ts then return answer(STATUS_WRONG_PLACE) end
  elseif origin.surface == 'reply' then
    if origin.channel_id ~= terms.channel_id or origin.ts ~= terms.thread_ts then
      return answer(STATUS_WRONG_PLACE)
    end
  end
  -- Discussing (or seeing, decided or not) needs only a way to have seen it: its channel, a copy, a part in it.
  if attempt.kind == 'discuss' then
    local involved = copy ~= false or user == terms.requested_by or redis.call('SISMEMBER', votes_key, user) == 1
    local decoded, decided = pcall(cjson.decode, stored[2] or 'null')
    if not involved and decoded and type(decided) == 'table' then
      involved = decided.decided_by == user
      for _, voter in ipairs(list(decided.approved_by)) do involved = involved or voter == user end
    end
    if not involved and redis.call('SISMEMBER', members_key, user) == 0 then
      if redis.call('EXISTS', members_key) == 0 then
        return {STATUS_NEEDS, cjson.encode({members = terms.channel_id}), '', posted_ts}
      end
      return answer(STATUS_NOT_A_MEMBER)
    end
    return answer(STATUS_ALLOWED)  -- whatever the attempt says: a discussion decides nothing
  end
  if stored[2] then return answer(STATUS_ALREADY, stored[2]) end
  -- An answer fits a question, or in words an approval that offers one (``answer_offered``); an approval or a
  -- denial, an approval only.
  local asks = type(terms.question) == 'table'
  local in_words = not asks and attempt.kind == 'answer' and terms.answer_offered == true
  if not in_words and asks ~= (attempt.kind == 'answer') then return answer(STATUS_WRONG_ACTION) end
  if in_words and not attempt.check and attempt.answer_kind ~= 'text' then return answer(STATUS_WRONG_ACTION) end
  -- An answer answers as its question asks: in words, with options it offers (one, unless it lets several be
  -- chosen), or with its form. A question stored without a kind is answered in words. (A check opens the way to
  -- answer: how is the form's to ask.)
  if asks and attempt.kind == 'answer' and not attempt.check then
    local asked = type(terms.question.kind) == 'string' and terms.question.kind or 'text'
    -- Words answer a question of options too when it lets the person answer otherwise ("Other...").
    local other = asked == 'choice' and attempt.answer_kind == 'text' and terms.question.other == true
    if attempt.answer_kind ~= asked and not other then return answer(STATUS_WRONG_ACTION) end
    if asked == 'choice' and not other then
      local options, picked, labels = list(terms.question.options), {}, {}
      local count = #attempt.choices
      if count == 0 or (count > 1 and terms.question.multiple ~= true) then return answer(STATUS_WRONG_ACTION) end
      for _, index in ipairs(attempt.choices) do
        local option = type(index) == 'number' and index % 1 == 0 and options[index + 1] or nil
        if type(option) ~= 'table' or type(option.label) ~= 'string' or picked[index] then
          return answer(STATUS_WRONG_ACTION)
        end
        picked[index] = true
        labels[#labels + 1] = cjson.encode(option.label)
      end
      chosen = terms.question.multiple == true and '[' .. table.concat(labels, ',') .. ']' or labels[1]
    end
  end
  -- Trusting the tool for the session comes only with an approval of a request that offers it.
  if attempt.trust and (attempt.kind ~= 'approve' or terms.trust_offered ~= true) then
    return answer(STATUS_WRONG_ACTION)
  end
  -- A rule that decides by itself (tier allow or deny) is never decided by a person, whatever went before.
  if type(policy.tier) == 'string' and policy.tier ~= 'ask' then return answer(STATUS_NOT_AN_APPROVER) end
  if not copy and redis.call('SISMEMBER', members_key, user) == 0 then
    if redis.call('EXISTS', members_key) == 0 then  -- not cached (or expired): the caller fills the cache first
      return {STATUS_NEEDS, cjson.encode({members = terms.channel_id}), request_json(), posted_ts}
    end
    return answer(STATUS_NOT_A_MEMBER)
  end
  if not (attempt.kind == 'deny' and user == terms.requested_by) then  -- else: withdrawing one's own request
    local lists = {{users = list(policy.approver_users), usergroups = list(policy.approver_groups)}}
    for _, extra in ipairs(list(policy.also_approvers)) do
      lists[#lists + 1] = {users = list(extra.users), usergroups = list(extra.usergroups)}
    end
    local members = {}
    for index, group in ipairs(attempt.groups) do
      local raw = redis.call('GET', KEYS[groups_from + index - 1])
      local ok, users = false, nil
      if raw then ok, users = pcall(cjson.decode, raw) end
      if ok and type(users) == 'table' then
        local set, count = {}, 0
        for _, member in pairs(users) do
          count = count + 1
          if type(member) ~= 'string' then set = nil break end
          set[member] = true
        end
        if set and count == #users then members[group] = set end
      end
    end
    local missing = {}
    for _, approvers in ipairs(lists) do
      for _, group in ipairs(approvers.usergroups) do
        if not members[group] then missing[#missing + 1] = group end
      end
    end
    if #missing > 0 then
      return {STATUS_NEEDS, cjson.encode({groups = missing}), request_json(), posted_ts}
    end
    if user == terms.requested_by and policy.allow_self_approval ~= true then
      return answer(STATUS_SELF_APPROVAL)
    end
    for _, approvers in ipairs(lists) do
      local admitted = #approvers.users == 0 and #approvers.usergroups == 0
      for _, listed in ipairs(approvers.users) do admitted = admitted or listed == user end
      for _, group in ipairs(approvers.usergroups) do admitted = admitted or members[group][user] == true end
      if not admitted then return answer(STATUS_NOT_AN_APPROVER) end
    end
  end
  -- A check stops here, having written nothing: the person may act now (a deny's reason is for its form to ask).
  if attempt.check then return answer(STATUS_ALLOWED) end
  if attempt.kind == 'deny' and not attempt.reason_given and policy.reason_required_on_deny == true then
    return answer(STATUS_REASON_REQUIRED)
  end
end
if attempt.check then return answer(STATUS_WRONG_ACTION) end  -- a check is a person's: never the clock's
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
  return answer(STATUS_UNSEEN)
end
if stored[2] then return answer(STATUS_ALREADY, stored[2]) end
-- An approval names the input it was shown (a button carries its digest): edited since, it approves nothing. The
-- clock (no checks, nothing shown) approves the input as it is. An editor may be barred from approving their edit.
local edit = redis.call('HMGET', edit_key, 'digest', 'by', 'input')
local current = edit[1] or text(terms.input_digest)
if attempt.kind == 'approve' then
  if (attempt.checks or attempt.shown ~= '') and (edit[1] or attempt.shown ~= '') and attempt.shown ~= current then
    return answer(STATUS_CHANGED)
  end
  if attempt.checks and edit[2] == user and policy.edits == 'other_approver' then
    return answer(STATUS_EDITOR_APPROVAL)
  end
end
-- A standing approval decides only while no revoke has fenced its use: a revoke fences every use in flight before
-- it returns, so once it has, this grant decides nothing here.
if type(attempt.grant) == 'string' and attempt.grant ~= '' and redis.call('EXISTS', fence_key) == 1 then
  return answer(STATUS_REVOKED)
end
-- Undecided but not open: its round is over (a later round replaced it). It can answer nothing.
if redis.call('SISMEMBER', open_set_key, attempt.approval_id) == 0 then return answer(STATUS_UNKNOWN) end
-- Read everything the last step needs before writing anything: never a half-recorded decision.
local round_version = redis.call('HGET', round_key, 'version')
if not round_version then return answer(STATUS_NO_ROUND) end
local replies = redis.call('LRANGE', discussion_key, 0, -1)
for _, reply in ipairs(replies) do
  local ok, entry = pcall(cjson.decode, reply)
  if not ok or type(entry) ~= 'table' then return {STATUS_UNREADABLE, '', '', ''} end
end
-- Records' empty fields are filled in place (JSON strings cannot hold these keys unescaped); a record without the
-- field is left as it is.
local function filled(record, name, empty, value)
  local at = string.find(record, '"' .. name .. '":' .. empty, 1, true)
  if not at then return record end
  return string.sub(record, 1, at + #name + 2) .. value .. string.sub(record, at + #name + 3 + #empty)
end
-- The audit's details (JSON with spaces: Audit.script_events) name the input approved, and its editor; or the
-- options a choice answer picked. What fills them is worked out once, not for each of the event's values; nil when
-- there is nothing to fill (the event is added as it came).
local with_input = nil
if chosen then
  with_input = function(details) return filled(details, 'answer', ' null', ' ' .. chosen) end
elseif attempt.kind == 'approve' and current ~= '' then
  local digest, editor = ' ' .. cjson.encode(current), edit[2] and ' ' .. cjson.encode(edit[2])
  with_input = function(details)
    details = filled(details, 'input_digest', ' null', digest)
    if editor then details = filled(details, 'edited_by', ' null', editor) end
    return details
  end
end
-- Each change bumps the approval's version: the update queued with it shows this version or a later one.
local next_version = (tonumber(stored[5]) or 0) + 1
local function queue_update_and_audit(event_run)
  queue_outbox(outbox_due_key, outbox_entries_key, outbox_wake_key, update_run)
  add_audit(audit_key, event_run, with_input)
end
local quorum = attempt.quorum > 0 and attempt.quorum or tonumber(policy.quorum) or 1
local approved_by = '[]'
if attempt.kind == 'approve' and quorum > 1 then
  if redis.call('SISMEMBER', votes_key, user) == 1 then return answer(STATUS_VOTED) end
  redis.call('SADD', votes_key, user)
  local votes = redis.call('SMEMBERS', votes_key)
  if #votes < quorum then
    redis.call('HSET', approval_key, 'version', next_version)
    queue_update_and_audit(vote_run)
    return answer(STATUS_VOTE, tostring(#votes))
  end
  table.sort(votes)
  for index, voter in ipairs(votes) do votes[index] = cjson.encode(voter) end
  approved_by = '[' .. table.concat(votes, ',') .. ']'
end
local decision = decision_record
if approved_by ~= '[]' then decision = filled(decision, 'approved_by', '[]', approved_by) end
if #replies > 0 then decision = filled(decision, 'discussion', '[]', '[' .. table.concat(replies, ',') .. ']') end
if chosen then decision = filled(decision, 'answer', 'null', chosen) end
if attempt.kind == 'approve' and current ~= '' then
  decision = filled(decision, 'input_digest', 'null', cjson.encode(current))
  if edit[1] then
    decision = filled(decision, 'updated_input', 'null', edit[3])
    decision = filled(decision, 'edited_by', 'null', cjson.encode(edit[2]))
  end
end
redis.call('HSET', approval_key, 'decision', decision, 'version', next_version)
redis.call('SREM', open_set_key, attempt.approval_id)
drop_steps(schedule_due_key, schedule_steps_key, schedule_run)
redis.call('ZREM', open_index_key, attempt.approval_id)
redis.call('ZREM', channel_open_key, attempt.approval_id)
-- The workspace's and the named approvers' open entries go (the ones written with it: its 'indexed' field); the
-- decision is listed for the workspace and for each person it concerns, each list trimmed to its newest.
local indexed = stored[6]  -- nothing above writes it
if indexed then
  local members = open_entries(indexed, attempt.approval_id)
  if #members > 0 then redis.call('ZREM', open_by_key, unpack(members)) end
  redis.call('HDEL', approval_key, 'indexed')
end
-- Listed in one ZADD (a call and an AOF line, not one per list), then each list trimmed: their ranges are apart.
local team = text(terms.team_id)
local prefixes, concerned, listed = {'w:' .. team .. ':'}, {}, {}
if attempt.checks then concerned[#concerned + 1] = user end
if approved_by ~= '[]' then
  for _, voter in ipairs(cjson.decode(approved_by)) do concerned[#concerned + 1] = voter end
end
concerned[#concerned + 1] = text(terms.requested_by)
for _, person in ipairs(concerned) do
  if person ~= '' and not listed[person] then
    listed[person] = true
    prefixes[#prefixes + 1] = 'p:' .. team .. ':' .. person .. ':'
  end
end
local entries = {}
for _, prefix in ipairs(prefixes) do
  entries[#entries + 1] = 0
  entries[#entries + 1] = prefix .. attempt.decided_stamp .. ':' .. attempt.approval_id
end
redis.call('ZADD', recent_by_key, unpack(entries))
for _, prefix in ipairs(prefixes) do
  local low, high = '[' .. prefix, '(' .. prefix .. '\255'
  if redis.call('ZLEXCOUNT', recent_by_key, low, high) >= 2 * attempt.recent_kept then  -- trimmed in batches
    local cut = redis.call('ZRANGE', recent_by_key, high, low, 'BYLEX', 'REV', 'LIMIT', attempt.recent_kept, 1)
    if cut[1] then redis.call('ZREMRANGEBYLEX', recent_by_key, low, '[' .. cut[1]) end
  end
end
queue_update_and_audit(decision_run)
if redis.call('SCARD', open_set_key) == 0 then queue_job(jobs_key, job_run, round_version) end
return answer(STATUS_DECIDED, decision)

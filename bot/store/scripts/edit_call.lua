-- KEYS: approval_key, edit_key (its edit), votes_key (its votes), open_set_key (the round's), the outbox's
--       outbox_due_key, outbox_entries_key, outbox_wake_key, audit_key (the session's shard: one slot).
-- ARGV: edit_json (approval_id, editor, from: the digest of the input the editor started from, digest: of the
--       edited input, at: its time, ISO), input: the edited input (JSON, stored as it is), then from ARGV_MORE two
--       runs: the message
--       update (Outbox.script_entry), the audit event (Audit.script_events).
-- Records an edit of a pending call: refused if the approval is unknown, decided, no longer open, its rule forbids
-- edits (``policy.edits`` in its terms), or its input changed since the editor opened the form (another edit). The
-- votes counted so far were for the other input: they are dropped. Returns {status, digest now}: edited, unknown,
-- already, forbidden, changed (the digest of the input as it is now), unchanged (the edit changes nothing).
local edit = cjson.decode(edit_json)
local update_run, audit_run = unpack(runs_from(ARGV_MORE))
local stored = redis.call('HMGET', approval_key, 'terms', 'decision', 'version')
if not stored[1] then return {STATUS_UNKNOWN, ''} end
if stored[2] then return {STATUS_ALREADY, ''} end
if redis.call('SISMEMBER', open_set_key, edit.approval_id) == 0 then return {STATUS_UNKNOWN, ''} end
local read, terms = pcall(cjson.decode, stored[1])
if not read or type(terms) ~= 'table' or type(terms.policy) ~= 'table' then return {STATUS_UNREADABLE, ''} end
if terms.policy.edits == 'forbidden' or type(terms.input_digest) ~= 'string' then
  return {STATUS_FORBIDDEN, ''}
end
local now = redis.call('HGET', edit_key, 'digest') or terms.input_digest
if now ~= edit.from then return {STATUS_CHANGED, now} end
if now == edit.digest then return {STATUS_UNCHANGED, now} end
redis.call('HSET', edit_key, 'input', input, 'digest', edit.digest, 'by', edit.editor, 'at', edit.at)
drop_votes(votes_key)
set_version(approval_key, (tonumber(stored[3]) or 0) + 1)
queue_outbox(outbox_due_key, outbox_entries_key, outbox_wake_key, update_run)
add_audit(audit_key, audit_run)
return {STATUS_EDITED, edit.digest}

-- The session hash's own functions (``state.store``).

-- read_version(session_key, format): the session's stored version (0: none yet), or nil and the refusal to return
-- when the key holds corrupted or foreign data ({-1, what}), which is never written over nor deleted.
local function read_version(session_key, format)
  local raw = redis.call('HGET', session_key, 'version')
  if raw then
    local current = tonumber(raw)
    if current == nil or current < 1 then return nil, {-1, raw} end
    if redis.call('HGET', session_key, 'format') ~= format then return nil, {-1, 'foreign format'} end
    return current
  elseif redis.call('EXISTS', session_key) == 1 then
    return nil, {-1, 'missing version'}
  end
  return 0
end

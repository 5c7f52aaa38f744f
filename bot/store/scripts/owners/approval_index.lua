-- The approval indexes' reads in other owners' scripts (``bot.store.approvals.approval_index``).

-- open_entries(indexed, approval_id): the open-by members an approval's ``indexed`` field names ({} if none or
-- unreadable). The field (``approval_index.open_record``) holds the entries' time, then their prefixes: each entry
-- is a prefix, the time and the approval id. A field written by an earlier version lists the entries whole: read as
-- it is.
local function open_entries(indexed, approval_id)
  local read, listed = pcall(cjson.decode, indexed or '[]')
  if not read or type(listed) ~= 'table' then return {} end
  local stamp, entries = listed[1], {}
  if type(stamp) == 'string' and string.match(stamp, '^%d+$') then
    for index = 2, #listed do
      if type(listed[index]) == 'string' then entries[#entries + 1] = listed[index] .. stamp .. ':' .. approval_id end
    end
    return entries
  end
  for _, entry in ipairs(listed) do
    if type(entry) == 'string' then entries[#entries + 1] = entry end
  end
  return entries
end

-- KEYS: posted_key: the entry's posted record, the outbox's due_key, entries_key, claims_key, [caller_key: the
--       caller's hash, [open_by_key: its shard's open-by index]].
-- ARGV: entry_id, copy (what identifies it), ttl_s (the record's), open_by_prefix: the open-by prefix to list the
--       copy under ('' none), approval_id, then from ARGV_MORE field, value pairs for caller_key; the first field is
--       the caller's own record of the copy.
-- Returns the copy kept: copy, or another one recorded first (the caller's copy is then one too many).
-- The listing (a direct-message copy of a waiting approval, on its person's App Home): an entry open_by_prefix, the
-- approval's open time and id, added to open_by_key and to the approval's 'indexed' field (so the decide script removes
-- it with the others); none once decided, or for an approval listed before 'indexed' was kept.
local kept = redis.call('GET', posted_key)
if (not kept) and caller_key then kept = redis.call('HGET', caller_key, ARGV[ARGV_MORE]) end
if kept and kept ~= copy then return kept end
redis.call('SET', posted_key, copy, 'EX', tonumber(ttl_s))
if caller_key and redis.call('EXISTS', caller_key) == 1 then
  for index = ARGV_MORE, #ARGV, 2 do redis.call('HSET', caller_key, ARGV[index], ARGV[index + 1]) end
  if open_by_key and open_by_prefix ~= '' then
    local state = redis.call('HMGET', caller_key, 'decision', 'indexed')
    local read, listed = pcall(cjson.decode, state[2] or '')
    if (not state[1]) and read and type(listed) == 'table' and type(listed[1]) == 'string'
        and string.match(listed[1], '^%d+$') then
      local present = false
      for index = 2, #listed do present = present or listed[index] == open_by_prefix end
      if not present then
        listed[#listed + 1] = open_by_prefix
        redis.call('HSET', caller_key, 'indexed', cjson.encode(listed))
        redis.call('ZADD', open_by_key, 0, open_by_prefix .. listed[1] .. ':' .. approval_id)
      end
    end
  end
end
redis.call('ZREM', due_key, entry_id)
redis.call('HDEL', entries_key, entry_id)
redis.call('HDEL', claims_key, entry_id)
return copy

-- The approval's writes in other owners' scripts (``bot.store.approvals.approvals``).

-- set_version(approval_key, version): the approval's version, after a change its message is to show (the update
-- queued with it shows this version or a later one).
local function set_version(approval_key, version)
  redis.call('HSET', approval_key, 'version', version)
end

-- drop_votes(votes_key): forgets the approval's votes counted so far (they were for an input it no longer has).
local function drop_votes(votes_key)
  redis.call('DEL', votes_key)
end

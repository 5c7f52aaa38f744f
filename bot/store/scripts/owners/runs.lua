-- The runs of arguments other owners' records arrive as (``bot.store.scripts.runs``: each its length, then that many
-- arguments).

-- runs_from(first): the runs of ARGV from index ``first`` on, as {first index, last index} pairs.
local function runs_from(first)
  local runs, at = {}, first
  while at <= #ARGV do
    local count = tonumber(ARGV[at])
    runs[#runs + 1] = {at + 1, at + count}
    at = at + count + 1
  end
  return runs
end

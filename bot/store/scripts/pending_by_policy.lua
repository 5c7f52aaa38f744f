-- KEYS: open_by_key: a shard's open-by index. ARGV: rules_prefix ('g:'), then from ARGV_MORE the age bounds as 13-digit
--       ms, newest first (requested at or after the first: the youngest bucket; before the last: the oldest bucket).
-- Walks the shard's rules one by one (a bounded read each) and returns, per rule: its quoted name, its oldest
-- request's 13-digit ms, then its count in each age bucket, youngest first. Costs the number of rules, not requests.
local out = {}
local low = '[' .. rules_prefix
local high = '(' .. string.sub(rules_prefix, 1, -2) .. string.char(string.byte(rules_prefix, -1) + 1)
while true do
  local first = redis.call('ZRANGEBYLEX', open_by_key, low, high, 'LIMIT', 0, 1)[1]
  if not first then break end
  local prefix = string.match(first, '^([^:]*:[^:]*:)')  -- the rule's name is quoted: it holds no ':'
  if not prefix then break end
  local name = string.sub(prefix, #rules_prefix + 1, -2)
  out[#out + 1] = name
  out[#out + 1] = string.sub(first, #prefix + 1, #prefix + 13)
  local upper = '(' .. prefix .. string.char(255)
  for index = ARGV_MORE, #ARGV do
    local bound = '[' .. prefix .. ARGV[index]
    out[#out + 1] = redis.call('ZLEXCOUNT', open_by_key, bound, upper)
    upper = '(' .. prefix .. ARGV[index]
  end
  out[#out + 1] = redis.call('ZLEXCOUNT', open_by_key, '[' .. prefix, upper)
  low = '(' .. prefix .. string.char(255)
end
return out

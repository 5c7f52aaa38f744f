-- KEYS: 1 a workspace's channels with approvals opened in the shard, 2 one channel's open index. ARGV: 1 the channel.
-- Drops the channel from the list once nothing waits in it (atomic with a publish adding to both: never one lost).
if redis.call('ZCARD', channel_open_key) == 0 then redis.call('SREM', channels_key, channel_id) end
return 0

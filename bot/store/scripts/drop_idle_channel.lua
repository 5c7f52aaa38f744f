-- KEYS: channels_key: a workspace's channels with approvals opened in the shard, channel_open_key: one channel's
--       open index. ARGV: channel_id.
-- Drops the channel from the list once nothing waits in it (atomic with a publish adding to both: never one lost).
if redis.call('ZCARD', channel_open_key) == 0 then redis.call('SREM', channels_key, channel_id) end
return 0

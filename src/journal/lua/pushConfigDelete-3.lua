--[[
  Deletes a push notification config of a client's task and gives its bytes back to the task's, the client's and the
  profile's stored-bytes counters.

    KEYS[1] task   KEYS[2] pushConfigs   KEYS[3] bytes (HASH of the shard's stored-bytes counters)
    ARGV[1] client id   ARGV[2] profile   ARGV[3] config id

  Returns: 1 deleted; 0 the task has no such config (nothing written); -1 no such task for this client and profile
]]
-- @include "stored-bytes"

local task = redis.call('HMGET', KEYS[1], 'cli', 'prof')
if task[1] ~= ARGV[1] or task[2] ~= ARGV[2] then
  return -1
end
if not deleteConfig(KEYS[2], KEYS[1], KEYS[3], ARGV[1], ARGV[2], ARGV[3]) then
  return 0
end
return 1

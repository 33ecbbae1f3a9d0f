--[[
  Stores (creates or replaces) a push notification config of a client's task, within the per-task limit and the
  client's and profile's stored-bytes budgets, and counts its bytes. When the task already has an expiry (a task
  finished before deletions were scheduled), the configs expire with it, so a config made late never outlives its task.

    KEYS[1] task   KEYS[2] pushConfigs   KEYS[3] client (HASH: the record, field maxbytes)
    KEYS[4] bytes (HASH of the shard's stored-bytes counters)
    ARGV[1] client id   ARGV[2] profile   ARGV[3] config id   ARGV[4] config JSON   ARGV[5] max configs per task
    ARGV[6] the client's stored-bytes budget when its record has none (bytes, 0 = none)
    ARGV[7] the profile's stored-bytes budget (bytes, 0 = none)

  Returns: 1 stored; -1 no such task for this client and profile; -2 the task has as many configs as allowed;
           -3 the client's stored bytes would pass its budget; -4 the profile's stored bytes would pass its budget
]]
-- @include "stored-bytes"

local task = redis.call('HMGET', KEYS[1], 'cli', 'prof')
if task[1] ~= ARGV[1] or task[2] ~= ARGV[2] then
  return -1
end
local existing = redis.call('HSTRLEN', KEYS[2], ARGV[3])
if existing == 0 and redis.call('HLEN', KEYS[2]) >= tonumber(ARGV[5]) then
  return -2
end
local added = #ARGV[4] - existing
if overBudget(KEYS[4], 'client:' .. ARGV[1], tonumber(redis.call('HGET', KEYS[3], 'maxbytes') or ARGV[6]), added) then
  return -3
end
if overBudget(KEYS[4], 'profile:' .. ARGV[2], tonumber(ARGV[7]), added) then
  return -4
end

redis.call('HSET', KEYS[2], ARGV[3], ARGV[4])
addStoredBytes(KEYS[1], KEYS[4], ARGV[1], ARGV[2], added, 0)
local ttl = redis.call('PTTL', KEYS[1])
if ttl > 0 then
  redis.call('PEXPIRE', KEYS[2], ttl)
end
return 1

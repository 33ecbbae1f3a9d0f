--[[
  Stores (creates or replaces) a push notification config of a client's task, within the per-task limit. When the task
  already has an expiry (it is finished), the configs expire with it, so a config made late never outlives its task.

    KEYS[1] task   KEYS[2] pushConfigs
    ARGV[1] client id   ARGV[2] profile   ARGV[3] config id   ARGV[4] config JSON   ARGV[5] max configs per task

  Returns: 1 stored; -1 no such task for this client and profile; -2 the task has as many configs as allowed
]]
local task = redis.call('HMGET', KEYS[1], 'cli', 'prof')
if task[1] ~= ARGV[1] or task[2] ~= ARGV[2] then
  return -1
end
if redis.call('HEXISTS', KEYS[2], ARGV[3]) == 0 and redis.call('HLEN', KEYS[2]) >= tonumber(ARGV[5]) then
  return -2
end
redis.call('HSET', KEYS[2], ARGV[3], ARGV[4])
local ttl = redis.call('PTTL', KEYS[1])
if ttl > 0 then
  redis.call('PEXPIRE', KEYS[2], ttl)
end
return 1

--[[
  Cancels a client's task. A queued or interrupted task is canceled at once (state, journal, slots released,
  retention set). A running one gets a cancel request that its actor sees (pub/sub and lease renewal) and
  answers by ending the task CANCELED. A terminal task is refused as not cancelable; a canceled one is returned as is.

    KEYS[1] task   KEYS[2] run   KEYS[3] journal   KEYS[4] clientTasks   KEYS[5] clientActive   KEYS[6] profileActive
    KEYS[7] pushConfigs   KEYS[8] pushQueue   KEYS[9] pushReady

    ARGV[1] client id   ARGV[2] status JSON (CANCELED)   ARGV[3] journal event JSON   ARGV[4] now (ms)
    ARGV[5] retention (s)   ARGV[6] journal retention (s)   ARGV[7] events channel   ARGV[8] cancel channel

  Returns: {1, rev} canceled now; {2, rev} cancel requested from the running actor; {0, rev} already canceled;
           -1 no such task for this client; -2 not cancelable (completed, failed or rejected)
]]
local task = redis.call('HMGET', KEYS[1], 'cli', 'state', 'rev', 'id')
if task[1] ~= ARGV[1] then
  return -1
end
local state = task[2]
local rev = tonumber(task[3])
if state == 'TASK_STATE_CANCELED' then
  return {0, rev}
end
if state == 'TASK_STATE_COMPLETED' or state == 'TASK_STATE_FAILED' or state == 'TASK_STATE_REJECTED' then
  return -2
end
local run = redis.call('HMGET', KEYS[2], 'state', 'id')
if run[1] == 'running' then
  redis.call('HSET', KEYS[2], 'cancel', 1)
  redis.call('PUBLISH', ARGV[8], run[2])
  return {2, rev}
end

rev = rev + 1
redis.call('HSET', KEYS[1], 'state', 'TASK_STATE_CANCELED', 'rev', rev, 'st', ARGV[2], 'ts', ARGV[4])
redis.call('XADD', KEYS[3], '*', 'rev', rev, 'ev', ARGV[3])

-- one webhook delivery per push config of the task, in journal order (the outbox; workers deliver it)
local configs = redis.call('HKEYS', KEYS[7])
table.sort(configs)
if #configs > 0 then
  for _, cfg in ipairs(configs) do
    redis.call('RPUSH', KEYS[8], '{"id":"' .. task[4] .. '.' .. rev .. '.' .. cfg .. '","cfg":"' .. cfg .. '","rev":' .. rev
      .. ',"attempts":0,"ev":' .. ARGV[3] .. '}')
  end
  local t = redis.call('TIME')
  redis.call('ZADD', KEYS[9], 'NX', tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000), task[4])
end
redis.call('ZADD', KEYS[4], ARGV[4], task[4])
redis.call('HSET', KEYS[2], 'state', 'done', 'owner', '', 'lease', 0)
redis.call('SREM', KEYS[5], task[4])
redis.call('SREM', KEYS[6], task[4])
redis.call('EXPIRE', KEYS[1], ARGV[5])
redis.call('EXPIRE', KEYS[2], ARGV[5])
redis.call('EXPIRE', KEYS[3], ARGV[6])
redis.call('EXPIRE', KEYS[7], ARGV[5])
redis.call('PUBLISH', ARGV[7], task[4] .. ' TASK_STATE_CANCELED')
return {1, rev}

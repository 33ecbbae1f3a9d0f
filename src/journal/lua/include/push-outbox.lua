--[[
  The webhook outbox, shared by every script that appends a journal entry: one delivery per push config of the task,
  in journal order, and the task marked due (workers deliver; see push-outbox.ts).
]]
local OUTBOX = {}
local function enqueueDeliveries(configsKey, queueKey, readyKey, taskId, rev, event)
  -- a script writes for one task: its configs are read once, however many events it appends
  if not OUTBOX.configs then
    OUTBOX.configs = redis.call('HKEYS', configsKey)
    table.sort(OUTBOX.configs)
  end
  local configs = OUTBOX.configs
  if #configs == 0 then
    return
  end
  for _, cfg in ipairs(configs) do
    redis.call('RPUSH', queueKey, '{"id":"' .. taskId .. '.' .. rev .. '.' .. cfg .. '","cfg":"' .. cfg .. '","rev":'
      .. rev .. ',"attempts":0,"ev":' .. event .. '}')
  end
  redis.call('ZADD', readyKey, 'NX', redisNowMs(), taskId)
end

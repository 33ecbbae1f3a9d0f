--[[
  The webhook outbox, shared by every script that appends a journal entry: one delivery per push config of the task,
  in journal order, and the task marked due (workers deliver; see push-outbox.ts).
]]
local function enqueueDeliveries(configsKey, queueKey, readyKey, taskId, rev, event)
  local configs = redis.call('HKEYS', configsKey)
  if #configs == 0 then
    return
  end
  table.sort(configs)
  for _, cfg in ipairs(configs) do
    redis.call('RPUSH', queueKey, '{"id":"' .. taskId .. '.' .. rev .. '.' .. cfg .. '","cfg":"' .. cfg .. '","rev":'
      .. rev .. ',"attempts":0,"ev":' .. event .. '}')
  end
  local t = redis.call('TIME')
  redis.call('ZADD', readyKey, 'NX', tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000), taskId)
end

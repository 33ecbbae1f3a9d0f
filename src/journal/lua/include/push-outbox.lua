--[[
  The webhook outbox, shared by every script that appends a journal entry: one delivery per push config of the task,
  in journal order, queued per config (a receiver that fails holds back its own deliveries only), and each config's
  queue marked due in the shard's ready set as "<taskId> <configId>" (workers deliver; see push-outbox.ts).
  A task's outbox is one HASH: per config, `n:<cfg>` counts the deliveries queued since its queue was last empty,
  `d:<cfg>` those of them settled, and `<i>:<cfg>` holds the i-th, so that the head is `<d + 1>:<cfg>`.
]]
local OUTBOX = {}

-- Appends one delivery (JSON) to a config's queue in the task's outbox, and marks the queue due at nowMs unless it is
-- due already, waits for a retry or is claimed. Returns its bytes (counted in the task's `obytes` by the caller).
local function queueDelivery(outboxKey, readyKey, taskId, cfg, delivery, nowMs)
  local queued = redis.call('HINCRBY', outboxKey, 'n:' .. cfg, 1)
  redis.call('HSET', outboxKey, queued .. ':' .. cfg, delivery)
  redis.call('ZADD', readyKey, 'NX', nowMs, taskId .. ' ' .. cfg)
  return #delivery
end

-- Queues one delivery of the event per config of the task; returns the bytes queued, which the caller adds to the
-- task's `obytes` (addOutboxBytes) with its other counts.
local function enqueueDeliveries(configsKey, outboxKey, readyKey, taskId, rev, event)
  -- a script writes for one task: its configs are read once, however many events it appends
  if not OUTBOX.configs then
    OUTBOX.configs = redis.call('HKEYS', configsKey)
    table.sort(OUTBOX.configs)
  end
  local configs = OUTBOX.configs
  if #configs == 0 then
    return 0
  end
  local nowMs = redisNowMs()
  local bytes = 0
  for _, cfg in ipairs(configs) do
    bytes = bytes + queueDelivery(outboxKey, readyKey, taskId, cfg, '{"id":"' .. taskId .. '.' .. rev .. '.' .. cfg
      .. '","cfg":"' .. cfg .. '","rev":' .. rev .. ',"attempts":0,"ev":' .. event .. '}', nowMs)
  end
  return bytes
end

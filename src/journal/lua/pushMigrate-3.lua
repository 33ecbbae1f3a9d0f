--[[
  Moves a task's webhook deliveries queued by a version before the queues per config (one LIST per task, due as the
  bare task id) into the task's outbox, each config's in their order, and marks each config's queue due now. Run by a
  delivery worker that claimed the bare task id; a delivery waiting for a retry is attempted again at once.

    KEYS[1] legacyPushQueue (LIST)   KEYS[2] pushOutbox   KEYS[3] pushReady
    ARGV[1] task id

  Returns: the number of deliveries moved
]]
-- @include "clock"
-- @include "push-outbox"

local entries = redis.call('LRANGE', KEYS[1], 0, -1)
local nowMs = redisNowMs()
for _, delivery in ipairs(entries) do
  -- every delivery begins {"id":"…","cfg":"<config id>", (the outbox's own format, which this keeps)
  local cfg = string.match(delivery, '^{"id":"[^"]*","cfg":"([^"]*)"')
  if cfg then
    queueDelivery(KEYS[2], KEYS[3], ARGV[1], cfg, delivery, nowMs)
  end
end
redis.call('DEL', KEYS[1])
redis.call('ZREM', KEYS[3], ARGV[1])
return #entries

--[[
  Moves a task's webhook deliveries queued by a version before the queues per config (one LIST per task, due as the
  bare task id) into the task's outbox, each config's in their order, and marks each config's queue due now. Run by a
  delivery worker that claimed the bare task id; a delivery waiting for a retry is attempted again at once.

    KEYS[1] legacyPushQueue (LIST)   KEYS[2] pushOutbox   KEYS[3] pushReady   KEYS[4] task
    KEYS[5] bytes (HASH of the shard's stored-bytes counters)
    ARGV[1] task id

  Their bytes, which that version did not count, are counted in the task's `obytes` from now on. The deliveries of a
  task that is gone are dropped.

  Returns: the number of deliveries moved
]]
-- @include "clock"
-- @include "stored-bytes"
-- @include "push-outbox"

local owner = redis.call('HMGET', KEYS[4], 'cli', 'prof')
local entries = {}
if owner[1] then
  entries = redis.call('LRANGE', KEYS[1], 0, -1)
end
local nowMs = redisNowMs()
local bytes = 0
for _, delivery in ipairs(entries) do
  -- every delivery begins {"id":"…","cfg":"<config id>", (the outbox's own format, which this keeps)
  local cfg = string.match(delivery, '^{"id":"[^"]*","cfg":"([^"]*)"')
  if cfg then
    bytes = bytes + queueDelivery(KEYS[2], KEYS[3], ARGV[1], cfg, delivery, nowMs)
  end
end
redis.call('DEL', KEYS[1])
redis.call('ZREM', KEYS[3], ARGV[1])
if owner[1] then
  addOutboxBytes(KEYS[4], KEYS[5], owner[1], owner[2], bytes)
end
return #entries

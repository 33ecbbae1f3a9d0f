--[[
  One deletion step of a finished task whose time has come (the retention pass calls it for each due member of the
  shard's purge set): the journal alone when its retention ends before the task's (the task is then rescheduled for
  its own time), or the whole task: task, run, journal, chunk store, push configs and outbox, its index entries, and its
  stored bytes (with its pending deliveries') given back to its client's and profile's counters in the same step, so that they never drift.

    KEYS[1] purge (ZSET task id -> next deletion step, ms)   KEYS[2] task   KEYS[3] run   KEYS[4] journal
    KEYS[5] pushConfigs   KEYS[6] pushOutbox   KEYS[7] pushReady   KEYS[8] clientTasks (of the task's client and
    profile)   KEYS[9] bytes (HASH of the shard's stored-bytes counters)   KEYS[10] contextTasks (of its context)
    KEYS[11] chunks (STRING: the task's artifact events not yet compacted)
    KEYS[12] legacyPushQueue (LIST: deliveries queued by a version before the queues per config)
    ARGV[1] task id   ARGV[2] the task's client id (as the caller read it; "" when the task is gone)

  Returns: 2 the task is deleted; 1 its journal is deleted and the task rescheduled; 0 a stale member (the task is
           gone, or not finished) removed, with a gone task's leftover keys; -1 the task is not scheduled; -2 not due
           yet; -3 the task belongs to another client than ARGV[2] (nothing written)
]]
-- @include "clock"
-- @include "stored-bytes"
-- @include "task-endings"
-- @include "task-index"

local due = redis.call('ZSCORE', KEYS[1], ARGV[1])
if not due then
  return -1
end
local nowMs = redisNowMs()
if tonumber(due) > nowMs then
  return -2
end
local task = redis.call('HMGET', KEYS[2], 'state', 'cli', 'prof', 'bytes', 'jbytes', 'purge', 'obytes')
if task[1] and task[2] ~= ARGV[2] then
  return -3
end

-- The task's webhook queues leave the ready set with it: one per config it has (a queue of a config deleted before it
-- leaves when a worker finds it empty), and the bare task id of a queue from before the queues per config.
local function unmarkQueues()
  for _, cfg in ipairs(redis.call('HKEYS', KEYS[5])) do
    redis.call('ZREM', KEYS[7], ARGV[1] .. ' ' .. cfg)
  end
  redis.call('ZREM', KEYS[7], ARGV[1])
end

local state = task[1]
if state ~= 'TASK_STATE_COMPLETED' and state ~= 'TASK_STATE_FAILED' and state ~= 'TASK_STATE_CANCELED'
    and state ~= 'TASK_STATE_REJECTED' then
  redis.call('ZREM', KEYS[1], ARGV[1])
  if not state then
    unmarkQueues()
    redis.call('DEL', KEYS[3], KEYS[4], KEYS[5], KEYS[6], KEYS[11], KEYS[12])
  end
  return 0
end
local journalBytes = tonumber(task[5] or 0)
local taskAt = tonumber(task[6] or 0)
if taskAt > nowMs then
  redis.call('DEL', KEYS[4])
  addStoredBytes(KEYS[2], KEYS[9], task[2], task[3], 0, -journalBytes)
  redis.call('ZADD', KEYS[1], taskAt, ARGV[1])
  return 1
end
countBytes(KEYS[9], task[2], task[3], -tonumber(task[4] or 0) - journalBytes - tonumber(task[7] or 0))
unmarkQueues()
redis.call('DEL', KEYS[2], KEYS[3], KEYS[4], KEYS[5], KEYS[6], KEYS[11], KEYS[12])
unindexTask(KEYS[8], KEYS[10], ARGV[1], state)
redis.call('ZREM', KEYS[1], ARGV[1])
return 2

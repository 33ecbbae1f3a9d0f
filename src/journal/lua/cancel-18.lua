--[[
  Cancels a client's task. A queued, deferred or interrupted task is canceled at once (state, journal, slots released,
  counters updated, deletion scheduled). A running one gets a cancel request that its actor sees (pub/sub and lease
  renewal) and answers by ending the task CANCELED. A terminal task is refused as not cancelable; a canceled one is
  returned as is.

    KEYS[1]  task   KEYS[2] run   KEYS[3] journal   KEYS[4] clientTasks   KEYS[5] clientActive   KEYS[6] profileActive
    KEYS[7]  pushConfigs   KEYS[8] pushOutbox   KEYS[9] pushReady
    KEYS[10] clientRunning (SET)   KEYS[11] clientInterrupted (SET)   KEYS[12] inputDue (ZSET)
    KEYS[13] purge (ZSET)   KEYS[14] bytes (HASH of stored-bytes counters)
    KEYS[15] clientDeferred (ZSET: the client's runs waiting for a running slot)
    KEYS[16] deferred (SET: the shard's clients with deferred runs)
    KEYS[17] contextTasks (ZSET: the client's tasks in the task's profile and context)
    KEYS[18] taskStreams (ZSET: leases of the streams open on the task; a journal kept for 0 s is deleted without one)

    ARGV[1] client id   ARGV[2] status JSON (CANCELED)   ARGV[3] journal event JSON   ARGV[4] now (ms)
    ARGV[5] retention (s)   ARGV[6] journal retention (s)   ARGV[7] events channel   ARGV[8] cancel channel

  Returns: {1, rev} canceled now; {2, rev} cancel requested from the running actor; {0, rev} already canceled;
           -1 no such task for this client; -2 not cancelable (completed, failed or rejected)
]]
-- @include "clock"
-- @include "task-states"
-- @include "stored-bytes"
-- @include "push-outbox"
-- @include "task-endings"
-- @include "task-index"

local task = redis.call('HMGET', KEYS[1], 'cli', 'state', 'rev', 'prof')
if task[1] ~= ARGV[1] then
  return -1
end
local state = task[2]
local rev = tonumber(task[3])
if state == 'TASK_STATE_CANCELED' then
  return {0, rev}
end
if TERMINAL[state] then
  return -2
end
local run = redis.call('HMGET', KEYS[2], 'state', 'id')
if run[1] == 'running' then
  redis.call('HSET', KEYS[2], 'cancel', 1)
  redis.call('PUBLISH', ARGV[8], run[2])
  return {2, rev}
end

local taskId = taskIdOf(KEYS[1])
rev = rev + 1
local statusBytes = #ARGV[2] - redis.call('HSTRLEN', KEYS[1], 'st')
redis.call('HSET', KEYS[1], 'state', 'TASK_STATE_CANCELED', 'rev', rev, 'st', ARGV[2], 'ts', ARGV[4])
redis.call('XADD', KEYS[3], '*', 'rev', rev, 'ev', ARGV[3])
addStoredBytes(KEYS[1], KEYS[14], ARGV[1], task[4], statusBytes, #ARGV[3])
addOutboxBytes(KEYS[1], KEYS[14], ARGV[1], task[4], enqueueDeliveries(KEYS[7], KEYS[8], KEYS[9], taskId, rev, ARGV[3]))
indexTask(KEYS[4], KEYS[17], taskId, ARGV[4], state, 'TASK_STATE_CANCELED')
finishRecords(KEYS[1], KEYS[2])
redis.call('SREM', KEYS[5], taskId)
redis.call('SREM', KEYS[6], taskId)
redis.call('SREM', KEYS[10], taskId)
leaveInterrupted(KEYS[11], KEYS[12], taskId)
if redis.call('ZREM', KEYS[15], taskId) == 1 and redis.call('ZCARD', KEYS[15]) == 0 then
  redis.call('SREM', KEYS[16], ARGV[1])
end
local journalSeconds = endJournal(KEYS[1], KEYS[3], KEYS[18], KEYS[14], ARGV[1], task[4], ARGV[6])
scheduleDeletion(KEYS[1], KEYS[13], taskId, ARGV[5], journalSeconds)
notifyChange(ARGV[7], taskId, 'TASK_STATE_CANCELED', rev)
return {1, rev}

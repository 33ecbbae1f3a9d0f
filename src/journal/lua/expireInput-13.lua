--[[
  Ends an interrupted task whose input timeout has passed (the retention pass calls it for each due member of the
  shard's input-due set): FAILED with the status message given, a journal entry and its webhook deliveries as for any
  transition, the run done, the task no longer counted among its client's interrupted tasks, the stored-bytes
  counters updated and the task's deletion scheduled, all in one step.

    KEYS[1] inputDue (ZSET task id -> input timeout, ms)   KEYS[2] task   KEYS[3] run   KEYS[4] journal
    KEYS[5] clientTasks   KEYS[6] clientInterrupted (SET)   KEYS[7] purge (ZSET)   KEYS[8] bytes (HASH)
    KEYS[9] pushConfigs   KEYS[10] pushOutbox   KEYS[11] pushReady   KEYS[12] contextTasks (of the task's context)
    KEYS[13] taskStreams (ZSET: leases of the streams open on the task; a journal kept for 0 s is deleted without one)
    ARGV[1] task id   ARGV[2] the task's client id (as the caller read it)   ARGV[3] status JSON (FAILED)
    ARGV[4] journal event JSON   ARGV[5] now (ms, status timestamp)   ARGV[6] retention (s)
    ARGV[7] journal retention (s)   ARGV[8] events channel

  Returns: {1, rev} the task failed; 0 a stale member (the task is gone or no longer interrupted) removed;
           -1 the task has no input timeout scheduled; -2 not due yet; -3 the task belongs to another client than
           ARGV[2] (nothing written)
]]
-- @include "clock"
-- @include "stored-bytes"
-- @include "push-outbox"
-- @include "task-endings"
-- @include "task-index"

local due = redis.call('ZSCORE', KEYS[1], ARGV[1])
if not due then
  return -1
end
if tonumber(due) > redisNowMs() then
  return -2
end
local task = redis.call('HMGET', KEYS[2], 'state', 'cli', 'prof', 'rev')
if task[1] and task[2] ~= ARGV[2] then
  return -3
end
if task[1] ~= 'TASK_STATE_INPUT_REQUIRED' and task[1] ~= 'TASK_STATE_AUTH_REQUIRED' then
  leaveInterrupted(KEYS[6], KEYS[1], ARGV[1])
  return 0
end

local rev = tonumber(task[4]) + 1
local statusBytes = #ARGV[3] - redis.call('HSTRLEN', KEYS[2], 'st')
redis.call('HSET', KEYS[2], 'state', 'TASK_STATE_FAILED', 'rev', rev, 'st', ARGV[3], 'ts', ARGV[5])
redis.call('XADD', KEYS[4], '*', 'rev', rev, 'ev', ARGV[4])
addStoredBytes(KEYS[2], KEYS[8], task[2], task[3], statusBytes, #ARGV[4])
addOutboxBytes(KEYS[2], KEYS[8], task[2], task[3], enqueueDeliveries(KEYS[9], KEYS[10], KEYS[11], ARGV[1], rev, ARGV[4]))
indexTask(KEYS[5], KEYS[12], ARGV[1], ARGV[5], task[1], 'TASK_STATE_FAILED')
finishRecords(KEYS[2], KEYS[3])
leaveInterrupted(KEYS[6], KEYS[1], ARGV[1])
local journalSeconds = endJournal(KEYS[2], KEYS[4], KEYS[13], KEYS[8], task[2], task[3], ARGV[7])
scheduleDeletion(KEYS[2], KEYS[7], ARGV[1], ARGV[6], journalSeconds)
notifyChange(ARGV[8], ARGV[1], 'TASK_STATE_FAILED', rev)
return {1, rev}

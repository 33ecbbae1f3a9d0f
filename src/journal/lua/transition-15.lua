--[[
  Moves a task one step, written by the actor that holds the run's current fencing token. Only legal moves pass;
  terminal states are final. Bumps the revision, stores status, artifacts and history, appends the journal entry,
  updates the client's index and the stored-bytes counters (an actor's output is counted, never refused), and at
  terminal and interrupted states releases the client's and profile's active slot and the client's running slot.
  A terminal task is scheduled for deletion after its retention; an interrupted one is counted among its client's
  interrupted tasks and scheduled to fail after its input timeout.

    KEYS[1]  task   KEYS[2] run   KEYS[3] journal   KEYS[4] clientTasks   KEYS[5] clientActive   KEYS[6] profileActive
    KEYS[7]  pushConfigs   KEYS[8] pushQueue   KEYS[9] pushReady
    KEYS[10] clientRunning (SET: the client's runs that actors execute now)
    KEYS[11] clientInterrupted (SET)   KEYS[12] inputDue (ZSET task id -> input timeout, ms)
    KEYS[13] purge (ZSET task id -> next deletion step, ms)   KEYS[14] bytes (HASH of stored-bytes counters)
    KEYS[15] contextTasks (ZSET: the client's tasks in the task's profile and context)

    ARGV[1]  fencing token (the run's `fence` from claim)
    ARGV[2]  kind: "status" (state change or progress) | "artifact" (artifact update, state unchanged)
    ARGV[3]  new state (status kind)            ARGV[4] status JSON, or "" to keep
    ARGV[5]  journal event JSON (a StreamResponse)
    ARGV[6]  artifacts JSON (the whole list), or "" to keep
    ARGV[7]  message JSON to append to history, or ""
    ARGV[8]  status timestamp (ms; moves the task in the ListTasks indexes only with a new status)         ARGV[9] retention (s)   ARGV[10] journal retention (s)
    ARGV[11] events channel                     ARGV[12] input timeout (s) of an interrupted task

  Returns: the new revision; -1 no such task or run; -2 stale fencing token (the run was claimed again, or is not
           running); -3 illegal transition (from a terminal state, or a move the state machine does not allow).
           A terminal task answers -3 to every writer, before the token is compared: terminal states are final.
]]
-- @include "stored-bytes"
-- @include "push-outbox"
-- @include "task-endings"
-- @include "task-index"

local run = redis.call('HMGET', KEYS[2], 'fence', 'state')
local task = redis.call('HMGET', KEYS[1], 'state', 'rev', 'hist', 'id', 'cli', 'prof')
if not run[1] or not task[1] then
  return -1
end

local TERMINAL = {
  TASK_STATE_COMPLETED = true, TASK_STATE_FAILED = true, TASK_STATE_CANCELED = true, TASK_STATE_REJECTED = true,
}
local INTERRUPTED = { TASK_STATE_INPUT_REQUIRED = true, TASK_STATE_AUTH_REQUIRED = true }
local from = task[1]
local to = from
if TERMINAL[from] then
  return -3
end
if run[1] ~= ARGV[1] or run[2] ~= 'running' then
  return -2
end
if ARGV[2] == 'status' then
  to = ARGV[3]
  if to == 'TASK_STATE_SUBMITTED' then
    return -3
  end
  if from == 'TASK_STATE_INPUT_REQUIRED' and not TERMINAL[to] then
    return -3
  end
  if not (TERMINAL[to] or INTERRUPTED[to] or to == 'TASK_STATE_WORKING') then
    return -3
  end
elseif from == 'TASK_STATE_INPUT_REQUIRED' then
  return -3
end

-- all checks passed: writes only from here on
local taskId = task[4]
local rev = tonumber(task[2]) + 1
local taskBytes = 0
redis.call('HSET', KEYS[1], 'state', to, 'rev', rev)
if ARGV[4] ~= '' then
  taskBytes = taskBytes + #ARGV[4] - redis.call('HSTRLEN', KEYS[1], 'st')
  redis.call('HSET', KEYS[1], 'st', ARGV[4], 'ts', ARGV[8])
end
if ARGV[6] ~= '' then
  taskBytes = taskBytes + #ARGV[6] - redis.call('HSTRLEN', KEYS[1], 'arts')
  redis.call('HSET', KEYS[1], 'arts', ARGV[6])
end
if ARGV[7] ~= '' then
  local hist = task[3]
  taskBytes = taskBytes + appendedLength(hist, ARGV[7]) - #hist
  if hist == '[]' then
    hist = '[' .. ARGV[7] .. ']'
  else
    hist = string.sub(hist, 1, -2) .. ',' .. ARGV[7] .. ']'
  end
  redis.call('HSET', KEYS[1], 'hist', hist)
end
redis.call('XADD', KEYS[3], '*', 'rev', rev, 'ev', ARGV[5])
addStoredBytes(KEYS[1], KEYS[14], task[5], task[6], taskBytes, #ARGV[5])
enqueueDeliveries(KEYS[7], KEYS[8], KEYS[9], taskId, rev, ARGV[5])
if ARGV[4] ~= '' then
  indexTask(KEYS[4], KEYS[15], taskId, ARGV[8])
end
if TERMINAL[to] then
  redis.call('HSET', KEYS[2], 'state', 'done', 'owner', '', 'lease', 0)
  redis.call('SREM', KEYS[5], taskId)
  redis.call('SREM', KEYS[6], taskId)
  redis.call('SREM', KEYS[10], taskId)
  leaveInterrupted(KEYS[11], KEYS[12], taskId)
  scheduleDeletion(KEYS[1], KEYS[13], taskId, ARGV[9], ARGV[10])
elseif INTERRUPTED[to] then
  redis.call('HSET', KEYS[2], 'state', 'waiting', 'owner', '', 'lease', 0)
  redis.call('SREM', KEYS[5], taskId)
  redis.call('SREM', KEYS[6], taskId)
  redis.call('SREM', KEYS[10], taskId)
  enterInterrupted(KEYS[11], KEYS[12], taskId, ARGV[12])
end
notifyChange(ARGV[11], taskId, to, rev)
return rev

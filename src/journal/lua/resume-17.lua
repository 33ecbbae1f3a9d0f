--[[
  Resumes an interrupted task with the client's follow-up message: dedup record, history append, state back to
  SUBMITTED, journal entry, the task no longer counted as interrupted, the stored-bytes counters, and the same run
  queued again (one task has one run). Same capacity checks as accept (but the interrupted-task limit: this message
  lowers that count), all before the first write.

    KEYS[1]  live   KEYS[2] client   KEYS[3] clientActive   KEYS[4] profileActive   KEYS[5] dedup (of the messageId in
    this profile)   KEYS[6]  task   KEYS[7] run      KEYS[8] journal        KEYS[9] clientTasks     KEYS[10] queue
    KEYS[11] pushConfigs   KEYS[12] pushOutbox   KEYS[13] pushReady
    KEYS[14] clientInterrupted (SET)   KEYS[15] inputDue (ZSET task id -> input timeout, ms)
    KEYS[16] bytes (HASH of the shard's stored-bytes counters)
    KEYS[17] contextTasks (ZSET: the client's tasks in the profile and the task's context)

    ARGV[1]  livenessSeconds      ARGV[2]  profile quota (0 = none)   ARGV[3] content hash of the message
    ARGV[4]  task id              ARGV[5]  client id
    ARGV[6]  message JSON as stored (with taskId and contextId), sent once: the journal event is built here
    ARGV[7]  status JSON (SUBMITTED)   ARGV[8] "1": reply with the task's fields (an answer that returns the task)
    ARGV[9]  now (ms)             ARGV[10] dedup TTL (s)              ARGV[11] events channel
    ARGV[12] profile the request was addressed to (a task of another profile is not found)
    ARGV[13] inline push config id or ""   ARGV[14] inline push config JSON or ""   ARGV[15] max push configs per task
    ARGV[16] the client's stored-bytes budget when its record has none (bytes, 0 = none)
    ARGV[17] the profile's stored-bytes budget (bytes, 0 = none)
    ARGV[18] the context id of the message (and of KEYS[17]): the task's own, or the message is refused
    ARGV[19] the follow-up request's W3C Trace Context (JSON carrier, or ""), kept on the run for its worker
    ARGV[20] the largest history the follow-up may give the task (bytes of its JSON, 0 = none)

  Returns: {1, taskId, rev} resumed ({1, taskId, rev, fields} with ARGV[8] = "1": the task after the write, HGETALL);
           {0, taskId} same messageId and content seen before in this profile (nothing written);
           -1 no live worker; -2 client at its limit; -3 profile quota full; -4 messageId reused with other content;
           -5 client unknown or revoked; -6 no such task for this client; -7 task is terminal;
           -8 task is not waiting for input (submitted or working); -9 the task has as many push configs as allowed;
           -10 the client's stored bytes would pass its budget; -11 the profile's stored bytes would pass its budget;
           -12 the message's contextId is not the task's; -13 the history would pass ARGV[20]
]]
-- @include "clock"
-- @include "task-states"
-- @include "stored-bytes"
-- @include "push-outbox"
-- @include "task-endings"
-- @include "task-index"

local seen = redis.call('GET', KEYS[5])
if seen then
  local sep = string.find(seen, ':', 1, true)
  if string.sub(seen, 1, sep - 1) == ARGV[3] and string.sub(seen, sep + 1) == ARGV[4] then
    return {0, ARGV[4]}
  end
  return -4
end

local client = redis.call('HMGET', KEYS[2], 'limit', 'revoked', 'maxbytes')
if client[1] == false or client[2] == '1' then
  return -5
end

local task = redis.call('HMGET', KEYS[6], 'cli', 'state', 'rev', 'hist', 'prof', 'ctx')
if task[1] ~= ARGV[5] or task[5] ~= ARGV[12] then
  return -6
end
if ARGV[18] ~= task[6] then
  return -12
end
local state = task[2]
if TERMINAL[state] then
  return -7
end
if not INTERRUPTED[state] then
  return -8
end

local beat = redis.call('GET', KEYS[1])
if not beat or (math.floor(redisNowMs() / 1000) - tonumber(beat)) > tonumber(ARGV[1]) then
  return -1
end
local limit = tonumber(client[1])
if limit > 0 and redis.call('SCARD', KEYS[3]) >= limit then
  return -2
end
local quota = tonumber(ARGV[2])
if quota > 0 and redis.call('SCARD', KEYS[4]) >= quota then
  return -3
end

local pushBytes = 0
if ARGV[13] ~= '' then
  local existing = redis.call('HSTRLEN', KEYS[11], ARGV[13])
  if existing == 0 and redis.call('HLEN', KEYS[11]) >= tonumber(ARGV[15]) then
    return -9
  end
  pushBytes = #ARGV[14] - existing
end

-- the journal event, built from the parts sent once
local message = ARGV[6]
local event = '{"statusUpdate":{"taskId":"' .. ARGV[4] .. '","contextId":' .. cjson.encode(task[6]) .. ',"status":'
  .. ARGV[7] .. '}}'
local hist = task[4]
local maxHistory = tonumber(ARGV[20])
if maxHistory > 0 and appendedLength(hist, message) > maxHistory then
  return -13
end
local taskBytes = appendedLength(hist, message) - #hist + #ARGV[7] - redis.call('HSTRLEN', KEYS[6], 'st') + pushBytes
local journalBytes = #event
if overBudget(KEYS[16], 'client:' .. ARGV[5], tonumber(client[3] or ARGV[16]), taskBytes + journalBytes) then
  return -10
end
if overBudget(KEYS[16], 'profile:' .. ARGV[12], tonumber(ARGV[17]), taskBytes + journalBytes) then
  return -11
end

-- all checks passed: writes only from here on
local taskId = ARGV[4]
local rev = tonumber(task[3]) + 1
if hist == '[]' then
  hist = '[' .. message .. ']'
else
  hist = string.sub(hist, 1, -2) .. ',' .. message .. ']'
end
local runId = redis.call('HGET', KEYS[7], 'id')
local entry = redis.call('XADD', KEYS[10], '*', 'run', runId, 'task', taskId, 'client', ARGV[5], 'prof', ARGV[12],
  'ctx', ARGV[18])
redis.call('HSET', KEYS[7], 'state', 'queued', 'tries', 0, 'entry', entry, 'owner', '', 'lease', 0, 'cancel', 0,
  'trace', ARGV[19])
redis.call('HSET', KEYS[6], 'state', 'TASK_STATE_SUBMITTED', 'rev', rev, 'st', ARGV[7], 'hist', hist, 'ts', ARGV[9])
redis.call('PERSIST', KEYS[8])
if ARGV[13] ~= '' then
  redis.call('HSET', KEYS[11], ARGV[13], ARGV[14])
end
redis.call('XADD', KEYS[8], '*', 'rev', rev, 'ev', event)
local outboxBytes = enqueueDeliveries(KEYS[11], KEYS[12], KEYS[13], taskId, rev, event)
redis.call('SET', KEYS[5], ARGV[3] .. ':' .. taskId, 'EX', ARGV[10])
redis.call('SADD', KEYS[3], taskId)
redis.call('SADD', KEYS[4], taskId)
indexTask(KEYS[9], KEYS[17], taskId, ARGV[9], state, 'TASK_STATE_SUBMITTED')
leaveInterrupted(KEYS[14], KEYS[15], taskId)
addStoredBytes(KEYS[6], KEYS[16], ARGV[5], ARGV[12], taskBytes, journalBytes)
addOutboxBytes(KEYS[6], KEYS[16], ARGV[5], ARGV[12], outboxBytes)
notifyChange(ARGV[11], taskId, 'TASK_STATE_SUBMITTED', rev)
if ARGV[8] == '1' then
  return {1, taskId, rev, redis.call('HGETALL', KEYS[6])}
end
return {1, taskId, rev}

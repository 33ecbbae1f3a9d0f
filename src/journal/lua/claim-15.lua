--[[
  Claims a queued run for an actor (or reclaims one whose lease expired): bumps the fencing token and the tries,
  takes the lease, and counts the run among its client's running runs. Only the holder of the newest token can write
  the task (see transition). A queued run whose client already has as many running runs as its limit allows is not
  started: it is deferred (no try counted, the queue entry acknowledged and deleted, the run in the client's deferred
  set, first deferral time kept) until one of the client's runs ends and promote queues it again. A reclaimed run
  (state running, lease expired) is already counted and never deferred. With ARGV[8] = "1" a claim that will run the
  handler (not exhausted, no cancel requested) also moves the task to WORKING as a transition does (revision, status,
  journal entry, webhooks, ListTasks indexes, stored bytes, notice) and returns the task, so that the run needs no
  other read. The indexes' keys come from the queue entry, which names the task's profile and context.

    KEYS[1] run   KEYS[2] task   KEYS[3] client (HASH: the record, field maxrun)
    KEYS[4] clientRunning (SET: the client's runs that actors execute now)
    KEYS[5] clientDeferred (ZSET: the client's deferred runs' task ids -> first deferral, ms)
    KEYS[6] deferred (SET: the shard's clients with deferred runs)   KEYS[7] queue (STREAM)
    KEYS[8] journal   KEYS[9] chunks   KEYS[10] pushConfigs   KEYS[11] pushQueue   KEYS[12] pushReady
    KEYS[13] bytes (HASH of stored-bytes counters)
    KEYS[14] clientTasks   KEYS[15] contextTasks (the task's ListTasks indexes, when ARGV[12] = "1")
    ARGV[1] owner (consumer name)   ARGV[2] lease (ms)   ARGV[3] queue entry id being processed
    ARGV[4] max attempts   ARGV[5] client id (from the queue entry)
    ARGV[6] the client's running-run limit when its record has none (0 = none)   ARGV[7] consumer group
    ARGV[8] "1" to start the run (WORKING, and the task returned), "" to claim only
    ARGV[9] status JSON (WORKING)   ARGV[10] status timestamp (ms)   ARGV[11] events channel
    ARGV[12] "1" when KEYS[14] and KEYS[15] are the task's indexes (the queue entry named its profile and context), ""
             for an entry written before entries did: the task then keeps its place until its next status

  Returns: {fence, tries, exhausted (1 when tries > max attempts), cancel (1 when a cancel was requested),
            task state (WORKING when started), client id, profile, and when started: the task's fields (HGETALL, flat)
            and its chunk store (or "")};
           0 deferred: the client is at its running-run limit (the entry is acknowledged and deleted, the run waits);
           -1 no such run or task, or the task is not that client's (orphan entry); -2 nothing to run (task terminal,
           or the run waits for input or is done); -3 the entry is not the run's current queue entry (stale); -4 the
           run is leased by a live owner
]]
-- @include "clock"
-- @include "task-states"
-- @include "stored-bytes"
-- @include "push-outbox"
-- @include "task-index"

local run = redis.call('HMGET', KEYS[1], 'id', 'state', 'fence', 'tries', 'lease', 'entry', 'cancel', 'deferred')
local task = redis.call('HMGET', KEYS[2], 'state', 'cli', 'prof', 'rev', 'ctx', 'st')
if not task[1] or task[2] ~= ARGV[5] then
  return -1
end
local state = task[1]
if TERMINAL[state] then
  return -2
end
-- a finished run keeps only its state, token and tries (see task-endings), so its id is looked at after the task's
if not run[1] then
  return -1
end
if run[6] ~= ARGV[3] then
  return -3
end
if run[2] == 'waiting' or run[2] == 'done' then
  return -2
end
local nowMs = redisNowMs()
if run[2] == 'running' and tonumber(run[5] or 0) > nowMs then
  return -4
end

local taskId = taskIdOf(KEYS[2])
if run[2] ~= 'running' and redis.call('SISMEMBER', KEYS[4], taskId) == 0 then
  local limit = tonumber(redis.call('HGET', KEYS[3], 'maxrun') or ARGV[6])
  if limit > 0 and redis.call('SCARD', KEYS[4]) >= limit then
    local since = tonumber(run[8] or nowMs)
    redis.call('ZADD', KEYS[5], since, taskId)
    redis.call('SADD', KEYS[6], ARGV[5])
    redis.call('HSET', KEYS[1], 'state', 'deferred', 'entry', '', 'deferred', since)
    redis.call('XACK', KEYS[7], ARGV[7], ARGV[3])
    redis.call('XDEL', KEYS[7], ARGV[3])
    return 0
  end
end

local fence = tonumber(run[3]) + 1
local tries = tonumber(run[4]) + 1
redis.call('SADD', KEYS[4], taskId)
redis.call('HSET', KEYS[1], 'state', 'running', 'fence', fence, 'tries', tries, 'owner', ARGV[1],
  'lease', nowMs + tonumber(ARGV[2]))
if run[8] then
  redis.call('HDEL', KEYS[1], 'deferred')
end
local exhausted = 0
if tries > tonumber(ARGV[4]) then
  exhausted = 1
end
local cancel = tonumber(run[7] or 0)
if ARGV[8] ~= '1' or exhausted == 1 or cancel == 1 then
  return {fence, tries, exhausted, cancel, state, task[2], task[3]}
end
local rev = tonumber(task[4]) + 1
local event = '{"statusUpdate":{"taskId":' .. cjson.encode(taskId) .. ',"contextId":' .. cjson.encode(task[5])
  .. ',"status":' .. ARGV[9] .. '}}'
local statusBytes = #ARGV[9] - #(task[6] or '')
if ARGV[12] == '1' then
  redis.call('HSET', KEYS[2], 'state', 'TASK_STATE_WORKING', 'rev', rev, 'st', ARGV[9], 'ts', ARGV[10])
  indexTask(KEYS[14], KEYS[15], taskId, ARGV[10], state, 'TASK_STATE_WORKING')
else
  redis.call('HSET', KEYS[2], 'state', 'TASK_STATE_WORKING', 'rev', rev, 'st', ARGV[9])
end
redis.call('XADD', KEYS[8], '*', 'rev', rev, 'ev', event)
addStoredBytes(KEYS[2], KEYS[13], task[2], task[3], statusBytes, #event)
enqueueDeliveries(KEYS[10], KEYS[11], KEYS[12], taskId, rev, event)
notifyChange(ARGV[11], taskId, 'TASK_STATE_WORKING', rev)
return {fence, tries, exhausted, cancel, 'TASK_STATE_WORKING', task[2], task[3], redis.call('HGETALL', KEYS[2]),
  redis.call('GET', KEYS[9]) or ''}

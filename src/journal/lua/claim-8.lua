--[[
  Claims a queued run for an actor (or reclaims one whose lease expired): bumps the fencing token and the tries,
  takes the lease, and counts the run among its client's running runs. Only the holder of the newest token can write
  the task (see transition). A queued run whose client already has as many running runs as its limit allows is not
  started: it is deferred (no try counted, the queue entry acknowledged and deleted, the run in the client's deferred
  set, first deferral time kept) until one of the client's runs ends and promote queues it again. A reclaimed run
  (state running, lease expired) is already counted and never deferred. With ARGV[8] = "1" a claim that will run the
  handler (not exhausted, no cancel requested) also returns the task, so that the run needs no other read. The claim
  does not move the task: the run's first step writes WORKING, together with the handler's first output (transition,
  ARGV[14]), so that a run that ends at once is one status change, not two.

    KEYS[1] run   KEYS[2] task   KEYS[3] client (HASH: the record, field maxrun)
    KEYS[4] clientRunning (SET: the client's runs that actors execute now)
    KEYS[5] clientDeferred (ZSET: the client's deferred runs' task ids -> first deferral, ms)
    KEYS[6] deferred (SET: the shard's clients with deferred runs)   KEYS[7] queue (STREAM)   KEYS[8] chunks
    ARGV[1] owner (consumer name)   ARGV[2] lease (ms)   ARGV[3] queue entry id being processed
    ARGV[4] max attempts   ARGV[5] client id (from the queue entry)
    ARGV[6] the client's running-run limit when its record has none (0 = none)   ARGV[7] consumer group
    ARGV[8] "1" to return the task when the run is to run, "" to claim only

  Returns: {fence, tries, exhausted (1 when tries > max attempts), cancel (1 when a cancel was requested),
            task state, client id, profile, and with ARGV[8] = "1" when the run is to run: the task's fields
            (HGETALL, flat) and its chunk store (or "")};
           0 deferred: the client is at its running-run limit (the entry is acknowledged and deleted, the run waits);
           -1 no such run or task, or the task is not that client's (orphan entry); -2 nothing to run (task terminal,
           or the run waits for input or is done); -3 the entry is not the run's current queue entry (stale); -4 the
           run is leased by a live owner
]]
-- @include "clock"
-- @include "task-states"
-- @include "task-index"

local run = redis.call('HMGET', KEYS[1], 'id', 'state', 'fence', 'tries', 'lease', 'entry', 'cancel', 'deferred')
local task = redis.call('HMGET', KEYS[2], 'state', 'cli', 'prof')
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
return {fence, tries, exhausted, cancel, state, task[2], task[3], redis.call('HGETALL', KEYS[2]),
  redis.call('GET', KEYS[8]) or ''}

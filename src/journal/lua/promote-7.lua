--[[
  Queues a client's deferred run again once the client has a free running slot: the run leaves the client's deferred
  set (and the client the shard's set when it was its last), gets a new queue entry and is queued. Its claim counts
  the running runs again, so a slot taken meanwhile defers it anew (keeping its first deferral time).

    KEYS[1] client (HASH: the record, field maxrun)   KEYS[2] clientRunning (SET)
    KEYS[3] clientDeferred (ZSET task id -> first deferral, ms)   KEYS[4] deferred (SET: the shard's clients)
    KEYS[5] queue (STREAM)   KEYS[6] run   KEYS[7] task
    ARGV[1] task id   ARGV[2] client id   ARGV[3] the client's running-run limit when its record has none (0 = none)

  Returns: the new queue entry id; 0 the member's run was not deferred any more (the stale member removed, nothing
           else written); -1 the task is not among the client's deferred runs; -2 the client has no free running slot
]]
if not redis.call('ZSCORE', KEYS[3], ARGV[1]) then
  return -1
end
local limit = tonumber(redis.call('HGET', KEYS[1], 'maxrun') or ARGV[3])
if limit > 0 and redis.call('SCARD', KEYS[2]) >= limit then
  return -2
end
local run = redis.call('HMGET', KEYS[6], 'state', 'id')
local task = redis.call('HMGET', KEYS[7], 'cli', 'prof', 'ctx')
local stale = run[1] ~= 'deferred' or task[1] ~= ARGV[2]

redis.call('ZREM', KEYS[3], ARGV[1])
if redis.call('ZCARD', KEYS[3]) == 0 then
  redis.call('SREM', KEYS[4], ARGV[2])
end
if stale then
  return 0
end
local entry = redis.call('XADD', KEYS[5], '*', 'run', run[2], 'task', ARGV[1], 'client', ARGV[2], 'prof', task[2],
  'ctx', task[3])
redis.call('HSET', KEYS[6], 'state', 'queued', 'entry', entry)
return entry

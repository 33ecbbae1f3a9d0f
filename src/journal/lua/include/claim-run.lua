--[[
  The claim of one queued (or lease-expired) run, shared by claim (an entry the actor read) and transition (the next
  entry a run's end reads for the same actor). Needs the "clock", "task-states" and "task-index" includes before it.
  Checks first, then writes; its reply is claim's (see claim's header).

    the keys: claim's KEYS[1..8], in its order
    a: owner, leaseMs, entryId, maxAttempts, clientId, maxRunning, group, read (claim's ARGV[1..8], by name)
]]
local function claimRun(runKey, taskKey, clientKey, clientRunningKey, clientDeferredKey, deferredKey, queueKey,
                        chunksKey, a)
  local run = redis.call('HMGET', runKey, 'id', 'state', 'fence', 'tries', 'lease', 'entry', 'cancel', 'deferred')
  local task = redis.call('HMGET', taskKey, 'state', 'cli', 'prof')
  if not task[1] or task[2] ~= a.clientId then
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
  if run[6] ~= a.entryId then
    return -3
  end
  if run[2] == 'waiting' or run[2] == 'done' then
    return -2
  end
  local nowMs = redisNowMs()
  if run[2] == 'running' and tonumber(run[5] or 0) > nowMs then
    return -4
  end

  local taskId = taskIdOf(taskKey)
  if run[2] ~= 'running' and redis.call('SISMEMBER', clientRunningKey, taskId) == 0 then
    local limit = tonumber(redis.call('HGET', clientKey, 'maxrun') or a.maxRunning)
    if limit > 0 and redis.call('SCARD', clientRunningKey) >= limit then
      local since = tonumber(run[8] or nowMs)
      redis.call('ZADD', clientDeferredKey, since, taskId)
      redis.call('SADD', deferredKey, a.clientId)
      redis.call('HSET', runKey, 'state', 'deferred', 'entry', '', 'deferred', since)
      redis.call('XACK', queueKey, a.group, a.entryId)
      redis.call('XDEL', queueKey, a.entryId)
      return 0
    end
  end

  local fence = tonumber(run[3]) + 1
  local tries = tonumber(run[4]) + 1
  redis.call('SADD', clientRunningKey, taskId)
  redis.call('HSET', runKey, 'state', 'running', 'fence', fence, 'tries', tries, 'owner', a.owner,
    'lease', nowMs + tonumber(a.leaseMs))
  if run[8] then
    redis.call('HDEL', runKey, 'deferred')
  end
  local exhausted = 0
  if tries > tonumber(a.maxAttempts) then
    exhausted = 1
  end
  local cancel = tonumber(run[7] or 0)
  if a.read ~= '1' or exhausted == 1 or cancel == 1 then
    return {fence, tries, exhausted, cancel, state, task[2], task[3]}
  end
  return {fence, tries, exhausted, cancel, state, task[2], task[3], redis.call('HGETALL', taskKey),
    redis.call('GET', chunksKey) or ''}
end

--[[
  What every script that ends a task or interrupts it does besides its own writes. A terminal task is scheduled for
  deletion (its journal first when that is kept for less time) in the shard's purge set, never left to a TTL, so that
  the retention pass that deletes it gives its stored bytes back. An interrupted task is counted among its client's
  interrupted tasks and scheduled to fail when its input timeout passes.
]]
local function redisNowMs()
  local t = redis.call('TIME')
  return tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
end

local function scheduleDeletion(taskKey, purgeKey, taskId, retentionSeconds, journalRetentionSeconds)
  local nowMs = redisNowMs()
  local taskAt = nowMs + tonumber(retentionSeconds) * 1000
  local journalAt = math.min(taskAt, nowMs + tonumber(journalRetentionSeconds) * 1000)
  -- the schedule's score is the next step (the journal's); the task keeps its own time for the step after
  redis.call('HSET', taskKey, 'purge', taskAt)
  redis.call('ZADD', purgeKey, journalAt, taskId)
end

local function enterInterrupted(interruptedKey, inputDueKey, taskId, timeoutSeconds)
  redis.call('SADD', interruptedKey, taskId)
  redis.call('ZADD', inputDueKey, redisNowMs() + tonumber(timeoutSeconds) * 1000, taskId)
end

local function leaveInterrupted(interruptedKey, inputDueKey, taskId)
  redis.call('SREM', interruptedKey, taskId)
  redis.call('ZREM', inputDueKey, taskId)
end

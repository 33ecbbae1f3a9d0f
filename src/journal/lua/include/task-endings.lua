--[[
  What every script that ends a task or interrupts it does besides its own writes. A terminal task is scheduled for
  deletion (its journal first when that is kept for less time) in the shard's purge set, never left to a TTL, so that
  the retention pass that deletes it gives its stored bytes back. A journal kept for 0 s is deleted by the terminal
  step itself unless a stream follows the task (a live lease in its streams set): then it is kept for 60 s, for that
  stream to read its last events. An interrupted task is counted among its client's
  interrupted tasks and scheduled to fail when its input timeout passes. Needs the clock and stored-bytes snippets
  before it.
]]
-- How long a terminal task's journal is kept, in seconds: its retention, else 60 while a stream follows the task, else
-- 0 (the terminal step deletes it, and need not append to it first).
local function journalKeepSeconds(streamsKey, journalRetentionSeconds)
  local seconds = tonumber(journalRetentionSeconds)
  if seconds > 0 then
    return seconds
  end
  if redis.call('ZCOUNT', streamsKey, redisNowMs(), '+inf') > 0 then
    return 60
  end
  return 0
end

-- The journal's part of a terminal step: its retention in seconds (0 when the step deleted it, its bytes given back).
local function endJournal(taskKey, journalKey, streamsKey, bytesKey, client, profile, journalRetentionSeconds)
  local seconds = journalKeepSeconds(streamsKey, journalRetentionSeconds)
  if seconds == 0 then
    local journalBytes = tonumber(redis.call('HGET', taskKey, 'jbytes') or 0)
    redis.call('DEL', journalKey)
    redis.call('HDEL', taskKey, 'jbytes')
    countBytes(bytesKey, client, profile, -journalBytes)
  end
  return seconds
end

-- A finished task keeps only what its readers and its deletion need: the run its state, token, tries and trace context
-- (webhooks still to be sent continue its trace); the task not its creation time (smaller hashes until it is deleted),
-- nor its journal's byte count when `journalDropped` (the caller deleted the journal and gave its bytes back).
local function finishRecords(taskKey, runKey, journalDropped)
  redis.call('HDEL', runKey, 'id', 'task', 'client', 'owner', 'lease', 'entry', 'cancel', 'deferred', 'prof', 'ctx', 'w')
  redis.call('HSET', runKey, 'state', 'done')
  if journalDropped then
    redis.call('HDEL', taskKey, 'created', 'jbytes')
  else
    redis.call('HDEL', taskKey, 'created')
  end
end

local function scheduleDeletion(taskKey, purgeKey, taskId, retentionSeconds, journalRetentionSeconds)
  local nowMs = redisNowMs()
  local taskAt = nowMs + tonumber(retentionSeconds) * 1000
  local journalAt = taskAt
  if tonumber(journalRetentionSeconds) > 0 then
    journalAt = math.min(taskAt, nowMs + tonumber(journalRetentionSeconds) * 1000)
  end
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

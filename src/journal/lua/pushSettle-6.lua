--[[
  Settles the head delivery of a webhook queue (a task's deliveries to one config) after one attempt, and schedules the
  queue's next delivery. Only the head is ever attempted, so a config's deliveries stay in journal order; the task's
  other configs have queues of their own. The task's `obytes` and its counters follow the outbox's size (and its
  `bytes` a config that a 410 deletes).

    KEYS[1] pushOutbox   KEYS[2] pushReady   KEYS[3] pushDead   KEYS[4] pushConfigs   KEYS[5] task
    KEYS[6] bytes (HASH of the shard's stored-bytes counters)

    ARGV[1] task id   ARGV[2] delivery id (the head's "id")   ARGV[3] outcome: done | retry | dead | disable
    ARGV[4] the head's JSON with its attempt count raised (retry)   ARGV[5] when to try again (ms, Redis time; retry)
    ARGV[6] reason (dead, disable)   ARGV[7] config id   ARGV[8] revision   ARGV[9] dead-letter max length (~)

  Returns: 1 settled; 0 the head is not that delivery any more (nothing changed)
]]
-- @include "clock"
-- @include "stored-bytes"

local member = ARGV[1] .. ' ' .. ARGV[7]
local settled = tonumber(redis.call('HGET', KEYS[1], 'd:' .. ARGV[7]) or 0)
local field = (settled + 1) .. ':' .. ARGV[7]
local head = redis.call('HGET', KEYS[1], field)
if not head or not string.find(head, '"id":"' .. ARGV[2] .. '"', 1, true) then
  return 0
end
local owner = redis.call('HMGET', KEYS[5], 'cli', 'prof')
local function outboxChanged(n)
  if owner[1] then
    addOutboxBytes(KEYS[5], KEYS[6], owner[1], owner[2], n)
  end
end
if ARGV[3] == 'retry' then
  redis.call('HSET', KEYS[1], field, ARGV[4])
  outboxChanged(#ARGV[4] - #head)
  redis.call('ZADD', KEYS[2], ARGV[5], member)
  return 1
end
redis.call('HDEL', KEYS[1], field)
outboxChanged(-#head)
if ARGV[3] == 'dead' or ARGV[3] == 'disable' then
  redis.call('XADD', KEYS[3], 'MAXLEN', '~', ARGV[9], '*', 'task', ARGV[1], 'cfg', ARGV[7], 'rev', ARGV[8], 'id',
    ARGV[2], 'reason', ARGV[6])
end
if ARGV[3] == 'disable' then
  -- the config goes, and its bytes with it
  if owner[1] then
    deleteConfig(KEYS[4], KEYS[5], KEYS[6], owner[1], owner[2], ARGV[7])
  else
    redis.call('HDEL', KEYS[4], ARGV[7])
  end
end
if tonumber(redis.call('HGET', KEYS[1], 'n:' .. ARGV[7]) or 0) > settled + 1 then
  redis.call('HSET', KEYS[1], 'd:' .. ARGV[7], settled + 1)
  redis.call('ZADD', KEYS[2], redisNowMs(), member)
else
  -- the queue is empty: its counters go (with the last of them, the outbox), and so does its due mark
  redis.call('HDEL', KEYS[1], 'n:' .. ARGV[7], 'd:' .. ARGV[7])
  redis.call('ZREM', KEYS[2], member)
end
return 1

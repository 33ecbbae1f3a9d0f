--[[
  Settles the head delivery of a task's webhook queue after one attempt, and schedules the task's next delivery.
  Only the head is ever attempted, so a task's deliveries stay in journal order.

    KEYS[1] pushQueue   KEYS[2] pushReady   KEYS[3] pushDead   KEYS[4] pushConfigs

    ARGV[1] task id   ARGV[2] delivery id (the head's "id")   ARGV[3] outcome: done | retry | dead | disable
    ARGV[4] the head's JSON with its attempt count raised (retry)   ARGV[5] when to try again (ms, Redis time; retry)
    ARGV[6] reason (dead, disable)   ARGV[7] config id   ARGV[8] revision   ARGV[9] dead-letter max length (~)

  Returns: 1 settled; 0 the head is not that delivery any more (nothing changed)
]]
local head = redis.call('LINDEX', KEYS[1], 0)
if not head or not string.find(head, '"id":"' .. ARGV[2] .. '"', 1, true) then
  return 0
end
local now = redis.call('TIME')
local nowMs = tonumber(now[1]) * 1000 + math.floor(tonumber(now[2]) / 1000)
if ARGV[3] == 'retry' then
  redis.call('LSET', KEYS[1], 0, ARGV[4])
  redis.call('ZADD', KEYS[2], ARGV[5], ARGV[1])
  return 1
end
redis.call('LPOP', KEYS[1])
if ARGV[3] == 'dead' or ARGV[3] == 'disable' then
  redis.call('XADD', KEYS[3], 'MAXLEN', '~', ARGV[9], '*', 'task', ARGV[1], 'cfg', ARGV[7], 'rev', ARGV[8], 'id',
    ARGV[2], 'reason', ARGV[6])
end
if ARGV[3] == 'disable' then
  redis.call('HDEL', KEYS[4], ARGV[7])
end
if redis.call('LLEN', KEYS[1]) > 0 then
  redis.call('ZADD', KEYS[2], nowMs, ARGV[1])
else
  redis.call('ZREM', KEYS[2], ARGV[1])
end
return 1

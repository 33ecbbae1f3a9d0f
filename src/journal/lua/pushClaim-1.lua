--[[
  Claims tasks whose next webhook delivery is due, for one delivery worker: each claimed task is pushed ahead by the
  lease, so no other worker delivers for it meanwhile (deliveries of one task stay in order). A worker that dies
  leaves its tasks due again when the lease passes.

    KEYS[1] pushReady (ZSET task id -> due time, ms)
    ARGV[1] maximum number of tasks to claim   ARGV[2] lease (ms)

  Returns: the claimed task ids (possibly empty)
]]
local now = redis.call('TIME')
local nowMs = tonumber(now[1]) * 1000 + math.floor(tonumber(now[2]) / 1000)
local due = redis.call('ZRANGEBYSCORE', KEYS[1], '-inf', nowMs, 'LIMIT', 0, tonumber(ARGV[1]))
for _, task in ipairs(due) do
  redis.call('ZADD', KEYS[1], 'XX', nowMs + tonumber(ARGV[2]), task)
end
return due

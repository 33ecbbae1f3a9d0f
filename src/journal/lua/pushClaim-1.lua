--[[
  Claims webhook queues whose head delivery is due, for one delivery worker: each claimed queue (a task's deliveries
  to one config) is pushed ahead by the lease, so no other worker delivers from it meanwhile (its deliveries stay in
  order). A worker that dies leaves its queues due again when the lease passes.

    KEYS[1] pushReady (ZSET "<taskId> <configId>" -> due time, ms; a bare task id is a queue of a version before the
            queues per config, which the worker moves into its task's outbox first)
    ARGV[1] maximum number of queues to claim   ARGV[2] lease (ms)

  Returns: the claimed members (possibly empty)
]]
local now = redis.call('TIME')
local nowMs = tonumber(now[1]) * 1000 + math.floor(tonumber(now[2]) / 1000)
local due = redis.call('ZRANGEBYSCORE', KEYS[1], '-inf', nowMs, 'LIMIT', 0, tonumber(ARGV[1]))
for _, member in ipairs(due) do
  redis.call('ZADD', KEYS[1], 'XX', nowMs + tonumber(ARGV[2]), member)
end
return due

--[[
  Renews the lease of a running run for the holder of its current fencing token, and resets the idle time of its
  queue entry so that reclaimers leave it alone while the owner lives.

    KEYS[1] run   KEYS[2] queue
    ARGV[1] fencing token   ARGV[2] lease (ms)   ARGV[3] consumer group   ARGV[4] consumer   ARGV[5] queue entry id

  Returns: 0 renewed; 1 renewed and a cancel was requested; -1 lease lost (stale token or the run is not running)
]]
local run = redis.call('HMGET', KEYS[1], 'fence', 'state', 'cancel')
if run[1] ~= ARGV[1] or run[2] ~= 'running' then
  return -1
end
local now = redis.call('TIME')
local nowMs = tonumber(now[1]) * 1000 + math.floor(tonumber(now[2]) / 1000)
redis.call('HSET', KEYS[1], 'lease', nowMs + tonumber(ARGV[2]))
redis.call('XCLAIM', KEYS[2], ARGV[3], ARGV[4], 0, ARGV[5], 'JUSTID')
return tonumber(run[3] or 0)

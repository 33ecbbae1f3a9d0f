--[[
  Records that a worker (a consumer or a sweep tick) is alive, in Redis's own clock, so that accept's liveness check
  never compares clocks of different machines.

    KEYS[1] live
    ARGV[1] TTL (s) of the record

  Returns: the Redis time (s) recorded
]]
local now = redis.call('TIME')
redis.call('SET', KEYS[1], now[1], 'EX', ARGV[1])
return tonumber(now[1])

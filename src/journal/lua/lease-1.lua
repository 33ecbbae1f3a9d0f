--[[
  Acquires or renews one capacity lease in a sorted set scored by expiry, against a maximum shared by every gateway.
  Expired leases (a dead gateway's) are dropped first, so they never hold capacity past their TTL.

    KEYS[1] leases (ZSET member -> expiry ms)
    ARGV[1] lease member   ARGV[2] TTL (ms)   ARGV[3] maximum number of live leases
    ARGV[4] "1": renew only, never take: a lease that is not live (lapsed, or given back by someone else, such as the
            run's end for a blocking request's waiting leases) stays away

  Returns: 1 acquired or renewed; -1 at the maximum (nothing written but the removal of expired leases); -2 (renew
           only) no such live lease (nothing written but the removal of expired leases)
]]
local now = redis.call('TIME')
local nowMs = tonumber(now[1]) * 1000 + math.floor(tonumber(now[2]) / 1000)
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', nowMs)
local live = redis.call('ZSCORE', KEYS[1], ARGV[1])
if not live and ARGV[4] == '1' then
  return -2
end
if not live and redis.call('ZCARD', KEYS[1]) >= tonumber(ARGV[3]) then
  return -1
end
redis.call('ZADD', KEYS[1], nowMs + tonumber(ARGV[2]), ARGV[1])
-- the set outlives its longest lease: a short lease never shortens the life of a longer one
local keep = tonumber(ARGV[2]) * 2
if redis.call('PTTL', KEYS[1]) < keep then
  redis.call('PEXPIRE', KEYS[1], keep)
end
return 1

--[[
  Acquires or renews one member in two lease sets, both or neither, each against a maximum shared by every gateway:
  an SSE stream's leases in its task's and its client's sets (one shard), a blocking request's waiting leases in its
  client's and the installation's sets (one node only: the caller pairs those only outside a Cluster). Sets are scored
  by expiry, so a dead gateway's leases lapse after their TTL: a set that looks full drops its expired leases before
  it refuses (the only write before a refusal), so they never count against its maximum. A member already in a set
  is renewed and never refused by that set's maximum.

    KEYS[1] first (ZSET member -> expiry ms)   KEYS[2] second (ZSET member -> expiry ms)
    ARGV[1] lease member   ARGV[2] TTL (ms)
    ARGV[3] maximum live leases in the first set (0 = no maximum)
    ARGV[4] maximum live leases in the second set (0 = no maximum)

  Returns: 1 both held; -1 the first set is at its maximum; -2 the second set is at its maximum (in both cases nothing
           written but the removal of expired leases)
]]
local now = redis.call('TIME')
local nowMs = tonumber(now[1]) * 1000 + math.floor(tonumber(now[2]) / 1000)
-- A set below its maximum has room whatever its expired leases, which stay until the set looks full (at most its
-- maximum of them); only then is it pruned and counted again. A set without a maximum is pruned at every call, so that
-- nothing bounds it but its live leases.
local maxFirst = tonumber(ARGV[3])
if maxFirst <= 0 then
  redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', nowMs)
elseif not redis.call('ZSCORE', KEYS[1], ARGV[1]) and redis.call('ZCARD', KEYS[1]) >= maxFirst
    and (redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', nowMs) == 0 or redis.call('ZCARD', KEYS[1]) >= maxFirst) then
  return -1
end
local maxSecond = tonumber(ARGV[4])
if maxSecond <= 0 then
  redis.call('ZREMRANGEBYSCORE', KEYS[2], '-inf', nowMs)
elseif not redis.call('ZSCORE', KEYS[2], ARGV[1]) and redis.call('ZCARD', KEYS[2]) >= maxSecond
    and (redis.call('ZREMRANGEBYSCORE', KEYS[2], '-inf', nowMs) == 0 or redis.call('ZCARD', KEYS[2]) >= maxSecond) then
  return -2
end
local expiry = nowMs + tonumber(ARGV[2])
redis.call('ZADD', KEYS[1], expiry, ARGV[1])
redis.call('ZADD', KEYS[2], expiry, ARGV[1])
-- each set outlives its longest lease: a short lease never shortens the life of a longer one
local keep = tonumber(ARGV[2]) * 2
if redis.call('PTTL', KEYS[1]) < keep then
  redis.call('PEXPIRE', KEYS[1], keep)
end
if redis.call('PTTL', KEYS[2]) < keep then
  redis.call('PEXPIRE', KEYS[2], keep)
end
return 1

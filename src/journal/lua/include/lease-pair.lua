--[[
  One member in two lease sets, both or neither (leasePair, and the waiting leases a blocking request's accept takes).
  Sets are scored by expiry, so a dead gateway's leases lapse after their TTL. A set below its maximum has room whatever
  its expired leases, which stay until the set looks full (at most its maximum of them); only then is it pruned and
  counted again, the one write before a refusal. A set without a maximum is pruned at every call, so that nothing bounds
  it but its live leases. A member already in a set is renewed and never refused by that set's maximum.
]]
-- Whether the member may hold a lease in the set: the set has no maximum (0), it holds one already, or the set has
-- fewer live leases than its maximum once a set that looks full has dropped its expired ones. The count comes first:
-- a set below its maximum (the common case, and always for a blocking request's fresh member) needs no lookup of the
-- member.
local function leaseRoom(setKey, member, max, nowMs)
  if max <= 0 then
    redis.call('ZREMRANGEBYSCORE', setKey, '-inf', nowMs)
    return true
  end
  return redis.call('ZCARD', setKey) < max or redis.call('ZSCORE', setKey, member)
    or (redis.call('ZREMRANGEBYSCORE', setKey, '-inf', nowMs) > 0 and redis.call('ZCARD', setKey) < max)
end

-- 0 when the member has room in both sets, -1 when the first is at its maximum, -2 when the second is (0 = none).
local function leasePairRoom(firstKey, secondKey, member, maxFirst, maxSecond, nowMs)
  if not leaseRoom(firstKey, member, maxFirst, nowMs) then
    return -1
  end
  if not leaseRoom(secondKey, member, maxSecond, nowMs) then
    return -2
  end
  return 0
end

-- Holds the member in both sets until nowMs + ttlMs; each set outlives its longest lease (a short lease never shortens
-- the life of a longer one).
local function leasePairTake(firstKey, secondKey, member, ttlMs, nowMs)
  local expiry = nowMs + ttlMs
  redis.call('ZADD', firstKey, expiry, member)
  redis.call('ZADD', secondKey, expiry, member)
  local keep = ttlMs * 2
  if redis.call('PTTL', firstKey) < keep then
    redis.call('PEXPIRE', firstKey, keep)
  end
  if redis.call('PTTL', secondKey) < keep then
    redis.call('PEXPIRE', secondKey, keep)
  end
end

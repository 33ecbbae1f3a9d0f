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
-- @include "clock"
-- @include "lease-pair"

local nowMs = redisNowMs()
local room = leasePairRoom(KEYS[1], KEYS[2], ARGV[1], tonumber(ARGV[3]), tonumber(ARGV[4]), nowMs)
if room == -1 then
  return -1
end
if room == -2 then
  return -2
end
leasePairTake(KEYS[1], KEYS[2], ARGV[1], tonumber(ARGV[2]), nowMs)
return 1

--[[
  Redis's clock in milliseconds, read once per script: every step of a script (its outbox entries, its deletion
  schedule, its timeouts) sees the same time, for one TIME call. Included first by every script that uses it.
]]
local CLOCK = {}
local function redisNowMs()
  if not CLOCK.ms then
    local t = redis.call('TIME')
    CLOCK.ms = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
  end
  return CLOCK.ms
end

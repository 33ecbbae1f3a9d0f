--[[
  Claims a queued run for an actor (or reclaims one whose lease expired): bumps the fencing token and the tries,
  takes the lease. Only the holder of the newest token can write the task (see transition).

    KEYS[1] run   KEYS[2] task
    ARGV[1] owner (consumer name)   ARGV[2] lease (ms)   ARGV[3] queue entry id being processed
    ARGV[4] max attempts

  Returns: {fence, tries, exhausted (1 when tries > max attempts), cancel (1 when a cancel was requested),
            task state, client id, profile};
           -1 no such run or task (orphan entry); -2 nothing to run (task terminal, or the run waits for input or is
           done); -3 the entry is not the run's current queue entry (stale); -4 the run is leased by a live owner
]]
local run = redis.call('HMGET', KEYS[1], 'id', 'state', 'fence', 'tries', 'lease', 'entry', 'cancel')
local task = redis.call('HMGET', KEYS[2], 'state', 'cli', 'prof')
if not run[1] or not task[1] then
  return -1
end
local state = task[1]
if state == 'TASK_STATE_COMPLETED' or state == 'TASK_STATE_FAILED' or state == 'TASK_STATE_CANCELED'
    or state == 'TASK_STATE_REJECTED' then
  return -2
end
if run[6] ~= ARGV[3] then
  return -3
end
if run[2] == 'waiting' or run[2] == 'done' then
  return -2
end
local now = redis.call('TIME')
local nowMs = tonumber(now[1]) * 1000 + math.floor(tonumber(now[2]) / 1000)
if run[2] == 'running' and tonumber(run[5] or 0) > nowMs then
  return -4
end

local fence = tonumber(run[3]) + 1
local tries = tonumber(run[4]) + 1
redis.call('HSET', KEYS[1], 'state', 'running', 'fence', fence, 'tries', tries, 'owner', ARGV[1],
  'lease', nowMs + tonumber(ARGV[2]))
local exhausted = 0
if tries > tonumber(ARGV[4]) then
  exhausted = 1
end
return {fence, tries, exhausted, tonumber(run[7] or 0), state, task[2], task[3]}

--[[
  Hands a running run back to the queue (an actor draining on shutdown): a new queue entry, the old one
  acknowledged and deleted, the lease dropped, the client's running slot released, and the try not counted against
  max attempts.

    KEYS[1] run   KEYS[2] queue   KEYS[3] clientRunning (SET: the client's runs that actors execute now)
    ARGV[1] fencing token   ARGV[2] consumer group   ARGV[3] queue entry id held

  Returns: the new queue entry id; -1 stale token (the run is no longer this holder's)
]]
local run = redis.call('HMGET', KEYS[1], 'fence', 'state', 'id', 'task', 'tries', 'client', 'prof', 'ctx')
if run[1] ~= ARGV[1] or run[2] ~= 'running' then
  return -1
end
local entry = redis.call('XADD', KEYS[2], '*', 'run', run[3], 'task', run[4], 'client', run[6], 'prof', run[7] or '',
  'ctx', run[8] or '')
local tries = tonumber(run[5]) - 1
if tries < 0 then
  tries = 0
end
redis.call('HSET', KEYS[1], 'state', 'queued', 'owner', '', 'lease', 0, 'entry', entry, 'tries', tries)
redis.call('SREM', KEYS[3], run[4])
redis.call('XACK', KEYS[2], ARGV[2], ARGV[3])
redis.call('XDEL', KEYS[2], ARGV[3])
return entry

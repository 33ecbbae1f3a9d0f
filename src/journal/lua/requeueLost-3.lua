--[[
  Queues again a run whose queue entry is gone. A Redis failover that loses writes can leave a run `running` with its
  lease expired but its entry no longer in the queue, or no longer pending in the group (XAUTOCLAIM, which reads the
  pending entries, never returns it), or a run `queued` whose entry is not in the queue: no actor would see it again.
  The run gets a new entry and is queued as a drained run is (lease dropped, its client's running slot released), but
  its tries are kept: a run that was running is claimed as a reclaimed one would be (the try counted, failed once its
  attempts are exhausted). A run whose entry is still there, or whose lease is live, is left alone.

    KEYS[1] run   KEYS[2] queue (STREAM)   KEYS[3] clientRunning (SET: the run's client's runs that actors execute now)
    ARGV[1] consumer group

  Returns: the new queue entry id; -1 no such run; -2 the run is neither running nor queued (deferred, waiting or
           done: nothing to queue); -3 the run is running and its lease is live; -4 its queue entry is still there (in
           the queue, and pending in the group when the run is running)
]]
local run = redis.call('HMGET', KEYS[1], 'state', 'entry', 'lease', 'id', 'task', 'client', 'prof', 'ctx')
local state = run[1]
if not state then
  return -1
end
if state ~= 'running' and state ~= 'queued' then
  return -2
end
local now = redis.call('TIME')
local nowMs = tonumber(now[1]) * 1000 + math.floor(tonumber(now[2]) / 1000)
if state == 'running' and tonumber(run[3] or 0) > nowMs then
  return -3
end
local entry = run[2] or ''
if entry ~= '' and #redis.call('XRANGE', KEYS[2], entry, entry) > 0 then
  if state == 'queued' or #redis.call('XPENDING', KEYS[2], ARGV[1], entry, entry, 1) > 0 then
    return -4
  end
end

-- all checks passed: writes only from here on
if entry ~= '' then
  redis.call('XACK', KEYS[2], ARGV[1], entry)
  redis.call('XDEL', KEYS[2], entry)
end
local added = redis.call('XADD', KEYS[2], '*', 'run', run[4], 'task', run[5], 'client', run[6], 'prof', run[7] or '',
  'ctx', run[8] or '')
redis.call('HSET', KEYS[1], 'state', 'queued', 'owner', '', 'lease', 0, 'entry', added)
redis.call('SREM', KEYS[3], run[5])
return added

--[[
  Weighs a ListTasks page before it is read: adds up, task after task in the page's order, the lengths of the fields
  of the page that grow with use (a task's history, which every follow-up lengthens; with artifacts also its compacted
  list and its chunk store), and says how many tasks fit within the bound. A status and the metadata hold one message's
  worth each and are not weighed. The first task always fits, so a page never comes out empty for want of room. Reads
  only. Its keys are the page's, as many as the page has (one shard: one slot).

    KEYS[1..n] the page's task hashes in order; with artifacts, each task hash followed by its chunk store (STRING)
    ARGV[1] the bound (bytes)   ARGV[2] "1" when the page reads artifacts, "" when not

  Returns: how many of the page's tasks fit (1 to the page's length)
]]
local bound = tonumber(ARGV[1])
local withArtifacts = ARGV[2] == '1'
local step = 1
if withArtifacts then
  step = 2
end
local total = 0
local fit = 0
for i = 1, #KEYS, step do
  local size = redis.call('HSTRLEN', KEYS[i], 'hist')
  if withArtifacts then
    size = size + redis.call('HSTRLEN', KEYS[i], 'arts') + redis.call('STRLEN', KEYS[i + 1])
  end
  total = total + size
  if total > bound and fit > 0 then
    return fit
  end
  fit = fit + 1
end
return fit

--[[
  The ListTasks indexes and the change notice, shared by every script that gives a task a new status and by the purge
  that deletes it. A task is in two sorted sets scored by its status timestamp (ms): its client's tasks in its profile,
  and its client's tasks in its profile and context. Only a new status moves a task in them (an artifact does not).
  A notice on the events channel is "<taskId> <state> <rev>": a follower reads the task only when that state and
  revision matter to it.
]]
-- A task's id, from its key (`…task:<taskId>`): the task hash does not repeat it.
local function taskIdOf(taskKey)
  return string.match(taskKey, 'task:([^:]+)$')
end

local function indexTask(clientTasksKey, contextTasksKey, taskId, statusMs)
  redis.call('ZADD', clientTasksKey, statusMs, taskId)
  redis.call('ZADD', contextTasksKey, statusMs, taskId)
end

local function unindexTask(clientTasksKey, contextTasksKey, taskId)
  redis.call('ZREM', clientTasksKey, taskId)
  redis.call('ZREM', contextTasksKey, taskId)
end

local function notifyChange(channel, taskId, state, rev)
  redis.call('PUBLISH', channel, taskId .. ' ' .. state .. ' ' .. rev)
end

--[[
  The ListTasks indexes and the change notice, shared by every script that gives a task a new status and by the purge
  that deletes it. A task is in three sorted sets scored by its status timestamp (ms): its client's tasks in its
  profile, its client's tasks in its profile and context, and its client's tasks in its profile and state (so that a
  status filter reads only matching tasks). Only a new status moves a task in them (an artifact does not).
  A notice on the events channel is "<taskId> <state> <rev>": a follower reads the task only when that state and
  revision matter to it.
]]
-- A task's id, from its key (`…task:<taskId>`): the task hash does not repeat it.
local function taskIdOf(taskKey)
  return string.match(taskKey, 'task:([^:]+)$')
end

-- The state index's key is the client index's key and the state (keys.ts `stateTasks`): it shares the client index's
-- hash tag, so it lives in the same slot, and a script needs no key of its own for each state a task may leave.
local function stateTasksKey(clientTasksKey, state)
  return clientTasksKey .. ':' .. state
end

-- Moves a task from the index of state `from` (false or nil for a new task) to that of `to`, scored `statusMs`.
local function indexState(clientTasksKey, taskId, statusMs, from, to)
  if from and from ~= to then
    redis.call('ZREM', stateTasksKey(clientTasksKey, from), taskId)
  end
  redis.call('ZADD', stateTasksKey(clientTasksKey, to), statusMs, taskId)
end

-- A new status: the task moves to `statusMs` in its three indexes, and from state `from`'s index to `to`'s.
local function indexTask(clientTasksKey, contextTasksKey, taskId, statusMs, from, to)
  redis.call('ZADD', clientTasksKey, statusMs, taskId)
  redis.call('ZADD', contextTasksKey, statusMs, taskId)
  indexState(clientTasksKey, taskId, statusMs, from, to)
end

local function unindexTask(clientTasksKey, contextTasksKey, taskId, state)
  redis.call('ZREM', clientTasksKey, taskId)
  redis.call('ZREM', contextTasksKey, taskId)
  if state then
    redis.call('ZREM', stateTasksKey(clientTasksKey, state), taskId)
  end
end

local function notifyChange(channel, taskId, state, rev)
  redis.call('PUBLISH', channel, taskId .. ' ' .. state .. ' ' .. rev)
end

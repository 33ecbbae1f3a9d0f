--[[
  Reads what a follower of a task's journal needs after a change notice, without the task's content: its revision,
  state and client, and its journal cursor, at one revision. A stream then reads the journal entries after its own
  cursor, and reads the whole task (snapshot-3) only when a newer revision has no newer entry (its journal went with
  the terminal step).

    KEYS[1] task   KEYS[2] journal

  Returns: {revision, state, client id, cursor (the last journal entry id, or "0-0")}; {} when no task
]]
local task = redis.call('HMGET', KEYS[1], 'rev', 'state', 'cli')
if not task[1] then
  return {}
end
local last = redis.call('XREVRANGE', KEYS[2], '+', '-', 'COUNT', 1)
local cursor = '0-0'
if last[1] then
  cursor = last[1][1]
end
return {task[1], task[2] or '', task[3] or '', cursor}

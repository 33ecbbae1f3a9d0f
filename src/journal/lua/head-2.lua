--[[
  Reads what a follower of a task's journal needs after a change notice, without the task's content: its revision,
  state and client, and its journal cursor, at one revision. A stream then reads the journal entries after its own
  cursor, and reads the whole task (snapshot-3) only when a newer revision has no newer entry (its journal went with
  the terminal step).

    KEYS[1] task   KEYS[2] journal

  Returns: {revision, state, client id, cursor (the last journal entry id, or "0-0")}; {} when no task
]]
-- @include "journal-cursor"

local task = redis.call('HMGET', KEYS[1], 'rev', 'state', 'cli')
if not task[1] then
  return {}
end
return {task[1], task[2] or '', task[3] or '', journalCursor(KEYS[2])}

--[[
  Reads the task view and its journal cursor at the same revision: streams send the view first and then only the
  journal entries after the cursor; blocking waits compare revisions. The task's chunk store (artifact events not yet
  compacted into its `arts` field) is read in the same step, so that the view's artifacts match the revision.

    KEYS[1] task   KEYS[2] journal   KEYS[3] chunks (STRING: "," .. artifact event JSON, repeated)

  Returns: {fields (HGETALL of the task, flat), cursor (the last journal entry id, or "0-0"), chunks (or "")};
           {} when no task
]]
-- @include "journal-cursor"

local fields = redis.call('HGETALL', KEYS[1])
if #fields == 0 then
  return {}
end
return {fields, journalCursor(KEYS[2]), redis.call('GET', KEYS[3]) or ''}

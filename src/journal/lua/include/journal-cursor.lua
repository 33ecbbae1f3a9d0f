--[[
  The id of a task's last journal entry, or "0-0" when it has none: where a reader of the task at this revision
  stands in its journal (the entries after it are the later revisions).
]]
local function journalCursor(journalKey)
  local last = redis.call('XREVRANGE', journalKey, '+', '-', 'COUNT', 1)
  if last[1] then
    return last[1][1]
  end
  return '0-0'
end

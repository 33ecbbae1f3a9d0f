--[[
  Moves a task one step, written by the actor that holds the run's current fencing token. Only legal moves pass;
  terminal states are final. Bumps the revision, stores status, artifacts and history, appends the journal entry,
  updates the client's index, and releases the client's and profile's active slot at terminal and interrupted states.
  A terminal task, its run and its journal get their retention TTLs.

    KEYS[1] task   KEYS[2] run   KEYS[3] journal   KEYS[4] clientTasks   KEYS[5] clientActive   KEYS[6] profileActive
    KEYS[7] pushConfigs   KEYS[8] pushQueue   KEYS[9] pushReady

    ARGV[1]  fencing token (the run's `fence` from claim)
    ARGV[2]  kind: "status" (state change or progress) | "artifact" (artifact update, state unchanged)
    ARGV[3]  new state (status kind)            ARGV[4] status JSON, or "" to keep
    ARGV[5]  journal event JSON (a StreamResponse)
    ARGV[6]  artifacts JSON (the whole list), or "" to keep
    ARGV[7]  message JSON to append to history, or ""
    ARGV[8]  now (ms, status timestamp)         ARGV[9] retention (s)   ARGV[10] journal retention (s)
    ARGV[11] events channel

  Returns: the new revision; -1 no such task or run; -2 stale fencing token (the run was claimed again, or is not
           running); -3 illegal transition (from a terminal state, or a move the state machine does not allow).
           A terminal task answers -3 to every writer, before the token is compared: terminal states are final.
]]
local run = redis.call('HMGET', KEYS[2], 'fence', 'state')
local task = redis.call('HMGET', KEYS[1], 'state', 'rev', 'hist', 'id')
if not run[1] or not task[1] then
  return -1
end

local TERMINAL = {
  TASK_STATE_COMPLETED = true, TASK_STATE_FAILED = true, TASK_STATE_CANCELED = true, TASK_STATE_REJECTED = true,
}
local INTERRUPTED = { TASK_STATE_INPUT_REQUIRED = true, TASK_STATE_AUTH_REQUIRED = true }
local from = task[1]
local to = from
if TERMINAL[from] then
  return -3
end
if run[1] ~= ARGV[1] or run[2] ~= 'running' then
  return -2
end
if ARGV[2] == 'status' then
  to = ARGV[3]
  if to == 'TASK_STATE_SUBMITTED' then
    return -3
  end
  if from == 'TASK_STATE_INPUT_REQUIRED' and not TERMINAL[to] then
    return -3
  end
  if not (TERMINAL[to] or INTERRUPTED[to] or to == 'TASK_STATE_WORKING') then
    return -3
  end
elseif from == 'TASK_STATE_INPUT_REQUIRED' then
  return -3
end

-- all checks passed: writes only from here on
local rev = tonumber(task[2]) + 1
redis.call('HSET', KEYS[1], 'state', to, 'rev', rev, 'ts', ARGV[8])
if ARGV[4] ~= '' then
  redis.call('HSET', KEYS[1], 'st', ARGV[4])
end
if ARGV[6] ~= '' then
  redis.call('HSET', KEYS[1], 'arts', ARGV[6])
end
if ARGV[7] ~= '' then
  local hist = task[3]
  if hist == '[]' then
    hist = '[' .. ARGV[7] .. ']'
  else
    hist = string.sub(hist, 1, -2) .. ',' .. ARGV[7] .. ']'
  end
  redis.call('HSET', KEYS[1], 'hist', hist)
end
redis.call('XADD', KEYS[3], '*', 'rev', rev, 'ev', ARGV[5])

-- one webhook delivery per push config of the task, in journal order (the outbox; workers deliver it)
local configs = redis.call('HKEYS', KEYS[7])
table.sort(configs)
if #configs > 0 then
  for _, cfg in ipairs(configs) do
    redis.call('RPUSH', KEYS[8], '{"id":"' .. task[4] .. '.' .. rev .. '.' .. cfg .. '","cfg":"' .. cfg .. '","rev":' .. rev
      .. ',"attempts":0,"ev":' .. ARGV[5] .. '}')
  end
  local t = redis.call('TIME')
  redis.call('ZADD', KEYS[9], 'NX', tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000), task[4])
end
redis.call('ZADD', KEYS[4], ARGV[8], task[4])
if TERMINAL[to] then
  redis.call('HSET', KEYS[2], 'state', 'done', 'owner', '', 'lease', 0)
  redis.call('SREM', KEYS[5], task[4])
  redis.call('SREM', KEYS[6], task[4])
  redis.call('EXPIRE', KEYS[1], ARGV[9])
  redis.call('EXPIRE', KEYS[2], ARGV[9])
  redis.call('EXPIRE', KEYS[3], ARGV[10])
  redis.call('EXPIRE', KEYS[7], ARGV[9])
elseif INTERRUPTED[to] then
  redis.call('HSET', KEYS[2], 'state', 'waiting', 'owner', '', 'lease', 0)
  redis.call('SREM', KEYS[5], task[4])
  redis.call('SREM', KEYS[6], task[4])
end
redis.call('PUBLISH', ARGV[11], task[4] .. ' ' .. to)
return rev

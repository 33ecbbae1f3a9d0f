--[[
  Stored-bytes accounting, shared by every script that stores or deletes task data. What is counted: the values of a
  task's `st`, `hist`, `arts` and `meta` fields, its chunk store and its push configs (the task's `bytes` field), the
  `ev` value of each journal entry (its `jbytes` field) and each pending webhook delivery in its outbox (its `obytes`
  field: a receiver that is down keeps a copy of every event per config), plus a fixed charge per task for what its
  values do not show:
  its keys, run record, bookkeeping fields and index entries (TASK_OVERHEAD_BYTES, in its `bytes` from accept until it
  is deleted, so a flood of tiny tasks meets the budget as well). The task's field, its client's counter and its
  profile's counter (fields `client:<id>` and `profile:<name>` of the shard's bytes hash) change by the same amount in
  the same script, so each counter is always the sum of its tasks' fields. A counter at 0 is deleted.
]]
-- About what a task's keys and bookkeeping take in Redis besides its counted values (MEMORY USAGE of a small
-- finished task's keys, less its values).
local TASK_OVERHEAD_BYTES = 1024

-- Adds n bytes (n may be negative) to a client's and a profile's counters.
local function countBytes(bytesKey, client, profile, n)
  if n == 0 then
    return
  end
  for _, name in ipairs({ 'client:' .. client, 'profile:' .. profile }) do
    if redis.call('HINCRBY', bytesKey, name, n) == 0 then
      redis.call('HDEL', bytesKey, name)
    end
  end
end

-- Adds bytes to a task's `bytes` (its stored values) and `jbytes` (its journal) fields and to its counters; the
-- counters also give back `releasedBytes` (optional: the bytes of a journal the caller deleted) in the same step.
local function addStoredBytes(taskKey, bytesKey, client, profile, taskBytes, journalBytes, releasedBytes)
  if taskBytes ~= 0 then
    redis.call('HINCRBY', taskKey, 'bytes', taskBytes)
  end
  if journalBytes ~= 0 then
    redis.call('HINCRBY', taskKey, 'jbytes', journalBytes)
  end
  countBytes(bytesKey, client, profile, taskBytes + journalBytes - (releasedBytes or 0))
end

-- Adds n bytes (n may be negative) to a task's `obytes` (its pending webhook deliveries) and to its counters.
local function addOutboxBytes(taskKey, bytesKey, client, profile, n)
  if n == 0 then
    return
  end
  redis.call('HINCRBY', taskKey, 'obytes', n)
  countBytes(bytesKey, client, profile, n)
end

-- Deletes a push config of a task and gives its bytes back to the task and its counters; false when it had none.
local function deleteConfig(configsKey, taskKey, bytesKey, client, profile, configId)
  local existing = redis.call('HSTRLEN', configsKey, configId)
  if redis.call('HDEL', configsKey, configId) == 0 then
    return false
  end
  addStoredBytes(taskKey, bytesKey, client, profile, -existing, 0)
  return true
end

-- Whether storing n more bytes takes a counter of the bytes hash past its budget (0 = no budget).
local function overBudget(bytesKey, name, budget, n)
  return budget > 0 and n > 0 and tonumber(redis.call('HGET', bytesKey, name) or 0) + n > budget
end

-- The length of a JSON array after appending one element to it (how `hist` grows).
local function appendedLength(list, element)
  if list == '[]' then
    return #element + 2
  end
  return #list + #element + 1
end

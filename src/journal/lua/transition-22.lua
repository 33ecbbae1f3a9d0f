--[[
  Moves a task one step, written by the actor that holds the run's current fencing token: zero or more artifact events
  (streamed chunks the actor coalesced while its previous write was in flight) and then, optionally, one status event.
  Only legal moves pass; terminal states are final. Each event bumps the revision and is appended to the journal; an
  artifact event is also appended to the task's chunk store (O(event): the artifact list is never resent), unless the
  step carries the whole list, which then replaces `arts` and empties the chunk store (the compaction a run's end
  does). Stores status and history, updates the client's index and the stored-bytes counters (an actor's output is
  counted, never refused), and at terminal and interrupted states releases the client's and profile's active slot and
  the client's running slot. A terminal task is scheduled for deletion after its retention (its journal at once when
  kept for 0 s and no stream follows the task: the step's events then go to the outbox only, not to a journal it
  deletes); an interrupted one is counted among its client's interrupted tasks
  and scheduled to fail after its input timeout. A step that ends the leg (terminal or interrupted) may also
  acknowledge and delete the leg's queue entry and read the client's oldest deferred run: a run's end is one script.
  A run whose accept took a blocking request's waiting leases (its `w`: the leases' member, "<gatewayId>:<requestId>")
  gives them back at the step that ends the leg and publishes the task as that step left it to its gateway's reply
  channel (the events channel .. ":" .. gatewayId), before the change notice: the waiting request is answered from it,
  with no read and no release of its own (a task of up to 64 KiB; a larger one its gateway reads on the notice).

    KEYS[1]  task   KEYS[2] run   KEYS[3] journal   KEYS[4] clientTasks   KEYS[5] clientActive   KEYS[6] profileActive
    KEYS[7]  pushConfigs   KEYS[8] pushOutbox   KEYS[9] pushReady
    KEYS[10] clientRunning (SET: the client's runs that actors execute now)
    KEYS[11] clientInterrupted (SET)   KEYS[12] inputDue (ZSET task id -> input timeout, ms)
    KEYS[13] purge (ZSET task id -> next deletion step, ms)   KEYS[14] bytes (HASH of stored-bytes counters)
    KEYS[15] chunks (STRING: the task's artifact events since the last compaction, each "," .. event JSON)
    KEYS[16] taskStreams (ZSET: leases of the streams open on the task, scored by expiry, ms)
    KEYS[17] queue (STREAM: the shard's run queue)   KEYS[18] clientDeferred (ZSET: the client's deferred runs)
    KEYS[19] contextTasks (ZSET: the client's tasks in the task's profile and context)
    KEYS[20] client (HASH: the client's record, field maxint)
    KEYS[21] clientWaiting (ZSET: the client's waiting leases)   KEYS[22] waiting (ZSET: the installation's waiting
             leases; on a Cluster, where accept takes no waiting leases and no run has a `w`, KEYS[21] again)

    ARGV[1]  fencing token (the run's `fence` from claim)
    ARGV[2]  new state, or "" for a step of artifact events only (state unchanged)
    ARGV[3]  status JSON, or "" to keep          ARGV[4] artifacts JSON (the whole list: compaction), or "" to keep
    ARGV[5]  message JSON to append to history, or ""
    ARGV[6]  status timestamp (ms; moves the task in the ListTasks indexes only with a new status)
    ARGV[7] retention (s)   ARGV[8] journal retention (s)
    ARGV[9]  events channel                      ARGV[10] input timeout (s) of an interrupted task
    ARGV[11] queue entry id to acknowledge and delete when the step ends the leg, or ""
    ARGV[12] consumer group
    ARGV[13] the client's interrupted-task limit when its record has none (0 = none)
    ARGV[14] the run's start, or "": a WORKING status event journaled before the step's other events (the claim does
             not move the task; the run's first step does, with the handler's first output). The task moves to
             WORKING before the step's own move, which the state machine then checks from WORKING; with ARGV[2] = ""
             the step ends in WORKING and ARGV[3] is the start's status
    ARGV[15] the actor to claim the next queued run for, or "": with a consumer name, a step that acknowledges its
             entry then reads the next new entry for that consumer (XREADGROUP COUNT 1, one shard after the other in
             ARGV[20]'s order, until one has an entry) and claims it as claim does, with the task (one node only: the
             entry's keys are derived from ARGV[19], not passed; a Cluster never asks)
    ARGV[16] the next claim's lease (ms)   ARGV[17] max attempts
    ARGV[18] the client's running-run limit when its record has none (0 = none)
    ARGV[19] the installation's key prefix   ARGV[20] the shards to read, in order ("0", "1,0", …)
    ARGV[21] the largest a task's stored values (its `bytes`) may grow to by a step that stores content (artifact
             events, the whole artifact list, a history message), 0 = no limit; a step without content always passes
    ARGV[22] n, the number of artifact events    ARGV[23 .. 22+n] artifact events (StreamResponse JSON), in order
    ARGV[23+n] the status event (StreamResponse JSON), when ARGV[2] is not ""

  Publishes: on ARGV[9], "<taskId> <state> <rev>" for every new state; before it, for a run with a `w` at a step that
  ends the leg, on ARGV[9] .. ":" .. gatewayId: "<w> <taskId> " .. JSON [HGETALL of the task (flat), the chunk
  store or ""], unless the task's values pass 64 KiB (its gateway then reads it on the change notice).

  Returns: the new revision; {revision, the client's oldest deferred task id or ""} when the step acknowledged its
           queue entry, followed, when ARGV[15] asked for the next run and a shard had a new entry, by that entry
           (shard, entry id, run id, task id, client id) and claim's reply for it (its list, or one of claim's codes;
           an entry without run or task fields is left pending, as the queue reader leaves it); -1 no such task or run; -2 stale fencing token (the run was claimed again, or is not
           running); -3 illegal transition (from a terminal state, or a move the state machine does not allow);
           -4 the move would interrupt the task while its client has as many interrupted tasks as its limit allows
           (tasks queued before the client reached it; the caller ends the task another way); -5 the step's content
           would take the task's stored values past ARGV[21] (the caller ends the task without it).
           A terminal task answers -3 to every writer, before the token is compared: terminal states are final.
]]
-- @include "clock"
-- @include "task-states"
-- @include "stored-bytes"
-- @include "push-outbox"
-- @include "task-endings"
-- @include "task-index"
-- @include "claim-run"

-- the largest task (its stored values, in bytes) sent whole to a waiting gateway
local REPLY_MAX_BYTES = 65536

-- The next new queue entry for the actor ARGV[15], claimed (claim-run) with the task: {shard, entry id, run id, task
-- id, client id, claim's reply}; nil when no shard has one, or the entry names no run or task. The keys follow
-- keys.ts (KeySpace), from the prefix: one node only.
local function claimNext()
  for shard in string.gmatch(ARGV[20], '%d+') do
    local stem = ARGV[19] .. '{' .. shard .. '}:'
    local queue = stem .. 'queue'
    local read = redis.call('XREADGROUP', 'GROUP', ARGV[12], ARGV[15], 'COUNT', 1, 'STREAMS', queue, '>')
    if read then
      local entry = read[1][2][1]
      local fields = {}
      for i = 1, #entry[2] - 1, 2 do
        fields[entry[2][i]] = entry[2][i + 1]
      end
      local runId, taskId = fields['run'] or '', fields['task'] or ''
      if runId == '' or taskId == '' then
        return nil
      end
      local taskKey = stem .. 'task:' .. taskId
      -- an entry written before entries named their client: the task names it
      local client = fields['client'] or ''
      if client == '' then
        client = redis.call('HGET', taskKey, 'cli') or ''
      end
      local clientKey = stem .. 'client:' .. client
      local reply = claimRun(stem .. 'run:' .. taskId, taskKey, clientKey, clientKey .. ':running',
        clientKey .. ':deferred', stem .. 'deferred', queue, stem .. 'chunks:' .. taskId,
        {owner = ARGV[15], leaseMs = ARGV[16], entryId = entry[1], maxAttempts = ARGV[17], clientId = client,
          maxRunning = ARGV[18], group = ARGV[12], read = '1'})
      return {tonumber(shard), entry[1], runId, taskId, client, reply}
    end
  end
  return nil
end

local run = redis.call('HMGET', KEYS[2], 'fence', 'state', 'w')
-- the history is read only by a step that appends to it: a streamed answer's steps never copy it
local task = redis.call('HMGET', KEYS[1], 'state', 'rev', 'cli', 'prof', 'jbytes', 'st', 'bytes')
if not run[1] or not task[1] then
  return -1
end

local from = task[1]
local artifactCount = tonumber(ARGV[22])
if TERMINAL[from] then
  return -3
end
if run[1] ~= ARGV[1] or run[2] ~= 'running' then
  return -2
end
-- the state the step's own events start from: WORKING once the run's start is written
local at = from
if ARGV[14] ~= '' then
  if INTERRUPTED[from] then
    return -3
  end
  at = 'TASK_STATE_WORKING'
end
local to = at
if artifactCount > 0 and at == 'TASK_STATE_INPUT_REQUIRED' then
  return -3
end
if ARGV[2] ~= '' then
  to = ARGV[2]
  if to == 'TASK_STATE_SUBMITTED' then
    return -3
  end
  if at == 'TASK_STATE_INPUT_REQUIRED' and not TERMINAL[to] then
    return -3
  end
  if not (TERMINAL[to] or INTERRUPTED[to] or to == 'TASK_STATE_WORKING') then
    return -3
  end
  if INTERRUPTED[to] and redis.call('SISMEMBER', KEYS[11], taskIdOf(KEYS[1])) == 0 then
    local limit = tonumber(redis.call('HGET', KEYS[20], 'maxint') or ARGV[13])
    if limit > 0 and redis.call('SCARD', KEYS[11]) >= limit then
      return -4
    end
  end
end

-- What the step adds to the task's stored values, counted before anything is written: only a step that stores content
-- is held to the limit (the end that replaces a refused step with a failure carries none, so it always passes).
local storedArts, storedChunks
if ARGV[4] ~= '' then
  storedArts = redis.call('HSTRLEN', KEYS[1], 'arts')
  storedChunks = redis.call('STRLEN', KEYS[15])
end
local maxBytes = tonumber(ARGV[21])
if maxBytes > 0 and (artifactCount > 0 or ARGV[4] ~= '' or ARGV[5] ~= '') then
  local growth = 0
  if ARGV[4] ~= '' then
    growth = #ARGV[4] - storedArts - storedChunks
  else
    for i = 23, 22 + artifactCount do
      growth = growth + #ARGV[i] + 1
    end
  end
  if ARGV[5] ~= '' then
    -- (one byte more than the history grows by when it was empty)
    growth = growth + #ARGV[5] + 1
  end
  if ARGV[3] ~= '' then
    growth = growth + #ARGV[3] - #(task[6] or '')
  end
  if growth > 0 and tonumber(task[7] or 0) + growth > maxBytes then
    return -5
  end
end

-- A terminal step whose journal nobody will read (kept 0 s, no stream follows) deletes it rather than append to it.
local journalSeconds
if TERMINAL[to] then
  journalSeconds = journalKeepSeconds(KEYS[16], ARGV[8])
end

-- all checks passed: writes only from here on
local taskId = taskIdOf(KEYS[1])
local rev = tonumber(task[2])
local taskBytes = 0
local journalBytes = 0
local outboxBytes = 0
local function journal(event)
  rev = rev + 1
  if journalSeconds ~= 0 then
    redis.call('XADD', KEYS[3], '*', 'rev', rev, 'ev', event)
    journalBytes = journalBytes + #event
  end
  outboxBytes = outboxBytes + enqueueDeliveries(KEYS[7], KEYS[8], KEYS[9], taskId, rev, event)
end
if ARGV[14] ~= '' then
  journal(ARGV[14])
end
for i = 23, 22 + artifactCount do
  journal(ARGV[i])
  if ARGV[4] == '' then
    redis.call('APPEND', KEYS[15], ',' .. ARGV[i])
    taskBytes = taskBytes + #ARGV[i] + 1
  end
end
if ARGV[2] ~= '' then
  journal(ARGV[23 + artifactCount])
end
-- the task's changed fields, written in one HSET
local fields = {'state', to, 'rev', rev}
if ARGV[3] ~= '' then
  taskBytes = taskBytes + #ARGV[3] - #(task[6] or '')
  table.insert(fields, 'st')
  table.insert(fields, ARGV[3])
  table.insert(fields, 'ts')
  table.insert(fields, ARGV[6])
end
if ARGV[4] ~= '' then
  taskBytes = taskBytes + #ARGV[4] - storedArts - storedChunks
  table.insert(fields, 'arts')
  table.insert(fields, ARGV[4])
  -- (APPEND never leaves an empty chunk store: a step that appended nothing since the last compaction has none)
  if storedChunks > 0 then
    redis.call('DEL', KEYS[15])
  end
end
if ARGV[5] ~= '' then
  local hist = redis.call('HGET', KEYS[1], 'hist')
  taskBytes = taskBytes + appendedLength(hist, ARGV[5]) - #hist
  if hist == '[]' then
    hist = '[' .. ARGV[5] .. ']'
  else
    hist = string.sub(hist, 1, -2) .. ',' .. ARGV[5] .. ']'
  end
  table.insert(fields, 'hist')
  table.insert(fields, hist)
end
redis.call('HSET', KEYS[1], unpack(fields))
-- a journal nobody will read goes with this step, its bytes given back with the step's own (a task whose run wrote
-- nothing before its end has none: accept creates no journal, and this step appended nothing to it)
local releasedBytes = 0
if journalSeconds == 0 and task[5] then
  releasedBytes = tonumber(task[5])
  redis.call('DEL', KEYS[3])
end
addStoredBytes(KEYS[1], KEYS[14], task[3], task[4], taskBytes, journalBytes, releasedBytes)
addOutboxBytes(KEYS[1], KEYS[14], task[3], task[4], outboxBytes)
if ARGV[3] ~= '' then
  indexTask(KEYS[4], KEYS[19], taskId, ARGV[6], from, to)
elseif from ~= to then
  -- a new state without a new status keeps its status timestamp, and its place in the other indexes
  local statusMs = redis.call('HGET', KEYS[1], 'ts') or ARGV[6]
  indexState(KEYS[4], taskId, statusMs, from, to)
end
if TERMINAL[to] then
  finishRecords(KEYS[1], KEYS[2], journalSeconds == 0)
  redis.call('SREM', KEYS[5], taskId)
  redis.call('SREM', KEYS[6], taskId)
  redis.call('SREM', KEYS[10], taskId)
  -- only an interrupted task is in its client's interrupted set (resume takes it out)
  if INTERRUPTED[from] then
    leaveInterrupted(KEYS[11], KEYS[12], taskId)
  end
  scheduleDeletion(KEYS[1], KEYS[13], taskId, ARGV[7], journalSeconds)
elseif INTERRUPTED[to] then
  redis.call('HSET', KEYS[2], 'state', 'waiting', 'owner', '', 'lease', 0)
  if run[3] then
    redis.call('HDEL', KEYS[2], 'w')
  end
  redis.call('SREM', KEYS[5], taskId)
  redis.call('SREM', KEYS[6], taskId)
  redis.call('SREM', KEYS[10], taskId)
  enterInterrupted(KEYS[11], KEYS[12], taskId, ARGV[10])
end
-- the blocking request that waits for this leg: its leases back, and its answer (a terminal run dropped its `w`)
if run[3] and (TERMINAL[to] or INTERRUPTED[to]) then
  redis.call('ZREM', KEYS[21], run[3])
  redis.call('ZREM', KEYS[22], run[3])
  local gateway = string.match(run[3], '^([^:]+):')
  local fields = redis.call('HGETALL', KEYS[1])
  -- a step that carried the whole list compacted the chunk store away
  local chunks = ''
  if ARGV[4] == '' then
    chunks = redis.call('GET', KEYS[15]) or ''
  end
  local size = #chunks
  for i = 2, #fields, 2 do
    size = size + #fields[i]
  end
  -- a larger task is read by its gateway on the change notice, as without a reply: a burst of large replies must not
  -- fill the subscriber connection's output buffer (Redis cuts a subscriber past its pubsub limit, 32 MB by default)
  if gateway and size <= REPLY_MAX_BYTES then
    redis.call('PUBLISH', ARGV[9] .. ':' .. gateway, run[3] .. ' ' .. taskId .. ' ' .. cjson.encode({fields, chunks}))
  end
end
notifyChange(ARGV[9], taskId, to, rev)
if ARGV[11] ~= '' and (TERMINAL[to] or INTERRUPTED[to]) then
  redis.call('XACK', KEYS[17], ARGV[12], ARGV[11])
  redis.call('XDEL', KEYS[17], ARGV[11])
  local oldest = redis.call('ZRANGE', KEYS[18], 0, 0)
  if ARGV[15] ~= '' then
    -- the step's writes are done: an error in the next claim (never expected) must not fail the step, whose caller
    -- would take it for a refused write; an entry read before such an error stays pending until it is reclaimed
    local ok, nextRun = pcall(claimNext)
    if ok and nextRun then
      return {rev, oldest[1] or '', nextRun[1], nextRun[2], nextRun[3], nextRun[4], nextRun[5], nextRun[6]}
    end
  end
  return {rev, oldest[1] or ''}
end
return rev

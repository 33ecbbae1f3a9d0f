--[[
  Accepts a new task atomically: the dedup record of the client's messageId, the task, the run, their binding, the
  client's task indexes, the run-queue entry and the stored-bytes counters are written together, or nothing is. The
  task's journal is not created here: it holds the revisions after the first (the task as accepted is in the task hash,
  which every reader's snapshot reads), so a queued task holds no stream (a stream's fixed cost is ~4.7 KB). Every
  check runs before the first write, so a refusal writes nothing.
  Check order: the waiting leases of a blocking request (when ARGV[20] names one), dedup (a retry of an accepted
  message is answered even at a limit), client record, worker liveness (Redis's own clock), client limit, profile
  quota, the client's interrupted tasks, the client's stored bytes, the profile's stored bytes. A limit on the client
  record wins over the default given in ARGV; 0 means none. A blocking request's waiting leases (one member in its
  client's and the installation's waiting sets, as leasePair takes them; one node only, since the installation's set
  is in no shard's slot) are checked first and taken with the new task; a retry's answer ({0, taskId}) takes none (its
  caller takes them with leasePair). The run keeps their member as `w`, for its end to give them back (transition). A
  set that looks full drops its expired leases before it is counted again, the one write before a refusal
  (include/lease-pair.lua).

    KEYS[1]  live              STRING  Redis time (s) of the last worker heartbeat or sweep tick
    KEYS[2]  client            HASH    client record (limit, revoked, maxbytes, maxint)
    KEYS[3]  clientActive      SET     the client's queued + running task ids
    KEYS[4]  profileActive     SET     the profile's queued + running task ids
    KEYS[5]  dedup             STRING  "<contentHash>:<taskId>" (of the client's messageId in this profile)
    KEYS[6]  task              HASH    the task view
    KEYS[7]  run               HASH    the run
    KEYS[8]  clientTasks       ZSET    the client's task ids in the profile by status timestamp (ms)
    KEYS[9]  queue             STREAM  the shard's run queue
    KEYS[10] pushConfigs       HASH    the task's push notification configs (an inline config is stored here)
    KEYS[11] clientInterrupted SET     the client's task ids in INPUT_REQUIRED or AUTH_REQUIRED
    KEYS[12] bytes             HASH    the shard's stored-bytes counters (client:<id>, profile:<name>)
    KEYS[13] contextTasks      ZSET    the client's task ids in the profile and context, by status timestamp (ms)
    KEYS[14] clientWaiting     ZSET    the client's waiting leases (member -> expiry ms)
    KEYS[15] waiting           ZSET    the installation's waiting leases; without ARGV[20] neither is touched (a
                                       caller on a Cluster passes KEYS[14] twice)

    ARGV[1]  livenessSeconds (number)      ARGV[2]  profile quota (0 = none)
    ARGV[3]  content hash of the message   ARGV[4]  task id         ARGV[5]  run id
    ARGV[6]  context id                    ARGV[7]  client id       ARGV[8]  profile name
    ARGV[9]  status JSON (SUBMITTED)       ARGV[10] message JSON as stored (with taskId and contextId): sent once, the
             history is built from it here
    ARGV[11] now (ms, status timestamp)    ARGV[12] dedup TTL (s)   ARGV[13] metadata JSON or ""
    ARGV[14] inline push config id or ""  ARGV[15] inline push config JSON or ""
    ARGV[16] the client's stored-bytes budget when its record has none (bytes, 0 = none)
    ARGV[17] the profile's stored-bytes budget (bytes, 0 = none)
    ARGV[18] the client's interrupted-task limit when its record has none (0 = none)
    ARGV[19] the request's W3C Trace Context (JSON carrier, or ""), kept on the run for its worker
    ARGV[20] the blocking request's waiting lease member, or "" (no waiting leases)   ARGV[21] their TTL (ms)
    ARGV[22] the client's waiting maximum   ARGV[23] the installation's waiting maximum (0 = none)

  Returns: {1, taskId} created (the task is exactly what ARGV describes, at revision 1: the caller answers from it);
           {0, taskId} same messageId and content seen before in this profile (nothing written, no waiting lease);
           -1 no live worker; -2 client at its limit; -3 profile quota full; -4 messageId reused with other content;
           -5 client unknown or revoked; -6 the client's stored bytes would pass its budget; -7 the profile's stored
           bytes would pass its budget; -8 the client has as many interrupted tasks as its limit allows; -9 the
           client's waiting set is at its maximum; -10 the installation's waiting set is at its maximum
]]
-- @include "clock"
-- @include "stored-bytes"
-- @include "task-index"
-- @include "lease-pair"

local waits = ARGV[20] ~= ''
if waits then
  local room = leasePairRoom(KEYS[14], KEYS[15], ARGV[20], tonumber(ARGV[22]), tonumber(ARGV[23]), redisNowMs())
  if room == -1 then
    return -9
  end
  if room == -2 then
    return -10
  end
end

local seen = redis.call('GET', KEYS[5])
if seen then
  local sep = string.find(seen, ':', 1, true)
  if string.sub(seen, 1, sep - 1) == ARGV[3] then
    return {0, string.sub(seen, sep + 1)}
  end
  return -4
end

local client = redis.call('HMGET', KEYS[2], 'limit', 'revoked', 'maxbytes', 'maxint')
if client[1] == false or client[2] == '1' then
  return -5
end

local beat = redis.call('GET', KEYS[1])
if not beat or math.floor(redisNowMs() / 1000) - tonumber(beat) > tonumber(ARGV[1]) then
  return -1
end

local limit = tonumber(client[1])
if limit > 0 and redis.call('SCARD', KEYS[3]) >= limit then
  return -2
end

local quota = tonumber(ARGV[2])
if quota > 0 and redis.call('SCARD', KEYS[4]) >= quota then
  return -3
end

local interruptedLimit = tonumber(client[4] or ARGV[18])
if interruptedLimit > 0 and redis.call('SCARD', KEYS[11]) >= interruptedLimit then
  return -8
end

-- the history, built from the message sent once
local hist = '[' .. ARGV[10] .. ']'

-- the task hash's counted fields (st, hist, arts = "[]", meta), the inline push config, and the task's fixed charge
-- for its keys and bookkeeping
local taskBytes = TASK_OVERHEAD_BYTES + #ARGV[9] + #hist + 2 + #ARGV[13] + #ARGV[15]
if overBudget(KEYS[12], 'client:' .. ARGV[7], tonumber(client[3] or ARGV[16]), taskBytes) then
  return -6
end
if overBudget(KEYS[12], 'profile:' .. ARGV[8], tonumber(ARGV[17]), taskBytes) then
  return -7
end

-- all checks passed: writes only from here on
local taskId = ARGV[4]
local entry = redis.call('XADD', KEYS[9], '*', 'run', ARGV[5], 'task', taskId, 'client', ARGV[7], 'prof', ARGV[8],
  'ctx', ARGV[6])
local run = {'id', ARGV[5], 'task', taskId, 'client', ARGV[7], 'state', 'queued', 'fence', 0, 'tries', 0, 'entry', entry,
  'trace', ARGV[19], 'prof', ARGV[8], 'ctx', ARGV[6]}
if waits then
  -- the waiting leases' member: the run's end gives them back and answers the request (transition)
  table.insert(run, 'w')
  table.insert(run, ARGV[20])
end
redis.call('HSET', KEYS[7], unpack(run))
redis.call('HSET', KEYS[6], 'ctx', ARGV[6], 'cli', ARGV[7], 'prof', ARGV[8],
  'state', 'TASK_STATE_SUBMITTED', 'rev', 1, 'st', ARGV[9], 'hist', hist, 'arts', '[]', 'ts', ARGV[11],
  'created', ARGV[11], 'bytes', taskBytes)
if ARGV[13] ~= '' then
  redis.call('HSET', KEYS[6], 'meta', ARGV[13])
end
redis.call('SET', KEYS[5], ARGV[3] .. ':' .. taskId, 'EX', ARGV[12])
redis.call('SADD', KEYS[3], taskId)
redis.call('SADD', KEYS[4], taskId)
indexTask(KEYS[8], KEYS[13], taskId, ARGV[11], false, 'TASK_STATE_SUBMITTED')
if ARGV[14] ~= '' then
  redis.call('HSET', KEYS[10], ARGV[14], ARGV[15])
end
countBytes(KEYS[12], ARGV[7], ARGV[8], taskBytes)
if waits then
  leasePairTake(KEYS[14], KEYS[15], ARGV[20], tonumber(ARGV[21]), redisNowMs())
end
return {1, taskId}

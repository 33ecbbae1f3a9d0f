--[[
  Claims a queued run for an actor (or reclaims one whose lease expired): bumps the fencing token and the tries,
  takes the lease, and counts the run among its client's running runs. Only the holder of the newest token can write
  the task (see transition). A queued run whose client already has as many running runs as its limit allows is not
  started: it is deferred (no try counted, the queue entry acknowledged and deleted, the run in the client's deferred
  set, first deferral time kept) until one of the client's runs ends and promote queues it again. A reclaimed run
  (state running, lease expired) is already counted and never deferred. With ARGV[8] = "1" a claim that will run the
  handler (not exhausted, no cancel requested) also returns the task, so that the run needs no other read. The claim
  does not move the task: the run's first step writes WORKING, together with the handler's first output (transition,
  ARGV[14]), so that a run that ends at once is one status change, not two.

    KEYS[1] run   KEYS[2] task   KEYS[3] client (HASH: the record, field maxrun)
    KEYS[4] clientRunning (SET: the client's runs that actors execute now)
    KEYS[5] clientDeferred (ZSET: the client's deferred runs' task ids -> first deferral, ms)
    KEYS[6] deferred (SET: the shard's clients with deferred runs)   KEYS[7] queue (STREAM)   KEYS[8] chunks
    ARGV[1] owner (consumer name)   ARGV[2] lease (ms)   ARGV[3] queue entry id being processed
    ARGV[4] max attempts   ARGV[5] client id (from the queue entry)
    ARGV[6] the client's running-run limit when its record has none (0 = none)   ARGV[7] consumer group
    ARGV[8] "1" to return the task when the run is to run, "" to claim only

  Returns: {fence, tries, exhausted (1 when tries > max attempts), cancel (1 when a cancel was requested),
            task state, client id, profile, and with ARGV[8] = "1" when the run is to run: the task's fields
            (HGETALL, flat) and its chunk store (or "")};
           0 deferred: the client is at its running-run limit (the entry is acknowledged and deleted, the run waits);
           -1 no such run or task, or the task is not that client's (orphan entry); -2 nothing to run (task terminal,
           or the run waits for input or is done); -3 the entry is not the run's current queue entry (stale); -4 the
           run is leased by a live owner
]]
-- @include "clock"
-- @include "task-states"
-- @include "task-index"
-- @include "claim-run"

return claimRun(KEYS[1], KEYS[2], KEYS[3], KEYS[4], KEYS[5], KEYS[6], KEYS[7], KEYS[8],
  {owner = ARGV[1], leaseMs = ARGV[2], entryId = ARGV[3], maxAttempts = ARGV[4], clientId = ARGV[5],
    maxRunning = ARGV[6], group = ARGV[7], read = ARGV[8]})

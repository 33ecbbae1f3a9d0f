// A run's end that claims its actor's next queued run in the same script (transition with `next`, one node): each
// documented outcome of the next claim, what a step that does not end the leg or is refused leaves alone, and the
// order in which the shards are read.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { type Claim, type NextRunRequest, QUEUE_GROUP, RunLedger } from "../../../src/journal/index.ts";
import { type JournalFixture, journalFixture } from "../../support/journal.ts";
import { startRedis, type TestRedis } from "../../support/redis.ts";
import { type AcceptedTask, acceptTask, currentEntry, liveClient, move, PROFILE } from "./helpers.ts";

let server: TestRedis;
beforeAll(async () => {
  server = await startRedis();
});
afterAll(async () => {
  await server.stop();
});

const OWNER = "actor-1";
const next = (shards: readonly number[] = [0]): NextRunRequest => ({
  owner: OWNER,
  leaseMs: 30_000,
  maxAttempts: 3,
  shards,
});

/** Reads the task's queue entry as OWNER (as the actor's queue reader does) and claims it. */
async function readAndClaim(f: JournalFixture, task: AcceptedTask): Promise<Claim> {
  const shard = f.keys.shardOf(task.clientId);
  const entryId = await currentEntry(f, task);
  await f.redis.xreadgroup("GROUP", QUEUE_GROUP, OWNER, "COUNT", 1, "STREAMS", f.keys.queue(shard), ">");
  const claim = await f.ledger.claim(shard, task.taskId, entryId, OWNER, 30_000, 3, task.clientId, true);
  if (typeof claim === "string") throw new Error(`claim refused: ${claim}`);
  return claim;
}

/** The entry ids OWNER holds (delivered, not acknowledged) in a shard's queue. */
async function held(f: JournalFixture, shard = 0): Promise<string[]> {
  const rows = (await f.redis.xpending(f.keys.queue(shard), QUEUE_GROUP, "-", "+", 100, OWNER)) as [string][];
  return rows.map(([id]) => id);
}

/** Ends the claimed run (COMPLETED) with its entry acknowledged, asking for the next run. */
async function endAskingNext(f: JournalFixture, claim: Claim, task: AcceptedTask, request = next()) {
  return await move(f, claim, task, "TASK_STATE_COMPLETED", { ackEntry: claim.entryId, next: request });
}

describe("a run's end that claims the next run", () => {
  test("claims the oldest new entry for the consumer and returns it with its claim and task", async () => {
    const f = journalFixture(server);
    const clientId = await liveClient(f);
    const first = await acceptTask(f, clientId, { text: "first" });
    const second = await acceptTask(f, clientId, { text: "second" });
    const claim = await readAndClaim(f, first);
    const secondEntry = await currentEntry(f, second);
    const before = Date.now();

    const result = await endAskingNext(f, claim, first);
    if (!result.ok) throw new Error(result.reason);
    expect(result).toMatchObject({ ok: true, acked: true, oldestDeferred: null });
    const runId = (await f.redis.hget(f.keys.run(0, second.taskId), "id")) ?? "";
    expect(result.next?.entry).toEqual({ shard: 0, id: secondEntry, runId, taskId: second.taskId, clientId });
    const nextClaim = result.next?.claim;
    if (typeof nextClaim !== "object") throw new Error(`next claim refused: ${nextClaim}`);
    expect(nextClaim).toMatchObject({
      shard: 0,
      taskId: second.taskId,
      entryId: secondEntry,
      fence: 1,
      tries: 1,
      exhausted: false,
      cancelRequested: false,
      state: "TASK_STATE_SUBMITTED",
      clientId,
      profile: PROFILE,
    });
    expect(nextClaim.record).toMatchObject({ id: second.taskId, contextId: second.contextId, rev: 1 });
    expect(nextClaim.record?.history[0]?.parts).toEqual([{ text: "second" }]);
    // the next run is leased to the consumer, and its entry delivered to it; the ended run's entry is gone
    const run = await f.redis.hgetall(f.keys.run(0, second.taskId));
    expect(run).toMatchObject({ state: "running", owner: OWNER, fence: "1", tries: "1" });
    expect(Number(run.lease)).toBeGreaterThanOrEqual(before + 29_000);
    expect(await f.redis.sismember(f.keys.clientRunning(0, clientId), second.taskId)).toBe(1);
    expect(await held(f)).toEqual([secondEntry]);
    expect(await f.redis.xrange(f.keys.queue(0), claim.entryId, claim.entryId)).toEqual([]);
    // the claimed run is written like any other: its own end goes through with the next claim's token
    expect(await move(f, nextClaim, second, "TASK_STATE_COMPLETED", { ackEntry: secondEntry })).toMatchObject({
      ok: true,
      acked: true,
    });
  });

  test("with no new entry the step acknowledges its own as before and claims nothing", async () => {
    const f = journalFixture(server);
    const clientId = await liveClient(f);
    const task = await acceptTask(f, clientId);
    const claim = await readAndClaim(f, task);
    const result = await endAskingNext(f, claim, task);
    expect(result).toEqual({ ok: true, rev: expect.any(Number), acked: true, oldestDeferred: null });
    expect(await held(f)).toEqual([]);
  });

  test("a step that does not end the leg, or is refused, reads no entry", async () => {
    const f = journalFixture(server);
    const clientId = await liveClient(f);
    const task = await acceptTask(f, clientId);
    const waiting = await acceptTask(f, clientId);
    const claim = await readAndClaim(f, task);
    const working = await move(f, claim, task, "TASK_STATE_WORKING", { ackEntry: claim.entryId, next: next() });
    expect(working).toEqual({ ok: true, rev: expect.any(Number) });
    const stale = await endAskingNext(f, { ...claim, fence: claim.fence + 1 }, task);
    expect(stale).toEqual({ ok: false, reason: "stale" });
    // only the run's own entry is held; the waiting task's entry is still new, its run queued
    expect(await held(f)).toEqual([claim.entryId]);
    expect(await f.redis.hget(f.keys.run(0, waiting.taskId), "state")).toBe("queued");
  });

  test("the next entry's client at its running-run limit: deferred, its entry acknowledged and deleted", async () => {
    const f = journalFixture(server);
    const busy = await liveClient(f, { maxRunningTasks: 1 });
    const other = await liveClient(f);
    const running = await acceptTask(f, busy);
    await readAndClaim(f, running);
    const ending = await acceptTask(f, other);
    const claim = await readAndClaim(f, ending);
    const deferred = await acceptTask(f, busy);
    const deferredEntry = await currentEntry(f, deferred);

    const result = await endAskingNext(f, claim, ending);
    if (!result.ok) throw new Error(result.reason);
    expect(result.next).toMatchObject({ entry: { id: deferredEntry, taskId: deferred.taskId }, claim: "deferred" });
    expect(await f.redis.hget(f.keys.run(0, deferred.taskId), "state")).toBe("deferred");
    expect(await f.redis.zscore(f.keys.clientDeferred(0, busy), deferred.taskId)).not.toBeNull();
    expect(await f.redis.sismember(f.keys.deferredClients(0), busy)).toBe(1);
    expect(await f.redis.xrange(f.keys.queue(0), deferredEntry, deferredEntry)).toEqual([]);
    expect(await held(f)).not.toContain(deferredEntry);
  });

  test("an entry whose task is gone is an orphan, left for the actor to acknowledge", async () => {
    const f = journalFixture(server);
    const clientId = await liveClient(f);
    const task = await acceptTask(f, clientId);
    const gone = await acceptTask(f, clientId);
    const goneEntry = await currentEntry(f, gone);
    await f.redis.del(f.keys.task(0, gone.taskId));
    const claim = await readAndClaim(f, task);
    const result = await endAskingNext(f, claim, task);
    if (!result.ok) throw new Error(result.reason);
    expect(result.next).toMatchObject({ entry: { id: goneEntry, taskId: gone.taskId }, claim: "orphan" });
    expect(await held(f)).toEqual([goneEntry]);
  });

  test("an entry that names no run or task is left pending, and no next run is returned", async () => {
    const f = journalFixture(server);
    const clientId = await liveClient(f);
    const task = await acceptTask(f, clientId);
    const claim = await readAndClaim(f, task);
    const junk = (await f.redis.xadd(f.keys.queue(0), "*", "something", "else")) ?? "";
    const result = await endAskingNext(f, claim, task);
    expect(result).toEqual({ ok: true, rev: expect.any(Number), acked: true, oldestDeferred: null });
    expect(await held(f)).toEqual([junk]);
  });

  test("reads the shards in the order asked: the first with a new entry answers", async () => {
    const f = journalFixture(server, {}, 2);
    const byShard = new Map<number, string>();
    while (byShard.size < 2) {
      const clientId = await liveClient(f);
      if (!byShard.has(f.keys.shardOf(clientId))) byShard.set(f.keys.shardOf(clientId), clientId);
    }
    const [zero, one] = [byShard.get(0) ?? "", byShard.get(1) ?? ""];
    const ending = await acceptTask(f, zero);
    const claim = await readAndClaim(f, ending);
    const inZero = await acceptTask(f, zero);
    const inOne = await acceptTask(f, one);

    const first = await endAskingNext(f, claim, ending, next([1, 0]));
    if (!first.ok) throw new Error(first.reason);
    expect(first.next?.entry).toMatchObject({ shard: 1, taskId: inOne.taskId, clientId: one });
    const oneClaim = first.next?.claim as Claim;
    expect(oneClaim).toMatchObject({ shard: 1, taskId: inOne.taskId, fence: 1 });
    // shard 1 has no new entry left: its end, asking for shard 1 first, finds shard 0's
    const second = await move(f, oneClaim, inOne, "TASK_STATE_COMPLETED", {
      ackEntry: oneClaim.entryId,
      next: next([1, 0]),
    });
    if (!second.ok) throw new Error(second.reason);
    expect(second.next?.entry).toMatchObject({ shard: 0, taskId: inZero.taskId, clientId: zero });
    expect(await f.redis.hget(f.keys.run(0, inZero.taskId), "owner")).toBe(OWNER);
  });

  test("a step without its own acknowledgement claims no next run", async () => {
    const f = journalFixture(server);
    const clientId = await liveClient(f);
    const task = await acceptTask(f, clientId);
    await acceptTask(f, clientId);
    const claim = await readAndClaim(f, task);
    const ledger = new RunLedger(f.redis, f.keys);
    // without ackEntry the step acknowledges nothing, so it claims nothing either
    const result = await ledger.transition({
      claim,
      kind: "status",
      state: "TASK_STATE_COMPLETED",
      status: { state: "TASK_STATE_COMPLETED", timestamp: new Date().toISOString() },
      event: {
        statusUpdate: { taskId: task.taskId, contextId: task.contextId, status: { state: "TASK_STATE_COMPLETED" } },
      },
      retentionSeconds: 60,
      journalRetentionSeconds: 0,
      next: next(),
    });
    expect(result).toEqual({ ok: true, rev: expect.any(Number) });
    expect(await held(f)).toEqual([claim.entryId]);
  });
});

// The lost-run repair against a real redis-server: the requeueLost script (each refusal changes nothing; a run whose
// entry is gone gets a new one, queued with its tries kept) and LostRuns.repair, which finds such runs through the
// profiles' sets of queued and running tasks.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { LostRuns, QUEUE_GROUP } from "../../../src/journal/index.ts";
import { REQUEUE_LOST } from "../../../src/journal/lua/requeue-lost.ts";
import { type JournalFixture, journalFixture } from "../../support/journal.ts";
import { redisTimeMs, startRedis, type TestRedis } from "../../support/redis.ts";
import {
  type AcceptedTask,
  acceptTask,
  claimTask,
  currentEntry,
  dumpUnder,
  liveClient,
  move,
  PROFILE,
} from "./helpers.ts";

let server: TestRedis;
let f: JournalFixture;
let clientId: string;
let lost: LostRuns;
beforeAll(async () => {
  server = await startRedis();
  f = journalFixture(server);
  clientId = await liveClient(f);
  lost = new LostRuns(f.redis, f.keys);
});
afterAll(async () => {
  await server.stop();
});

/** Delivers the task's current entry to `consumer` (as XREADGROUP does for an actor) and returns its id. */
async function deliver(task: AcceptedTask, consumer = "a1"): Promise<string> {
  const entry = await currentEntry(f, task);
  await f.redis.xreadgroup("GROUP", QUEUE_GROUP, consumer, "COUNT", 1000, "STREAMS", f.keys.queue(0), ">");
  return entry;
}

/** Deletes the entry from the queue and the group's pending list: what a failover that lost writes can leave. */
async function loseEntry(entry: string): Promise<void> {
  await f.redis.xack(f.keys.queue(0), QUEUE_GROUP, entry);
  await f.redis.xdel(f.keys.queue(0), entry);
}

/** A task claimed (running, WORKING) with a lease that lapsed; its entry is still in the queue and pending. */
async function lapsedRun(): Promise<{ task: AcceptedTask; entry: string }> {
  const task = await acceptTask(f, clientId);
  const entry = await deliver(task);
  const claim = await claimTask(f, task, 1);
  expect(await move(f, claim, task, "TASK_STATE_WORKING")).toMatchObject({ ok: true });
  const runKey = f.keys.run(0, task.taskId);
  // the lease (1 ms) lapses at the next millisecond of Redis's clock
  const lease = Number(await f.redis.hget(runKey, "lease"));
  while ((await redisTimeMs(f.redis)) <= lease) await Bun.sleep(1);
  return { task, entry };
}

async function queueIds(): Promise<string[]> {
  return (await f.redis.xrange(f.keys.queue(0), "-", "+")).map(([id]) => id);
}

/** The new entry id, or the refusal's code. */
async function requeue(task: AcceptedTask): Promise<string> {
  const k = f.keys;
  const keys = { run: k.run(0, task.taskId), queue: k.queue(0), clientRunning: k.clientRunning(0, task.clientId) };
  const reply = await REQUEUE_LOST.run(f.redis, keys, { group: QUEUE_GROUP });
  return reply.ok ? reply.entryId : reply.code;
}

/** Runs the script and expects the refusal `code` with nothing changed. */
async function refused(task: AcceptedTask, code: string): Promise<void> {
  const before = await dumpUnder(f.redis, f.prefix);
  expect(await requeue(task)).toBe(code);
  expect(await dumpUnder(f.redis, f.prefix)).toEqual(before);
}

describe("requeueLost", () => {
  test("a running run past its lease whose entry is gone is queued under a new entry; its next claim counts a try", async () => {
    const { task, entry } = await lapsedRun();
    await loseEntry(entry);
    const runKey = f.keys.run(0, task.taskId);
    const running = f.keys.clientRunning(0, clientId);
    expect(await f.redis.sismember(running, task.taskId)).toBe(1);
    const before = await f.redis.hgetall(runKey);
    const added = await requeue(task);
    expect(String(added)).toMatch(/^\d+-\d+$/);
    const after = await f.redis.hgetall(runKey);
    expect(after).toEqual({ ...before, state: "queued", owner: "", lease: "0", entry: String(added) });
    expect(await f.redis.sismember(running, task.taskId)).toBe(0);
    expect(await f.redis.hget(f.keys.task(0, task.taskId), "state")).toBe("TASK_STATE_WORKING");
    const [row] = await f.redis.xrange(f.keys.queue(0), String(added), String(added));
    expect(row?.[1]).toEqual([
      "run",
      before.id ?? "",
      "task",
      task.taskId,
      "client",
      clientId,
      "prof",
      PROFILE,
      "ctx",
      task.contextId,
    ]);
    // delivered like any entry, it is claimed as a reclaimed run would be: a new token, the try counted
    await refused(task, "entry-present");
    await deliver(task, "a2");
    const claim = await claimTask(f, task, 30_000, "a2");
    expect([claim.fence, claim.tries, claim.exhausted]).toEqual([2, 2, false]);
  });

  test("a running run whose entry is in the queue but no longer pending gets a new entry; the old one is deleted", async () => {
    const { task, entry } = await lapsedRun();
    await f.redis.xack(f.keys.queue(0), QUEUE_GROUP, entry);
    const added = String(await requeue(task));
    expect(await queueIds()).toContain(added);
    expect(await queueIds()).not.toContain(entry);
    expect(await f.redis.hmget(f.keys.run(0, task.taskId), "state", "entry")).toEqual(["queued", added]);
  });

  test("a queued run whose entry is not in the queue gets a new one", async () => {
    const task = await acceptTask(f, clientId);
    const entry = await currentEntry(f, task);
    await f.redis.xdel(f.keys.queue(0), entry);
    const added = String(await requeue(task));
    expect(await queueIds()).toContain(added);
    expect(await f.redis.hmget(f.keys.run(0, task.taskId), "state", "entry")).toEqual(["queued", added]);
  });

  test("refusals change nothing: no run (-1), nothing to queue (-2), a live lease (-3), the entry still there (-4)", async () => {
    await refused({ clientId, taskId: "no-such-task", contextId: "" }, "missing");

    const done = await acceptTask(f, clientId);
    await deliver(done);
    const claim = await claimTask(f, done);
    expect(await move(f, claim, done, "TASK_STATE_COMPLETED")).toMatchObject({ ok: true });
    await refused(done, "not-queued");

    const leased = await acceptTask(f, clientId);
    const leasedEntry = await deliver(leased);
    await claimTask(f, leased, 60_000);
    await loseEntry(leasedEntry);
    await refused(leased, "leased");

    const queued = await acceptTask(f, clientId);
    await refused(queued, "entry-present");
    await deliver(queued);
    await refused(queued, "entry-present");

    const { task: pending } = await lapsedRun();
    await refused(pending, "entry-present");
  });
});

describe("LostRuns.repair", () => {
  test("finds the lost runs among a shard's queued and running tasks and leaves the others alone", async () => {
    const { task: lostRunning, entry } = await lapsedRun();
    await loseEntry(entry);
    const lostQueued = await acceptTask(f, clientId);
    await f.redis.xdel(f.keys.queue(0), await currentEntry(f, lostQueued));
    const { task: reclaimable } = await lapsedRun();
    const waiting = await acceptTask(f, clientId);
    const reclaimableEntry = await currentEntry(f, reclaimable);
    const waitingEntry = await currentEntry(f, waiting);

    expect(await lost.repair(0, [PROFILE, "other"], 100)).toBe(2);
    expect(await queueIds()).toContain(await currentEntry(f, lostRunning));
    expect(await queueIds()).toContain(await currentEntry(f, lostQueued));
    expect(await currentEntry(f, reclaimable)).toBe(reclaimableEntry);
    expect(await currentEntry(f, waiting)).toBe(waitingEntry);
    // found once: the runs have their entries now
    expect(await lost.repair(0, [PROFILE], 100)).toBe(0);
    expect(await lost.repair(0, [], 100)).toBe(0);
  });
});

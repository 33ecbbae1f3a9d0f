// The worker-side scripts against a real redis-server: claim (each refusal changes nothing), renew, release,
// dead-letter, ack and the liveness beat.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { type ClaimRefusal, QUEUE_GROUP } from "../../../src/journal/index.ts";
import { DEAD_LETTER } from "../../../src/journal/lua/dead-letter.ts";
import { RELEASE } from "../../../src/journal/lua/release.ts";
import { type JournalFixture, journalFixture } from "../../support/journal.ts";
import { startRedis, type TestRedis } from "../../support/redis.ts";
import {
  type AcceptedTask,
  acceptTask,
  claimTask,
  currentEntry,
  dumpUnder,
  liveClient,
  move,
  PROFILE,
  RETENTION,
  redisSeconds,
} from "./helpers.ts";

let server: TestRedis;
let f: JournalFixture;
let clientId: string;
beforeAll(async () => {
  server = await startRedis();
  f = journalFixture(server);
  clientId = await liveClient(f);
});
afterAll(async () => {
  await server.stop();
});

/** Claims with `entryId` and expects a refusal that leaves every key and value as it was. */
async function refusedClaim(task: AcceptedTask, entryId: string, expected: ClaimRefusal): Promise<void> {
  const before = await dumpUnder(f.redis, f.prefix);
  expect(await f.ledger.claim(0, task.taskId, entryId, "a9", 30_000, 3)).toBe(expected);
  expect(await dumpUnder(f.redis, f.prefix)).toEqual(before);
}

/** Reads the new queue entries as `consumer`, as an actor does, and returns the one of `task`. */
async function readQueue(consumer: string, task: AcceptedTask): Promise<string> {
  const reply = (await f.redis.xreadgroup(
    "GROUP",
    QUEUE_GROUP,
    consumer,
    "COUNT",
    1000,
    "STREAMS",
    f.keys.queue(0),
    ">",
  )) as [string, [string, string[]][]][] | null;
  const found = (reply?.[0]?.[1] ?? []).find(([, fields]) => fields[fields.indexOf("task") + 1] === task.taskId);
  if (!found) throw new Error(`no queue entry for ${task.taskId}`);
  return found[0];
}

describe("claim", () => {
  test("returns fence, tries, flags, task state, client and profile, and takes the lease", async () => {
    const task = await acceptTask(f, clientId);
    const entryId = await currentEntry(f, task);
    const before = Date.now();
    const claim = await f.ledger.claim(0, task.taskId, entryId, "a1", 30_000, 3);
    expect(claim).toEqual({
      shard: 0,
      taskId: task.taskId,
      entryId,
      fence: 1,
      tries: 1,
      exhausted: false,
      cancelRequested: false,
      state: "TASK_STATE_SUBMITTED",
      clientId,
      profile: PROFILE,
    });
    const run = await f.redis.hgetall(f.keys.run(0, task.taskId));
    expect(run).toMatchObject({ state: "running", owner: "a1", fence: "1", tries: "1" });
    expect(Number(run.lease)).toBeGreaterThanOrEqual(before + 29_000);
  });

  test("a reclaim after the lease expired bumps the token; past maxAttempts it is exhausted", async () => {
    const task = await acceptTask(f, clientId);
    const entryId = await currentEntry(f, task);
    const tries = [];
    for (let i = 0; i < 3; i++) {
      const claim = await f.ledger.claim(0, task.taskId, entryId, `a${i}`, 20, 2);
      if (typeof claim === "string") throw new Error(claim);
      tries.push([claim.fence, claim.tries, claim.exhausted]);
      await Bun.sleep(30);
    }
    expect(tries).toEqual([
      [1, 1, false],
      [2, 2, false],
      [3, 3, true],
    ]);
  });

  test("carries the cancel flag of a cancel requested while the run was held", async () => {
    const task = await acceptTask(f, clientId);
    await claimTask(f, task, 20);
    expect(await f.journal.cancel(clientId, task.taskId, PROFILE, RETENTION)).toEqual({ canceledNow: false });
    await Bun.sleep(30);
    expect((await claimTask(f, task)).cancelRequested).toBe(true);
  });

  test("-1: an entry whose run or task is gone is an orphan", async () => {
    await refusedClaim({ clientId, taskId: "01NOSUCHTASK", contextId: "c" }, "1-1", "orphan");
    const task = await acceptTask(f, clientId);
    await f.redis.del(f.keys.task(0, task.taskId));
    await refusedClaim(task, await currentEntry(f, task), "orphan");
  });

  test("-2: a terminal task, an interrupted run and a finished run have nothing to run", async () => {
    const done = await acceptTask(f, clientId);
    const entry = await currentEntry(f, done);
    await move(f, await claimTask(f, done), done, "TASK_STATE_COMPLETED");
    await refusedClaim(done, entry, "finished");
    const waiting = await acceptTask(f, clientId);
    const waitingEntry = await currentEntry(f, waiting);
    await move(f, await claimTask(f, waiting), waiting, "TASK_STATE_INPUT_REQUIRED");
    await refusedClaim(waiting, waitingEntry, "finished");
    const canceled = await acceptTask(f, clientId);
    const canceledEntry = await currentEntry(f, canceled);
    await f.journal.cancel(clientId, canceled.taskId, PROFILE, RETENTION);
    await refusedClaim(canceled, canceledEntry, "finished");
  });

  test("-3: an entry that is not the run's current one is stale", async () => {
    const task = await acceptTask(f, clientId);
    const first = await claimTask(f, task);
    expect(await f.ledger.release(first)).toBe(true);
    await refusedClaim(task, first.entryId, "stale");
    await refusedClaim(task, "0-1", "stale");
  });

  test("-4: a run leased by a live owner is not claimed again", async () => {
    const task = await acceptTask(f, clientId);
    const claim = await claimTask(f, task);
    await refusedClaim(task, claim.entryId, "leased");
  });
});

describe("claim that reads the task, and the run's start in its first step", () => {
  const working = (task: AcceptedTask, at = new Date().toISOString()) => {
    const status = { state: "TASK_STATE_WORKING" as const, timestamp: at };
    return { status, event: { statusUpdate: { taskId: task.taskId, contextId: task.contextId, status } } };
  };
  const artifactEvent = (task: AcceptedTask) => ({
    artifactUpdate: {
      taskId: task.taskId,
      contextId: task.contextId,
      artifact: { artifactId: "a", parts: [{ text: "out" }] },
    },
  });

  test("returns the task as it is and writes nothing to it: no revision, no journal entry", async () => {
    const task = await acceptTask(f, clientId, { text: "start me" });
    const entryId = await currentEntry(f, task);
    const before = await f.redis.hgetall(f.keys.task(0, task.taskId));
    const journalBefore = await f.redis.xlen(f.keys.journal(0, task.taskId));
    const claim = await f.ledger.claim(0, task.taskId, entryId, "a1", 30_000, 3, clientId, true);
    if (typeof claim === "string") throw new Error(claim);
    expect(claim).toMatchObject({ fence: 1, tries: 1, state: "TASK_STATE_SUBMITTED", clientId, profile: PROFILE });
    expect(claim.record).toMatchObject({ id: task.taskId, contextId: task.contextId, state: "TASK_STATE_SUBMITTED" });
    expect(claim.record?.rev).toBe(1);
    expect(claim.record?.history[0]?.parts).toEqual([{ text: "start me" }]);
    expect(await f.redis.hgetall(f.keys.task(0, task.taskId))).toEqual(before);
    expect(await f.redis.xlen(f.keys.journal(0, task.taskId))).toBe(journalBefore);
  });

  test("a run that ends at once is one step: WORKING, its output and its end journaled in order, one notice", async () => {
    const task = await acceptTask(f, clientId, { text: "answer at once" });
    const claim = await f.ledger.claim(0, task.taskId, await currentEntry(f, task), "a1", 30_000, 3, clientId, true);
    if (typeof claim === "string") throw new Error(claim);
    const listener = server.client();
    await listener.subscribe(f.keys.eventsChannel());
    const notices: string[] = [];
    listener.on("message", (_channel: string, notice: string) => {
      if (notice.startsWith(task.taskId)) notices.push(notice);
    });
    const start = working(task);
    const at = new Date(Date.now() + 5000).toISOString();
    const result = await move(f, claim, task, "TASK_STATE_COMPLETED", {
      lead: start,
      artifactEvents: [artifactEvent(task)],
      status: { state: "TASK_STATE_COMPLETED", timestamp: at },
    });
    expect(result).toEqual({ ok: true, rev: 4 });
    const journal = await f.redis.xrange(f.keys.journal(0, task.taskId), "-", "+");
    const events = journal.map(([, entry]) => [Number(entry[1]), JSON.parse(entry[3] ?? "{}")]);
    expect(events.slice(-3)).toEqual([
      [2, start.event],
      [3, artifactEvent(task)],
      [
        4,
        { statusUpdate: { taskId: task.taskId, contextId: task.contextId, status: { state: "TASK_STATE_COMPLETED" } } },
      ],
    ]);
    const stored = await f.redis.hmget(f.keys.task(0, task.taskId), "state", "rev", "st", "ts");
    expect(stored).toEqual([
      "TASK_STATE_COMPLETED",
      "4",
      JSON.stringify({ state: "TASK_STATE_COMPLETED", timestamp: at }),
      String(Date.parse(at)),
    ]);
    // the task moved in its indexes once, to its end's time, and is listed under COMPLETED only
    expect(Number(await f.redis.zscore(f.keys.clientTasks(0, clientId, PROFILE), task.taskId))).toBe(Date.parse(at));
    expect(await f.redis.zscore(f.keys.stateTasks(0, clientId, PROFILE, "TASK_STATE_COMPLETED"), task.taskId)).toBe(
      String(Date.parse(at)),
    );
    for (const state of ["TASK_STATE_SUBMITTED", "TASK_STATE_WORKING"] as const) {
      expect(await f.redis.zscore(f.keys.stateTasks(0, clientId, PROFILE, state), task.taskId)).toBeNull();
    }
    // a PING answered after the PUBLISH: every notice of the step has reached the listener by then
    await listener.ping();
    expect(notices).toEqual([`${task.taskId} TASK_STATE_COMPLETED 4`]);
    listener.disconnect();
  });

  test("a queued task has no journal, and a run that ends at once with its journal kept 0 s never creates one", async () => {
    const own = await liveClient(f);
    const task = await acceptTask(f, own, { text: "no journal" });
    const journalKey = f.keys.journal(0, task.taskId);
    expect(await f.redis.exists(journalKey)).toBe(0);
    const claim = await f.ledger.claim(0, task.taskId, await currentEntry(f, task), "a1", 30_000, 3, own, true);
    if (typeof claim === "string") throw new Error(claim);
    const result = await move(f, claim, task, "TASK_STATE_COMPLETED", {
      lead: working(task),
      artifactEvents: [artifactEvent(task)],
      journalRetentionSeconds: 0,
    });
    expect(result).toEqual({ ok: true, rev: 4 });
    expect(await f.redis.exists(journalKey)).toBe(0);
    // nothing was journaled, so nothing is counted for a journal: the client's counter is its one task's bytes
    const [bytes, jbytes] = await f.redis.hmget(f.keys.task(0, task.taskId), "bytes", "jbytes");
    expect(jbytes).toBeNull();
    expect(Number(bytes)).toBeGreaterThan(0);
    expect(await f.redis.hget(f.keys.bytes(0), `client:${own}`)).toBe(bytes ?? null);
  });

  test("a start with output only leaves the task WORKING with the start's status and time", async () => {
    const task = await acceptTask(f, clientId);
    const claim = await f.ledger.claim(0, task.taskId, await currentEntry(f, task), "a1", 30_000, 3, clientId, true);
    if (typeof claim === "string") throw new Error(claim);
    const at = new Date(Date.now() + 5000).toISOString();
    const start = working(task, at);
    const result = await f.ledger.transition({
      claim,
      kind: "artifact",
      state: "TASK_STATE_WORKING",
      event: artifactEvent(task),
      lead: start,
      ...RETENTION,
    });
    expect(result).toEqual({ ok: true, rev: 3 });
    const stored = await f.redis.hmget(f.keys.task(0, task.taskId), "state", "st", "ts");
    expect(stored).toEqual(["TASK_STATE_WORKING", JSON.stringify(start.status), String(Date.parse(at))]);
    const indexes = [
      f.keys.clientTasks(0, clientId, PROFILE),
      f.keys.contextTasks(0, clientId, PROFILE, task.contextId),
      f.keys.stateTasks(0, clientId, PROFILE, "TASK_STATE_WORKING"),
    ];
    for (const index of indexes) expect(Number(await f.redis.zscore(index, task.taskId))).toBe(Date.parse(at));
    const journal = await f.redis.xrange(f.keys.journal(0, task.taskId), "-", "+");
    expect(journal.slice(-2).map(([, entry]) => JSON.parse(entry[3] ?? "{}"))).toEqual([
      start.event,
      artifactEvent(task),
    ]);
  });

  test("a start is refused on an interrupted task, and writes nothing", async () => {
    const task = await acceptTask(f, clientId);
    const claim = await claimTask(f, task);
    await move(f, claim, task, "TASK_STATE_INPUT_REQUIRED");
    // the run waits for input: make it look running again, as only a broken writer could, to reach the state check
    await f.redis.hset(f.keys.run(0, task.taskId), "state", "running");
    const before = await dumpUnder(f.redis, f.prefix);
    const result = await move(f, claim, task, "TASK_STATE_COMPLETED", { lead: working(task) });
    expect(result).toEqual({ ok: false, reason: "illegal" });
    expect(await dumpUnder(f.redis, f.prefix)).toEqual(before);
  });

  test("an exhausted or cancel-requested claim does not return the task, and leaves it as it was", async () => {
    const task = await acceptTask(f, clientId);
    await claimTask(f, task, 20);
    expect(await f.journal.cancel(clientId, task.taskId, PROFILE, RETENTION)).toEqual({ canceledNow: false });
    await Bun.sleep(30);
    const claim = await f.ledger.claim(0, task.taskId, await currentEntry(f, task), "a2", 30_000, 3, clientId, true);
    if (typeof claim === "string") throw new Error(claim);
    expect(claim.cancelRequested).toBe(true);
    expect(claim.record).toBeUndefined();
    expect(await f.redis.hget(f.keys.task(0, task.taskId), "state")).toBe("TASK_STATE_SUBMITTED");
  });
});

describe("renew", () => {
  test("0: extends the lease and resets the idle time of the held queue entry", async () => {
    const task = await acceptTask(f, clientId);
    const entryId = await readQueue("r1", task);
    expect(entryId).toBe(await currentEntry(f, task));
    const claim = await claimTask(f, task, 1_000, "r1");
    const leaseBefore = Number(await f.redis.hget(f.keys.run(0, task.taskId), "lease"));
    await Bun.sleep(60);
    expect(await f.ledger.renew(claim, 60_000, "r1")).toBe("ok");
    expect(Number(await f.redis.hget(f.keys.run(0, task.taskId), "lease"))).toBeGreaterThan(leaseBefore + 50_000);
    const pending = (await f.redis.xpending(f.keys.queue(0), QUEUE_GROUP, "-", "+", 1000, "r1")) as [
      string,
      string,
      number,
      number,
    ][];
    const mine = pending.find(([id]) => id === entryId);
    expect(mine?.[2]).toBeLessThan(50);
  });

  test("1: renews and reports a cancel request", async () => {
    const task = await acceptTask(f, clientId);
    const claim = await claimTask(f, task);
    await f.journal.cancel(clientId, task.taskId, PROFILE, RETENTION);
    expect(await f.ledger.renew(claim, 30_000, "a1")).toBe("cancel");
    expect(await move(f, claim, task, "TASK_STATE_CANCELED")).toEqual({ ok: true, rev: 2 });
  });

  test("-1: a stale token or a finished run has lost its lease, and nothing changes", async () => {
    const task = await acceptTask(f, clientId);
    const first = await claimTask(f, task, 20, "a1");
    await Bun.sleep(30);
    const second = await claimTask(f, task, 30_000, "a2");
    let before = await dumpUnder(f.redis, f.prefix);
    expect(await f.ledger.renew(first, 30_000, "a1")).toBe("lost");
    expect(await dumpUnder(f.redis, f.prefix)).toEqual(before);
    await move(f, second, task, "TASK_STATE_COMPLETED");
    before = await dumpUnder(f.redis, f.prefix);
    expect(await f.ledger.renew(second, 30_000, "a2")).toBe("lost");
    expect(await dumpUnder(f.redis, f.prefix)).toEqual(before);
  });
});

describe("release, dead letter, ack and beat", () => {
  test("release re-queues the run under a new entry without counting the try; a stale token is refused", async () => {
    const task = await acceptTask(f, clientId);
    const entryId = await readQueue("rel", task);
    const claim = await claimTask(f, task, 30_000, "rel");
    expect(claim.entryId).toBe(entryId);
    expect(await f.redis.sismember(f.keys.clientRunning(0, clientId), task.taskId)).toBe(1);
    expect(await f.ledger.release(claim)).toBe(true);
    expect(await f.redis.sismember(f.keys.clientRunning(0, clientId), task.taskId)).toBe(0);
    const run = await f.redis.hgetall(f.keys.run(0, task.taskId));
    expect(run).toMatchObject({ state: "queued", owner: "", lease: "0", tries: "0", fence: "1" });
    expect(run.entry).not.toBe(entryId);
    const queue = await f.redis.xrange(f.keys.queue(0), "-", "+");
    expect(queue.map(([id]) => id)).toContain(run.entry ?? "");
    expect(queue.map(([id]) => id)).not.toContain(entryId);
    const pending = (await f.redis.xpending(f.keys.queue(0), QUEUE_GROUP, "-", "+", 100)) as [string][];
    expect(pending.map(([id]) => id)).not.toContain(entryId);
    const before = await dumpUnder(f.redis, f.prefix);
    expect(await f.ledger.release(claim)).toBe(false);
    expect(await dumpUnder(f.redis, f.prefix)).toEqual(before);
    const again = await claimTask(f, task);
    expect([again.fence, again.tries]).toEqual([2, 1]);
    // the script itself answers with the new entry id
    const reply = await RELEASE.run(
      f.redis,
      { run: f.keys.run(0, task.taskId), queue: f.keys.queue(0), clientRunning: f.keys.clientRunning(0, clientId) },
      { fence: again.fence, group: QUEUE_GROUP, entryId: again.entryId },
    );
    expect(reply).toEqual({ ok: true, entryId: expect.stringMatching(/^\d+-\d+$/) });
    expect(reply).toEqual({ ok: true, entryId: await currentEntry(f, task) });
  });

  test("deadLetter moves the entry to the dead stream with its reason and returns the dead entry id", async () => {
    const task = await acceptTask(f, clientId);
    const entryId = await readQueue("dl", task);
    const runId = (await f.redis.hget(f.keys.run(0, task.taskId), "id")) ?? "";
    const deadId = await DEAD_LETTER.run(
      f.redis,
      { queue: f.keys.queue(0), dead: f.keys.dead(0) },
      { group: QUEUE_GROUP, entryId, runId, taskId: task.taskId, reason: "attempts exhausted", maxLength: 10_000 },
    );
    const dead = await f.redis.xrange(f.keys.dead(0), "-", "+");
    expect(dead.at(-1)).toEqual([
      deadId,
      ["run", runId, "task", task.taskId, "reason", "attempts exhausted", "entry", entryId],
    ]);
    expect((await f.redis.xrange(f.keys.queue(0), "-", "+")).map(([id]) => id)).not.toContain(entryId);
    const pending = (await f.redis.xpending(f.keys.queue(0), QUEUE_GROUP, "-", "+", 100)) as [string][];
    expect(pending.map(([id]) => id)).not.toContain(entryId);

    const other = await acceptTask(f, clientId);
    const otherEntry = await readQueue("dl", other);
    await f.ledger.deadLetter(0, otherEntry, "run-x", other.taskId, "poison");
    expect((await f.redis.xrange(f.keys.dead(0), "-", "+")).at(-1)?.[1]).toContain("poison");
  });

  test("ack acknowledges and deletes a finished entry", async () => {
    const task = await acceptTask(f, clientId);
    const entryId = await readQueue("ack", task);
    await f.ledger.ack(0, entryId);
    expect((await f.redis.xrange(f.keys.queue(0), "-", "+")).map(([id]) => id)).not.toContain(entryId);
    const pending = (await f.redis.xpending(f.keys.queue(0), QUEUE_GROUP, "-", "+", 100)) as [string][];
    expect(pending.map(([id]) => id)).not.toContain(entryId);
  });

  test("heartbeat records Redis's own time with the TTL and returns it", async () => {
    const recorded = await f.ledger.beat(0, 77);
    const now = await redisSeconds(f.redis);
    expect(Math.abs(recorded - now)).toBeLessThanOrEqual(1);
    expect(await f.redis.get(f.keys.live(0))).toBe(String(recorded));
    const ttl = await f.redis.ttl(f.keys.live(0));
    expect(ttl).toBeGreaterThan(70);
    expect(ttl).toBeLessThanOrEqual(77);
  });
});

// The running-run limit against a real redis-server: a claim past the client's limit defers the run (no try counted,
// the entry acknowledged and deleted, the run in the client's deferred set); promote and wakeDeferred queue it again
// when a slot is free; reclaims are never deferred; cancel and release keep the sets right. Each documented return of
// claim and promote.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { QUEUE_GROUP, RunLedger } from "../../../src/journal/index.ts";
import { PROMOTE } from "../../../src/journal/lua/promote.ts";
import { tenancyViolations } from "../../faults/invariants.ts";
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
} from "./helpers.ts";

let server: TestRedis;
beforeAll(async () => {
  server = await startRedis();
});
afterAll(async () => {
  await server.stop();
});

/** Delivers every new queue entry of shard 0 to consumer `a1` (as XREADGROUP does for an actor); returns their ids. */
async function deliver(f: JournalFixture): Promise<string[]> {
  const reply = (await f.redis.xreadgroup("GROUP", QUEUE_GROUP, "a1", "COUNT", 100, "STREAMS", f.keys.queue(0), ">")) as
    | [string, [string, string[]][]][]
    | null;
  return (reply?.[0]?.[1] ?? []).map(([id]) => id);
}

/** A ledger whose clients may run `max` runs at once unless their record says otherwise. */
function ledger(f: JournalFixture, max: number): RunLedger {
  return new RunLedger(f.redis, f.keys, { maxRunningTasks: max });
}

async function claim(f: JournalFixture, l: RunLedger, task: AcceptedTask) {
  return await l.claim(0, task.taskId, await currentEntry(f, task), "a1", 30_000, 3, task.clientId);
}

describe("claim at the limit", () => {
  test("0 deferred: no try, entry acknowledged and deleted, run in the client's deferred set; others run", async () => {
    const f = journalFixture(server);
    const clientId = await liveClient(f);
    const otherClient = await liveClient(f);
    const l = ledger(f, 1);
    const first = await acceptTask(f, clientId);
    const second = await acceptTask(f, clientId);
    const stranger = await acceptTask(f, otherClient);
    await deliver(f);
    const running = await claim(f, l, first);
    expect(typeof running).toBe("object");
    expect(await f.redis.smembers(f.keys.clientRunning(0, clientId))).toEqual([first.taskId]);

    const entry = await currentEntry(f, second);
    expect(await claim(f, l, second)).toBe("deferred");
    const run = await f.redis.hgetall(f.keys.run(0, second.taskId));
    expect(run).toMatchObject({ state: "deferred", entry: "", tries: "0", fence: "0" });
    expect(await f.redis.zscore(f.keys.clientDeferred(0, clientId), second.taskId)).toBe(run.deferred ?? "none");
    expect(await f.redis.smembers(f.keys.deferredClients(0))).toEqual([clientId]);
    expect((await f.redis.xrange(f.keys.queue(0), "-", "+")).map(([id]) => id)).not.toContain(entry);
    const pending = (await f.redis.xpending(f.keys.queue(0), QUEUE_GROUP, "-", "+", 100)) as [string][];
    expect(pending.map(([id]) => id)).not.toContain(entry);
    // the deferred task still counts toward the client's queued + running tasks
    expect(await f.redis.sismember(f.keys.clientActive(0, clientId), second.taskId)).toBe(1);
    // another client's run is claimed at once
    expect(typeof (await claim(f, l, stranger))).toBe("object");
    expect(await tenancyViolations(f.redis, f.prefix)).toEqual([]);
  });

  test("the record's maxrun wins over the default; 0 on the record means no limit", async () => {
    const f = journalFixture(server);
    const l = ledger(f, 1);
    const roomy = await liveClient(f, { maxRunningTasks: 2 });
    const unlimited = await liveClient(f, { maxRunningTasks: 0 });
    const roomyTasks = [await acceptTask(f, roomy), await acceptTask(f, roomy), await acceptTask(f, roomy)];
    const free = [await acceptTask(f, unlimited), await acceptTask(f, unlimited), await acceptTask(f, unlimited)];
    await deliver(f);
    const outcomes = [];
    for (const task of roomyTasks) outcomes.push(typeof (await claim(f, l, task)));
    expect(outcomes).toEqual(["object", "object", "string"]);
    for (const task of free) expect(typeof (await claim(f, l, task))).toBe("object");
  });

  test("a reclaimed run (lease expired) is never deferred; -1 when the entry names another client", async () => {
    const f = journalFixture(server);
    const clientId = await liveClient(f);
    const l = ledger(f, 1);
    const task = await acceptTask(f, clientId);
    await deliver(f);
    const first = await l.claim(0, task.taskId, await currentEntry(f, task), "a1", 1, 3, clientId);
    expect(typeof first).toBe("object");
    await Bun.sleep(5); // past the 1 ms lease
    // at a limit of 1 with its own slot still counted, the reclaim goes through
    const again = await l.claim(0, task.taskId, await currentEntry(f, task), "a2", 30_000, 3, clientId);
    expect(again).toMatchObject({ fence: 2, tries: 2 });
    const before = await dumpUnder(f.redis, f.prefix);
    expect(await l.claim(0, task.taskId, await currentEntry(f, task), "a3", 30_000, 3, "someone-else")).toBe("orphan");
    expect(await dumpUnder(f.redis, f.prefix)).toEqual(before);
    // without the client on the entry (an entry older than that field) the ledger reads it from the task
    expect(await l.claim(0, task.taskId, await currentEntry(f, task), "a3", 30_000, 3)).toBe("leased");
  });
});

function promoteScript(f: JournalFixture, task: AcceptedTask, max: number) {
  const k = f.keys;
  return PROMOTE.run(
    f.redis,
    {
      client: k.client(0, task.clientId),
      clientRunning: k.clientRunning(0, task.clientId),
      clientDeferred: k.clientDeferred(0, task.clientId),
      deferred: k.deferredClients(0),
      queue: k.queue(0),
      run: k.run(0, task.taskId),
      task: k.task(0, task.taskId),
    },
    { taskId: task.taskId, clientId: task.clientId, clientMaxRunningTasks: max },
  );
}

describe("promote and wakeDeferred", () => {
  test("an entry id once a slot is free; -2 while none is; -1 when not deferred; 0 for a stale member", async () => {
    const f = journalFixture(server);
    const clientId = await liveClient(f);
    const l = ledger(f, 1);
    const first = await acceptTask(f, clientId);
    const second = await acceptTask(f, clientId);
    await deliver(f);
    const held = await claim(f, l, first);
    expect(await claim(f, l, second)).toBe("deferred");

    let dump = await dumpUnder(f.redis, f.prefix);
    expect(await promoteScript(f, second, 1)).toEqual({ ok: false, code: "noFreeSlot" });
    expect(await promoteScript(f, first, 1)).toEqual({ ok: false, code: "notAmongDeferred" });
    expect(await dumpUnder(f.redis, f.prefix)).toEqual(dump);

    if (typeof held === "string") throw new Error("first claim refused");
    await move(f, held, first, "TASK_STATE_COMPLETED");
    const promoted = await promoteScript(f, second, 1);
    expect(promoted).toEqual({ ok: true, entryId: expect.stringMatching(/^\d+-\d+$/) });
    const entry = promoted.ok ? promoted.entryId : "";
    expect(await f.redis.hgetall(f.keys.run(0, second.taskId))).toMatchObject({
      state: "queued",
      entry,
    });
    expect(await f.redis.exists(f.keys.clientDeferred(0, clientId), f.keys.deferredClients(0))).toBe(0);
    const queued = await f.redis.xrange(f.keys.queue(0), entry, entry);
    const runId = String(await f.redis.hget(f.keys.run(0, second.taskId), "id"));
    expect(queued[0]?.[1]).toEqual([
      "run",
      runId,
      "task",
      second.taskId,
      "client",
      clientId,
      "prof",
      PROFILE,
      "ctx",
      second.contextId,
    ]);
    // the queued entry is claimed like any other, its first and only try
    await deliver(f);
    expect(await claim(f, l, second)).toMatchObject({ fence: 1, tries: 1 });

    // a member whose run is not deferred (here: made up) is removed, and nothing else is written
    const third = await acceptTask(f, clientId);
    await f.redis.zadd(f.keys.clientDeferred(0, clientId), 1, third.taskId);
    await f.redis.sadd(f.keys.deferredClients(0), clientId);
    await f.redis.srem(f.keys.clientRunning(0, clientId), second.taskId);
    dump = await dumpUnder(f.redis, f.prefix);
    expect(await promoteScript(f, third, 1)).toEqual({ ok: false, code: "notDeferred" });
    expect(await f.redis.exists(f.keys.clientDeferred(0, clientId), f.keys.deferredClients(0))).toBe(0);
    expect(await f.redis.hgetall(f.keys.run(0, third.taskId))).toEqual(
      (dump[f.keys.run(0, third.taskId)] as { value: Record<string, string> }).value,
    );
  });

  test("wakeDeferred queues the oldest first, as many as slots are free; a canceled deferred run leaves the set", async () => {
    const f = journalFixture(server);
    const clientId = await liveClient(f);
    const l = ledger(f, 2);
    const tasks: AcceptedTask[] = [];
    for (let i = 0; i < 6; i++) tasks.push(await acceptTask(f, clientId));
    await deliver(f);
    const claims = [];
    for (const task of tasks) claims.push(await claim(f, l, task));
    expect(claims.map((c) => (typeof c === "string" ? c : "claimed"))).toEqual([
      "claimed",
      "claimed",
      "deferred",
      "deferred",
      "deferred",
      "deferred",
    ]);
    const deferred = tasks.slice(2).map((t) => t.taskId);
    expect(await f.redis.zrange(f.keys.clientDeferred(0, clientId), 0, -1)).toEqual(deferred);
    expect(await l.wakeDeferred(0, clientId)).toBe(0);

    // a canceled deferred task is canceled at once and leaves the set
    await f.journal.cancel(clientId, tasks[3]?.taskId ?? "", PROFILE, RETENTION);
    const left = deferred.filter((_, i) => i !== 1);
    expect(await f.redis.zrange(f.keys.clientDeferred(0, clientId), 0, -1)).toEqual(left);

    for (const [i, task] of tasks.slice(0, 2).entries()) {
      const held = claims[i];
      if (typeof held === "string" || held === undefined) throw new Error("claim refused");
      await move(f, held, task, "TASK_STATE_COMPLETED");
    }
    expect(await l.wakeDeferred(0, clientId, 1)).toBe(1);
    expect(await f.redis.hget(f.keys.run(0, deferred[0] ?? ""), "state")).toBe("queued");
    // without a bound it queues as many as slots are free now (2 free, none running yet)
    expect(await l.wakeDeferred(0, clientId)).toBe(2);
    expect(await f.redis.zcard(f.keys.clientDeferred(0, clientId))).toBe(0);
    expect(await l.clientsWithDeferredRuns(0, 10)).toEqual([]);
    expect(await tenancyViolations(f.redis, f.prefix)).toEqual([]);
  });

  test("a re-deferred run keeps its first deferral time, so it stays ahead of later ones", async () => {
    const f = journalFixture(server);
    const clientId = await liveClient(f);
    const l = ledger(f, 1);
    const [a, b, c] = [await acceptTask(f, clientId), await acceptTask(f, clientId), await acceptTask(f, clientId)];
    if (!a || !b || !c) throw new Error("accept failed");
    await deliver(f);
    const held = await claim(f, l, a);
    expect(await claim(f, l, b)).toBe("deferred");
    const since = await f.redis.zscore(f.keys.clientDeferred(0, clientId), b.taskId);
    await Bun.sleep(3);
    expect(await claim(f, l, c)).toBe("deferred");
    // b is queued again while a still runs (a slot taken meanwhile): its claim defers it anew with its old time
    await f.redis.srem(f.keys.clientRunning(0, clientId), a.taskId);
    expect(await l.wakeDeferred(0, clientId, 1)).toBe(1);
    await f.redis.sadd(f.keys.clientRunning(0, clientId), a.taskId);
    await deliver(f);
    expect(await claim(f, l, b)).toBe("deferred");
    expect(await f.redis.zscore(f.keys.clientDeferred(0, clientId), b.taskId)).toBe(since);
    expect(await f.redis.zrange(f.keys.clientDeferred(0, clientId), 0, -1)).toEqual([b.taskId, c.taskId]);
    expect(typeof held).toBe("object");
  });
});

test("release gives the running slot back; an interrupted or finished run leaves the running set", async () => {
  const f = journalFixture(server);
  const clientId = await liveClient(f);
  const l = ledger(f, 1);
  const task = await acceptTask(f, clientId);
  await deliver(f);
  const held = await claim(f, l, task);
  if (typeof held === "string") throw new Error("claim refused");
  expect(await l.release(held)).toBe(true);
  expect(await f.redis.scard(f.keys.clientRunning(0, clientId))).toBe(0);
  await deliver(f);
  const again = await claimTask(f, task);
  await move(f, again, task, "TASK_STATE_INPUT_REQUIRED");
  expect(await f.redis.scard(f.keys.clientRunning(0, clientId))).toBe(0);
  expect(await tenancyViolations(f.redis, f.prefix)).toEqual([]);
});

test("ack with the client reads its oldest deferred run in the same round trip, and nothing without one", async () => {
  const f = journalFixture(server);
  const clientId = await liveClient(f);
  const l = ledger(f, 1);
  const [first, second, third] = [
    await acceptTask(f, clientId),
    await acceptTask(f, clientId),
    await acceptTask(f, clientId),
  ];
  if (!first || !second || !third) throw new Error("accept failed");
  await deliver(f);
  const held = await claim(f, l, first);
  if (typeof held === "string") throw new Error("claim refused");
  expect(await l.ack(0, held.entryId, clientId)).toBeUndefined();
  expect(await claim(f, l, second)).toBe("deferred");
  expect(await claim(f, l, third)).toBe("deferred");
  await move(f, held, first, "TASK_STATE_COMPLETED");
  expect(await l.ack(0, held.entryId, clientId)).toBe(second.taskId);
  expect(await l.ack(0, held.entryId)).toBeUndefined();
  expect(await l.wakeDeferred(0, clientId, 1, second.taskId)).toBe(1);
  expect(await f.redis.zrange(f.keys.clientDeferred(0, clientId), 0, -1)).toEqual([third.taskId]);
});

// The retention pass's scripts against a real redis-server: purge (journal first, then the task with every key and
// index entry, its bytes given back) and expireInput (an interrupted task past its input timeout fails with a journal
// entry and a webhook delivery), each documented return, and counters that come back to zero whatever the tasks did.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { DueTasks, inputTimeoutMessage, PushConfigs, pushReadyMember } from "../../../src/journal/index.ts";
import { EXPIRE_INPUT } from "../../../src/journal/lua/expire-input.ts";
import { PURGE } from "../../../src/journal/lua/purge.ts";
import { tenancyViolations } from "../../faults/invariants.ts";
import { type JournalFixture, journalFixture, queuedDeliveries, userMessage } from "../../support/journal.ts";
import { keysUnder, startRedis, type TestRedis } from "../../support/redis.ts";
import {
  type AcceptedTask,
  acceptTask,
  claimTask,
  dumpUnder,
  emitArtifact,
  liveClient,
  move,
  PROFILE,
  redisMs,
} from "./helpers.ts";

let server: TestRedis;
beforeAll(async () => {
  server = await startRedis();
});
afterAll(async () => {
  await server.stop();
});

const LIFETIMES = { retentionSeconds: 3600, journalRetentionSeconds: 600, inputTimeoutSeconds: 60 };

/** Finishes a task with the given retentions (seconds). */
async function finish(
  f: JournalFixture,
  task: AcceptedTask,
  retentionSeconds: number,
  journalRetentionSeconds: number,
): Promise<void> {
  const result = await move(f, await claimTask(f, task), task, "TASK_STATE_COMPLETED", {
    retentionSeconds,
    journalRetentionSeconds,
  });
  expect(result.ok).toBe(true);
}

/** Makes a schedule member due now, as if its time had come (Redis's clock decides due-ness). */
async function dueNow(f: JournalFixture, key: string, taskId: string): Promise<void> {
  await f.redis.zadd(key, (await redisMs(f.redis)) - 1, taskId);
}

/** The purge script called directly, with the context index its caller names from the task's own fields. */
async function purgeScript(f: JournalFixture, taskId: string, clientId: string): Promise<unknown> {
  const k = f.keys;
  const contextId = (await f.redis.hget(k.task(0, taskId), "ctx")) ?? "";
  return await PURGE.run(
    f.redis,
    {
      purge: k.purge(0),
      task: k.task(0, taskId),
      run: k.run(0, taskId),
      journal: k.journal(0, taskId),
      pushConfigs: k.pushConfigs(0, taskId),
      pushOutbox: k.pushOutbox(0, taskId),
      pushReady: k.pushReady(0),
      clientTasks: k.clientTasks(0, clientId, PROFILE),
      bytes: k.bytes(0),
      contextTasks: k.contextTasks(0, clientId, PROFILE, contextId),
      chunks: k.artifactChunks(0, taskId),
      legacyPushQueue: k.legacyPushQueue(0, taskId),
    },
    { taskId, clientId },
  );
}

describe("purge", () => {
  test("1 the journal first, 2 then the task with every key and index entry, its bytes given back", async () => {
    const f = journalFixture(server);
    const clientId = await liveClient(f);
    const task = await acceptTask(f, clientId);
    await new PushConfigs(f.redis, f.keys).create(
      clientId,
      PROFILE,
      { id: "a", taskId: task.taskId, url: "https://h.example/a" },
      5,
    );
    await finish(f, task, 3600, 600);
    const k = f.keys;
    const fields = await f.redis.hmget(k.task(0, task.taskId), "bytes", "jbytes", "purge", "obytes");
    const [bytes = 0, jbytes = 0, purgeAt, obytes = 0] = fields.map(Number);
    // (the config's two deliveries wait in the outbox, counted too)
    expect(obytes).toBeGreaterThan(0);
    expect(Number(await f.redis.hget(k.bytes(0), `client:${clientId}`))).toBe(bytes + jbytes + obytes);

    await dueNow(f, k.purge(0), task.taskId);
    expect(await purgeScript(f, task.taskId, clientId)).toBe("journalDeleted");
    expect(await f.redis.exists(k.journal(0, task.taskId))).toBe(0);
    expect(await f.redis.exists(k.task(0, task.taskId), k.run(0, task.taskId), k.pushConfigs(0, task.taskId))).toBe(3);
    expect(Number(await f.redis.hget(k.task(0, task.taskId), "jbytes"))).toBe(0);
    expect(Number(await f.redis.hget(k.bytes(0), `client:${clientId}`))).toBe(bytes + obytes);
    expect(Number(await f.redis.zscore(k.purge(0), task.taskId))).toBe(purgeAt ?? -1);
    // -2: not due yet (the task's own time is an hour away): nothing written
    let dump = await dumpUnder(f.redis, f.prefix);
    expect(await purgeScript(f, task.taskId, clientId)).toBe("notDue");
    expect(await dumpUnder(f.redis, f.prefix)).toEqual(dump);

    await f.redis.hset(k.task(0, task.taskId), "purge", (await redisMs(f.redis)) - 1);
    await dueNow(f, k.purge(0), task.taskId);
    // -3: the keys of another client than the task's are refused before any write
    dump = await dumpUnder(f.redis, f.prefix);
    expect(await purgeScript(f, task.taskId, "someone-else")).toBe("otherClient");
    expect(await dumpUnder(f.redis, f.prefix)).toEqual(dump);
    // its webhook queues go with it: the config's (its deliveries are still pending), and one of an earlier version
    expect(await f.redis.zrange(k.pushReady(0), 0, -1)).toEqual([pushReadyMember(task.taskId, "a")]);
    await f.redis.rpush(k.legacyPushQueue(0, task.taskId), `{"id":"${task.taskId}.1.a","cfg":"a"}`);
    await f.redis.zadd(k.pushReady(0), 0, task.taskId);
    expect(await purgeScript(f, task.taskId, clientId)).toBe("taskDeleted");
    const left = await keysUnder(f.redis, f.prefix);
    expect(left.filter((key) => key.includes(task.taskId))).toEqual([]);
    expect(await f.redis.exists(k.pushReady(0))).toBe(0);
    expect(await f.redis.zscore(k.clientTasks(0, clientId, PROFILE), task.taskId)).toBeNull();
    expect(await f.redis.exists(k.contextTasks(0, clientId, PROFILE, task.contextId))).toBe(0);
    expect(await f.redis.hgetall(k.bytes(0))).toEqual({});
    // -1: not scheduled (any more): nothing written
    dump = await dumpUnder(f.redis, f.prefix);
    expect(await purgeScript(f, task.taskId, clientId)).toBe("notScheduled");
    expect(await dumpUnder(f.redis, f.prefix)).toEqual(dump);
  });

  test("0: a member whose task is gone or not finished is removed, and nothing else of a live task", async () => {
    const f = journalFixture(server);
    const clientId = await liveClient(f);
    const running = await acceptTask(f, clientId);
    await dueNow(f, f.keys.purge(0), running.taskId);
    const task = await f.redis.hgetall(f.keys.task(0, running.taskId));
    expect(await purgeScript(f, running.taskId, clientId)).toBe("stale");
    expect(await f.redis.hgetall(f.keys.task(0, running.taskId))).toEqual(task);
    expect(await f.redis.zscore(f.keys.purge(0), running.taskId)).toBeNull();

    const gone = await acceptTask(f, clientId);
    await finish(f, gone, 0, 0);
    await f.redis.del(f.keys.task(0, gone.taskId));
    expect(await purgeScript(f, gone.taskId, "")).toBe("stale");
    expect(await f.redis.exists(f.keys.run(0, gone.taskId), f.keys.journal(0, gone.taskId))).toBe(0);
  });

  test("DueTasks.purge runs the due steps of a shard, a bounded number per call", async () => {
    const f = journalFixture(server);
    const clientId = await liveClient(f);
    const tasks = [];
    for (let i = 0; i < 5; i++) tasks.push(await acceptTask(f, clientId));
    for (const task of tasks) await finish(f, task, 0, 0);
    const due = new DueTasks(f.redis, f.keys);
    expect(await due.purge(0, 3)).toEqual({ tasks: 3, journals: 0 });
    expect(await due.purge(0, 3)).toEqual({ tasks: 2, journals: 0 });
    expect(await due.purge(0, 3)).toEqual({ tasks: 0, journals: 0 });
    expect(await f.redis.zcard(f.keys.clientTasks(0, clientId, PROFILE))).toBe(0);
  });
});

function expireScript(f: JournalFixture, task: AcceptedTask, clientId = task.clientId): Promise<unknown> {
  const k = f.keys;
  const status = { state: "TASK_STATE_FAILED", timestamp: new Date().toISOString() };
  return EXPIRE_INPUT.run(
    f.redis,
    {
      inputDue: k.inputDue(0),
      task: k.task(0, task.taskId),
      run: k.run(0, task.taskId),
      journal: k.journal(0, task.taskId),
      clientTasks: k.clientTasks(0, clientId, PROFILE),
      clientInterrupted: k.clientInterrupted(0, clientId),
      purge: k.purge(0),
      bytes: k.bytes(0),
      pushConfigs: k.pushConfigs(0, task.taskId),
      pushOutbox: k.pushOutbox(0, task.taskId),
      pushReady: k.pushReady(0),
      contextTasks: k.contextTasks(0, clientId, PROFILE, task.contextId),
      taskStreams: k.taskStreams(0, task.taskId),
    },
    {
      taskId: task.taskId,
      clientId,
      status: JSON.stringify(status),
      event: JSON.stringify({ statusUpdate: { taskId: task.taskId, contextId: task.contextId, status } }),
      nowMs: Date.now(),
      retentionSeconds: 3600,
      journalRetentionSeconds: 600,
      eventsChannel: k.eventsChannel(),
    },
  );
}

describe("dropGoneIndexEntries", () => {
  test("removes a gone task from the client's index and its state index, and nothing of a live task", async () => {
    const f = journalFixture(server);
    const clientId = await liveClient(f);
    const live = await acceptTask(f, clientId);
    const gone = await acceptTask(f, clientId);
    // a task hash that went without the retention pass (e.g. deleted by hand): its index entries stay behind
    await f.redis.del(f.keys.task(0, gone.taskId));
    const submitted = f.keys.stateTasks(0, clientId, PROFILE, "TASK_STATE_SUBMITTED");
    expect(await f.redis.zcard(submitted)).toBe(2);
    expect(await new DueTasks(f.redis, f.keys).dropGoneIndexEntries([PROFILE], 100)).toBe(1);
    expect(await f.redis.zrange(f.keys.clientTasks(0, clientId, PROFILE), 0, -1)).toEqual([live.taskId]);
    expect(await f.redis.zrange(submitted, 0, -1)).toEqual([live.taskId]);
  });
});

describe("expireInput", () => {
  test("{1, rev}: FAILED with its message, journal entry, webhook delivery, run done, counts down, deletion scheduled", async () => {
    const f = journalFixture(server);
    const clientId = await liveClient(f);
    const task = await acceptTask(f, clientId);
    await new PushConfigs(f.redis, f.keys).create(
      clientId,
      PROFILE,
      { id: "a", taskId: task.taskId, url: "https://h.example/a" },
      5,
    );
    const claim = await claimTask(f, task);
    await move(f, claim, task, "TASK_STATE_WORKING");
    await move(f, claim, task, "TASK_STATE_INPUT_REQUIRED", { inputTimeoutSeconds: 60 });
    const k = f.keys;
    expect(await f.redis.smembers(k.clientInterrupted(0, clientId))).toEqual([task.taskId]);
    const timeout = Number(await f.redis.zscore(k.inputDue(0), task.taskId)) - (await redisMs(f.redis));
    expect(timeout).toBeWithin(55_000, 60_001);
    await f.redis.del(k.pushOutbox(0, task.taskId)); // only the expiry's delivery is looked at below

    // -2: not due yet; -3: another client's keys; both write nothing
    let dump = await dumpUnder(f.redis, f.prefix);
    expect(await expireScript(f, task)).toEqual({ ok: false, code: "notDue" });
    expect(await dumpUnder(f.redis, f.prefix)).toEqual(dump);
    await dueNow(f, k.inputDue(0), task.taskId);
    dump = await dumpUnder(f.redis, f.prefix);
    expect(await expireScript(f, task, "someone-else")).toEqual({ ok: false, code: "otherClient" });
    expect(await dumpUnder(f.redis, f.prefix)).toEqual(dump);

    const events = server.client();
    const published: string[] = [];
    events.on("message", (_channel: string, message: string) => published.push(message));
    await events.subscribe(k.eventsChannel());
    // through DueTasks, as the retention pass calls it: the status message names the timeout
    const expired = await new DueTasks(f.redis, f.keys).expireInputs(0, 10, () => LIFETIMES);
    expect(expired).toBe(1);
    const snap = await f.journal.snapshot(clientId, task.taskId);
    expect(snap?.record.state).toBe("TASK_STATE_FAILED");
    expect(snap?.record.rev).toBe(4);
    expect(snap?.record.status.message?.parts).toEqual([{ text: inputTimeoutMessage(60) }]);
    const outbox = await queuedDeliveries(f.redis, k, task.taskId);
    expect(outbox.map((d) => [d.cfg, d.rev, d.ev.statusUpdate?.status.state])).toEqual([["a", 4, "TASK_STATE_FAILED"]]);
    expect(await f.redis.zscore(k.pushReady(0), pushReadyMember(task.taskId, "a"))).not.toBeNull();
    expect(await f.redis.hget(k.run(0, task.taskId), "state")).toBe("done");
    expect(await f.redis.scard(k.clientInterrupted(0, clientId))).toBe(0);
    expect(await f.redis.zscore(k.inputDue(0), task.taskId)).toBeNull();
    expect(await f.redis.zscore(k.purge(0), task.taskId)).not.toBeNull();
    for (let i = 0; i < 100 && published.length === 0; i++) await Bun.sleep(5);
    expect(published).toEqual([`${task.taskId} TASK_STATE_FAILED 4`]);
    events.disconnect();
    expect(await tenancyViolations(f.redis, f.prefix)).toEqual([]);

    // -1: no timeout scheduled any more: nothing written
    dump = await dumpUnder(f.redis, f.prefix);
    expect(await expireScript(f, task)).toEqual({ ok: false, code: "notScheduled" });
    expect(await dumpUnder(f.redis, f.prefix)).toEqual(dump);
  });

  test("0: a member whose task is no longer interrupted is removed; the task is untouched", async () => {
    const f = journalFixture(server);
    const clientId = await liveClient(f);
    const task = await acceptTask(f, clientId);
    await dueNow(f, f.keys.inputDue(0), task.taskId);
    await f.redis.sadd(f.keys.clientInterrupted(0, clientId), task.taskId);
    const before = await f.redis.hgetall(f.keys.task(0, task.taskId));
    expect(await expireScript(f, task)).toEqual({ ok: false, code: "stale" });
    expect(await f.redis.hgetall(f.keys.task(0, task.taskId))).toEqual(before);
    expect(await f.redis.zscore(f.keys.inputDue(0), task.taskId)).toBeNull();
    expect(await f.redis.scard(f.keys.clientInterrupted(0, clientId))).toBe(0);
  });
});

test("every counter returns to zero once the tasks are purged, whatever they did", async () => {
  const f = journalFixture(server);
  const clients = [await liveClient(f), await liveClient(f)];
  const configs = new PushConfigs(f.redis, f.keys);
  const due = new DueTasks(f.redis, f.keys);
  const life = { retentionSeconds: 0, journalRetentionSeconds: 0, inputTimeoutSeconds: 0 };
  for (const [n, clientId] of clients.entries()) {
    for (let i = 0; i < 4; i++) {
      const task = await acceptTask(f, clientId, { text: `task ${n}.${i} ${"é".repeat(i * 50)}` });
      await configs.create(clientId, PROFILE, { id: "c", taskId: task.taskId, url: `https://h.example/${i}` }, 5);
      if (i === 0) {
        await f.journal.cancel(clientId, task.taskId, PROFILE, { retentionSeconds: 0, journalRetentionSeconds: 0 });
        continue;
      }
      const claim = await claimTask(f, task);
      await move(f, claim, task, "TASK_STATE_WORKING");
      await emitArtifact(f, claim, task, { artifactId: "r", parts: [{ text: "out ".repeat(40 * i) }] }, life);
      const end = i === 1 ? "TASK_STATE_COMPLETED" : i === 2 ? "TASK_STATE_FAILED" : "TASK_STATE_INPUT_REQUIRED";
      await move(f, claim, task, end, life);
      if (i === 3) {
        await f.journal.resume({
          clientId,
          profile: PROFILE,
          profileQuota: 0,
          taskId: task.taskId,
          message: userMessage("more"),
        });
        await move(f, await claimTask(f, task), task, "TASK_STATE_AUTH_REQUIRED", life);
      }
    }
  }
  expect(Object.keys(await f.redis.hgetall(f.keys.bytes(0))).length).toBe(3);
  expect(await tenancyViolations(f.redis, f.prefix)).toEqual([]);
  // the interrupted ones time out (inputTimeoutSeconds 0); then everything is due for deletion
  await waitForRedisMs(f, Number(await f.redis.zrange(f.keys.inputDue(0), -1, -1, "WITHSCORES").then((r) => r[1])));
  expect(await due.expireInputs(0, 100, () => life)).toBe(2);
  const last = Number((await f.redis.zrange(f.keys.purge(0), -1, -1, "WITHSCORES"))[1]);
  await waitForRedisMs(f, last);
  expect((await due.purge(0, 100)).tasks).toBe(8);
  expect(await f.redis.hgetall(f.keys.bytes(0))).toEqual({});
  for (const clientId of clients) {
    expect(await f.redis.exists(f.keys.clientInterrupted(0, clientId), f.keys.clientRunning(0, clientId))).toBe(0);
    expect(await f.redis.zcard(f.keys.clientTasks(0, clientId, PROFILE))).toBe(0);
  }
  expect(await f.redis.exists(f.keys.purge(0), f.keys.inputDue(0))).toBe(0);
  expect(await tenancyViolations(f.redis, f.prefix)).toEqual([]);
});

/** Waits until Redis's clock reaches `ms` (the clock the due times are compared with). */
async function waitForRedisMs(f: JournalFixture, ms: number): Promise<void> {
  for (let i = 0; i < 200 && (await redisMs(f.redis)) < ms; i++) await Bun.sleep(5);
  expect(await redisMs(f.redis)).toBeGreaterThanOrEqual(ms);
}

test("the bookkeeping check used by the fault suite sees a drifted counter, a lost interrupted task, a stray member", async () => {
  const f = journalFixture(server);
  const clientId = await liveClient(f);
  const task = await acceptTask(f, clientId);
  await move(f, await claimTask(f, task), task, "TASK_STATE_INPUT_REQUIRED");
  const other = await acceptTask(f, clientId);
  expect(await tenancyViolations(f.redis, f.prefix)).toEqual([]);
  const k = f.keys;
  await f.redis.hincrby(k.bytes(0), `client:${clientId}`, 1);
  await f.redis.srem(k.clientInterrupted(0, clientId), task.taskId);
  await f.redis.sadd(k.clientRunning(0, clientId), other.taskId);
  const found = await tenancyViolations(f.redis, f.prefix);
  expect(found).toHaveLength(3);
  expect(found.join("\n")).toContain(`bytes client:${clientId}`);
  expect(found.join("\n")).toContain(`interrupted task ${task.taskId} is missing`);
  expect(found.join("\n")).toContain(`holds ${other.taskId}, whose run is queued`);
});

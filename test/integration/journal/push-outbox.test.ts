// The push outbox: every journal append enqueues one delivery per config in the same script, in a queue per config;
// one worker at a time delivers a queue's head; settle records each outcome, and a config that waits for a retry holds
// back its own queue only. A queue of an earlier version (one list per task) moves into the outbox. Configs are scoped
// to the task's owner and limited per task.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import {
  type OutboxDelivery,
  PushConfigLimitError,
  PushConfigs,
  PushOutbox,
  pushReadyMember,
} from "../../../src/journal/index.ts";
import { TaskNotFoundError } from "../../../src/protocol/index.ts";
import { type JournalFixture, journalFixture, queuedDeliveries, userMessage } from "../../support/journal.ts";
import { startRedis, type TestRedis } from "../../support/redis.ts";
import { acceptTask, claimTask, liveClient, move, PROFILE } from "./helpers.ts";

let server: TestRedis;
let f: JournalFixture;
let configs: PushConfigs;
let outbox: PushOutbox;
beforeAll(async () => {
  server = await startRedis();
  f = journalFixture(server);
  configs = new PushConfigs(f.redis, f.keys);
  outbox = new PushOutbox(f.redis, f.keys);
});
afterAll(async () => {
  await server.stop();
});

function config(taskId: string, id: string) {
  return {
    id,
    taskId,
    url: `https://hooks.example/${id}`,
    authentication: { scheme: "Bearer", credentials: "s3cret" },
  };
}

describe("push configs", () => {
  test("create, get, list and delete are scoped to the task's owner; delete is idempotent", async () => {
    const owner = await liveClient(f);
    const other = await liveClient(f);
    const task = await acceptTask(f, owner);
    await configs.create(owner, PROFILE, config(task.taskId, "a"), 10);
    await configs.create(owner, PROFILE, config(task.taskId, "b"), 10);
    expect((await configs.get(owner, PROFILE, task.taskId, "a"))?.url).toBe("https://hooks.example/a");
    expect((await configs.list(owner, PROFILE, task.taskId)).map((c) => c.id)).toEqual(["a", "b"]);
    await expect(configs.get(other, PROFILE, task.taskId, "a")).rejects.toBeInstanceOf(TaskNotFoundError);
    await expect(configs.create(other, PROFILE, config(task.taskId, "c"), 10)).rejects.toBeInstanceOf(
      TaskNotFoundError,
    );
    await expect(configs.list(owner, "other-profile", task.taskId)).rejects.toBeInstanceOf(TaskNotFoundError);
    await configs.delete(owner, PROFILE, task.taskId, "a");
    await configs.delete(owner, PROFILE, task.taskId, "a");
    expect(await configs.get(owner, PROFILE, task.taskId, "a")).toBeUndefined();
  });

  test("the per-task limit refuses a new config but lets an existing one be replaced", async () => {
    const owner = await liveClient(f);
    const task = await acceptTask(f, owner);
    await configs.create(owner, PROFILE, config(task.taskId, "a"), 1);
    await expect(configs.create(owner, PROFILE, config(task.taskId, "b"), 1)).rejects.toBeInstanceOf(
      PushConfigLimitError,
    );
    await configs.create(owner, PROFILE, { ...config(task.taskId, "a"), url: "https://hooks.example/new" }, 1);
    expect((await configs.get(owner, PROFILE, task.taskId, "a"))?.url).toBe("https://hooks.example/new");
  });

  test("an inline config given at accept is stored with the task in the same step", async () => {
    const owner = await liveClient(f);
    const accepted = await f.journal.accept({
      clientId: owner,
      profile: PROFILE,
      profileQuota: 0,
      message: userMessage("hi"),
      pushConfig: { id: "inline", url: "https://hooks.example/inline" },
    });
    const stored = await configs.get(owner, PROFILE, accepted.taskId, "inline");
    expect(stored).toEqual({ id: "inline", url: "https://hooks.example/inline", taskId: accepted.taskId });
  });
});

/** A task with these push configs, run to WORKING (revision 2) and COMPLETED (3): two deliveries per config. */
async function finishedWithConfigs(ids: string[]) {
  const owner = await liveClient(f);
  const task = await acceptTask(f, owner);
  for (const id of ids) await configs.create(owner, PROFILE, config(task.taskId, id), 10);
  const claim = await claimTask(f, task);
  await move(f, claim, task, "TASK_STATE_WORKING");
  await move(f, claim, task, "TASK_STATE_COMPLETED");
  return task;
}

describe("outbox", () => {
  test("each transition enqueues one delivery per config, in journal order, with a stable id", async () => {
    const task = await finishedWithConfigs(["a", "b"]);
    const queued = await queuedDeliveries(f.redis, f.keys, task.taskId);
    expect(queued.map((d) => [d.cfg, d.rev, d.id])).toEqual([
      ["a", 2, `${task.taskId}.2.a`],
      ["a", 3, `${task.taskId}.3.a`],
      ["b", 2, `${task.taskId}.2.b`],
      ["b", 3, `${task.taskId}.3.b`],
    ]);
    expect(queued[3]?.ev.statusUpdate?.status.state).toBe("TASK_STATE_COMPLETED");
    // one queue per config, each due
    expect(await f.redis.zscore(f.keys.pushReady(0), pushReadyMember(task.taskId, "a"))).not.toBeNull();
    expect(await f.redis.zscore(f.keys.pushReady(0), pushReadyMember(task.taskId, "b"))).not.toBeNull();
    // the configs are deleted with their task by the retention pass, not by a TTL
    expect(await f.redis.zscore(f.keys.purge(0), task.taskId)).not.toBeNull();
  });

  test("a task without configs enqueues nothing", async () => {
    const owner = await liveClient(f);
    const task = await acceptTask(f, owner);
    const claim = await claimTask(f, task);
    await move(f, claim, task, "TASK_STATE_COMPLETED");
    expect(await f.redis.exists(f.keys.pushOutbox(0, task.taskId))).toBe(0);
    expect(await f.redis.zrangebyscore(f.keys.pushReady(0), "-inf", "+inf")).not.toContainEqual(
      expect.stringContaining(task.taskId),
    );
  });

  test("claim hides a claimed queue from other workers; settle walks the queue: done, retry, dead, disable", async () => {
    const owner = await liveClient(f);
    const task = await acceptTask(f, owner);
    await configs.create(owner, PROFILE, config(task.taskId, "a"), 10);
    const claim = await claimTask(f, task);
    await move(f, claim, task, "TASK_STATE_WORKING");
    await move(f, claim, task, "TASK_STATE_INPUT_REQUIRED");
    const member = pushReadyMember(task.taskId, "a");
    await f.redis.del(f.keys.pushReady(0));
    await f.redis.zadd(f.keys.pushReady(0), 0, member);

    expect(await outbox.claim(0, 10, 60_000)).toEqual([{ shard: 0, taskId: task.taskId, configId: "a" }]);
    expect(await outbox.claim(0, 10, 60_000)).toEqual([]);
    const first = await outbox.head(0, task.taskId, "a");
    expect(first?.delivery.rev).toBe(2);
    expect(first?.config?.url).toBe("https://hooks.example/a");

    const later = (await outbox.now()) + 50;
    expect(await outbox.settle(first!, { outcome: "retry", atMs: later })).toBe(true);
    const retried = await outbox.head(0, task.taskId, "a");
    expect(retried?.delivery).toEqual({ ...first!.delivery, attempts: 1 });
    expect(Number(await f.redis.zscore(f.keys.pushReady(0), member))).toBe(later);
    expect(await outbox.settle(first!, { outcome: "done" })).toBe(true);
    expect(await outbox.settle(first!, { outcome: "done" })).toBe(false);

    const second = await outbox.head(0, task.taskId, "a");
    expect(second?.delivery.rev).toBe(3);
    expect(await outbox.settle(second!, { outcome: "disable", reason: "http status 410 gone" })).toBe(true);
    expect(await f.redis.hexists(f.keys.pushConfigs(0, task.taskId), "a")).toBe(0);
    const dead = await f.redis.xrange(f.keys.pushDead(0), "-", "+");
    expect(dead.at(-1)?.[1]).toEqual([
      "task",
      task.taskId,
      "cfg",
      "a",
      "rev",
      "3",
      "id",
      second!.delivery.id,
      "reason",
      "http status 410 gone",
    ]);
    // the queue is empty: the outbox (its counters too) and the due mark are gone
    expect(await f.redis.exists(f.keys.pushOutbox(0, task.taskId))).toBe(0);
    expect(await f.redis.zscore(f.keys.pushReady(0), member)).toBeNull();
    // a due mark whose queue is empty (its task was deleted while it was claimed) leaves with the read that finds it so
    await f.redis.zadd(f.keys.pushReady(0), 0, member);
    expect(await outbox.head(0, task.taskId, "a")).toBeUndefined();
    expect(await f.redis.zscore(f.keys.pushReady(0), member)).toBeNull();
  });

  test("a config whose receiver waits for a retry holds back its own deliveries, not the other config's", async () => {
    const task = await finishedWithConfigs(["down", "up"]);
    const down = await outbox.head(0, task.taskId, "down");
    const inAMinute = (await outbox.now()) + 60_000;
    expect(await outbox.settle(down!, { outcome: "retry", atMs: inAMinute })).toBe(true);
    // "up" is due now and delivers both of its notifications in order while "down" waits
    const delivered: number[] = [];
    for (;;) {
      const claimed = await outbox.claim(0, 10, 60_000);
      const mine = claimed.filter((queue) => queue.taskId === task.taskId);
      if (mine.length === 0) break;
      expect(mine).toEqual([{ shard: 0, taskId: task.taskId, configId: "up" }]);
      const head = await outbox.head(0, task.taskId, "up");
      delivered.push(head!.delivery.rev);
      expect(await outbox.settle(head!, { outcome: "done" })).toBe(true);
    }
    expect(delivered).toEqual([2, 3]);
    expect((await queuedDeliveries(f.redis, f.keys, task.taskId)).map((d) => [d.cfg, d.rev, d.attempts])).toEqual([
      ["down", 2, 1],
      ["down", 3, 0],
    ]);
    expect(Number(await f.redis.zscore(f.keys.pushReady(0), pushReadyMember(task.taskId, "down")))).toBe(inAMinute);
    expect(await f.redis.zscore(f.keys.pushReady(0), pushReadyMember(task.taskId, "up"))).toBeNull();
  });

  test("a task's queue of an earlier version (one list, due as the task id) moves into a queue per config", async () => {
    const owner = await liveClient(f);
    const task = await acceptTask(f, owner);
    const legacy = f.keys.legacyPushQueue(0, task.taskId);
    const delivery = (cfg: string, rev: number, attempts = 0): OutboxDelivery => ({
      id: `${task.taskId}.${rev}.${cfg}`,
      cfg,
      rev,
      attempts,
      ev: { statusUpdate: { taskId: task.taskId, contextId: task.contextId, status: { state: "TASK_STATE_WORKING" } } },
    });
    const old = [delivery("a", 2, 3), delivery("b c", 2), delivery("a", 3), delivery("b c", 3)];
    await f.redis.rpush(legacy, ...old.map((d) => JSON.stringify(d)));
    await f.redis.zadd(f.keys.pushReady(0), 0, task.taskId);

    const claimed = await outbox.claim(0, 100, 60_000);
    expect(claimed).toContainEqual({ shard: 0, taskId: task.taskId, configId: undefined });
    const before = Number(await f.redis.hget(f.keys.bytes(0), `client:${owner}`));
    expect(await outbox.migrate(0, task.taskId)).toBe(4);
    // that version did not count them: from now on they are, in the task's obytes and its client's counter
    const moved = old.reduce((n, d) => n + JSON.stringify(d).length, 0);
    expect(Number(await f.redis.hget(f.keys.task(0, task.taskId), "obytes"))).toBe(moved);
    expect(Number(await f.redis.hget(f.keys.bytes(0), `client:${owner}`))).toBe(before + moved);
    expect(await f.redis.exists(legacy)).toBe(0);
    expect(await f.redis.zscore(f.keys.pushReady(0), task.taskId)).toBeNull();
    // each config's deliveries in their order, as they were (a retry's count kept), each queue due now
    const [a2, b2, a3, b3] = old;
    expect(await queuedDeliveries(f.redis, f.keys, task.taskId)).toEqual([a2, a3, b2, b3] as OutboxDelivery[]);
    for (const cfg of ["a", "b c"]) {
      expect(await f.redis.zscore(f.keys.pushReady(0), pushReadyMember(task.taskId, cfg))).not.toBeNull();
    }
    expect((await outbox.head(0, task.taskId, "b c"))?.delivery).toEqual(b2 as OutboxDelivery);
  });
});

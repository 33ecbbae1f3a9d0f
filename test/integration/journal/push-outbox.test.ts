// The push outbox: every journal append enqueues one delivery per config in the same script; one worker at a time
// delivers a task's head; settle records each outcome. Configs are scoped to the task's owner and limited per task.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { PushConfigLimitError, PushConfigs, PushOutbox } from "../../../src/journal/index.ts";
import { TaskNotFoundError } from "../../../src/protocol/index.ts";
import { type JournalFixture, journalFixture, userMessage } from "../../support/journal.ts";
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

describe("outbox", () => {
  test("each transition enqueues one delivery per config, in journal order, with a stable id", async () => {
    const owner = await liveClient(f);
    const task = await acceptTask(f, owner);
    await configs.create(owner, PROFILE, config(task.taskId, "a"), 10);
    await configs.create(owner, PROFILE, config(task.taskId, "b"), 10);
    const claim = await claimTask(f, task);
    await move(f, claim, task, "TASK_STATE_WORKING");
    await move(f, claim, task, "TASK_STATE_COMPLETED");
    const queued = (await f.redis.lrange(f.keys.pushQueue(0, task.taskId), 0, -1)).map((j) => JSON.parse(j));
    expect(queued.map((d) => [d.cfg, d.rev, d.id])).toEqual([
      ["a", 2, `${task.taskId}.2.a`],
      ["b", 2, `${task.taskId}.2.b`],
      ["a", 3, `${task.taskId}.3.a`],
      ["b", 3, `${task.taskId}.3.b`],
    ]);
    expect(queued[3].ev.statusUpdate.status.state).toBe("TASK_STATE_COMPLETED");
    expect(await f.redis.zscore(f.keys.pushReady(0), task.taskId)).not.toBeNull();
    // the configs are deleted with their task by the retention pass, not by a TTL
    expect(await f.redis.zscore(f.keys.purge(0), task.taskId)).not.toBeNull();
  });

  test("a task without configs enqueues nothing", async () => {
    const owner = await liveClient(f);
    const task = await acceptTask(f, owner);
    const claim = await claimTask(f, task);
    await move(f, claim, task, "TASK_STATE_COMPLETED");
    expect(await f.redis.exists(f.keys.pushQueue(0, task.taskId))).toBe(0);
    expect(await f.redis.zscore(f.keys.pushReady(0), task.taskId)).toBeNull();
  });

  test("claim hides a claimed task from other workers; settle walks the queue: done, retry, dead, disable", async () => {
    const owner = await liveClient(f);
    const task = await acceptTask(f, owner);
    await configs.create(owner, PROFILE, config(task.taskId, "a"), 10);
    const claim = await claimTask(f, task);
    await move(f, claim, task, "TASK_STATE_WORKING");
    await move(f, claim, task, "TASK_STATE_INPUT_REQUIRED");
    await f.redis.del(f.keys.pushReady(0));
    await f.redis.zadd(f.keys.pushReady(0), 0, task.taskId);

    expect(await outbox.claim(0, 10, 60_000)).toEqual([task.taskId]);
    expect(await outbox.claim(0, 10, 60_000)).toEqual([]);
    const first = await outbox.head(0, task.taskId);
    expect(first?.delivery.rev).toBe(2);
    expect(first?.config?.url).toBe("https://hooks.example/a");

    const later = (await outbox.now()) + 50;
    expect(await outbox.settle(first!, { outcome: "retry", atMs: later })).toBe(true);
    const retried = await outbox.head(0, task.taskId);
    expect(retried?.delivery).toEqual({ ...first!.delivery, attempts: 1 });
    expect(Number(await f.redis.zscore(f.keys.pushReady(0), task.taskId))).toBe(later);
    expect(await outbox.settle(first!, { outcome: "done" })).toBe(true);
    expect(await outbox.settle(first!, { outcome: "done" })).toBe(false);

    const second = await outbox.head(0, task.taskId);
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
    expect(await f.redis.exists(f.keys.pushQueue(0, task.taskId))).toBe(0);
    expect(await f.redis.zscore(f.keys.pushReady(0), task.taskId)).toBeNull();
  });
});

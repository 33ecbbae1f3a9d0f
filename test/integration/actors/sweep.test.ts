// A sweep-only installation (no consumer; `sweep --once` from a loop) accepts and completes tasks; its retention pass
// deletes a terminal task's journal and then the task, its run and index entry after the profile's retentions, giving
// the task's stored bytes back; the dedup record expires by its TTL.
import { afterAll, beforeAll, expect, test } from "bun:test";
import { WorkerUnavailableError } from "../../../src/protocol/index.ts";
import { userMessage } from "../../support/journal.ts";
import { startRedis, type TestRedis } from "../../support/redis.ts";
import {
  accept,
  cleanup,
  ECHO_PROFILE,
  type Installation,
  installation,
  killStarted,
  runCli,
  task,
  waitFor,
  workers,
} from "./harness.ts";

let server: TestRedis;
const installs: Installation[] = [];
beforeAll(async () => {
  server = await startRedis();
});
afterAll(async () => {
  killStarted();
  for (const inst of installs) cleanup(inst);
  await server.stop();
});

test("a sweep-only installation accepts and completes tasks", async () => {
  const inst = await installation(server);
  installs.push(inst);
  // No worker has ever beaten: accept refuses and stores nothing.
  await expect(accept(inst, "too early")).rejects.toBeInstanceOf(WorkerUnavailableError);

  expect((await runCli(inst, ["sweep", "--once"])).code).toBe(0);
  expect((await workers(inst)).map((w) => w.mode)).toEqual(["sweep"]);
  const ids = [
    await accept(inst, "one"),
    await accept(inst, "[chunks 3] two two"),
    await accept(inst, "[input] three"),
  ];
  const states = await waitFor(
    async () => {
      const tick = await runCli(inst, ["sweep", "--once"]);
      expect(tick.code).toBe(0);
      const found = await Promise.all(ids.map(async (id) => (await task(inst, id))?.state));
      return found.every((state) => state !== "TASK_STATE_SUBMITTED" && state !== "TASK_STATE_WORKING") && found;
    },
    15_000,
    "the sweep to run every task",
  );
  expect(states).toEqual(["TASK_STATE_COMPLETED", "TASK_STATE_COMPLETED", "TASK_STATE_INPUT_REQUIRED"]);
  expect((await task(inst, ids[1] ?? ""))?.artifacts[0]?.parts).toEqual([{ text: "two two" }]);
  expect(await inst.f.redis.xlen(inst.f.keys.queue(0))).toBe(0);
}, 40_000);

test("retention: the sweep deletes the journal, then the task, run and index entry; the bytes are given back", async () => {
  const inst = await installation(server, {
    // A `sweep --once` on a loaded machine takes seconds, and its retention step comes after it ran the task: the
    // journal's retention leaves room for that, so the state between the steps can be seen.
    profiles: [{ ...ECHO_PROFILE, retentionSeconds: 5, journalRetentionSeconds: 3 }],
    journal: { dedupSeconds: 2 },
  });
  installs.push(inst);
  expect((await runCli(inst, ["sweep", "--once"])).code).toBe(0);
  const message = userMessage("kept briefly");
  const { taskId } = await inst.f.journal.accept({
    clientId: inst.clientId,
    profile: "echo",
    profileQuota: 0,
    message,
  });
  const dedup = inst.f.keys.dedup(0, inst.clientId, "echo", message.messageId);
  expect(await inst.f.redis.exists(dedup)).toBe(1);
  expect((await runCli(inst, ["sweep", "--once"])).code).toBe(0);
  expect((await task(inst, taskId))?.state).toBe("TASK_STATE_COMPLETED");

  const { keys, redis } = inst.f;
  const taskKey = keys.task(0, taskId);
  const index = keys.clientTasks(0, inst.clientId, "echo");
  const counter = `client:${inst.clientId}`;
  expect(await redis.exists(taskKey, keys.run(0, taskId), keys.journal(0, taskId))).toBe(3);
  expect(await redis.zscore(index, taskId)).not.toBeNull();
  const [bytes, journalBytes, purgeAt] = (await redis.hmget(taskKey, "bytes", "jbytes", "purge")).map(Number);
  const journalAt = Number(await redis.zscore(keys.purge(0), taskId));
  expect(Number(await redis.hget(keys.bytes(0), counter))).toBe((bytes ?? 0) + (journalBytes ?? 0));
  const redisNow = async () => {
    const [seconds, micros] = await redis.time();
    return Number(seconds) * 1000 + Math.floor(Number(micros) / 1000);
  };

  // The signal the retention pass reads is Redis's clock against the due time; a tick before it deletes nothing.
  await waitFor(async () => (await redisNow()) >= (journalAt ?? 0), 10_000, "the journal's deletion to come due");
  expect((await runCli(inst, ["sweep", "--once"])).code).toBe(0);
  expect(await redis.exists(keys.journal(0, taskId))).toBe(0);
  expect(await redis.exists(taskKey)).toBe(1);
  expect(Number(await redis.hget(keys.bytes(0), counter))).toBe(bytes ?? -1);

  await waitFor(async () => (await redisNow()) >= (purgeAt ?? 0), 10_000, "the task's deletion to come due");
  expect((await runCli(inst, ["sweep", "--once"])).code).toBe(0);
  expect(await redis.exists(taskKey, keys.run(0, taskId))).toBe(0);
  expect(await redis.zscore(index, taskId)).toBeNull();
  expect(await redis.hget(keys.bytes(0), counter)).toBeNull();
  expect(await redis.zscore(keys.purge(0), taskId)).toBeNull();
  await waitFor(async () => (await redis.exists(dedup)) === 0, 5000, "the dedup record to expire");
}, 60_000);

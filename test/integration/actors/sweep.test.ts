// A sweep-only installation (no consumer; `sweep --once` from a loop) accepts and completes tasks; retention removes
// a terminal task, its run, journal and dedup record after the profile's retention, and the sweep cleans the index.
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

test("retention: a terminal task, its run, journal and dedup record expire; the sweep removes the index entry", async () => {
  const inst = await installation(server, {
    profiles: [{ ...ECHO_PROFILE, retentionSeconds: 2, journalRetentionSeconds: 1 }],
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
  expect((await runCli(inst, ["sweep", "--once"])).code).toBe(0);
  expect((await task(inst, taskId))?.state).toBe("TASK_STATE_COMPLETED");

  const { keys, redis } = inst.f;
  const stored = [
    keys.task(0, taskId),
    keys.run(0, taskId),
    keys.journal(0, taskId),
    keys.dedup(0, inst.clientId, message.messageId),
  ];
  const index = keys.clientTasks(0, inst.clientId);
  expect(await Promise.all(stored.map((key) => redis.exists(key)))).toEqual([1, 1, 1, 1]);
  expect(await redis.zscore(index, taskId)).not.toBeNull();

  await waitFor(async () => (await redis.exists(...stored)) === 0, 5000, "the task's keys to expire");
  expect(await redis.zscore(index, taskId)).not.toBeNull(); // an index has no TTL per member: the sweep cleans it
  expect((await runCli(inst, ["sweep", "--once"])).code).toBe(0);
  expect(await redis.zscore(index, taskId)).toBeNull();
}, 30_000);

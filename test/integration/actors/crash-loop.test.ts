// A run that crashes its actor every time: the supervisor gives up past its restart intensity, and the run ends
// FAILED with a reason after maxAttempts, its entry moved to the dead-letter stream.
import { afterAll, beforeAll, expect, test } from "bun:test";
import { startRedis, type TestRedis } from "../../support/redis.ts";
import {
  accept,
  cleanup,
  FAULTS_PROFILE,
  type Installation,
  installation,
  killStarted,
  run,
  runCli,
  startCli,
  task,
  taskInState,
  waitFor,
} from "./harness.ts";

let server: TestRedis;
let inst: Installation;
beforeAll(async () => {
  server = await startRedis();
  inst = await installation(server, {
    profiles: [FAULTS_PROFILE],
    env: {
      A2A_WORKER_MAX_ATTEMPTS: "2",
      A2A_WORKER_RESTART_INTENSITY: "1",
      A2A_WORKER_RESTART_PERIOD_SECONDS: "60",
    },
  });
});
afterAll(async () => {
  killStarted();
  cleanup(inst);
  await server.stop();
});

test("a crash loop: the supervisor gives up past its intensity; the run fails after maxAttempts and is dead-lettered", async () => {
  const work = startCli(inst, ["work", "--actors", "1"]);
  await work.line(/"workerId".*"msg":"actor started"/);
  const taskId = await accept(inst, "[crash] boom", "faults");

  // Attempt 1 crashes the actor (restart 1 of 1 allowed); attempt 2, reclaimed after the lease, crashes the
  // replacement; a second restart would exceed the intensity, so the supervisor stops with exit code 1.
  const { code } = await work.exited;
  expect(code).toBe(1);
  expect(work.lines.some((line) => /restart intensity exceeded/.test(line) && /"level":60/.test(line))).toBe(true);
  expect(work.lines.filter((line) => /"msg":"actor started"/.test(line) && /"actorPid"/.test(line))).toHaveLength(2);
  expect(work.lines.filter((line) => /actor exited; restarting/.test(line))).toHaveLength(1);
  expect((await run(inst, taskId)).tries).toBe("2");
  expect((await task(inst, taskId))?.state).toBe("TASK_STATE_WORKING");

  // The next worker to see it (a sweep, after the lease) finds the attempts exhausted: FAILED, dead-lettered.
  await waitFor(
    async () => {
      await runCli(inst, ["sweep", "--once"]);
      return (await task(inst, taskId))?.state === "TASK_STATE_FAILED";
    },
    15_000,
    "the task to fail",
  );
  const failed = await taskInState(inst, taskId, "TASK_STATE_FAILED");
  const reason = failed.status.message?.parts.map((p) => ("text" in p ? p.text : "")).join("");
  expect(reason).toContain("attempts exhausted");
  expect(reason).toContain("2 times");

  const dead = await inst.f.redis.xrange(inst.f.keys.dead(0), "-", "+");
  expect(dead).toHaveLength(1);
  const fields = Object.fromEntries(
    (dead[0]?.[1] ?? []).flatMap((value, i, all) => (i % 2 === 0 ? [[value, all[i + 1]]] : [])),
  );
  expect(fields).toMatchObject({ task: taskId, reason: "attempts exhausted (2)" });
  expect(await inst.f.redis.xlen(inst.f.keys.queue(0))).toBe(0);
}, 40_000);

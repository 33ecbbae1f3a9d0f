// A run that crashes its actor costs its own run, never the fleet: past the restart intensity the supervisor goes on,
// each such task fails after maxAttempts and is dead-lettered, and other clients' tasks complete. An actor that cannot
// start (a handler module that throws on import), or that dies while idle, still counts: the supervisor gives up.
import { expect, test } from "bun:test";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { userMessage } from "../../support/journal.ts";
import {
  ECHO_PROFILE,
  FAULTS_PROFILE,
  type Installation,
  installationSuite,
  isRunning,
  liveWorkers,
  startCli,
  taskInState,
  waitFor,
  workers,
} from "./harness.ts";

const MAX_ATTEMPTS = 2;
const INTENSITY = 1;

const newInstallation = installationSuite();

async function fresh(): Promise<Installation> {
  const inst = await newInstallation({
    profiles: [ECHO_PROFILE, FAULTS_PROFILE],
    env: {
      A2A_WORKER_MAX_ATTEMPTS: String(MAX_ATTEMPTS),
      A2A_WORKER_RESTART_INTENSITY: String(INTENSITY),
      A2A_WORKER_RESTART_PERIOD_SECONDS: "60",
      // One run per actor: a crash takes no other client's run along.
      A2A_WORKER_CONCURRENCY: "1",
    },
  });
  return inst;
}

async function acceptAs(inst: Installation, clientId: string, text: string, profile: string): Promise<string> {
  const accepted = await inst.f.journal.accept({ clientId, profile, profileQuota: 0, message: userMessage(text) });
  return accepted.taskId;
}

const reasonOf = (record: Awaited<ReturnType<typeof taskInState>>) =>
  (record.status.message?.parts ?? []).map((p) => ("text" in p ? p.text : "")).join("");

/** The supervisor's "actor exited; restarting" lines, parsed. */
const restarts = (lines: readonly string[]) =>
  lines.filter((line) => /"msg":"actor exited; restarting"/.test(line)).map((line) => JSON.parse(line));

test("a [crash] message cannot make the supervisor give up: each fails after its attempts, other tasks complete", async () => {
  const inst = await fresh();
  const work = startCli(inst, ["work", "--actors", "2"]);
  await liveWorkers(inst, 2);
  const { record: other } = await inst.f.clients.add({ name: "another client" });

  // Three crashing tasks, each crashing an actor on every attempt: 6 exits, far more than the intensity of 1.
  const crashes = await Promise.all([1, 2, 3].map((i) => acceptAs(inst, inst.clientId, `[crash] ${i}`, "faults")));
  const innocents = await Promise.all(
    Array.from({ length: 6 }, (_, i) => acceptAs(inst, other.id, `[sleep 100] other ${i}`, "echo")),
  );

  for (const taskId of crashes) {
    const failed = await taskInState(inst, taskId, "TASK_STATE_FAILED", 60_000);
    expect(reasonOf(failed)).toContain(`attempted ${MAX_ATTEMPTS} times without finishing (attempts exhausted)`);
  }
  for (const [i, taskId] of innocents.entries()) {
    const done = await taskInState(inst, taskId, "TASK_STATE_COMPLETED", 30_000);
    expect(done.artifacts.map((a) => a.parts)).toEqual([[{ text: `other ${i}` }]]);
  }
  const dead = await inst.f.redis.xrange(inst.f.keys.dead(0), "-", "+");
  expect(dead.map(([, fields]) => fields[fields.indexOf("task") + 1]).sort()).toEqual([...crashes].sort());

  // Every crash was a run's: restarted, never counted; the supervisor is still there and still serves.
  expect(work.child.exitCode).toBeNull();
  expect(work.lines.some((line) => /restart intensity exceeded/.test(line))).toBe(false);
  expect(restarts(work.lines).map((line) => [line.cause, line.code])).toEqual(
    Array.from({ length: crashes.length * MAX_ATTEMPTS }, () => ["run", 1]),
  );
  const after = await acceptAs(inst, other.id, "still served", "echo");
  expect((await taskInState(inst, after, "TASK_STATE_COMPLETED", 15_000)).artifacts[0]?.parts).toEqual([
    { text: "still served" },
  ]);
  work.child.kill("SIGTERM");
  expect((await work.exited).code).toBe(0);
}, 90_000);

test("an actor that fails at start (a handler module that throws on import in actors) makes the supervisor give up", async () => {
  const inst = await fresh();
  const module = join(inst.dir, "broken-handlers.ts");
  // `work` checks the modules in a process of its own before the supervisor starts (a module that throws there stops
  // it at once, see test/integration/cli/first-hour.test.ts); this one passes that check and throws in each actor.
  const api = new URL("../../../src/actors/index.ts", import.meta.url).pathname;
  writeFileSync(
    module,
    `import { defineHandler } from ${JSON.stringify(api)};\n` +
      'if (process.env.A2A_ACTOR_SUPERVISED === "1") throw new Error("this handler module cannot be loaded");\n' +
      'export const unused = defineHandler("unused", async () => {});\n',
  );
  const work = startCli(inst, ["work", "--actors", "1", "--handlers", module]);

  const { code } = await work.exited;
  expect(code).toBe(1);
  const fatal = work.lines.find((line) => /restart intensity exceeded/.test(line));
  expect(JSON.parse(fatal ?? "{}")).toMatchObject({ level: 60, cause: "startup", restartIntensity: INTENSITY });
  expect(restarts(work.lines).map((line) => line.cause)).toEqual(["startup"]);
  expect(work.lines.filter((line) => /actor failed to start.*cannot be loaded/s.test(line)).length).toBe(2);
}, 40_000);

test("an actor that dies while idle still counts: the second SIGKILL of an idle actor makes the supervisor give up", async () => {
  const inst = await fresh();
  const work = startCli(inst, ["work", "--actors", "1"]);
  const idleActor = async (not?: number) =>
    await waitFor(
      async () => (await workers(inst)).find((w) => w.pid !== not && isRunning(w.pid)),
      15_000,
      "an idle actor",
    );
  const first = await idleActor();
  process.kill(first.pid, "SIGKILL");
  await work.line(new RegExp(`"actorPid":${first.pid},.*"cause":"idle".*actor exited; restarting`));
  const second = await idleActor(first.pid);
  process.kill(second.pid, "SIGKILL");

  expect((await work.exited).code).toBe(1);
  const fatal = work.lines.find((line) => /restart intensity exceeded/.test(line));
  expect(JSON.parse(fatal ?? "{}")).toMatchObject({ level: 60, cause: "idle", actorPid: second.pid });
}, 40_000);

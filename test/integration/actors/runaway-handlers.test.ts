// Handlers that hang, spin or hog memory, run by real supervisor and actor processes: a hang ends FAILED at the
// profile's time limit while its actor serves other tasks; a spinning or memory-hogging actor is killed by the
// supervisor's watchdog (log line, metric) without counting toward the restart intensity, and its task fails after
// maxAttempts and is dead-lettered; `start` watches its actors the same way.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { timeLimitFailure } from "../../../src/actors/index.ts";
import { userMessage } from "../../support/journal.ts";
import { freePort, startRedis, type TestRedis } from "../../support/redis.ts";
import {
  accept,
  type CliProcess,
  cleanup,
  ECHO_PROFILE,
  type Installation,
  installation,
  isRunning,
  killStarted,
  run,
  runCli,
  startCli,
  task,
  taskInState,
  waitFor,
} from "./harness.ts";

const FIXTURE = new URL("./fault-handlers.ts", import.meta.url).pathname;
const LIMIT_SECONDS = 2;
const FAULTY = { ...ECHO_PROFILE, name: "faulty", handler: "faulty", runTimeoutSeconds: LIMIT_SECONDS };
/** A longer limit, for watching the actor serve others while a run hangs (on a busy machine that takes seconds). */
const PATIENT_SECONDS = 5;
const PATIENT = { ...FAULTY, name: "patient", runTimeoutSeconds: PATIENT_SECONDS };
/** Generous: the machine may be busy with other tests. */
const SLACK_MS = 4000;

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

async function fresh(env: Record<string, string>): Promise<Installation> {
  const inst = await installation(server, { profiles: [ECHO_PROFILE, FAULTY, PATIENT], env });
  installs.push(inst);
  return inst;
}

const text = (parts: { text?: string }[] | undefined) => (parts ?? []).map((p) => p.text ?? "").join("");
const startedActors = (work: CliProcess) =>
  work.lines.filter((line) => /"actorPid":\d+.*"msg":"actor started"/.test(line)).length;

/** The value of one series in a Prometheus exposition, 0 when absent. */
async function metric(port: number, series: string): Promise<number> {
  const body = await (await fetch(`http://127.0.0.1:${port}/metrics`)).text();
  const line = body.split("\n").find((l) => l.startsWith(`${series} `));
  return line === undefined ? 0 : Number(line.slice(series.length + 1));
}

async function deadLetter(inst: Installation, taskId: string): Promise<Record<string, string> | undefined> {
  for (const [, fields] of await inst.f.redis.xrange(inst.f.keys.dead(0), "-", "+")) {
    const entry = Object.fromEntries(fields.flatMap((v, i, all) => (i % 2 === 0 ? [[v, all[i + 1] ?? ""]] : [])));
    if (entry.task === taskId) return entry;
  }
  return undefined;
}

describe("the time limit", () => {
  let inst: Installation;
  let work: CliProcess;
  let metricsPort: number;
  beforeAll(async () => {
    metricsPort = await freePort();
    inst = await fresh({ A2A_WORKER_CONCURRENCY: "2", A2A_WORKER_METRICS_PORT: String(metricsPort) });
    work = startCli(inst, ["work", "--actors", "1", "--handlers", FIXTURE]);
    await work.line(/"workerId".*"msg":"actor started"/);
  });
  afterAll(async () => {
    work.child.kill("SIGTERM");
    await work.exited;
  });

  test("a handler that never settles ends FAILED at its time limit, not retried; its actor serves others meanwhile", async () => {
    const hung = await accept(inst, "[hang] forever", "patient");
    const working = await taskInState(inst, hung, "TASK_STATE_WORKING");
    const startedAt = Date.parse(working.status.timestamp ?? "");

    // The only actor has a hung run and a free slot: it completes other tasks meanwhile.
    const others = [await accept(inst, "first meanwhile"), await accept(inst, "[sleep 200] second meanwhile")];
    for (const [i, id] of others.entries()) {
      const done = await taskInState(inst, id, "TASK_STATE_COMPLETED", 5000);
      expect(text(done.artifacts[0]?.parts)).toBe(["first meanwhile", "second meanwhile"][i] ?? "");
    }
    expect((await task(inst, hung))?.state).toBe("TASK_STATE_WORKING");
    expect(startedActors(work)).toBe(1);

    const failed = await taskInState(inst, hung, "TASK_STATE_FAILED", PATIENT_SECONDS * 1000 + SLACK_MS);
    expect(text(failed.status.message?.parts)).toBe(timeLimitFailure(PATIENT_SECONDS));
    expect(text(failed.status.message?.parts)).toBe("The task exceeded its time limit of 5 s");
    const took = Date.parse(failed.status.timestamp ?? "") - startedAt;
    expect(took).toBeGreaterThanOrEqual(PATIENT_SECONDS * 1000 - 100);
    expect(took).toBeLessThan(PATIENT_SECONDS * 1000 + SLACK_MS);
    // Acknowledged, not retried: one try, the entry gone, no dead letter, the lease no longer renewed.
    expect(await run(inst, hung)).toMatchObject({ state: "done", tries: "1" });
    expect(await inst.f.redis.xlen(inst.f.keys.queue(0))).toBe(0);
    expect(await deadLetter(inst, hung)).toBeUndefined();
    const line = await work.line(new RegExp(`"taskId":"${hung}".*time limit exceeded`));
    expect(line).toContain('"level":40');
    expect(line).toContain('"runTimeoutSeconds":5');
    await waitFor(
      async () => (await metric(metricsPort, 'a2a_runs_total{outcome="timeout"}')) === 1,
      5000,
      "the timeout counted in a2a_runs_total",
    );

    // Still the same actor, and it still works.
    expect(startedActors(work)).toBe(1);
    const after = await taskInState(inst, await accept(inst, "after the hang"), "TASK_STATE_COMPLETED");
    expect(text(after.artifacts[0]?.parts)).toBe("after the hang");
  }, 30_000);

  test("the limit is per leg: a task that waited in INPUT_REQUIRED longer than the limit still completes", async () => {
    const taskId = await accept(inst, "[input] first", "faulty");
    await taskInState(inst, taskId, "TASK_STATE_INPUT_REQUIRED");
    await Bun.sleep(LIMIT_SECONDS * 1000 + 500);
    await inst.f.journal.resume({
      clientId: inst.clientId,
      profile: "faulty",
      profileQuota: 0,
      taskId,
      message: userMessage("[sleep 500] second", { taskId }),
    });
    const done = await taskInState(inst, taskId, "TASK_STATE_COMPLETED", 10_000);
    expect(text(done.artifacts.at(-1)?.parts)).toBe("second");

    // A resumed leg that hangs gets its own limit, counted from its own claim.
    const again = await accept(inst, "[input] first", "faulty");
    await taskInState(inst, again, "TASK_STATE_INPUT_REQUIRED");
    await inst.f.journal.resume({
      clientId: inst.clientId,
      profile: "faulty",
      profileQuota: 0,
      taskId: again,
      message: userMessage("[hang] now", { taskId: again }),
    });
    const failed = await taskInState(inst, again, "TASK_STATE_FAILED", LIMIT_SECONDS * 1000 + SLACK_MS);
    expect(text(failed.status.message?.parts)).toBe(timeLimitFailure(LIMIT_SECONDS));
  }, 30_000);

  test("a sweep tick applies the same limit and ends (it does not wait for the hung handler)", async () => {
    work.child.kill("SIGTERM");
    await work.exited;
    const taskId = await accept(inst, "[hang] in a sweep", "faulty");
    const started = Date.now();
    const sweep = await runCli(inst, ["sweep", "--once", "--handlers", FIXTURE]);
    expect(sweep.code).toBe(0);
    expect(Date.now() - started).toBeLessThan(LIMIT_SECONDS * 1000 + SLACK_MS + 2000);
    const failed = await taskInState(inst, taskId, "TASK_STATE_FAILED", 1000);
    expect(text(failed.status.message?.parts)).toBe(timeLimitFailure(LIMIT_SECONDS));
    work = startCli(inst, ["work", "--actors", "1", "--handlers", FIXTURE]);
  }, 30_000);
});

describe("the watchdog", () => {
  let inst: Installation;
  let work: CliProcess;
  let metricsPort: number;
  beforeAll(async () => {
    metricsPort = await freePort();
    inst = await fresh({
      A2A_WORKER_MAX_ATTEMPTS: "2",
      A2A_WORKER_STALL_SECONDS: "2",
      A2A_WORKER_ACTOR_MAX_MEMORY_MB: "200",
      // No restart allowed at all: only the watchdog's own kills happen here, and they must not count.
      A2A_WORKER_RESTART_INTENSITY: "0",
      // An actor that lived 2 s restarts after the base backoff: the kills here come quickly one after another.
      A2A_WORKER_RESTART_PERIOD_SECONDS: "2",
      A2A_WORKER_METRICS_PORT: String(metricsPort),
    });
    work = startCli(inst, ["work", "--actors", "1", "--handlers", FIXTURE]);
    await work.line(/"workerId".*"msg":"actor started"/);
  });
  afterAll(async () => {
    work.child.kill("SIGTERM");
    await work.exited;
  });

  /** Waits for the task to fail with attempts exhausted and returns the kill lines of `reason` logged meanwhile. */
  async function failsAfterKills(taskId: string, reason: string): Promise<string[]> {
    const failed = await taskInState(inst, taskId, "TASK_STATE_FAILED", 30_000);
    expect(text(failed.status.message?.parts)).toBe(
      "The task failed: its run was attempted 2 times without finishing (attempts exhausted)",
    );
    // The dead letter follows the FAILED status.
    const dead = await waitFor(() => deadLetter(inst, taskId), 5000, "the dead letter");
    expect(dead).toMatchObject({ task: taskId, reason: "attempts exhausted (2)" });
    return work.lines.filter((line) => line.includes(`"reason":"${reason}"`) && /killed it \(SIGKILL\)/.test(line));
  }

  test("a spinning handler's actor is killed as stalled; the task fails after maxAttempts, dead-lettered", async () => {
    const taskId = await accept(inst, "[spin] round and round", "faulty");
    const kills = await failsAfterKills(taskId, "stalled");
    // One kill per attempt; each line at error level with the actor's pid and how long it was silent.
    expect(kills).toHaveLength(2);
    for (const line of kills) {
      expect(line).toContain('"level":50');
      expect(line).toMatch(/"actorPid":\d+/);
      expect(Number(/"silentSeconds":([\d.]+)/.exec(line)?.[1])).toBeGreaterThanOrEqual(2);
    }
    const pids = kills.map((line) => Number(/"actorPid":(\d+)/.exec(line)?.[1]));
    expect(new Set(pids).size).toBe(2);
    for (const pid of pids) expect(isRunning(pid)).toBe(false);
    expect(await metric(metricsPort, 'a2a_actor_kills_total{reason="stalled"}')).toBe(2);

    // Past restartIntensity 0, the supervisor is still there with a fresh actor that works.
    expect(work.child.exitCode).toBeNull();
    expect(work.lines.some((line) => /restart intensity exceeded/.test(line))).toBe(false);
    const after = await taskInState(inst, await accept(inst, "still here"), "TASK_STATE_COMPLETED", 15_000);
    expect(text(after.artifacts[0]?.parts)).toBe("still here");
  }, 60_000);

  test("a memory hog's actor is killed for memory; the task fails after maxAttempts; the supervisor goes on", async () => {
    const taskId = await accept(inst, "[hog] more and more", "faulty");
    const kills = await failsAfterKills(taskId, "memory");
    expect(kills).toHaveLength(2);
    for (const line of kills) {
      expect(line).toContain('"level":50');
      expect(line).toContain('"actorMaxMemoryMb":200');
      expect(Number(/"rssMb":(\d+)/.exec(line)?.[1])).toBeGreaterThan(200);
    }
    expect(await metric(metricsPort, 'a2a_actor_kills_total{reason="memory"}')).toBe(2);
    expect(await metric(metricsPort, "a2a_actor_restarts_total")).toBeGreaterThanOrEqual(4);

    // Four watchdog kills past restartIntensity 0: still supervising, and the slot serves again.
    expect(work.child.exitCode).toBeNull();
    expect(work.lines.some((line) => /restart intensity exceeded/.test(line))).toBe(false);
    const restarts = work.lines.filter((line) => /"killedFor":"(memory|stalled)".*actor exited; restarting/.test(line));
    expect(restarts).toHaveLength(4);
    const after = await taskInState(inst, await accept(inst, "still here"), "TASK_STATE_COMPLETED", 15_000);
    expect(text(after.artifacts[0]?.parts)).toBe("still here");
  }, 60_000);

  test("regression: a run reclaimed with a spinning run is not dragged along and failed with it", async () => {
    // The innocent run is in flight when the spin starts, so the kill costs it a try. Taken over together (the old
    // reclaim took every expired entry at once), it went with the spinner to the next actor and died with it there.
    const innocent = await accept(inst, "[sleep 400] innocent");
    await taskInState(inst, innocent, "TASK_STATE_WORKING");
    const spinner = await accept(inst, "[spin] poison", "faulty");
    await failsAfterKills(spinner, "stalled");
    const done = await taskInState(inst, innocent, "TASK_STATE_COMPLETED", 15_000);
    expect(text(done.artifacts[0]?.parts)).toBe("innocent");
    expect((await run(inst, innocent)).tries).toBe("2");
    expect(await deadLetter(inst, innocent)).toBeUndefined();
  }, 60_000);

  test("an actor of `start` whose event loop stops is killed as stalled and replaced", async () => {
    work.child.kill("SIGTERM");
    await work.exited;
    const start = startCli(inst, ["start", "--port", "0", "--actors", "1", "--handlers", FIXTURE], {
      A2A_SERVER_HOST: "127.0.0.1",
      A2A_WORKER_METRICS_PORT: "0",
    });
    // The actor's own line: it has loaded and runs (until then a longer silence is allowed).
    const first = await start.line(/"workerId".*"msg":"actor started"/);
    await start.line(/serving on/);
    const pid = Number(/"pid":(\d+)/.exec(first)?.[1]);
    process.kill(pid, "SIGSTOP"); // a frozen event loop: no ping any more
    const kill = await start.line(new RegExp(`"reason":"stalled".*"actorPid":${pid}.*killed it`), 10_000);
    expect(kill).toContain('"level":50');
    await waitFor(async () => startedActors(start) === 2, 10_000, "a replacement actor");
    expect(isRunning(pid)).toBe(false);
    start.child.kill("SIGTERM");
    await start.exited;
  }, 30_000);
});

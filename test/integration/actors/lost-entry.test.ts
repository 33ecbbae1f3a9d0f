// A run that a failover left running with its lease expired and its queue entry gone (the new primary kept the claim
// but not the entry: a Redis failover that loses writes leaves this): the reclaim pass cannot see it, since it reads
// the group's pending entries. The state is built by hand in a real Redis, without a failover; then the real workers
// (`work`, and `sweep --once` ticks) find the run, run it again, or fail it once its attempts are exhausted.
import { afterAll, beforeAll, expect, test } from "bun:test";
import { Reclaimer } from "../../../src/actors/reclaimer.ts";
import { QUEUE_GROUP, toQueueEntries } from "../../../src/journal/index.ts";
import { checkInvariants, terminalEvents } from "../../faults/invariants.ts";
import { redisTimeMs, startRedis, type TestRedis } from "../../support/redis.ts";
import {
  accept,
  cleanup,
  type Installation,
  installation,
  killStarted,
  liveWorkers,
  run,
  runCli,
  startCli,
  task,
  taskInState,
  waitFor,
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

/**
 * Accepts a task and leaves it as a lossy failover can: claimed by an actor that is gone (WORKING, its run running
 * with a lease of 1 s, `maxAttempts` passed to the claim), and its queue entry neither in the queue nor pending.
 * Resolves once the lease has lapsed by Redis's clock, the one the claim compares with.
 */
async function lostRun(inst: Installation, maxAttempts: number): Promise<string> {
  const { f } = inst;
  await f.ledger.ensureGroup(0);
  await f.ledger.beat(0, 300);
  const taskId = await accept(inst, "lost in a failover");
  const reply = (await f.redis.xreadgroup("GROUP", QUEUE_GROUP, "gone", "COUNT", 1, "STREAMS", f.keys.queue(0), ">")) as
    | [string, [string, string[]][]][]
    | null;
  const [entry] = toQueueEntries(0, reply?.[0]?.[1] ?? []);
  if (!entry) throw new Error("no queue entry read");
  const claim = await f.ledger.claim(0, taskId, entry.id, "gone", 1000, maxAttempts, inst.clientId, true);
  if (typeof claim === "string") throw new Error(`claim refused: ${claim}`);
  // the run's start, as its actor writes it before it is lost
  const status = { state: "TASK_STATE_WORKING" as const, timestamp: new Date().toISOString() };
  const contextId = claim.record?.contextId ?? "";
  const started = await f.ledger.transition({
    claim,
    kind: "status",
    state: "TASK_STATE_WORKING",
    status,
    event: { statusUpdate: { taskId, contextId, status } },
    retentionSeconds: 3600,
    journalRetentionSeconds: 0,
  });
  expect(started.ok).toBe(true);
  await f.redis.xack(f.keys.queue(0), QUEUE_GROUP, entry.id);
  await f.redis.xdel(f.keys.queue(0), entry.id);
  const lease = Number((await run(inst, taskId)).lease);
  await waitFor(async () => (await redisTimeMs(f.redis)) > lease, 10_000, "the lease lapsed");
  expect((await task(inst, taskId))?.state).toBe("TASK_STATE_WORKING");
  expect(await f.redis.xlen(f.keys.queue(0))).toBe(0);
  // what the bug was: no reclaim pass finds it (XAUTOCLAIM reads the pending entries, and there are none)
  expect(await new Reclaimer(f.redis, f.keys, "probe", 0).reclaim(10)).toEqual([]);
  return taskId;
}

async function settled(inst: Installation): Promise<void> {
  const report = await checkInvariants(inst.f.redis, inst.f.prefix, { stuckAfterMs: 5000, requireSettled: true });
  expect(report.violations).toEqual([]);
}

test("regression: a run left running past its lease without a queue entry (a lossy failover) is found by the actors and run again", async () => {
  const inst = await installation(server);
  installs.push(inst);
  const taskId = await lostRun(inst, 3);
  const work = startCli(inst, ["work", "--actors", "1"]);
  try {
    await liveWorkers(inst, 1);
    const done = await taskInState(inst, taskId, "TASK_STATE_COMPLETED", 30_000);
    expect(done.artifacts[0]?.parts).toEqual([{ text: "lost in a failover" }]);
    // the lost try counted: claimed twice, each with its own token
    expect(await run(inst, taskId)).toMatchObject({ state: "done", fence: "2", tries: "2" });
    expect(await terminalEvents(inst.f.redis, inst.f.keys.journal(0, taskId))).toBe(1);
    await work.line(/runs whose queue entry was gone queued again/, 10_000);
    await settled(inst);
  } finally {
    work.child.kill("SIGTERM");
    await work.exited;
  }
}, 60_000);

test("regression: such a run whose attempts are exhausted is failed with a reason by sweep ticks, its entry dead-lettered", async () => {
  const inst = await installation(server, { env: { A2A_WORKER_MAX_ATTEMPTS: "1" } });
  installs.push(inst);
  const taskId = await lostRun(inst, 1);
  // The first tick queues the run again (retention comes last in a tick); a later one claims it, exhausted.
  const failed = await waitFor(
    async () => {
      expect((await runCli(inst, ["sweep", "--once"])).code).toBe(0);
      const found = await task(inst, taskId);
      return found?.state === "TASK_STATE_FAILED" && found;
    },
    30_000,
    "the task FAILED",
  );
  expect(JSON.stringify(failed.status)).toContain("attempts exhausted");
  expect(await run(inst, taskId)).toMatchObject({ state: "done", tries: "2" });
  const dead = await inst.f.redis.xrange(inst.f.keys.dead(0), "-", "+");
  expect(dead.map(([, fields]) => fields[fields.indexOf("task") + 1])).toEqual([taskId]);
  expect(await terminalEvents(inst.f.redis, inst.f.keys.journal(0, taskId))).toBe(1);
  await settled(inst);
}, 60_000);

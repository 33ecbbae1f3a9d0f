// The supervisor as a real process tree: a SIGKILLed actor is replaced and its run reclaimed after the lease; a frozen
// actor's late writes are refused by the fence; a SIGKILLed supervisor leaves no actor; SIGTERM hands runs back.
import { expect, test } from "bun:test";
import {
  accept,
  ECHO_PROFILE,
  events,
  FAULTS_PROFILE,
  type Installation,
  installationSuite,
  isRunning,
  liveWorkers,
  run,
  startCli,
  task,
  taskInState,
  waitFor,
  workers,
} from "./harness.ts";

const newInstallation = installationSuite();

async function fresh(): Promise<Installation> {
  const inst = await newInstallation({ profiles: [ECHO_PROFILE, FAULTS_PROFILE] });
  return inst;
}

/** Live consumers (heartbeat hash present, the process running, the live key the accept script checks written). */
async function liveConsumers(inst: Installation, count: number) {
  return (await liveWorkers(inst, count)).filter((w) => w.mode === "consume");
}

test("an actor SIGKILLed mid-run is replaced as the run's exit; the run is reclaimed after the lease, completes once", async () => {
  const inst = await fresh();
  const work = startCli(inst, ["work", "--actors", "2"]);
  await liveConsumers(inst, 2);
  const taskId = await accept(inst, "[progress] [sleep 2500] survived");
  // The handler's own progress note: its actor told the supervisor it runs a handler before starting it (WORKING
  // alone is written by the claim, before that).
  await waitFor(
    async () =>
      (await task(inst, taskId))?.status.message?.parts.some((p) => "text" in p && p.text === "Echo is working"),
    15_000,
    "the handler's progress note",
  );
  const owner = (await run(inst, taskId)).owner;
  const victim = (await workers(inst)).find((w) => w.id === owner);
  if (!victim) throw new Error(`no heartbeat for run owner ${owner}`);
  const killedAt = Date.now();
  process.kill(victim.pid, "SIGKILL");

  // Killed while its handler ran: the run's exit, which does not count toward the restart intensity.
  await work.line(new RegExp(`"actorPid":${victim.pid},.*"signal":"SIGKILL","cause":"run".*actor exited; restarting`));
  const done = await taskInState(inst, taskId, "TASK_STATE_COMPLETED", 15_000);
  expect(done.artifacts.map((a) => a.parts)).toEqual([[{ text: "survived" }]]);

  // Two claims in all (fence 2): the first actor's, and one reclaim after its lease had expired.
  const ran = await run(inst, taskId);
  expect(ran.fence).toBe("2");
  expect(ran.tries).toBe("2");
  const working = (await events(inst, taskId)).filter(
    // one WORKING per claim (the handler's progress notes are WORKING with a message)
    (e) => e.event.statusUpdate?.status.state === "TASK_STATE_WORKING" && !e.event.statusUpdate.status.message,
  );
  expect(working).toHaveLength(2);
  const reclaimedAt = Date.parse(working[1]?.event.statusUpdate?.status.timestamp ?? "");
  // The last renewal was at most a third of the 2 s lease before the kill; the reclaim waited for the lease to pass.
  expect(reclaimedAt - killedAt).toBeGreaterThanOrEqual(1300);

  // The supervisor replaced the killed actor: two live consumers again, the victim not among them.
  const now = await liveConsumers(inst, 2);
  expect(now.map((w) => w.pid)).not.toContain(victim.pid);
}, 30_000);

test("a frozen actor that wakes after its run was reclaimed writes nothing (the fence refuses it)", async () => {
  const inst = await fresh();
  const work = startCli(inst, ["work", "--actors", "2"]);
  await liveConsumers(inst, 2);
  const taskId = await accept(inst, "[sleep 2000] fenced");
  await taskInState(inst, taskId, "TASK_STATE_WORKING");
  const owner = (await run(inst, taskId)).owner;
  const frozen = (await workers(inst)).find((w) => w.id === owner);
  if (!frozen) throw new Error(`no heartbeat for run owner ${owner}`);
  process.kill(frozen.pid, "SIGSTOP");
  try {
    const done = await taskInState(inst, taskId, "TASK_STATE_COMPLETED", 15_000);
    const before = await events(inst, taskId);
    process.kill(frozen.pid, "SIGCONT");
    await work.line(new RegExp(`"pid":${frozen.pid},.*lease lost`));
    await Bun.sleep(300);
    const after = await task(inst, taskId);
    expect(after?.rev).toBe(done.rev);
    expect(after?.artifacts).toEqual(done.artifacts);
    expect(await events(inst, taskId)).toEqual(before);
    expect((await run(inst, taskId)).fence).toBe("2");
  } finally {
    if (isRunning(frozen.pid)) process.kill(frozen.pid, "SIGCONT");
  }
}, 30_000);

test("SIGKILL of the supervisor leaves no actor running, and the orphaned run is handed back", async () => {
  const inst = await fresh();
  const work = startCli(inst, ["work", "--actors", "2"]);
  const actors = await liveConsumers(inst, 2);
  const taskId = await accept(inst, "[sleep 30000] orphaned", "faults");
  await taskInState(inst, taskId, "TASK_STATE_WORKING");
  process.kill(work.pid, "SIGKILL");
  await waitFor(async () => actors.every((a) => !isRunning(a.pid)), 8000, "every actor to exit");
  const ran = await run(inst, taskId);
  expect(ran.state).toBe("queued");
  expect(await inst.f.redis.xlen(inst.f.keys.queue(0))).toBe(1);
}, 30_000);

test("SIGTERM during a long run: the run is queued again at once and the next worker completes it", async () => {
  const inst = await fresh();
  const first = startCli(inst, ["work", "--actors", "1"]);
  await liveConsumers(inst, 1);
  const taskId = await accept(inst, "[sleep 4000] drained");
  await taskInState(inst, taskId, "TASK_STATE_WORKING");
  first.child.kill("SIGTERM");
  expect((await first.exited).code).toBe(0);

  // Handed back: queued, a fresh undelivered entry, nothing pending, the drained try not counted.
  const handedBack = await run(inst, taskId);
  expect(handedBack).toMatchObject({ state: "queued", owner: "", tries: "0" });
  const queue = inst.f.keys.queue(0);
  expect(await inst.f.redis.xlen(queue)).toBe(1);
  expect((await inst.f.redis.xpending(queue, "actors"))[0]).toBe(0);
  expect((await task(inst, taskId))?.status.message?.parts).toEqual([
    { text: "The worker stopped; the run is queued again" },
  ]);

  const next = startCli(inst, ["work", "--actors", "1"]);
  const done = await taskInState(inst, taskId, "TASK_STATE_COMPLETED", 15_000);
  expect(done.artifacts.map((a) => a.parts)).toEqual([[{ text: "drained" }]]);
  next.child.kill("SIGTERM");
  expect((await next.exited).code).toBe(0);
}, 30_000);

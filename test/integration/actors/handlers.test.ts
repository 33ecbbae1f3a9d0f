// Handlers run by real actors: cancel of a running 30 s run ends CANCELED in under 2 s; INPUT_REQUIRED resumes the
// same run; AUTH_REQUIRED; failures with a shown or a generic reason; streamed chunks, also with a write interval; a
// refused tool in the task; echo's limits: [crash] and [hang] are text to it, a long [sleep] or a huge [chunks] is
// refused.
import { afterAll, beforeAll, expect, test } from "bun:test";
import { outputLimitFailure } from "../../../src/actors/index.ts";
import { userMessage } from "../../support/journal.ts";
import { startRedis, type TestRedis } from "../../support/redis.ts";
import {
  accept,
  type CliProcess,
  cleanup,
  ECHO_PROFILE,
  events,
  FAULTS_PROFILE,
  type Installation,
  installation,
  killStarted,
  liveWorkers,
  run,
  startCli,
  taskInState,
  workers,
} from "./harness.ts";

/** worker.maxTaskBytes of this suite: far above every other test's task, below a 120 KB echo's (input + answer). */
const MAX_TASK_BYTES = 200_000;

let server: TestRedis;
let inst: Installation;
let work: CliProcess;
beforeAll(async () => {
  server = await startRedis();
  inst = await installation(server, {
    profiles: [
      { ...ECHO_PROFILE, tools: ["clock", "read_file"] },
      { ...ECHO_PROFILE, name: "quiet", handler: "noop" },
      { ...ECHO_PROFILE, name: "paced", artifactWriteIntervalMs: 100 },
      FAULTS_PROFILE,
    ],
    env: { A2A_WORKER_MAX_TASK_BYTES: String(MAX_TASK_BYTES) },
  });
  work = startCli(inst, ["work", "--actors", "2"]);
  await liveWorkers(inst, 2);
});
afterAll(async () => {
  work.child.kill("SIGTERM");
  await work.exited;
  killStarted();
  cleanup(inst);
  await server.stop();
});

const RETENTION = { retentionSeconds: 60, journalRetentionSeconds: 60 };
const text = (parts: { text?: string }[] | undefined) => (parts ?? []).map((p) => p.text ?? "").join("");

test("cancel of a running run that takes 30 s ends it CANCELED in under 2 s", async () => {
  const taskId = await accept(inst, "[sleep 30000] slow", "faults");
  await taskInState(inst, taskId, "TASK_STATE_WORKING");
  const started = Date.now();
  const { canceledNow } = await inst.f.journal.cancel(inst.clientId, taskId, "faults", RETENTION);
  expect(canceledNow).toBe(false); // running: the actor is asked and ends it
  const canceled = await taskInState(inst, taskId, "TASK_STATE_CANCELED", 5000);
  expect(Date.now() - started).toBeLessThan(2000);
  expect(text(canceled.status.message?.parts)).toBe("Canceled at the client's request");
  expect((await run(inst, taskId)).state).toBe("done");
  expect(await inst.f.redis.xlen(inst.f.keys.queue(0))).toBe(0);
});

test("INPUT_REQUIRED keeps the question in the history; the follow-up resumes the task and completes", async () => {
  const taskId = await accept(inst, "[input] first");
  const waiting = await taskInState(inst, taskId, "TASK_STATE_INPUT_REQUIRED");
  const question = "Echo asks for more input: send another message to continue.";
  expect(text(waiting.status.message?.parts)).toBe(question);
  expect(waiting.history.map((m) => [m.role, text(m.parts)])).toEqual([
    ["ROLE_USER", "[input] first"],
    ["ROLE_AGENT", question],
  ]);
  await inst.f.journal.resume({
    clientId: inst.clientId,
    profile: "echo",
    profileQuota: 0,
    taskId,
    message: userMessage("second", { taskId }),
  });
  const done = await taskInState(inst, taskId, "TASK_STATE_COMPLETED");
  expect(done.history.map((m) => text(m.parts))).toEqual(["[input] first", question, "second"]);
  expect(done.artifacts).toEqual([{ artifactId: "response-2", name: "response", parts: [{ text: "second" }] }]);
});

test("AUTH_REQUIRED", async () => {
  const taskId = await accept(inst, "[auth] needs a login");
  const waiting = await taskInState(inst, taskId, "TASK_STATE_AUTH_REQUIRED");
  expect(text(waiting.status.message?.parts)).toContain("requires authorization");
});

test("a HandlerFailure's reason is shown; any other error shows a generic reason and goes to the log", async () => {
  const shown = await taskInState(inst, await accept(inst, "[fail] now"), "TASK_STATE_FAILED");
  expect(text(shown.status.message?.parts)).toBe("Echo failed as instructed");
  // read_file is allowed but the profile has no workspace: the tool throws NoWorkspaceError
  const hidden = await taskInState(inst, await accept(inst, "[tool read_file] x"), "TASK_STATE_FAILED");
  expect(text(hidden.status.message?.parts)).toBe("The agent failed while working on this task");
  await work.line(/"type":"NoWorkspaceError".*"msg":"handler failed"/);
});

test("streamed chunks: one artifact, append after the first chunk, lastChunk on the final one", async () => {
  const taskId = await accept(inst, "[chunks 5 20] abcdefghij");
  const done = await taskInState(inst, taskId, "TASK_STATE_COMPLETED");
  expect(done.artifacts).toEqual([{ artifactId: "response-1", name: "response", parts: [{ text: "abcdefghij" }] }]);
  const updates = (await events(inst, taskId)).flatMap((e) => (e.event.artifactUpdate ? [e.event.artifactUpdate] : []));
  // Chunks asked for while a write is in flight, or in the same turn as the run's end, share an update (on this
  // machine the last two usually do): whole chunks, in order, the first without append, only the last with lastChunk.
  const texts = updates.map((u) => text(u.artifact.parts));
  expect(texts.join("")).toBe("abcdefghij");
  expect(texts.every((t) => t.length > 0 && t.length % 2 === 0)).toBe(true);
  expect(texts[0]).toBe("ab");
  expect(updates.map((u) => u.append ?? false)).toEqual(updates.map((_, i) => i > 0));
  expect(updates.map((u) => u.lastChunk ?? false)).toEqual(updates.map((_, i) => i === updates.length - 1));
});

test("with artifactWriteIntervalMs, chunks a few ms apart share few updates, whole and in order, before the end", async () => {
  const answer = Array.from({ length: 40 }, (_, i) => String(i).padStart(2, "0")).join("");
  const taskId = await accept(inst, `[chunks 40 5] ${answer}`, "paced");
  const done = await taskInState(inst, taskId, "TASK_STATE_COMPLETED");
  expect(done.artifacts).toEqual([{ artifactId: "response-1", name: "response", parts: [{ text: answer }] }]);
  const entries = await events(inst, taskId);
  const journal = entries.map((e) => e.event);
  const updates = journal.flatMap((event) => (event.artifactUpdate ? [event.artifactUpdate] : []));
  // 40 chunks over ~200 ms at one write per 100 ms: about 3 updates (one per chunk without the interval); bounded by
  // the time the updates spanned (journal entry ids are Redis's clock, ms), so that a slow host cannot fail it: one
  // step per 100 ms, the end's step, and one for the first step's own latency
  const atMs = entries.filter((e) => e.event.artifactUpdate).map((e) => Number(e.id.split("-")[0]));
  const spanMs = (atMs.at(-1) ?? 0) - (atMs[0] ?? 0);
  expect(updates.length).toBeLessThanOrEqual(Math.floor(spanMs / 100) + 3);
  expect(updates.length).toBeLessThan(40);
  const texts = updates.map((u) => text(u.artifact.parts));
  expect(texts.join("")).toBe(answer);
  expect(texts.every((t) => t.length > 0 && t.length % 2 === 0)).toBe(true);
  expect(updates.map((u) => u.lastChunk ?? false)).toEqual(updates.map((_, i) => i === updates.length - 1));
  expect(journal.at(-1)?.statusUpdate?.status.state).toBe("TASK_STATE_COMPLETED");
});

test("a tool outside the allow-list is refused, and the refusal is visible in the task", async () => {
  const taskId = await accept(inst, "[tool shell] x");
  const failed = await taskInState(inst, taskId, "TASK_STATE_FAILED");
  const refusal = 'Tool "shell" is not allowed for this agent; the call was refused';
  expect(failed.history.map((m) => [m.role, text(m.parts)])).toContainEqual(["ROLE_AGENT", refusal]);
  const statuses = (await events(inst, taskId)).flatMap((e) => (e.event.statusUpdate ? [e.event.statusUpdate] : []));
  expect(statuses.some((s) => text(s.status.message?.parts) === refusal && s.metadata?.refusedTool === "shell")).toBe(
    true,
  );
  // an allowed tool runs: clock's result is echoed
  const clock = await taskInState(inst, await accept(inst, "[tool clock] time"), "TASK_STATE_COMPLETED");
  expect(text(clock.artifacts[0]?.parts)).toMatch(/^\{"now":"\d{4}-.*Z"\}\ntime$/);
});

test("a [crash] or [hang] message to echo is echoed as text: the task completes and no actor exits", async () => {
  const before = (await workers(inst)).map((w) => w.pid).sort();
  const crash = await taskInState(inst, await accept(inst, "[crash] boom"), "TASK_STATE_COMPLETED");
  expect(text(crash.artifacts[0]?.parts)).toBe("[crash] boom");
  const hang = await taskInState(inst, await accept(inst, "[hang] [progress] forever"), "TASK_STATE_COMPLETED");
  expect(text(hang.artifacts[0]?.parts)).toBe("[hang] forever");
  expect((await workers(inst)).map((w) => w.pid).sort()).toEqual(before);
  expect(work.lines.filter((line) => /actor exited/.test(line))).toEqual([]);
});

test("echo refuses a long [sleep] or a huge [chunks] before doing anything: the task fails with the limit", async () => {
  const cases: [string, string][] = [
    ["[sleep 20000] late", "Echo waits at most 10000 ms in all, sleeps and chunk delays together (asked for 20000 ms)"],
    [
      "[sleep 6000] [progress] [sleep 6000] twice",
      "Echo waits at most 10000 ms in all, sleeps and chunk delays together (asked for 12000 ms)",
    ],
    ["[chunks 101] many", "Echo sends at most 100 chunks (asked for 101)"],
    [
      "[chunks 100 200] slow",
      "Echo waits at most 10000 ms in all, sleeps and chunk delays together (asked for 19800 ms)",
    ],
  ];
  for (const [message, reason] of cases) {
    const taskId = await accept(inst, message);
    const failed = await taskInState(inst, taskId, "TASK_STATE_FAILED");
    expect(text(failed.status.message?.parts)).toBe(reason);
    // Nothing ran: no progress note, no artifact; one try.
    const statuses = (await events(inst, taskId)).flatMap((e) => (e.event.statusUpdate ? [e.event.statusUpdate] : []));
    expect(statuses.map((u) => u.status.state)).toEqual(["TASK_STATE_WORKING", "TASK_STATE_FAILED"]);
    expect(failed.artifacts).toEqual([]);
    expect((await run(inst, taskId)).tries).toBe("1");
  }
  // At the limits, echo runs: 100 chunks, and 10 s of waiting in all would pass (here 99 × 1 ms).
  const done = await taskInState(inst, await accept(inst, `[chunks 100 1] ${"x".repeat(100)}`), "TASK_STATE_COMPLETED");
  expect(text(done.artifacts[0]?.parts)).toBe("x".repeat(100));
});

test("noop completes with no output", async () => {
  const taskId = await accept(inst, "anything", "quiet");
  const done = await taskInState(inst, taskId, "TASK_STATE_COMPLETED");
  expect(done.artifacts).toEqual([]);
});

test("an answer that would take its task past worker.maxTaskBytes stops there: FAILED, saying so, with what fit", async () => {
  const input = "y".repeat(120_000);
  // streamed: 10 chunks of 12 KB, 20 ms apart, each its own step; the one that would pass the limit is refused
  const streamed = await accept(inst, `[chunks 10 20] ${input}`);
  const failed = await taskInState(inst, streamed, "TASK_STATE_FAILED");
  expect(text(failed.status.message?.parts)).toBe(outputLimitFailure(MAX_TASK_BYTES));
  // (the updates that fit stay in the task's chunk store: read the task as GetTask does)
  const stored = await inst.f.journal.snapshot(inst.clientId, streamed);
  const kept = text(stored?.record.artifacts[0]?.parts);
  expect(kept.length).toBeGreaterThan(0);
  expect(kept.length).toBeLessThan(input.length);
  expect(input.startsWith(kept)).toBe(true);
  expect(Number(await inst.f.redis.hget(inst.f.keys.task(0, streamed), "bytes"))).toBeLessThanOrEqual(MAX_TASK_BYTES);
  // answered in one step: that step is written as the failure, with no artifact
  const whole = await accept(inst, input);
  const refused = await taskInState(inst, whole, "TASK_STATE_FAILED");
  expect(text(refused.status.message?.parts)).toBe(outputLimitFailure(MAX_TASK_BYTES));
  expect(refused.artifacts).toEqual([]);
  const statuses = (await events(inst, whole)).flatMap((e) => (e.event.statusUpdate ? [e.event.statusUpdate] : []));
  expect(statuses.map((u) => u.status.state)).toEqual(["TASK_STATE_WORKING", "TASK_STATE_FAILED"]);
  // neither is retried nor left running: one try each, both out of the client's active set
  for (const taskId of [streamed, whole]) expect((await run(inst, taskId)).tries).toBe("1");
  const active = await inst.f.redis.smembers(inst.f.keys.clientActive(0, inst.clientId));
  expect(active.filter((taskId) => taskId === streamed || taskId === whole)).toEqual([]);
  expect(work.lines.filter((line) => /size limit reached/.test(line)).length).toBeGreaterThanOrEqual(2);
  expect(work.lines.filter((line) => /actor exited/.test(line))).toEqual([]);
});

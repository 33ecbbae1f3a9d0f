// Handlers run by real actors: cancel of a running 30 s echo ends CANCELED in under 2 s; INPUT_REQUIRED resumes the
// same run; AUTH_REQUIRED; failures with a shown or a generic reason; streamed chunks; a refused tool in the task.
import { afterAll, beforeAll, expect, test } from "bun:test";
import { userMessage } from "../../support/journal.ts";
import { startRedis, type TestRedis } from "../../support/redis.ts";
import {
  accept,
  type CliProcess,
  cleanup,
  ECHO_PROFILE,
  events,
  type Installation,
  installation,
  killStarted,
  run,
  startCli,
  taskInState,
  waitFor,
  workers,
} from "./harness.ts";

let server: TestRedis;
let inst: Installation;
let work: CliProcess;
beforeAll(async () => {
  server = await startRedis();
  inst = await installation(server, {
    profiles: [
      { ...ECHO_PROFILE, tools: ["clock", "read_file"] },
      { ...ECHO_PROFILE, name: "quiet", handler: "noop" },
    ],
  });
  work = startCli(inst, ["work", "--actors", "2"]);
  await waitFor(async () => (await workers(inst)).length === 2, 10_000, "two actors");
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

test("cancel of a running echo that takes 30 s ends it CANCELED in under 2 s", async () => {
  const taskId = await accept(inst, "[sleep 30000] slow");
  await taskInState(inst, taskId, "TASK_STATE_WORKING");
  const started = Date.now();
  const { canceledNow } = await inst.f.journal.cancel(inst.clientId, taskId, "echo", RETENTION);
  expect(canceledNow).toBe(false); // running: the actor is asked and ends it
  const canceled = await taskInState(inst, taskId, "TASK_STATE_CANCELED", 5000);
  expect(Date.now() - started).toBeLessThan(2000);
  expect(text(canceled.status.message?.parts)).toBe("Canceled at the client's request");
  expect((await run(inst, taskId)).state).toBe("done");
  expect(await inst.f.redis.xlen(inst.f.keys.queue(0))).toBe(0);
});

test("INPUT_REQUIRED keeps the question in the history; the follow-up resumes the same run and completes", async () => {
  const taskId = await accept(inst, "[input] first");
  const waiting = await taskInState(inst, taskId, "TASK_STATE_INPUT_REQUIRED");
  const question = "Echo asks for more input: send another message to continue.";
  expect(text(waiting.status.message?.parts)).toBe(question);
  expect(waiting.history.map((m) => [m.role, text(m.parts)])).toEqual([
    ["ROLE_USER", "[input] first"],
    ["ROLE_AGENT", question],
  ]);
  const runId = waiting.runId;
  await inst.f.journal.resume({
    clientId: inst.clientId,
    profile: "echo",
    profileQuota: 0,
    taskId,
    message: userMessage("second", { taskId }),
  });
  const done = await taskInState(inst, taskId, "TASK_STATE_COMPLETED");
  expect(done.runId).toBe(runId);
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
  expect(updates.map((u) => [text(u.artifact.parts), u.append ?? false, u.lastChunk ?? false])).toEqual([
    ["ab", false, false],
    ["cd", true, false],
    ["ef", true, false],
    ["gh", true, false],
    ["ij", true, true],
  ]);
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

test("noop completes with no output", async () => {
  const taskId = await accept(inst, "anything", "quiet");
  const done = await taskInState(inst, taskId, "TASK_STATE_COMPLETED");
  expect(done.artifacts).toEqual([]);
});

// Two @a2a-js/sdk executors, written as the SDK's samples write them, served by a real installation through
// fromAgentExecutor: a real `work` supervisor loads them with --handlers, a real gateway answers A2A clients. Blocking,
// streaming, resubscribe, input-required and cancel behave as the SDK's server would make them; a worker killed in
// the middle of a streamed answer costs a retry, not the answer.
import { afterAll, beforeAll, expect, test } from "bun:test";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { A2aClient } from "../../../src/client/index.ts";
import { loadConfig } from "../../../src/config/index.ts";
import { type RunningGateway, startGateway } from "../../../src/gateway/index.ts";
import { createLogger } from "../../../src/log.ts";
import type { Message, StreamResponse, Task } from "../../../src/protocol/index.ts";
import { startRedis, type TestRedis } from "../../support/redis.ts";
import { tempDir } from "../../support/temp-dir.ts";
import {
  type CliProcess,
  cleanup,
  type Installation,
  installation,
  isRunning,
  killStarted,
  liveWorkers,
  startCli,
  waitFor,
} from "../actors/harness.ts";
import { STORY } from "./story-executor.ts";

const HANDLERS = new URL("./sdk-handlers.ts", import.meta.url).pathname;
const STORY_TEXT = STORY.join("");
const profile = (name: string) => ({
  name,
  handler: name,
  description: name,
  skill: { id: name, name, description: name },
});

let server: TestRedis;
let inst: Installation;
let work: CliProcess;
let gateway: RunningGateway;
let cancelLog: string;
let apiKey: string;

const client = (name: string) => new A2aClient({ endpoint: `${gateway.url}/a2a/${name}`, apiKey });
const say = (text: string, extra: Partial<Message> = {}): Message => ({
  messageId: crypto.randomUUID(),
  role: "ROLE_USER",
  parts: [{ text }],
  ...extra,
});
const artifactText = (task: Task) =>
  (task.artifacts ?? []).flatMap((artifact) => artifact.parts.map((part) => ("text" in part ? part.text : "")));

beforeAll(async () => {
  server = await startRedis();
  cancelLog = join(tempDir("a2a-sdk-"), "cancels");
  inst = await installation(server, {
    profiles: [profile("story"), profile("greeter")],
    env: { TEST_SDK_CANCEL_LOG: cancelLog, A2A_WORKER_METRICS_PORT: "0" },
  });
  apiKey = (await inst.f.clients.add({ name: "sdk-adapter" })).apiKey;
  work = startCli(inst, ["work", "--actors", "1", "--handlers", HANDLERS]);
  await liveWorkers(inst, 1);
  gateway = await startGateway(loadConfig({ env: inst.env }), { port: 0, logger: createLogger("gateway", "error") });
});

afterAll(async () => {
  await gateway?.stop();
  work?.child.kill("SIGTERM");
  await work?.exited;
  killStarted();
  cleanup(inst);
  await server.stop();
});

async function collect(events: AsyncIterable<StreamResponse>): Promise<StreamResponse[]> {
  const seen: StreamResponse[] = [];
  for await (const event of events) seen.push(event);
  return seen;
}

test("blocking: the streamed chunks form one artifact and the task completes", async () => {
  const answer = await client("story").sendMessage({ message: say("tell me a story") });
  const task = answer.task as Task;
  expect(task.status.state).toBe("TASK_STATE_COMPLETED");
  expect(task.artifacts).toEqual([
    {
      artifactId: "story",
      name: "Story",
      description: "A very short story.",
      parts: [{ text: STORY_TEXT, mediaType: "text/plain" }],
    },
  ]);
}, 30_000);

test("streaming: the WORKING note, then the artifact chunk by chunk with append and lastChunk, then COMPLETED", async () => {
  const events = await collect(client("story").sendStreamingMessage({ message: say("tell me a story slowly") }));
  // The stream opens with a snapshot taken just after the accept: what the executor published before it is in it.
  const snapshot = events[0]?.task as Task;
  const messageText = (m: Message | undefined) => (m?.parts ?? []).map((p) => ("text" in p ? p.text : "")).join("");
  const notes = [snapshot.status.message, ...events.map((e) => e.statusUpdate?.status.message)].map(messageText);
  expect(notes).toContain("Writing a story");
  const before = artifactText(snapshot).join("");
  const chunks = events.flatMap((e) => (e.artifactUpdate ? [e.artifactUpdate] : []));
  expect(chunks.length).toBeGreaterThan(1);
  expect(before + chunks.map((c) => c.artifact.parts.map((p) => ("text" in p ? p.text : "")).join("")).join("")).toBe(
    STORY_TEXT,
  );
  expect(chunks[0]?.append).toBe(before === "" ? undefined : true);
  expect(chunks.slice(1).every((c) => c.append === true)).toBe(true);
  expect(chunks.map((c) => c.lastChunk === true)).toEqual(chunks.map((_, i) => i === chunks.length - 1));
  expect(events.at(-1)?.statusUpdate?.status.state).toBe("TASK_STATE_COMPLETED");
}, 30_000);

test("resubscribe: a client that attaches to a running task sees the rest of the story and the end", async () => {
  const accepted = await client("story").sendMessage({
    message: say("tell me a story slowly"),
    configuration: { returnImmediately: true },
  });
  const id = accepted.task?.id ?? "";
  const events = await collect(client("story").subscribeToTask({ id }));
  expect(events[0]?.task?.id).toBe(id);
  expect(events.at(-1)?.statusUpdate?.status.state).toBe("TASK_STATE_COMPLETED");
  expect(artifactText(await client("story").getTask({ id }))).toEqual([STORY_TEXT]);
}, 30_000);

test("input-required: the executor's question ends the first turn; the answer resumes it with the task's history", async () => {
  const greeter = client("greeter");
  const first = (await greeter.sendMessage({ message: say("hi") })).task as Task;
  expect(first.status.state).toBe("TASK_STATE_INPUT_REQUIRED");
  expect(first.status.message?.parts).toEqual([{ text: "What is your name?" }]);

  const second = (await greeter.sendMessage({ message: say("Ada", { taskId: first.id }) })).task as Task;
  expect(second.status.state).toBe("TASK_STATE_COMPLETED");
  expect(artifactText(second)).toEqual(['Hello, Ada! You first said "hi".']);
}, 30_000);

test("cancel: CancelTask ends the task CANCELED and reaches the executor's cancelTask", async () => {
  const story = client("story");
  const stream = story.sendStreamingMessage({ message: say("tell me a story slowly") })[Symbol.asyncIterator]();
  let id = "";
  for (;;) {
    const { value } = await stream.next();
    id ||= value?.task?.id ?? "";
    if (value?.artifactUpdate) break;
  }
  const canceled = await story.cancelTask({ id });
  expect(canceled.status.state).toBe("TASK_STATE_CANCELED");
  await waitFor(async () => readFileSafe(cancelLog).includes(id), 10_000, "the executor's cancelTask");
  await stream.return?.(undefined);
}, 30_000);

test("a worker killed in the middle of a streamed answer: the run is retried and the stream ends with the whole story", async () => {
  const [actor] = await liveWorkers(inst, 1);
  const stream = client("story")
    .sendStreamingMessage({ message: say("tell me a story slowly") })
    [Symbol.asyncIterator]();
  const events: StreamResponse[] = [];
  while (!events.some((e) => e.artifactUpdate)) {
    const { value, done } = await stream.next();
    if (done) break;
    events.push(value);
  }
  process.kill(actor?.pid ?? 0, "SIGKILL");
  await waitFor(async () => !isRunning(actor?.pid ?? 0), 10_000, "the actor to die");
  for (;;) {
    const { value, done } = await stream.next();
    if (done) break;
    events.push(value);
  }
  expect(events.at(-1)?.statusUpdate?.status.state).toBe("TASK_STATE_COMPLETED");
  const id = events[0]?.task?.id ?? "";
  // The retried leg's first chunk replaced the partial story: the task holds it once, whole.
  expect(artifactText(await client("story").getTask({ id }))).toEqual([STORY_TEXT]);
  expect(work.child.exitCode).toBeNull();
}, 60_000);

function readFileSafe(path: string): string {
  try {
    return readFileSync(path, "utf8");
  } catch {
    return "";
  }
}

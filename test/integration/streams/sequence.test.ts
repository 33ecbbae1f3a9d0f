// A run seen through SendStreamingMessage and SubscribeToTask over real HTTP: the snapshot first, then exactly the
// journal entries after it, in order, none doubled or missing; the stream ends at COMPLETED and gives its leases back.
import { afterAll, beforeAll, expect, test } from "bun:test";
import { TypeCompiler } from "@sinclair/typebox/compiler";
import { StreamResponseSchema } from "../../../src/protocol/index.ts";
import { openStream } from "../../support/sse-client.ts";
import { eventually, type Harness, message, rpc, startHarness } from "../gateway/harness.ts";
import { emitChunks, journal, leaseCounts, streamKeys } from "./helpers.ts";

const streamResponse = TypeCompiler.Compile(StreamResponseSchema);

let h: Harness;
let client: { id: string; key: string };

beforeAll(async () => {
  h = await startHarness();
  await h.actor.live();
  client = await h.client();
});

afterAll(async () => {
  await h.stop();
});

test("an artifact streamed in 20 chunks: snapshot first, then every journal entry after it, once, in order", async () => {
  const stream = await openStream(
    h.gateway.url,
    "SendStreamingMessage",
    { message: message("stream me") },
    {
      key: client.key,
      id: "req-7",
    },
  );
  expect(stream.status).toBe(200);
  expect(stream.headers["content-type"]).toBe("text/event-stream");
  expect(stream.headers["cache-control"]).toBe("no-cache");
  expect(stream.headers["x-accel-buffering"]).toBe("no");
  await stream.waitForEvents(1);
  expect(stream.comments[0]?.text).toBe("stream open");
  expect(stream.comments[0]!.at).toBeLessThanOrEqual(stream.events[0]!.at);

  const claim = await h.actor.takeOne({ clientId: client.id });
  expect((await leaseCounts(h, client.id, claim.taskId)).task).toBe(1);
  await h.actor.move(claim, "TASK_STATE_WORKING", { text: "starting" });
  const whole = await emitChunks(h, claim, 20);
  await h.actor.complete(claim, whole);
  await stream.closed;

  const entries = await journal(h, claim.taskId);
  // the journal holds the revisions after the accept (the task as accepted is the stream's first event, the snapshot)
  expect(entries[0]?.rev).toBe(2);
  expect(entries[0]?.event.statusUpdate?.status.state).toBe("TASK_STATE_WORKING");
  expect(entries).toHaveLength(1 + 20 + 1);
  const [first, ...rest] = stream.messages;
  for (const sent of stream.messages) {
    expect(sent).toMatchObject({ jsonrpc: "2.0", id: "req-7" });
    expect(streamResponse.Check(sent.result)).toBe(true);
  }
  expect(first.result.task).toMatchObject({ id: claim.taskId, status: { state: "TASK_STATE_SUBMITTED" } });
  expect(first.result.task.history[0].parts).toEqual([{ text: "stream me" }]);
  expect(rest.map((sent) => sent.result)).toEqual(entries.map((entry) => entry.event));
  expect(stream.events.every((event) => event.ids.length === 0 && event.event === undefined)).toBe(true);

  const chunks = rest.filter((sent) => sent.result.artifactUpdate).map((sent) => sent.result.artifactUpdate);
  expect(chunks).toHaveLength(20);
  expect(chunks[0].append).toBeUndefined();
  expect(chunks.slice(1).every((chunk) => chunk.append === true)).toBe(true);
  expect(chunks.map((chunk) => chunk.lastChunk === true)).toEqual([...Array(19).fill(false), true]);
  expect(chunks.map((chunk) => chunk.artifact.parts[0].text).join("")).toBe(whole);
  expect(rest.at(-1).result.statusUpdate.status.state).toBe("TASK_STATE_COMPLETED");

  await eventually(async () => (await streamKeys(h)).length === 0, 1000);
  expect(h.gateway.stats()).toEqual({ streams: 0, streamLeases: 0, followedTasks: 0 });
});

test("SubscribeToTask on a running task: its snapshot, then the rest of the run; the other stream sees the same", async () => {
  const accepted = await rpc(
    h.gateway.url,
    "SendMessage",
    { message: message("two watchers"), configuration: { returnImmediately: true } },
    { key: client.key },
  );
  const taskId = accepted.body.result.task.id as string;
  const claim = await h.actor.takeOne({ taskId });
  await h.actor.move(claim, "TASK_STATE_WORKING");
  const a = await openStream(h.gateway.url, "SubscribeToTask", { id: taskId }, { key: client.key, id: 1 });
  const b = await openStream(h.gateway.url, "SubscribeToTask", { id: taskId }, { key: client.key, id: 2 });
  await a.waitForEvents(1);
  await b.waitForEvents(1);
  expect(a.results[0].task.status.state).toBe("TASK_STATE_WORKING");
  expect((await leaseCounts(h, client.id, taskId)).task).toBe(2);
  await emitChunks(h, claim, 5);
  await h.actor.complete(claim);
  await Promise.all([a.closed, b.closed]);
  // the snapshot is at WORKING, the journal's first entry (the revisions after the accept)
  const after = (await journal(h, taskId)).slice(1).map((entry) => entry.event);
  expect(a.results.slice(1)).toEqual(after);
  expect(b.results.slice(1)).toEqual(after);
  expect(a.messages.every((m) => m.id === 1)).toBe(true);
  expect(b.messages.every((m) => m.id === 2)).toBe(true);
  await eventually(async () => (await streamKeys(h)).length === 0, 1000);
});

test("subscribing in the middle of a run: the snapshot holds every event before its revision, the stream the rest", async () => {
  const accepted = await rpc(
    h.gateway.url,
    "SendMessage",
    { message: message("mid-run"), configuration: { returnImmediately: true } },
    { key: client.key },
  );
  const taskId = accepted.body.result.task.id as string;
  const claim = await h.actor.takeOne({ taskId });
  await h.actor.move(claim, "TASK_STATE_WORKING");
  let subscribing: ReturnType<typeof openStream> | undefined;
  // Chunks keep coming while the subscription is made: the snapshot lands somewhere in the middle of them (by chunk
  // 25 the stream has opened, which it does once its snapshot is read).
  const whole = await emitChunks(h, claim, 40, {
    gapMs: 2,
    after: async (index) => {
      if (index === 15) subscribing = openStream(h.gateway.url, "SubscribeToTask", { id: taskId }, { key: client.key });
      if (index === 25) await subscribing;
    },
  });
  await h.actor.complete(claim, whole);
  const stream = await subscribing!;
  await stream.closed;

  const entries = await journal(h, taskId);
  const [snapshot, ...later] = stream.results;
  const seenFrom = entries.length - later.length;
  expect(later).toEqual(entries.slice(seenFrom).map((entry) => entry.event));
  // The snapshot is the task at the revision just before the first streamed event: every earlier chunk is in it.
  const before = entries.slice(0, seenFrom).filter((entry) => entry.event.artifactUpdate);
  expect(before.length).toBeGreaterThan(15);
  expect(before.length).toBeLessThan(40);
  const text = before
    .map((entry) => entry.event.artifactUpdate!.artifact.parts[0])
    .map((part) => (part as { text: string }).text);
  expect(snapshot.task.artifacts).toEqual([{ artifactId: "answer", parts: [{ text: text.join("") }] }]);
  expect(snapshot.task.status.state).toBe("TASK_STATE_WORKING");
});

// How streams end without the task ending: server.streamMaxSeconds (2 s here) closes a long stream, and a client that
// goes away frees its leases and its share of the journal tail at once. Either way the task goes on and completes.
import { afterAll, beforeAll, expect, test } from "bun:test";
import { DEFAULT_STREAM_LEASE_TTL_MS, STREAM_END_KEY } from "../../../src/gateway/index.ts";
import { openStream } from "../../support/sse-client.ts";
import { eventually, type Harness, message, rpc, startHarness } from "../gateway/harness.ts";
import { emitChunks, journal, leaseCounts, streamKeys } from "./helpers.ts";

let h: Harness;
let client: { id: string; key: string };

beforeAll(async () => {
  h = await startHarness({ env: { A2A_SERVER_STREAM_MAX_SECONDS: "2" } });
  await h.actor.live();
  client = await h.client();
});

afterAll(async () => {
  await h.stop();
});

test("streamMaxSeconds closes a long stream; the task goes on, and a new SubscribeToTask starts from a new snapshot", async () => {
  const stream = await openStream(
    h.gateway.url,
    "SendStreamingMessage",
    { message: message("long") },
    { key: client.key },
  );
  const claim = await h.actor.takeOne({ clientId: client.id });
  await h.actor.move(claim, "TASK_STATE_WORKING");
  await emitChunks(h, claim, 3, { text: (i) => `early ${i};` });
  const opened = performance.now();
  await stream.closed;
  const lasted = performance.now() - opened;
  expect(lasted).toBeGreaterThan(1000);
  expect(lasted).toBeLessThan(3500);
  expect(stream.results.map((result) => Object.keys(result)[0])).toEqual([
    "task",
    "statusUpdate",
    "artifactUpdate",
    "artifactUpdate",
    "artifactUpdate",
    "statusUpdate",
  ]);
  // The last event says why the stream closed while the task goes on.
  expect(stream.results.at(-1).statusUpdate).toEqual({
    taskId: claim.taskId,
    contextId: stream.results[0].task.contextId,
    status: { state: "TASK_STATE_WORKING" },
    metadata: { [STREAM_END_KEY]: { reason: "streamMaxSeconds", streamMaxSeconds: 2 } },
  });
  await eventually(async () => (await streamKeys(h)).length === 0, 500);

  const task = await rpc(h.gateway.url, "GetTask", { id: claim.taskId }, { key: client.key });
  expect(task.body.result.status.state).toBe("TASK_STATE_WORKING");
  await emitChunks(h, claim, 2, { artifactId: "more", text: (i) => `late ${i};` });

  const again = await openStream(h.gateway.url, "SubscribeToTask", { id: claim.taskId }, { key: client.key });
  await again.waitForEvents(1);
  const snapshot = again.results[0].task;
  expect(snapshot.artifacts.map((artifact: { artifactId: string }) => artifact.artifactId)).toEqual(["answer", "more"]);
  await h.actor.complete(claim);
  await again.closed;
  expect(again.results.slice(1)).toEqual([(await journal(h, claim.taskId)).at(-1)!.event]);
  expect(again.results.at(-1).statusUpdate.status.state).toBe("TASK_STATE_COMPLETED");
});

test("a client that disconnects mid-run: its leases and its follower are gone at once, the task still completes", async () => {
  const stream = await openStream(
    h.gateway.url,
    "SendStreamingMessage",
    { message: message("leave") },
    { key: client.key },
  );
  await stream.waitForEvents(1);
  const taskId = stream.results[0].task.id as string;
  const claim = await h.actor.takeOne({ taskId });
  await h.actor.move(claim, "TASK_STATE_WORKING");
  await stream.waitForEvents(2);
  expect(await leaseCounts(h, client.id, taskId)).toEqual({ installation: 1, client: 1, task: 1 });
  expect(h.gateway.stats()).toMatchObject({ streams: 1, streamLeases: 1, followedTasks: 1 });

  stream.abort();
  // given back by the gateway when the client left, not lapsed: a lease lives DEFAULT_STREAM_LEASE_TTL_MS (20 s)
  await eventually(async () => (await streamKeys(h)).length === 0, DEFAULT_STREAM_LEASE_TTL_MS / 4);
  expect(h.gateway.stats()).toEqual({ streams: 0, streamLeases: 0, followedTasks: 0 });

  await emitChunks(h, claim, 3);
  await h.actor.complete(claim);
  const task = await rpc(h.gateway.url, "GetTask", { id: taskId }, { key: client.key });
  expect(task.body.result.status.state).toBe("TASK_STATE_COMPLETED");
  expect(task.body.result.artifacts[0].parts[0].text).toBe("done");
});

test("Last-Event-ID is ignored: a reconnect gets a new snapshot and then only newer events, with no id lines", async () => {
  const accepted = await rpc(
    h.gateway.url,
    "SendMessage",
    { message: message("resume?"), configuration: { returnImmediately: true } },
    { key: client.key },
  );
  const taskId = accepted.body.result.task.id as string;
  const claim = await h.actor.takeOne({ taskId });
  await h.actor.move(claim, "TASK_STATE_WORKING");
  await emitChunks(h, claim, 4);
  const stream = await openStream(
    h.gateway.url,
    "SubscribeToTask",
    { id: taskId },
    {
      key: client.key,
      headers: { "Last-Event-ID": "1" },
    },
  );
  await stream.waitForEvents(1);
  expect(stream.results[0].task.artifacts[0].parts[0].text).toBe("chunk 0;chunk 1;chunk 2;chunk 3;");
  await h.actor.complete(claim);
  await stream.closed;
  expect(stream.results.length).toBe(2);
  expect(stream.events.every((event) => event.ids.length === 0)).toBe(true);
});

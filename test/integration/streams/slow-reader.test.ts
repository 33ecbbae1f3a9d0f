// Bounded frames and buffers (64 KiB and 256 KiB here): a client that stops reading is disconnected once its buffer
// passes the cap while another stream of the same task keeps its pace; an event larger than a frame is replaced by a
// small stand-in that says so, and GetTask has the whole task.
import { afterAll, beforeAll, expect, test } from "bun:test";
import { FRAME_TOO_LARGE_KEY } from "../../../src/gateway/index.ts";
import { openRawStream, openStream } from "../../support/sse-client.ts";
import { eventually, type Harness, message, rpc, startHarness } from "../gateway/harness.ts";
import { emitArtifact, journal, leaseCounts } from "./helpers.ts";

let h: Harness;
let client: { id: string; key: string };

beforeAll(async () => {
  h = await startHarness({
    env: {
      A2A_SERVER_STREAM_FRAME_MAX_BYTES: "65536",
      A2A_SERVER_STREAM_BUFFER_MAX_BYTES: "262144",
      A2A_SERVER_STREAM_KEEPALIVE_SECONDS: "2",
    },
  });
  await h.actor.live();
  client = await h.client();
});

afterAll(async () => {
  await h.stop();
});

async function runningTask(text: string) {
  const answer = await rpc(
    h.gateway.url,
    "SendMessage",
    { message: message(text), configuration: { returnImmediately: true } },
    { key: client.key },
  );
  const claim = await h.actor.takeOne({ taskId: answer.body.result.task.id });
  await h.actor.move(claim, "TASK_STATE_WORKING");
  return claim;
}

const EVENTS = 200;
const PAYLOAD = 60_000;

test("a client that stops reading is cut at the buffer cap; the other stream on the task keeps its pace", async () => {
  const claim = await runningTask("big output");
  const slow = openRawStream(
    h.gateway.port,
    "SubscribeToTask",
    { id: claim.taskId },
    { key: client.key, paused: true },
  );
  const fast = await openStream(h.gateway.url, "SubscribeToTask", { id: claim.taskId }, { key: client.key });
  await fast.waitForEvents(1);
  await eventually(() => h.gateway.stats().streams === 2);

  const written: number[] = [];
  for (let i = 0; i < EVENTS; i++) {
    await emitArtifact(h, claim, "blob", `#${i}#${"x".repeat(PAYLOAD)}`);
    written.push(performance.now());
    await Bun.sleep(3);
  }
  await eventually(() => h.gateway.stats().streams === 1, 5000);
  expect((await leaseCounts(h, client.id, claim.taskId)).task).toBe(1);
  await fast.waitForEvents(1 + EVENTS, 5000);
  const lags = fast.events.slice(1).map((event, i) => event.at - written[i]!);
  expect(Math.max(...lags)).toBeLessThan(500);
  expect(fast.ended).toBe(false);

  slow.socket.resume();
  await slow.closed;
  const slowArtifacts = slow.results.filter((result) => result.artifactUpdate).length;
  expect(slowArtifacts).toBeLessThan(EVENTS);
  expect(slow.bodyBytes).toBeLessThan(EVENTS * PAYLOAD);

  await h.actor.complete(claim);
  await fast.closed;
  const texts = fast.results
    .filter((result) => result.artifactUpdate)
    .map((r) => r.artifactUpdate.artifact.parts[0].text);
  expect(texts.map((text: string) => Number(text.split("#")[1]))).toEqual([...Array(EVENTS).keys()]);
  expect(fast.results.at(-1).statusUpdate.status.state).toBe("TASK_STATE_COMPLETED");
}, 30_000);

test("an event larger than a frame becomes a statusUpdate naming its revision and size; GetTask has it all", async () => {
  const claim = await runningTask("one huge artifact");
  const stream = await openStream(h.gateway.url, "SubscribeToTask", { id: claim.taskId }, { key: client.key, id: 3 });
  await stream.waitForEvents(1);
  const huge = "y".repeat(100_000);
  await emitArtifact(h, claim, "report", huge);
  await emitArtifact(h, claim, "report", "small again");
  await stream.waitForEvents(3);
  const entries = await journal(h, claim.taskId);
  const bigEntry = entries.at(-2)!;
  const standIn = stream.results[1];
  expect(standIn).toEqual({
    statusUpdate: {
      taskId: claim.taskId,
      contextId: stream.results[0].task.contextId,
      status: { state: "TASK_STATE_WORKING" },
      metadata: { [FRAME_TOO_LARGE_KEY]: { rev: bigEntry.rev, bytes: expect.any(Number) } },
    },
  });
  expect(standIn.statusUpdate.metadata[FRAME_TOO_LARGE_KEY].bytes).toBeGreaterThan(100_000);
  expect(stream.events.every((event) => Buffer.byteLength(event.data) + 8 <= 65_536)).toBe(true);
  expect(stream.results[2]).toEqual(entries.at(-1)!.event);

  // The task itself is too large for one frame now: a new subscription's snapshot is the stand-in task.
  await emitArtifact(h, claim, "report", huge);
  const late = await openStream(h.gateway.url, "SubscribeToTask", { id: claim.taskId }, { key: client.key });
  await late.waitForEvents(1);
  expect(late.results[0].task).toMatchObject({
    id: claim.taskId,
    status: { state: "TASK_STATE_WORKING" },
    metadata: { [FRAME_TOO_LARGE_KEY]: { rev: (await journal(h, claim.taskId)).at(-1)!.rev } },
  });
  expect(late.results[0].task.artifacts).toBeUndefined();
  const fetched = await rpc(h.gateway.url, "GetTask", { id: claim.taskId }, { key: client.key });
  expect(fetched.body.result.artifacts[0].parts[0].text).toBe(huge);

  // A closing event too large to send still closes the stream: its stand-in carries the final state.
  await h.actor.move(claim, "TASK_STATE_COMPLETED", { text: huge });
  await Promise.all([stream.closed, late.closed]);
  expect(late.results.at(-1).statusUpdate.status.state).toBe("TASK_STATE_COMPLETED");
  expect(late.results.at(-1).statusUpdate.metadata[FRAME_TOO_LARGE_KEY]).toBeDefined();
});

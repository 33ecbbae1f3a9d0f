// Bounded frames and buffers (64 KiB and 256 KiB here): a client that stops reading is disconnected once its buffer
// passes the cap while another stream of the same task keeps its pace; an artifact larger than a frame arrives in
// several appends; what cannot be cut (a huge status message) is replaced by a small stand-in that says so.
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

test("an artifact chunk larger than a frame arrives as several appends, nothing dropped; so does a snapshot's", async () => {
  const claim = await runningTask("one huge artifact");
  const stream = await openStream(h.gateway.url, "SubscribeToTask", { id: claim.taskId }, { key: client.key, id: 3 });
  await stream.waitForEvents(1);
  const huge = `${"y".repeat(60_000)}"\u00e9${"z".repeat(40_000)}`;
  await emitArtifact(h, claim, "report", huge);
  await emitArtifact(h, claim, "report", "small again");
  await stream.until((s) =>
    s.results.some((result) => result.artifactUpdate?.artifact.parts[0].text === "small again"),
  );
  const entries = await journal(h, claim.taskId);
  const pieces = stream.results.slice(1, -1).map((result) => result.artifactUpdate);
  expect(pieces.length).toBeGreaterThan(1);
  expect(pieces.map((piece) => piece.artifact.parts[0].text).join("")).toBe(huge);
  expect(pieces.map((piece) => piece.append ?? false)).toEqual(pieces.map((_, i) => i > 0));
  expect(pieces.every((piece) => piece.artifact.artifactId === "report" && piece.lastChunk === undefined)).toBe(true);
  expect(stream.events.every((event) => Buffer.byteLength(event.data) + 8 <= 65_536)).toBe(true);
  expect(stream.results.at(-1)).toEqual(entries.at(-1)!.event);

  // The task itself is too large for one frame now: a new subscription gets the task without its artifacts, then
  // every artifact as updates that fit.
  await emitArtifact(h, claim, "report", huge);
  const late = await openStream(h.gateway.url, "SubscribeToTask", { id: claim.taskId }, { key: client.key });
  await late.until(
    (s) =>
      s.results.length > 1 &&
      s.results
        .slice(1)
        .map((r) => r.artifactUpdate?.artifact.parts[0].text ?? "")
        .join("") === huge,
  );
  expect(late.results[0].task).toMatchObject({ id: claim.taskId, status: { state: "TASK_STATE_WORKING" } });
  expect(late.results[0].task.artifacts).toBeUndefined();
  expect(late.results[0].task.metadata?.[FRAME_TOO_LARGE_KEY]).toBeUndefined();
  expect(late.events.every((event) => Buffer.byteLength(event.data) + 8 <= 65_536)).toBe(true);
  const fetched = await rpc(h.gateway.url, "GetTask", { id: claim.taskId }, { key: client.key });
  expect(fetched.body.result.artifacts[0].parts[0].text).toBe(huge);

  // A closing event too large to send still closes the stream: its stand-in carries the final state.
  await h.actor.move(claim, "TASK_STATE_COMPLETED", { text: huge });
  await Promise.all([stream.closed, late.closed]);
  expect(late.results.at(-1).statusUpdate.status.state).toBe("TASK_STATE_COMPLETED");
  expect(late.results.at(-1).statusUpdate.metadata[FRAME_TOO_LARGE_KEY]).toBeDefined();
});

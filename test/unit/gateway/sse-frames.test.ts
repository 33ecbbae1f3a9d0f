// SSE framing: one `data:` line per JSON-RPC response (never an `id:` line), error events named `error`, comments, and
// the stand-in for an event larger than a frame, which keeps the task's ids and state and says what was left out.
import { expect, test } from "bun:test";
import {
  boundedFrame,
  closesStream,
  commentFrame,
  compareEntryIds,
  errorAnswer,
  FRAME_TOO_LARGE_KEY,
  fittingFrames,
  jsonRpcFraming,
  KEEPALIVE_COMMENT,
  OPEN_COMMENT,
  splitArtifactUpdate,
  standIn,
} from "../../../src/gateway/index.ts";
import { describeError, type StreamResponse, TaskNotFoundError } from "../../../src/protocol/index.ts";

const text = (bytes: Uint8Array) => new TextDecoder().decode(bytes);
const eventFrame = (id: string | number, event: StreamResponse) => jsonRpcFraming(id).event(event);
const position = { taskId: "t-1", contextId: "c-1", state: "TASK_STATE_WORKING" as const, rev: 7 };

test("an event is one data line holding a JSON-RPC response with the request's id, then a blank line", () => {
  const event: StreamResponse = {
    artifactUpdate: {
      taskId: "t-1",
      contextId: "c-1",
      artifact: { artifactId: "a", parts: [{ text: "two\nlines\r" }] },
    },
  };
  const frame = text(eventFrame(42, event));
  expect(frame.startsWith("data: ")).toBe(true);
  expect(frame.endsWith("\n\n")).toBe(true);
  expect(frame.slice(0, -2)).not.toMatch(/[\r\n]/);
  expect(JSON.parse(frame.slice(6))).toEqual({ jsonrpc: "2.0", id: 42, result: event });
  expect(frame).not.toMatch(/^id:/m);
});

test("an error event is named error and carries a JSON-RPC error response; comments start with a colon", () => {
  const error = new TaskNotFoundError("t-1");
  const { body } = errorAnswer(error, "x");
  expect(body.error.code).toBe(-32001);
  expect(text(jsonRpcFraming("x").error(describeError(error)))).toBe(`event: error\ndata: ${JSON.stringify(body)}\n\n`);
  expect(text(commentFrame("hello"))).toBe(": hello\n\n");
  expect(text(OPEN_COMMENT)).toBe(": stream open\n\n");
  expect(text(KEEPALIVE_COMMENT)).toBe(": keep-alive\n\n");
});

test("a frame within the limit is sent as is; a larger one is replaced by a statusUpdate stand-in", () => {
  const event: StreamResponse = {
    artifactUpdate: {
      taskId: "t-1",
      contextId: "c-1",
      artifact: { artifactId: "a", parts: [{ text: "z".repeat(500) }] },
    },
  };
  const whole = eventFrame(1, event);
  const frameOf = jsonRpcFraming(1).event;
  expect(boundedFrame(frameOf, event, position, whole.byteLength)).toEqual({ frame: whole, replaced: false });
  const bounded = boundedFrame(frameOf, event, position, whole.byteLength - 1);
  expect(bounded.replaced).toBe(true);
  expect(JSON.parse(text(bounded.frame).slice(6)).result).toEqual({
    statusUpdate: {
      taskId: "t-1",
      contextId: "c-1",
      status: { state: "TASK_STATE_WORKING" },
      metadata: { [FRAME_TOO_LARGE_KEY]: { rev: 7, bytes: whole.byteLength } },
    },
  });
});

test("the stand-in of a status keeps its timestamp; the stand-in of the snapshot is a bare task", () => {
  const timestamp = "2026-01-05T10:00:03.120Z";
  const completed = { ...position, state: "TASK_STATE_COMPLETED" as const };
  const status: StreamResponse = {
    statusUpdate: { taskId: "t-1", contextId: "c-1", status: { state: "TASK_STATE_COMPLETED", timestamp } },
  };
  expect(standIn(status, completed, 9000).statusUpdate?.status).toEqual({ state: "TASK_STATE_COMPLETED", timestamp });
  const task: StreamResponse = {
    task: { id: "t-1", contextId: "c-1", status: { state: "TASK_STATE_WORKING", timestamp }, history: [] },
  };
  expect(standIn(task, position, 5000)).toEqual({
    task: {
      id: "t-1",
      contextId: "c-1",
      status: { state: "TASK_STATE_WORKING", timestamp },
      metadata: { [FRAME_TOO_LARGE_KEY]: { rev: 7, bytes: 5000 } },
    },
  });
});

test("a stream closes at terminal states and INPUT_REQUIRED, not at AUTH_REQUIRED or while working", () => {
  for (const state of [
    "TASK_STATE_COMPLETED",
    "TASK_STATE_FAILED",
    "TASK_STATE_CANCELED",
    "TASK_STATE_REJECTED",
  ] as const)
    expect(closesStream(state)).toBe(true);
  expect(closesStream("TASK_STATE_INPUT_REQUIRED")).toBe(true);
  for (const state of ["TASK_STATE_AUTH_REQUIRED", "TASK_STATE_WORKING", "TASK_STATE_SUBMITTED"] as const)
    expect(closesStream(state)).toBe(false);
});

test("stream entry ids compare by time, then by sequence, as numbers", () => {
  expect(compareEntryIds("1700000000000-0", "1700000000000-0")).toBe(0);
  expect(compareEntryIds("1700000000000-10", "1700000000000-9")).toBeGreaterThan(0);
  expect(compareEntryIds("999-5", "1000-0")).toBeLessThan(0);
  expect(compareEntryIds("0-0", "1-0")).toBeLessThan(0);
});

test("an artifact update too large for a frame is cut into appends that fit; the last keeps lastChunk", () => {
  const frameOf = jsonRpcFraming(1).event;
  const update = {
    taskId: "t-1",
    contextId: "c-1",
    artifact: { artifactId: "a", name: "report", parts: [{ text: "s" }, { text: "é".repeat(3000) }, { text: "tail" }] },
    append: true,
    lastChunk: true,
  };
  const pieces = splitArtifactUpdate(update, frameOf, 1000);
  expect(pieces).toBeDefined();
  const updates = (pieces ?? []).map((piece) => piece.artifactUpdate!);
  expect(updates.length).toBeGreaterThan(3);
  for (const piece of pieces ?? []) expect(frameOf(piece).byteLength).toBeLessThanOrEqual(1000);
  expect(updates.flatMap((u) => u.artifact.parts.map((part) => ("text" in part ? part.text : ""))).join("")).toBe(
    `s${"é".repeat(3000)}tail`,
  );
  expect(updates.every((u) => u.append === true && u.artifact.artifactId === "a")).toBe(true);
  expect(updates.map((u) => u.lastChunk === true)).toEqual(updates.map((_, i) => i === updates.length - 1));
  // A part that is not text cannot be cut.
  const data = { ...update, artifact: { artifactId: "a", parts: [{ data: { blob: "x".repeat(5000) } }] } };
  expect(splitArtifactUpdate(data, frameOf, 1000)).toBeUndefined();
});

test("a snapshot too large for a frame is the task without artifacts, then each artifact in updates that fit", () => {
  const frameOf = jsonRpcFraming(1).event;
  const task = {
    id: "t-1",
    contextId: "c-1",
    status: { state: "TASK_STATE_WORKING" as const },
    artifacts: [
      { artifactId: "a", parts: [{ text: "x".repeat(2500) }] },
      { artifactId: "b", parts: [{ text: "short" }] },
    ],
  };
  const { frames, replaced } = fittingFrames(frameOf, { task }, position, 1000);
  expect(replaced).toBe(false);
  const events = frames.map((frame) => JSON.parse(text(frame).slice(6)).result);
  expect(events[0]).toEqual({ task: { id: "t-1", contextId: "c-1", status: { state: "TASK_STATE_WORKING" } } });
  const updates = events.slice(1).map((event) => event.artifactUpdate);
  expect(
    updates
      .filter((u) => u.artifact.artifactId === "a")
      .map((u) => u.artifact.parts[0].text)
      .join(""),
  ).toBe("x".repeat(2500));
  expect(updates.at(-1)).toEqual({
    taskId: "t-1",
    contextId: "c-1",
    artifact: { artifactId: "b", parts: [{ text: "short" }] },
  });
  for (const frame of frames) expect(frame.byteLength).toBeLessThanOrEqual(1000);
});

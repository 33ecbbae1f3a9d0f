// The bytes of an SSE stream, whatever binding frames its events: one `data:` line per event (no `id:` lines, no event
// names), comment lines, `error` events, and the small stand-in sent instead of a frame larger than
// server.streamFrameMaxBytes. What a `data:` line holds (a JSON-RPC envelope or a bare StreamResponse) is the binding's.
import type { Part, StreamResponse, Task, TaskArtifactUpdateEvent, TaskState } from "../protocol/index.ts";

const ENCODER = new TextEncoder();

/** The metadata key of the stand-in for an event too large to stream: `{rev, bytes}` of the event left out. */
export const FRAME_TOO_LARGE_KEY = "a2a-runtime/frameTooLarge";
/** The metadata key of the last event of a stream the gateway closes while the task goes on: `{reason, …}`. */
export const STREAM_END_KEY = "a2a-runtime/streamEnd";

/** The first bytes of every stream, sent before any event so that the headers leave at once. */
export const OPEN_COMMENT = ENCODER.encode(": stream open\n\n");
export const KEEPALIVE_COMMENT = ENCODER.encode(": keep-alive\n\n");

/** One SSE event whose data is `json` (one line: JSON.stringify never writes a raw newline). */
export function dataFrame(json: string): Uint8Array {
  return ENCODER.encode(`data: ${json}\n\n`);
}

/** One SSE event named `error`, as the A2A SDKs name it, whose data is `json`. */
export function errorEventFrame(json: string): Uint8Array {
  return ENCODER.encode(`event: error\ndata: ${json}\n\n`);
}

/** A comment line (ignored by every SSE client); `text` must hold no line break. */
export function commentFrame(text: string): Uint8Array {
  return ENCODER.encode(`: ${text}\n\n`);
}

/** Where a stream stands when an event is left out: the task's ids and its state after that event. */
export interface FramePosition {
  readonly taskId: string;
  readonly contextId: string;
  readonly state: TaskState;
  readonly rev: number;
}

function tooLarge(position: FramePosition, bytes: number): Record<string, unknown> {
  return { [FRAME_TOO_LARGE_KEY]: { rev: position.rev, bytes } };
}

/**
 * What is sent instead of an event whose frame has `bytes` bytes, more than the limit: for the first event, a `task`
 * with only its ids, its state and the marker in `metadata`; for any later one, a `statusUpdate` with the state after
 * that event and the marker in the event's `metadata`. Either way the client fetches the task with GetTask.
 */
export function standIn(event: StreamResponse, position: FramePosition, bytes: number): StreamResponse {
  const { taskId, contextId, state } = position;
  const timestamp = statusTimestamp(event);
  const status = timestamp === undefined ? { state } : { state, timestamp };
  if (event.task !== undefined) {
    const task: Task = { id: taskId, contextId, status, metadata: tooLarge(position, bytes) };
    return { task };
  }
  return { statusUpdate: { taskId, contextId, status, metadata: tooLarge(position, bytes) } };
}

function statusTimestamp(event: StreamResponse): string | undefined {
  return event.task?.status.timestamp ?? event.statusUpdate?.status.timestamp;
}

/** The frame of an event, or of its stand-in when the frame would be larger than `maxBytes`. */
export function boundedFrame(
  frameOf: (event: StreamResponse) => Uint8Array,
  event: StreamResponse,
  position: FramePosition,
  maxBytes: number,
): { frame: Uint8Array; replaced: boolean } {
  const frame = frameOf(event);
  if (frame.byteLength <= maxBytes) return { frame, replaced: false };
  return { frame: frameOf(standIn(event, position, frame.byteLength)), replaced: true };
}

/** Parts in order, with every text part cut into pieces whose frames fit; undefined when a part cannot be cut. */
function fittingParts(
  artifactUpdate: TaskArtifactUpdateEvent,
  frameOf: (event: StreamResponse) => Uint8Array,
  maxBytes: number,
): Part[][] | undefined {
  const pieces: Part[][] = [];
  const fits = (parts: Part[]) =>
    frameOf({ artifactUpdate: { ...artifactUpdate, artifact: { ...artifactUpdate.artifact, parts } } }).byteLength <=
    maxBytes;
  let current: Part[] = [];
  for (const part of artifactUpdate.artifact.parts) {
    if (fits([...current, part])) {
      current.push(part);
      continue;
    }
    if (current.length > 0) pieces.push(current);
    current = [];
    if (fits([part])) {
      current.push(part);
      continue;
    }
    if (!("text" in part) || typeof part.text !== "string") return undefined;
    // Cut the text into the longest pieces that fit, each found by halving: a frame's escaping is not linear in length.
    let rest = part.text;
    while (rest.length > 0) {
      let length = rest.length;
      while (length > 0 && !fits([{ ...part, text: rest.slice(0, length) }])) length = Math.floor(length / 2);
      if (length === 0) return undefined;
      // A surrogate pair is never cut in two.
      const code = rest.charCodeAt(length - 1);
      if (length < rest.length && code >= 0xd800 && code <= 0xdbff) length -= length > 1 ? 1 : -1;
      pieces.push([{ ...part, text: rest.slice(0, length) }]);
      rest = rest.slice(length);
    }
  }
  if (current.length > 0) pieces.push(current);
  return pieces;
}

/**
 * An artifact update whose frame is too large, as several updates of the same artifact that each fit: its parts, text
 * cut where needed, in order; the first keeps the update's `append`, the others append; only the last keeps
 * `lastChunk`. Undefined when a part that is not text is too large on its own.
 */
export function splitArtifactUpdate(
  artifactUpdate: TaskArtifactUpdateEvent,
  frameOf: (event: StreamResponse) => Uint8Array,
  maxBytes: number,
): StreamResponse[] | undefined {
  const pieces = fittingParts(artifactUpdate, frameOf, maxBytes);
  if (pieces === undefined || pieces.length === 0) return undefined;
  const { append, lastChunk, ...rest } = artifactUpdate;
  return pieces.map((parts, index) => {
    const update: TaskArtifactUpdateEvent = { ...rest, artifact: { ...artifactUpdate.artifact, parts } };
    if (index === 0 ? append === true : true) update.append = true;
    if (index === pieces.length - 1 && lastChunk === true) update.lastChunk = true;
    return { artifactUpdate: update };
  });
}

/**
 * The frames of one event within `maxBytes` each, losing no content where it can be cut: an artifact update is cut
 * into several appends; a task snapshot too large is sent without its artifacts (then without its history as well,
 * marked as a stand-in) and followed by one update per artifact, cut the same way. What cannot be cut (a status
 * message, a data or file part larger than a frame) is replaced by its stand-in. `replaced` tells whether anything was.
 */
export function fittingFrames(
  frameOf: (event: StreamResponse) => Uint8Array,
  event: StreamResponse,
  position: FramePosition,
  maxBytes: number,
): { frames: Uint8Array[]; replaced: boolean } {
  const frame = frameOf(event);
  if (frame.byteLength <= maxBytes) return { frames: [frame], replaced: false };
  if (event.artifactUpdate !== undefined) {
    const split = splitArtifactUpdate(event.artifactUpdate, frameOf, maxBytes);
    if (split !== undefined) return { frames: split.map(frameOf), replaced: false };
  }
  if (event.task !== undefined && (event.task.artifacts?.length ?? 0) > 0) {
    const { artifacts = [], ...rest } = event.task;
    const first = fittingFrames(frameOf, { task: rest }, position, maxBytes);
    const frames = [...first.frames];
    let replaced = first.replaced;
    for (const artifact of artifacts) {
      const update = { artifactUpdate: { taskId: rest.id, contextId: rest.contextId, artifact } };
      const more = fittingFrames(frameOf, update, position, maxBytes);
      frames.push(...more.frames);
      replaced ||= more.replaced;
    }
    return { frames, replaced };
  }
  return { frames: [frameOf(standIn(event, position, frame.byteLength))], replaced: true };
}

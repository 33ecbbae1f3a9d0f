// The bytes of an SSE stream, whatever binding frames its events: one `data:` line per event (no `id:` lines, no event
// names), comment lines, `error` events, and the small stand-in sent instead of a frame larger than
// server.streamFrameMaxBytes. What a `data:` line holds (a JSON-RPC envelope or a bare StreamResponse) is the binding's.
import type { StreamResponse, Task, TaskState } from "../protocol/index.ts";

const ENCODER = new TextEncoder();

/** The metadata key of the stand-in for an event too large to stream: `{rev, bytes}` of the event left out. */
export const FRAME_TOO_LARGE_KEY = "a2a-runtime/frameTooLarge";

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

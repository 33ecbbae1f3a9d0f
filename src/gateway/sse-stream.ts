// One SSE response: a ReadableStream of bytes whose queue is bounded by server.streamBufferMaxBytes, headers sent at
// once (the first comment line is queued before the Response leaves), and one end however it ends. It never reads Redis.
import { KEEPALIVE_COMMENT, OPEN_COMMENT } from "./sse-frames.ts";
import type { HubStream } from "./stream-hub.ts";

/** How a stream ended: the task reached a closing state, it ran too long, the client left or stopped reading, a
 * failure was sent as an error event, the client's key was revoked, or the gateway is stopping. */
export type StreamEnd = "done" | "maxDuration" | "clientGone" | "overflow" | "failed" | "revoked" | "stopped";

export const SSE_HEADERS: Readonly<Record<string, string>> = {
  "Content-Type": "text/event-stream",
  "Cache-Control": "no-cache",
  "X-Accel-Buffering": "no",
};

class StreamEndedError extends Error {
  constructor(end: StreamEnd) {
    super(`stream ended: ${end}`);
  }
}

export class SseStream implements HubStream {
  readonly response: Response;
  /** performance.now() when the stream opened; server.streamMaxSeconds counts from here. */
  readonly openedAt = performance.now();
  /** performance.now() of the last bytes queued; the keep-alive counts silence from here. */
  lastWriteAt = this.openedAt;
  /** performance.now() of the first check that found the buffer over its cap; undefined while under it. */
  fullSince: number | undefined;
  /** The last bytes a stream sends when it is closed for its duration (set by its binding's sink). */
  farewell: (() => Uint8Array | undefined) | undefined;
  private controller!: ReadableStreamDefaultController<Uint8Array>;
  private endedAs: StreamEnd | undefined;
  private readonly endListeners: ((end: StreamEnd) => void)[] = [];
  private drainListener: (() => void) | undefined;

  /**
   * @param bufferMaxBytes bytes queued and not yet taken by the HTTP server (which takes them only as fast as the
   *   client reads) above which the stream counts as full.
   * @param signal the request's signal: the client went away.
   */
  constructor(
    readonly bufferMaxBytes: number,
    signal?: AbortSignal,
  ) {
    const body = new ReadableStream<Uint8Array>(
      {
        start: (controller) => {
          this.controller = controller;
          controller.enqueue(OPEN_COMMENT);
        },
        pull: () => {
          const listener = this.drainListener;
          this.drainListener = undefined;
          listener?.();
        },
        cancel: () => this.end("clientGone"),
      },
      { highWaterMark: bufferMaxBytes, size: (chunk) => chunk?.byteLength ?? 0 },
    );
    this.response = new Response(body, { status: 200, headers: SSE_HEADERS });
    if (signal?.aborted) this.end("clientGone");
    else signal?.addEventListener("abort", () => this.end("clientGone"), { once: true });
  }

  get open(): boolean {
    return this.endedAs === undefined;
  }

  /** How the stream ended, or undefined while it is open. */
  get ended(): StreamEnd | undefined {
    return this.endedAs;
  }

  /** Bytes queued and not yet taken by the HTTP server (0 once ended). */
  get queuedBytes(): number {
    const desired = this.controller.desiredSize;
    return this.open && desired !== null ? this.bufferMaxBytes - desired : 0;
  }

  /** The queue holds more than bufferMaxBytes: the client has not taken what was sent. */
  get full(): boolean {
    const desired = this.controller.desiredSize;
    return this.open && desired !== null && desired < 0;
  }

  /** Queues bytes; false when the stream has ended. */
  write(bytes: Uint8Array): boolean {
    if (!this.open) return false;
    this.controller.enqueue(bytes);
    this.lastWriteAt = performance.now();
    return true;
  }

  /** A comment line after a silence, so that proxies and clients see the stream is alive. */
  keepalive(): void {
    this.write(KEEPALIVE_COMMENT);
  }

  /** Sends the binding's error frame and ends the stream as failed. */
  fail(frame: Uint8Array): void {
    this.write(frame);
    this.end("failed");
  }

  /** Calls `listener` once, the next time the HTTP server asks for more bytes (the queue fell under its cap). */
  onDrain(listener: () => void): void {
    this.drainListener = listener;
  }

  /** Calls `listener` once when the stream ends (at once when it has ended). */
  onEnd(listener: (end: StreamEnd) => void): void {
    if (this.endedAs !== undefined) listener(this.endedAs);
    else this.endListeners.push(listener);
  }

  /**
   * Ends the stream once. "overflow" and "revoked" drop what is queued and cut the connection; every other end lets
   * the queue flush and then closes the response. Listeners run at once either way.
   */
  end(how: StreamEnd): void {
    if (this.endedAs !== undefined) return;
    this.endedAs = how;
    this.drainListener = undefined;
    try {
      if (how === "overflow" || how === "clientGone" || how === "revoked") {
        this.controller.error(new StreamEndedError(how));
      } else this.controller.close();
    } catch {
      // Already canceled by the client: nothing to close.
    }
    for (const listener of this.endListeners.splice(0)) listener(how);
  }
}

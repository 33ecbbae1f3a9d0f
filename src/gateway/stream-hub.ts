// Every open stream of this process (SSE or gRPC), whose client it serves, and the one timer that serves them all: keep-alive
// comments after silence, the end at server.streamMaxSeconds, the disconnect of a client whose buffer stays over its
// cap, the process-wide cap on unread bytes, and the end of a revoked client's streams.
import type { Logger } from "../log.ts";
import type { StreamEnd } from "./sse-stream.ts";

/** What the hub watches of one client stream, whatever its transport (an SSE response, a gRPC server stream). */
export interface HubStream {
  readonly open: boolean;
  /** performance.now() when the stream opened; server.streamMaxSeconds counts from here. */
  readonly openedAt: number;
  /** performance.now() of the last bytes queued; the keep-alive counts silence from here. */
  readonly lastWriteAt: number;
  /** performance.now() of the first check that found the buffer over its cap; undefined while under it. */
  fullSince: number | undefined;
  /** Bytes queued and not yet taken by the client, above which the stream counts as full. */
  readonly bufferMaxBytes: number;
  readonly queuedBytes: number;
  readonly full: boolean;
  /** The last bytes a stream sends when it is closed for its duration (set by its binding's sink). */
  farewell: (() => Uint8Array | undefined) | undefined;
  write(bytes: Uint8Array): boolean;
  /** Tells the client that the stream is alive after a silence (a transport with pings of its own does nothing). */
  keepalive(): void;
  end(how: StreamEnd): void;
  onEnd(listener: (end: StreamEnd) => void): void;
}

export interface StreamHubOptions {
  /** server.streamKeepaliveSeconds in ms: no stream is silent longer than this. */
  keepaliveMs: number;
  /** server.streamMaxSeconds in ms. */
  maxDurationMs: number;
  /** server.streamBuffersMaxBytes: unread bytes all streams of this process may hold together. */
  maxBufferedBytes: number;
  logger: Logger;
}

/** How often the timer looks at every stream: four times per keep-alive interval, at most once a second. */
export function tickMs(keepaliveMs: number): number {
  return Math.max(50, Math.min(1000, Math.floor(keepaliveMs / 4)));
}

export class StreamHub {
  /** stream → the id of the client it serves. */
  private readonly streams = new Map<HubStream, string>();
  private timer: ReturnType<typeof setInterval> | undefined;
  private readonly tickMs: number;

  constructor(private readonly options: StreamHubOptions) {
    this.tickMs = tickMs(options.keepaliveMs);
  }

  /** Watches a client's stream until it ends. */
  add(stream: HubStream, clientId: string): void {
    if (!stream.open) return;
    this.streams.set(stream, clientId);
    stream.onEnd(() => {
      this.streams.delete(stream);
      if (this.streams.size === 0) this.stopTimer();
    });
    this.timer ??= setInterval(() => this.tick(performance.now()), this.tickMs);
  }

  /** Streams open now. */
  get size(): number {
    return this.streams.size;
  }

  /** The clients with a stream open now. */
  clients(): string[] {
    return [...new Set(this.streams.values())];
  }

  /** Cuts every open stream of a client (its key was revoked); their tasks go on. Returns how many. */
  endClient(clientId: string): number {
    let ended = 0;
    for (const [stream, owner] of [...this.streams]) {
      if (owner !== clientId) continue;
      stream.end("revoked");
      ended++;
    }
    return ended;
  }

  /**
   * One pass over every stream (`now` is performance.now()). A comment is sent once a stream has been silent for the
   * keep-alive interval less two ticks, so that no gap exceeds the interval. A full buffer is given one tick to drain:
   * a client that reads drains it in microseconds, one that does not read is disconnected. Past the process-wide cap
   * on unread bytes, the streams holding the most are cut until the rest fit.
   */
  tick(now: number): void {
    const { keepaliveMs, maxDurationMs } = this.options;
    const silence = Math.max(0, keepaliveMs - 2 * this.tickMs);
    for (const stream of this.streams.keys()) {
      if (now - stream.openedAt >= maxDurationMs) {
        const farewell = stream.farewell?.();
        if (farewell !== undefined) stream.write(farewell);
        stream.end("maxDuration");
        continue;
      }
      if (stream.full) {
        stream.fullSince ??= now;
        if (now - stream.fullSince >= this.tickMs / 2) {
          this.options.logger.info({ bufferMaxBytes: stream.bufferMaxBytes }, "SSE client does not read; disconnected");
          stream.end("overflow");
        }
        continue;
      }
      stream.fullSince = undefined;
      if (now - stream.lastWriteAt >= silence) stream.keepalive();
    }
    this.capBuffers();
  }

  /** Ends every stream (they close cleanly; their tasks go on) and stops the timer. */
  stop(): void {
    for (const stream of [...this.streams.keys()]) stream.end("stopped");
    this.stopTimer();
  }

  private capBuffers(): void {
    const { maxBufferedBytes, logger } = this.options;
    let total = 0;
    const holding: { stream: HubStream; bytes: number }[] = [];
    for (const stream of this.streams.keys()) {
      const bytes = stream.queuedBytes;
      if (bytes <= 0) continue;
      total += bytes;
      holding.push({ stream, bytes });
    }
    if (total <= maxBufferedBytes) return;
    holding.sort((a, b) => b.bytes - a.bytes);
    let cut = 0;
    for (const { stream, bytes } of holding) {
      if (total <= maxBufferedBytes) break;
      stream.end("overflow");
      total -= bytes;
      cut++;
    }
    logger.warn(
      { cut, maxBufferedBytes },
      "SSE streams held more unread bytes than the gateway allows; cut the largest",
    );
  }

  private stopTimer(): void {
    if (this.timer !== undefined) clearInterval(this.timer);
    this.timer = undefined;
  }
}

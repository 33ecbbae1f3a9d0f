// Every open SSE stream of this process, and the one timer that serves them all: keep-alive comments after
// silence, the end at server.streamMaxSeconds, and the disconnect of a client whose buffer stays over its cap.
import type { Logger } from "../log.ts";
import { KEEPALIVE_COMMENT } from "./sse-frames.ts";
import type { SseStream } from "./sse-stream.ts";

export interface StreamHubOptions {
  /** server.streamKeepaliveSeconds in ms: no stream is silent longer than this. */
  keepaliveMs: number;
  /** server.streamMaxSeconds in ms. */
  maxDurationMs: number;
  logger: Logger;
}

/** How often the timer looks at every stream: four times per keep-alive interval, at most once a second. */
export function tickMs(keepaliveMs: number): number {
  return Math.max(50, Math.min(1000, Math.floor(keepaliveMs / 4)));
}

export class StreamHub {
  private readonly streams = new Set<SseStream>();
  private timer: ReturnType<typeof setInterval> | undefined;
  private readonly tickMs: number;

  constructor(private readonly options: StreamHubOptions) {
    this.tickMs = tickMs(options.keepaliveMs);
  }

  /** Watches a stream until it ends. */
  add(stream: SseStream): void {
    if (!stream.open) return;
    this.streams.add(stream);
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

  /**
   * One pass over every stream (`now` is performance.now()). A comment is sent once a stream has been silent for the
   * keep-alive interval less two ticks, so that no gap exceeds the interval. A full buffer is given one tick to drain:
   * a client that reads drains it in microseconds, one that does not read is disconnected.
   */
  tick(now: number): void {
    const { keepaliveMs, maxDurationMs } = this.options;
    const silence = Math.max(0, keepaliveMs - 2 * this.tickMs);
    for (const stream of this.streams) {
      if (now - stream.openedAt >= maxDurationMs) {
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
      if (now - stream.lastWriteAt >= silence) stream.write(KEEPALIVE_COMMENT);
    }
  }

  /** Ends every stream (they close cleanly; their tasks go on) and stops the timer. */
  stop(): void {
    for (const stream of [...this.streams]) stream.end("stopped");
    this.stopTimer();
  }

  private stopTimer(): void {
    if (this.timer !== undefined) clearInterval(this.timer);
    this.timer = undefined;
  }
}

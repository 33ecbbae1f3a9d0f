// Reads the run queues on a Redis Cluster: one blocking reader (and connection) per shard, because one XREADGROUP
// across shards is refused there (CROSSSLOT). A shard's read stays outstanding across calls, so an entry it delivers
// late is returned by a later call, never dropped.

import type { QueueEntry } from "../journal/index.ts";
import { QueueReader, type QueueReaderOptions } from "./queue-reader.ts";

/** What the actor reads its queue entries with: one reader over every shard, or one per shard. */
export interface RunQueueReader {
  /** New entries (at most `count` per shard); [] when nothing came within BLOCK. */
  read(count: number): Promise<QueueEntry[]>;
  /** Ends the read in progress now (it answers what it has, else []); the next read works as before. */
  interrupt(): void;
  close(): void;
}

/** One reader over every shard on a single Redis; one per shard on a cluster (`clustered`). */
export function createQueueReader(clustered: boolean, options: QueueReaderOptions): RunQueueReader {
  return clustered && options.keys.shards > 1 ? new ShardQueueReaders(options) : new QueueReader(options);
}

export class ShardQueueReaders implements RunQueueReader {
  private readonly readers: QueueReader[];
  /** Shards whose read is outstanding. */
  private readonly reading = new Set<number>();
  /** Entries delivered by reads that ended after the call that started them had returned. */
  private readonly ready: QueueEntry[] = [];
  private wake: (() => void) | undefined;
  private closed = false;

  constructor(options: QueueReaderOptions) {
    this.readers = Array.from(
      { length: options.keys.shards },
      (_, shard) => new QueueReader({ ...options, shards: [shard] }),
    );
  }

  /** Starts a read on every shard without one outstanding; returns once any read ended (with entries or empty). */
  async read(count: number): Promise<QueueEntry[]> {
    if (this.closed) return [];
    for (const [shard, reader] of this.readers.entries()) {
      if (this.reading.has(shard)) continue;
      this.reading.add(shard);
      void reader
        .read(count)
        .catch(() => [])
        .then((entries) => {
          this.reading.delete(shard);
          this.ready.push(...entries);
          this.wake?.();
        });
    }
    if (this.ready.length === 0) {
      await new Promise<void>((resolve) => {
        this.wake = resolve;
      });
      this.wake = undefined;
    }
    return this.ready.splice(0);
  }

  /**
   * The call in progress answers now; the shards' reads stay outstanding (a cluster's reader cannot unblock them), so
   * what they deliver is returned by the next call, or left pending for the reclaimer if the reader is closed.
   */
  interrupt(): void {
    for (const reader of this.readers) reader.interrupt();
    this.wake?.();
  }

  close(): void {
    this.closed = true;
    for (const reader of this.readers) reader.close();
    this.wake?.();
  }
}

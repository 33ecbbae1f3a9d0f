// Reads new run-queue entries for one consumer with XREADGROUP BLOCK on a dedicated connection. A watchdog replaces
// the connection when a blocking read has not returned within BLOCK plus a margin (a link that hangs after a
// reconnect); entries delivered to a dropped read stay pending and are reclaimed after their lease.
import { type KeySpace, type QueueEntry, type RedisLike, RunQueue } from "../journal/index.ts";
import type { Logger } from "../log.ts";

export interface QueueReaderOptions {
  connect: () => RedisLike;
  keys: KeySpace;
  /** The shards this reader reads (default: every shard, in one read; a cluster needs one reader per shard). */
  shards?: readonly number[];
  consumer: string;
  /** BLOCK of each read (ms, at most 2000). */
  blockMs: number;
  /** How much longer than BLOCK a read may take before its connection is replaced (ms). */
  watchdogMarginMs: number;
  /** Called when the group is missing (NOGROUP): re-creates the consumer groups. */
  ensureGroups: () => Promise<void>;
  logger: Logger;
}

export class QueueReader {
  private connection: { redis: RedisLike; queue: RunQueue } | undefined;
  private readonly shards: readonly number[];
  private closed = false;

  constructor(private readonly o: QueueReaderOptions) {
    this.shards = o.shards ?? Array.from({ length: o.keys.shards }, (_, shard) => shard);
  }

  /** New entries, at most `count` per shard; [] after BLOCK without any, after a watchdog reset, or on an error. */
  async read(count: number): Promise<QueueEntry[]> {
    if (this.closed) return [];
    if (!this.connection) {
      const redis = this.o.connect();
      this.connection = { redis, queue: new RunQueue(redis, this.o.keys) };
    }
    const connection = this.connection;
    let timer: ReturnType<typeof setTimeout> | undefined;
    const watchdog = new Promise<"hung">((resolve) => {
      timer = setTimeout(() => resolve("hung"), this.o.blockMs + this.o.watchdogMarginMs);
    });
    try {
      const read = connection.queue.readNew(this.o.consumer, this.shards, count, this.o.blockMs);
      const reply = await Promise.race([read, watchdog]);
      if (reply === "hung") {
        this.o.logger.warn({ blockMs: this.o.blockMs }, "blocking queue read did not return; reconnecting");
        this.drop(connection);
        return [];
      }
      return reply;
    } catch (error) {
      if (this.closed) return [];
      if (error instanceof Error && error.message.includes("NOGROUP")) await this.o.ensureGroups().catch(() => {});
      else this.o.logger.warn({ err: error }, "queue read failed; retrying");
      await new Promise((resolve) => setTimeout(resolve, 250));
      return [];
    } finally {
      clearTimeout(timer);
    }
  }

  close(): void {
    this.closed = true;
    if (this.connection) this.drop(this.connection);
  }

  private drop(connection: { redis: RedisLike }): void {
    if (this.connection === connection) this.connection = undefined;
    connection.redis.disconnect();
  }
}

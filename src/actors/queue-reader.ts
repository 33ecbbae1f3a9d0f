// Reads new run-queue entries for one consumer with XREADGROUP BLOCK on a dedicated connection. A watchdog replaces
// the connection when a blocking read has not returned within BLOCK plus a margin (a link that hangs after a
// reconnect); entries delivered to a dropped read stay pending and are reclaimed after their lease. A drain ends the
// read at once (`interrupt`) instead of waiting out its BLOCK, so that an idle actor stops as soon as it is asked to.
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
  /**
   * The queue on another connection to the same Redis node, whose `unblock` ends a read for `interrupt`. Without it
   * (on a cluster, where a command without a key goes to any node) a read ends when its BLOCK passes.
   */
  unblocker?: RunQueue;
  logger: Logger;
}

/** How soon `interrupt` tries again when the read it should end had not reached Redis yet (ms). */
const UNBLOCK_RETRY_MS = 20;

/** The reading connection, and its id once CLIENT ID has answered (again after each reconnect). */
interface ReadConnection {
  redis: RedisLike;
  queue: RunQueue;
  id: Promise<number | undefined> | undefined;
}

export class QueueReader {
  private connection: ReadConnection | undefined;
  private readonly shards: readonly number[];
  private closed = false;
  /** The read in progress, if one is (a new object per read). */
  private reading: { connection: ReadConnection } | undefined;

  constructor(private readonly o: QueueReaderOptions) {
    this.shards = o.shards ?? Array.from({ length: o.keys.shards }, (_, shard) => shard);
  }

  /** New entries, at most `count` per shard; [] after BLOCK without any, after a watchdog reset, or on an error. */
  async read(count: number): Promise<QueueEntry[]> {
    if (this.closed) return [];
    if (!this.connection) this.connection = this.open();
    const connection = this.connection;
    // asked before the read on the same connection: known by the time a drain needs it
    if (this.o.unblocker && connection.id === undefined) {
      connection.id = connection.queue.connectionId().catch(() => undefined);
    }
    let timer: ReturnType<typeof setTimeout> | undefined;
    const watchdog = new Promise<"hung">((resolve) => {
      timer = setTimeout(() => resolve("hung"), this.o.blockMs + this.o.watchdogMarginMs);
    });
    const current = { connection };
    this.reading = current;
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
      if (this.reading === current) this.reading = undefined;
    }
  }

  /**
   * Ends the read in progress now, with the entries Redis has given it (none, unless they were on their way): the
   * connection stays open for the next read. Does nothing without an `unblocker`, or when no read is in progress.
   */
  interrupt(): void {
    const read = this.reading;
    const unblocker = this.o.unblocker;
    if (!read?.connection.id || !unblocker) return;
    void this.unblock(read, unblocker).catch((error: unknown) =>
      this.o.logger.debug({ err: error }, "queue read not interrupted; it ends after BLOCK"),
    );
  }

  /** Unblocks `read` until it has ended: an UNBLOCK that reaches Redis before the read does ends nothing. */
  private async unblock(read: { connection: ReadConnection }, unblocker: RunQueue): Promise<void> {
    while (this.reading === read) {
      const id = await read.connection.id;
      if (id === undefined || (await unblocker.unblock(id))) return;
      await new Promise((resolve) => setTimeout(resolve, UNBLOCK_RETRY_MS));
    }
  }

  close(): void {
    this.closed = true;
    if (this.connection) this.drop(this.connection);
  }

  private open(): ReadConnection {
    const redis = this.o.connect();
    const connection: ReadConnection = { redis, queue: new RunQueue(redis, this.o.keys), id: undefined };
    // a new link is a new client: its id is asked again before the next read
    if (this.o.unblocker) {
      redis.on("close", () => {
        connection.id = undefined;
      });
    }
    return connection;
  }

  private drop(connection: { redis: RedisLike }): void {
    if (this.connection === connection) this.connection = undefined;
    connection.redis.disconnect();
  }
}

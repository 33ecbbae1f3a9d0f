// Reads new run-queue entries for one consumer with XREADGROUP BLOCK on a dedicated connection. A watchdog replaces
// the connection when a blocking read has not returned within BLOCK plus a margin (a link that hangs after a
// reconnect); entries delivered to a dropped read stay pending and are reclaimed after their lease.
import { type KeySpace, QUEUE_GROUP, type RedisLike } from "../journal/index.ts";
import type { Logger } from "../log.ts";
import type { QueueEntry } from "./run-executor.ts";

type StreamReply = [string, [string, string[] | null][]][] | null;

/**
 * Turns an XREADGROUP / XAUTOCLAIM entry list into queue entries; entries without run or task fields are dropped. An
 * entry names its client (`client`), except one written before entries did: the claim then reads it from the task;
 * it names the task's profile and context (`prof`, `ctx`) too, which the claim needs to move the task in the
 * ListTasks indexes.
 */
export function toQueueEntries(shard: number, rows: readonly [string, string[] | null][]): QueueEntry[] {
  const entries: QueueEntry[] = [];
  for (const [id, fields] of rows) {
    if (!fields) continue;
    let runId = "";
    let taskId = "";
    let clientId = "";
    let profile = "";
    let contextId: string | undefined;
    for (let i = 0; i + 1 < fields.length; i += 2) {
      if (fields[i] === "run") runId = fields[i + 1] ?? "";
      else if (fields[i] === "task") taskId = fields[i + 1] ?? "";
      else if (fields[i] === "client") clientId = fields[i + 1] ?? "";
      else if (fields[i] === "prof") profile = fields[i + 1] ?? "";
      else if (fields[i] === "ctx") contextId = fields[i + 1] ?? "";
    }
    if (runId === "" || taskId === "") continue;
    const entry: { -readonly [K in keyof QueueEntry]: QueueEntry[K] } = { shard, id, runId, taskId };
    if (clientId !== "") entry.clientId = clientId;
    if (profile !== "" && contextId !== undefined) entry.index = { profile, contextId };
    entries.push(entry);
  }
  return entries;
}

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
  private connection: RedisLike | undefined;
  private readonly streams: string[];
  private readonly shardOf = new Map<string, number>();
  private closed = false;

  constructor(private readonly o: QueueReaderOptions) {
    const shards = o.shards ?? Array.from({ length: o.keys.shards }, (_, shard) => shard);
    this.streams = shards.map((shard) => o.keys.queue(shard));
    for (const shard of shards) this.shardOf.set(o.keys.queue(shard), shard);
  }

  /** New entries, at most `count` per shard; [] after BLOCK without any, after a watchdog reset, or on an error. */
  async read(count: number): Promise<QueueEntry[]> {
    if (this.closed) return [];
    this.connection ??= this.o.connect();
    const connection = this.connection;
    const args = [
      "GROUP",
      QUEUE_GROUP,
      this.o.consumer,
      "COUNT",
      Math.max(1, count),
      "BLOCK",
      this.o.blockMs,
      "STREAMS",
      ...this.streams,
      ...this.streams.map(() => ">"),
    ];
    let timer: ReturnType<typeof setTimeout> | undefined;
    const watchdog = new Promise<"hung">((resolve) => {
      timer = setTimeout(() => resolve("hung"), this.o.blockMs + this.o.watchdogMarginMs);
    });
    try {
      const reply = await Promise.race([connection.call("XREADGROUP", ...args) as Promise<StreamReply>, watchdog]);
      if (reply === "hung") {
        this.o.logger.warn({ blockMs: this.o.blockMs }, "blocking queue read did not return; reconnecting");
        this.drop(connection);
        return [];
      }
      return (reply ?? []).flatMap(([stream, rows]) => toQueueEntries(this.shardOf.get(stream) ?? 0, rows));
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

  private drop(connection: RedisLike): void {
    if (this.connection === connection) this.connection = undefined;
    connection.disconnect();
  }
}

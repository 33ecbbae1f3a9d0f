// The shard run queues as workers read them: new entries for a consumer (XREADGROUP), entries idle past their lease
// (XAUTOCLAIM), and their upkeep (old dead letters trimmed, idle consumers removed). It decides nothing about a run:
// the claim script does.
import { type KeySpace, QUEUE_GROUP } from "./keys.ts";
import type { RedisLike } from "./scripts.ts";

/** One entry of a shard's run queue. */
export interface QueueEntry {
  readonly shard: number;
  readonly id: string;
  readonly runId: string;
  readonly taskId: string;
  /** The task's client, as the entry names it (absent in entries written before entries named it). */
  readonly clientId?: string;
  /**
   * The task's profile and context (absent in older entries). An actor of the earlier version, whose claim moved the
   * task to WORKING, named its ListTasks indexes with them; this version's claim moves nothing and reads neither.
   */
  readonly index?: { readonly profile: string; readonly contextId: string };
}

type StreamRows = [string, string[] | null][];
type StreamReply = [string, StreamRows][] | null;
type AutoclaimReply = [string, StreamRows, string[]?];

/**
 * Turns an XREADGROUP / XAUTOCLAIM entry list into queue entries; entries without run or task fields are dropped. An
 * entry names its client (`client`), except one written before entries did: the claim then reads it from the task;
 * it names the task's profile and context (`prof`, `ctx`) too, which actors of the earlier version read (see `index`).
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

/** Field → value of one XINFO CONSUMERS row (a flat array). */
function row(values: unknown): Map<string, unknown> {
  const map = new Map<string, unknown>();
  if (Array.isArray(values)) for (let i = 0; i + 1 < values.length; i += 2) map.set(String(values[i]), values[i + 1]);
  return map;
}

export class RunQueue {
  constructor(
    private readonly redis: RedisLike,
    readonly keys: KeySpace,
  ) {}

  /** This connection's id (CLIENT ID), by which another connection can end its blocking read (`unblock`). */
  async connectionId(): Promise<number> {
    return Number(await this.redis.call("CLIENT", "ID"));
  }

  /**
   * Ends the blocking read of connection `connectionId` as if its BLOCK had passed (CLIENT UNBLOCK … TIMEOUT: it
   * answers no entries, and an entry it has not been given stays in the queue). False when that connection was not
   * blocked. Sent on another connection than the read's, of the same Redis node.
   */
  async unblock(connectionId: number): Promise<boolean> {
    return Number(await this.redis.call("CLIENT", "UNBLOCK", connectionId, "TIMEOUT")) === 1;
  }

  /**
   * New entries for `consumer`, at most `count` per shard, in one read of `shards` (on a cluster, one shard per read:
   * a read across slots is refused). With `blockMs`, waits up to that long when none is there.
   */
  async readNew(consumer: string, shards: readonly number[], count: number, blockMs?: number): Promise<QueueEntry[]> {
    const streams = shards.map((shard) => this.keys.queue(shard));
    const block = blockMs === undefined ? [] : ["BLOCK", blockMs];
    const reply = (await this.redis.call(
      "XREADGROUP",
      "GROUP",
      QUEUE_GROUP,
      consumer,
      "COUNT",
      Math.max(1, count),
      ...block,
      "STREAMS",
      ...streams,
      ...streams.map(() => ">"),
    )) as StreamReply;
    return (reply ?? []).flatMap(([stream, rows]) => toQueueEntries(shards[streams.indexOf(stream)] ?? 0, rows));
  }

  /**
   * Moves up to `count` entries of a shard idle longer than `minIdleMs` (their lease has passed) to `consumer`, from
   * `cursor` on ("0-0" to start); returns them and the cursor the next call continues from.
   */
  async reclaimIdle(
    shard: number,
    consumer: string,
    minIdleMs: number,
    cursor: string,
    count: number,
  ): Promise<{ cursor: string; entries: QueueEntry[] }> {
    const reply = (await this.redis.call(
      "XAUTOCLAIM",
      this.keys.queue(shard),
      QUEUE_GROUP,
      consumer,
      minIdleMs,
      cursor,
      "COUNT",
      count,
    )) as AutoclaimReply;
    return { cursor: reply[0], entries: toQueueEntries(shard, reply[1]) };
  }

  /** Deletes (approximately) a shard's dead letters older than `olderThanMs` (epoch ms); returns how many went. */
  async trimDeadLetters(shard: number, olderThanMs: number): Promise<number> {
    return Number(await this.redis.call("XTRIM", this.keys.dead(shard), "MINID", "~", `${olderThanMs}-0`));
  }

  /**
   * Removes up to `budget` consumers of a shard's queue group that hold no entries and have been idle longer than
   * `idleMs`, except those named in `keep`; returns how many went.
   */
  async removeIdleConsumers(shard: number, idleMs: number, keep: ReadonlySet<string>, budget: number): Promise<number> {
    const queue = this.keys.queue(shard);
    let rows: unknown[];
    try {
      rows = (await this.redis.call("XINFO", "CONSUMERS", queue, QUEUE_GROUP)) as unknown[];
    } catch {
      return 0; // no stream or no group yet
    }
    let removed = 0;
    for (const values of rows) {
      if (removed >= budget) break;
      const consumer = row(values);
      const name = String(consumer.get("name") ?? "");
      if (keep.has(name) || Number(consumer.get("pending")) !== 0 || Number(consumer.get("idle")) <= idleMs) continue;
      removed += Number(await this.redis.call("XGROUP", "DELCONSUMER", queue, QUEUE_GROUP, name)) >= 0 ? 1 : 0;
    }
    return removed;
  }
}

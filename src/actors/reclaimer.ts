// Finds runs whose lease expired: XAUTOCLAIM moves queue entries idle longer than the lease to this consumer, a
// bounded number per call; the claim script then decides whether each may run again (the fence guards every write).
import { type KeySpace, type QueueEntry, type RedisLike, RunQueue } from "../journal/index.ts";

export class Reclaimer {
  private readonly cursors: string[];
  private readonly queue: RunQueue;

  constructor(
    redis: RedisLike,
    keys: KeySpace,
    private readonly consumer: string,
    private readonly minIdleMs: number,
  ) {
    this.queue = new RunQueue(redis, keys);
    this.cursors = Array.from({ length: keys.shards }, () => "0-0");
  }

  /** At most `count` expired entries per shard, continuing where the previous call stopped. */
  async reclaim(count: number): Promise<QueueEntry[]> {
    if (count <= 0) return [];
    const found: QueueEntry[] = [];
    for (let shard = 0; shard < this.queue.keys.shards; shard++) {
      const reply = await this.queue.reclaimIdle(
        shard,
        this.consumer,
        this.minIdleMs,
        this.cursors[shard] ?? "0-0",
        count,
      );
      this.cursors[shard] = reply.cursor;
      found.push(...reply.entries);
    }
    return found;
  }
}

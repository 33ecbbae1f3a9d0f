// Finds runs whose lease expired: XAUTOCLAIM moves queue entries idle longer than the lease to this consumer, a
// bounded number per call; the claim script then decides whether each may run again (the fence guards every write).
import { type KeySpace, QUEUE_GROUP, type RedisLike } from "../journal/index.ts";
import { toQueueEntries } from "./queue-reader.ts";
import type { QueueEntry } from "./run-executor.ts";

type AutoclaimReply = [string, [string, string[] | null][], string[]?];

export class Reclaimer {
  private readonly cursors: string[];

  constructor(
    private readonly redis: RedisLike,
    private readonly keys: KeySpace,
    private readonly consumer: string,
    private readonly minIdleMs: number,
  ) {
    this.cursors = Array.from({ length: keys.shards }, () => "0-0");
  }

  /** At most `count` expired entries per shard, continuing where the previous call stopped. */
  async reclaim(count: number): Promise<QueueEntry[]> {
    if (count <= 0) return [];
    const found: QueueEntry[] = [];
    for (let shard = 0; shard < this.keys.shards; shard++) {
      const reply = (await this.redis.call(
        "XAUTOCLAIM",
        this.keys.queue(shard),
        QUEUE_GROUP,
        this.consumer,
        this.minIdleMs,
        this.cursors[shard] ?? "0-0",
        "COUNT",
        count,
      )) as AutoclaimReply;
      this.cursors[shard] = reply[0];
      found.push(...toQueueEntries(shard, reply[1]));
    }
    return found;
  }
}

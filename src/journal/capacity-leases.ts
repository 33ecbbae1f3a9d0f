// Capacity leases shared by every gateway: a sorted set per limit, scored by expiry, so a dead gateway's leases
// lapse after their TTL and never hold capacity.
import { LEASE } from "./lua/lease.ts";
import { STREAM_LEASE } from "./lua/stream-lease.ts";
import type { RedisLike } from "./scripts.ts";

export class CapacityLeases {
  constructor(private readonly redis: RedisLike) {}

  /** Takes (or renews) `member` in `key` unless `max` live leases exist; true when held. */
  async acquire(key: string, member: string, ttlMs: number, max: number): Promise<boolean> {
    return (await LEASE.run(this.redis, { leases: key }, { member, ttlMs, max })) === "held";
  }

  /**
   * Takes (or renews) one stream's `member` in its task's and its client's lease sets, both or neither, each against
   * its maximum (0 = none); the answer names the set that was full.
   */
  async acquireStream(
    sets: { taskStreams: string; clientStreams: string },
    member: string,
    ttlMs: number,
    max: { perTask: number; perClient: number },
  ): Promise<"held" | "taskFull" | "clientFull"> {
    return await STREAM_LEASE.run(this.redis, sets, {
      member,
      ttlMs,
      maxPerTask: max.perTask,
      maxPerClient: max.perClient,
    });
  }

  async release(key: string, member: string): Promise<void> {
    await this.redis.zrem(key, member);
  }

  /** Live leases in `key` (expired ones are not counted). */
  async count(key: string): Promise<number> {
    return await this.redis.zcount(key, `(${Date.now()}`, "+inf");
  }
}

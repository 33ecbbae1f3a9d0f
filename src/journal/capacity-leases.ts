// Capacity leases shared by every gateway: a sorted set per limit, scored by expiry, so a dead gateway's leases
// lapse after their TTL and never hold capacity.
import { type RedisLike, runScript } from "./scripts.ts";

export class CapacityLeases {
  constructor(private readonly redis: RedisLike) {}

  /** Takes (or renews) `member` in `key` unless `max` live leases exist; true when held. */
  async acquire(key: string, member: string, ttlMs: number, max: number): Promise<boolean> {
    return (await runScript(this.redis, "lease", [key], [member, ttlMs, max])) === 1;
  }

  async release(key: string, member: string): Promise<void> {
    await this.redis.zrem(key, member);
  }

  /** Live leases in `key` (expired ones are not counted). */
  async count(key: string): Promise<number> {
    return await this.redis.zcount(key, `(${Date.now()}`, "+inf");
  }
}

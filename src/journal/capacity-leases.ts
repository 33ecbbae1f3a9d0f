// Capacity leases shared by every gateway: a sorted set per limit, scored by expiry, so a dead gateway's leases
// lapse after their TTL and never hold capacity.
import { LEASE } from "./lua/lease.ts";
import { LEASE_PAIR } from "./lua/lease-pair.ts";
import { isCluster } from "./redis-connection.ts";
import type { RedisLike } from "./scripts.ts";

export class CapacityLeases {
  constructor(private readonly redis: RedisLike) {}

  /** Takes (or renews) `member` in `key` unless `max` live leases exist; true when held. */
  async acquire(key: string, member: string, ttlMs: number, max: number): Promise<boolean> {
    return (await LEASE.run(this.redis, { leases: key }, { member, ttlMs, max, renewOnly: "" })) === "held";
  }

  /**
   * Renews `member` in `key` if it is still live; never takes it again (a lease given back by another writer, or
   * lapsed, stays away). True when renewed.
   */
  async renew(key: string, member: string, ttlMs: number): Promise<boolean> {
    return (await LEASE.run(this.redis, { leases: key }, { member, ttlMs, max: 0, renewOnly: "1" })) === "held";
  }

  /**
   * Whether one script may take leases in two sets of different hash slots: on one node (alone or under Sentinel), not
   * on a Cluster, whose scripts run in one slot.
   */
  get pairsAcrossSlots(): boolean {
    return !isCluster(this.redis);
  }

  /**
   * Takes (or renews) `member` in both sets or in neither, each against its maximum (0 = none), in one script; the
   * answer names the set that was full. The sets share a slot, or `pairsAcrossSlots` holds.
   */
  async acquirePair(
    sets: { first: string; second: string },
    member: string,
    ttlMs: number,
    max: { first: number; second: number },
  ): Promise<"held" | "firstFull" | "secondFull"> {
    return await LEASE_PAIR.run(this.redis, sets, { member, ttlMs, maxFirst: max.first, maxSecond: max.second });
  }

  /**
   * Takes (or renews) one stream's `member` in its task's and its client's lease sets (one shard), both or neither,
   * each against its maximum (0 = none); the answer names the set that was full.
   */
  async acquireStream(
    sets: { taskStreams: string; clientStreams: string },
    member: string,
    ttlMs: number,
    max: { perTask: number; perClient: number },
  ): Promise<"held" | "taskFull" | "clientFull"> {
    const pair = { first: sets.taskStreams, second: sets.clientStreams };
    const held = await this.acquirePair(pair, member, ttlMs, { first: max.perTask, second: max.perClient });
    return held === "firstFull" ? "taskFull" : held === "secondFull" ? "clientFull" : held;
  }

  async release(key: string, member: string): Promise<void> {
    await this.redis.zrem(key, member);
  }

  /** Live leases in `key` (expired ones are not counted). */
  async count(key: string): Promise<number> {
    return await this.redis.zcount(key, `(${Date.now()}`, "+inf");
  }
}

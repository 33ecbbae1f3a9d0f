// The workers' liveness as Redis holds it, readable with redis-cli: a hash per worker with a TTL and an index of
// workers by last beat (what `status` lists), and the per-shard live records that accept checks and /readyz reads.
// Each shard's live record is written by RunLedger.beat (the heartbeat script, in Redis time).
import type { KeySpace } from "./keys.ts";
import type { RedisLike } from "./scripts.ts";

/** What a worker's hash holds. */
export interface WorkerRecord {
  mode: "consume" | "sweep";
  pid: number;
  host: string;
  /** ISO 8601 times of the worker's start and of this beat. */
  started: string;
  beat: string;
  /** Runs in flight and runs done. */
  inflight: number;
  done: number;
  version: string;
}

export class WorkerRegistry {
  constructor(
    private readonly redis: RedisLike,
    readonly keys: KeySpace,
  ) {}

  /**
   * Writes a worker's hash (kept `ttlSeconds`) and its score in the workers index (`nowMs`), dropping index entries
   * older than the TTL.
   */
  async record(workerId: string, record: WorkerRecord, nowMs: number, ttlSeconds: number): Promise<void> {
    const { redis, keys } = this;
    const key = keys.worker(workerId);
    // Two pipelines, one per key: the worker hash and the index sit in different slots on a cluster.
    const hash = redis
      .pipeline()
      .hset(key, { ...record })
      .expire(key, ttlSeconds)
      .exec();
    const index = redis
      .pipeline()
      .zadd(keys.workers(), nowMs, workerId)
      .zremrangebyscore(keys.workers(), "-inf", nowMs - ttlSeconds * 1000)
      .exec();
    await Promise.all([hash, index]);
  }

  /** Removes a worker's hash and index entry (a clean exit; the shards' live records keep their TTL). */
  async remove(workerId: string): Promise<void> {
    const { redis, keys } = this;
    await Promise.all([redis.del(keys.worker(workerId)), redis.zrem(keys.workers(), workerId)]);
  }

  /** Whether a shard has a worker beat or sweep tick recorded (its live record has not expired). */
  async beaten(shard: number): Promise<boolean> {
    return (await this.redis.exists(this.keys.live(shard))) === 1;
  }

  /**
   * Redis time (s) and each shard's last worker beat or sweep tick (Redis time, s; null when none is recorded), in
   * one tick: separate commands, not one pipeline, since on a cluster the shards' records sit on different nodes (each
   * command goes to its own node as it is issued).
   */
  async shardBeats(): Promise<{ nowSeconds: number; beats: (number | null)[] }> {
    const { redis, keys } = this;
    const [[now], ...beats] = await Promise.all([
      redis.call("TIME") as Promise<[string, string]>,
      ...Array.from({ length: keys.shards }, (_, shard) => redis.get(keys.live(shard))),
    ]);
    return { nowSeconds: Number(now), beats: beats.map((beat) => (typeof beat === "string" ? Number(beat) : null)) };
  }
}

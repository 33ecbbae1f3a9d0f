// The workers' side of push notifications: the outbox the journal scripts fill (one delivery per config and event),
// claimed per task so that one worker delivers a task's events in order, and settled after each attempt.

import type { StreamResponse } from "../protocol/index.ts";
import type { KeySpace } from "./keys.ts";
import { PUSH_CLAIM } from "./lua/push-claim.ts";
import { PUSH_SETTLE } from "./lua/push-settle.ts";
import type { StoredPushConfig } from "./push-configs.ts";
import type { RedisLike } from "./scripts.ts";

/** One pending webhook delivery, as the journal scripts enqueue it. `id` is stable across retries (webhook-id). */
export interface OutboxDelivery {
  id: string;
  cfg: string;
  rev: number;
  attempts: number;
  ev: StreamResponse;
}

/** The head delivery of a task and its config; `config` is undefined when the config was deleted meanwhile. */
export interface DueDelivery {
  shard: number;
  taskId: string;
  delivery: OutboxDelivery;
  config: StoredPushConfig | undefined;
}

export type Settlement =
  | { outcome: "done" }
  | { outcome: "retry"; atMs: number }
  | { outcome: "dead"; reason: string }
  | { outcome: "disable"; reason: string };

export class PushOutbox {
  constructor(
    private readonly redis: RedisLike,
    readonly keys: KeySpace,
  ) {}

  /** Claims up to `max` tasks of a shard whose next delivery is due; each stays claimed for `leaseMs`. */
  async claim(shard: number, max: number, leaseMs: number): Promise<string[]> {
    return await PUSH_CLAIM.run(this.redis, { pushReady: this.keys.pushReady(shard) }, { max, leaseMs });
  }

  /** The head delivery of a claimed task, with its config; undefined when the task has nothing left. */
  async head(shard: number, taskId: string): Promise<DueDelivery | undefined> {
    const [[, json], [, configs]] = (await this.redis
      .multi()
      .lindex(this.keys.pushQueue(shard, taskId), 0)
      .hgetall(this.keys.pushConfigs(shard, taskId))
      .exec()) as [[unknown, string | null], [unknown, Record<string, string>]];
    if (json === null) {
      await this.redis.zrem(this.keys.pushReady(shard), taskId);
      return undefined;
    }
    const delivery = JSON.parse(json) as OutboxDelivery;
    const config = configs[delivery.cfg];
    return {
      shard,
      taskId,
      delivery,
      config: config === undefined ? undefined : (JSON.parse(config) as StoredPushConfig),
    };
  }

  /** Records the outcome of one attempt at the head delivery; false when the head changed meanwhile. */
  async settle(due: DueDelivery, settlement: Settlement): Promise<boolean> {
    const { shard, taskId, delivery } = due;
    const retried = settlement.outcome === "retry" ? { ...delivery, attempts: delivery.attempts + 1 } : delivery;
    const reply = await PUSH_SETTLE.run(
      this.redis,
      {
        pushQueue: this.keys.pushQueue(shard, taskId),
        pushReady: this.keys.pushReady(shard),
        pushDead: this.keys.pushDead(shard),
        pushConfigs: this.keys.pushConfigs(shard, taskId),
      },
      {
        taskId,
        deliveryId: delivery.id,
        outcome: settlement.outcome,
        retried: JSON.stringify(retried),
        retryAtMs: settlement.outcome === "retry" ? settlement.atMs : 0,
        reason: "reason" in settlement ? settlement.reason : "",
        configId: delivery.cfg,
        rev: delivery.rev,
        deadMaxLength: 10_000,
      },
    );
    return reply === "settled";
  }

  /** The W3C Trace Context stored with the task's run (JSON carrier), or null. */
  async runTrace(shard: number, taskId: string): Promise<string | null> {
    return await this.redis.hget(this.keys.run(shard, taskId), "trace");
  }

  /** Redis time (ms), the clock deliveries are scheduled in. */
  async now(): Promise<number> {
    const [seconds, micros] = await this.redis.time();
    return Number(seconds) * 1000 + Math.floor(Number(micros) / 1000);
  }
}

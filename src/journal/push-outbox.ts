// The workers' side of push notifications: the outbox the journal scripts fill (one delivery per config and event,
// queued per config of the task), claimed per queue so that one worker delivers a config's events in order while the
// task's other configs go on, and settled after each attempt.

import type { StreamResponse } from "../protocol/index.ts";
import type { KeySpace } from "./keys.ts";
import { PUSH_CLAIM } from "./lua/push-claim.ts";
import { PUSH_HEAD } from "./lua/push-head.ts";
import { PUSH_MIGRATE } from "./lua/push-migrate.ts";
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

/**
 * A claimed webhook queue: a task's deliveries to one config. `configId` is undefined for a queue of a version before
 * the queues per config (all of a task's configs in one list), which `migrate` moves into the task's outbox.
 */
export interface ClaimedQueue {
  shard: number;
  taskId: string;
  configId: string | undefined;
}

/** The head delivery of a queue and its config; `config` is undefined when the config was deleted meanwhile. */
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

/** A queue's member of the shard's ready set: "<taskId> <configId>" (neither id holds a space). */
export function pushReadyMember(taskId: string, configId: string): string {
  return `${taskId} ${configId}`;
}

/** The queue a member of the ready set names. */
export function queueOf(shard: number, member: string): ClaimedQueue {
  const space = member.indexOf(" ");
  return space < 0
    ? { shard, taskId: member, configId: undefined }
    : { shard, taskId: member.slice(0, space), configId: member.slice(space + 1) };
}

export class PushOutbox {
  constructor(
    private readonly redis: RedisLike,
    readonly keys: KeySpace,
  ) {}

  /** Claims up to `max` queues of a shard whose head delivery is due; each stays claimed for `leaseMs`. */
  async claim(shard: number, max: number, leaseMs: number): Promise<ClaimedQueue[]> {
    const members = await PUSH_CLAIM.run(this.redis, { pushReady: this.keys.pushReady(shard) }, { max, leaseMs });
    return members.map((member) => queueOf(shard, member));
  }

  /** The head delivery of a claimed queue, with its config; undefined when the queue is empty (it leaves the set). */
  async head(shard: number, taskId: string, configId: string): Promise<DueDelivery | undefined> {
    const k = this.keys;
    const reply = await PUSH_HEAD.run(
      this.redis,
      {
        pushOutbox: k.pushOutbox(shard, taskId),
        pushConfigs: k.pushConfigs(shard, taskId),
        pushReady: k.pushReady(shard),
      },
      { taskId, configId },
    );
    if (reply === null) return undefined;
    return {
      shard,
      taskId,
      delivery: JSON.parse(reply.delivery) as OutboxDelivery,
      config: reply.config === null ? undefined : (JSON.parse(reply.config) as StoredPushConfig),
    };
  }

  /**
   * Moves a task's deliveries queued by a version before the queues per config into its outbox (each config's queue
   * due now); returns how many.
   */
  async migrate(shard: number, taskId: string): Promise<number> {
    const k = this.keys;
    return await PUSH_MIGRATE.run(
      this.redis,
      {
        legacyPushQueue: k.legacyPushQueue(shard, taskId),
        pushOutbox: k.pushOutbox(shard, taskId),
        pushReady: k.pushReady(shard),
        task: k.task(shard, taskId),
        bytes: k.bytes(shard),
      },
      { taskId },
    );
  }

  /** Records the outcome of one attempt at a queue's head delivery; false when the head changed meanwhile. */
  async settle(due: DueDelivery, settlement: Settlement): Promise<boolean> {
    const { shard, taskId, delivery } = due;
    const retried = settlement.outcome === "retry" ? { ...delivery, attempts: delivery.attempts + 1 } : delivery;
    const reply = await PUSH_SETTLE.run(
      this.redis,
      {
        pushOutbox: this.keys.pushOutbox(shard, taskId),
        pushReady: this.keys.pushReady(shard),
        pushDead: this.keys.pushDead(shard),
        pushConfigs: this.keys.pushConfigs(shard, taskId),
        task: this.keys.task(shard, taskId),
        bytes: this.keys.bytes(shard),
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

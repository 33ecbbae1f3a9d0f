// Durable acknowledgements (redis.ackReplicas): after a write a client is told about, WAIT on the connection that made
// it until enough replicas confirm it. On a cluster the WAIT goes to the master serving the write's slot. Writes
// whose replies arrived in the same event-loop turn share one WAIT: it covers every earlier write of the connection.
import calculateSlot from "cluster-key-slot";
import { Command } from "ioredis";
import { StoreNotReplicatedError } from "../protocol/index.ts";
import { isCluster } from "./redis-connection.ts";
import type { RedisLike } from "./scripts.ts";

export interface ReplicaAckSettings {
  /** Replicas that must confirm (redis.ackReplicas); 0 = none, no WAIT is sent. */
  replicas: number;
  /** How long to wait for them, in ms (redis.ackTimeoutMs). */
  timeoutMs: number;
  /** Retry-After of the refusal when they do not confirm in time (s). */
  retryAfterSeconds: number;
}

type Batch = Promise<number>;

export class ReplicaAck {
  /** The WAIT not sent yet, per target (a slot on a cluster, the one connection otherwise). */
  private readonly open = new Map<number, Batch>();

  constructor(
    private readonly redis: RedisLike,
    private readonly settings: ReplicaAckSettings,
  ) {}

  get enabled(): boolean {
    return this.settings.replicas > 0;
  }

  /**
   * Resolves once `settings.replicas` replicas hold every write this connection made to `key`'s node so far; throws
   * StoreNotReplicatedError (naming `taskId` when given) when fewer confirm within the timeout. Call it after the
   * write's reply has arrived.
   */
  async confirm(key: string, taskId?: string): Promise<void> {
    if (!this.enabled) return;
    const confirmed = await this.batch(isCluster(this.redis) ? calculateSlot(key) : -1);
    if (confirmed < this.settings.replicas) {
      throw new StoreNotReplicatedError({
        required: this.settings.replicas,
        confirmed,
        timeoutMs: this.settings.timeoutMs,
        retryAfterSeconds: this.settings.retryAfterSeconds,
        ...(taskId === undefined ? {} : { taskId }),
      });
    }
  }

  private batch(slot: number): Batch {
    let batch = this.open.get(slot);
    if (batch) return batch;
    batch = new Promise<number>((resolve, reject) => {
      setImmediate(() => {
        this.open.delete(slot);
        this.wait(slot).then(resolve, reject);
      });
    });
    this.open.set(slot, batch);
    return batch;
  }

  private async wait(slot: number): Promise<number> {
    const { replicas, timeoutMs } = this.settings;
    if (!isCluster(this.redis)) return Number(await this.redis.call("WAIT", replicas, timeoutMs));
    // WAIT names no key: route it by the write's slot, so that it reaches the master (and connection) that wrote.
    const command = new Command("wait", [replicas, timeoutMs], { replyEncoding: "utf8" });
    this.redis.sendCommand(command, undefined, { slot });
    return Number(await command.promise);
  }
}

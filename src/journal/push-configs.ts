// The gateway's side of push notification configs: create, get, list and delete a client's task configs, counting
// their bytes against the client's and profile's storage budgets. It only stores them; workers alone deliver webhooks
// (see PushOutbox).

import type { TaskPushNotificationConfig } from "../protocol/index.ts";
import { TaskNotFoundError } from "../protocol/index.ts";
import type { KeySpace } from "./keys.ts";
import { PUSH_CONFIG } from "./lua/push-config.ts";
import { PUSH_CONFIG_DELETE } from "./lua/push-config-delete.ts";
import { refusalError } from "./refusals.ts";
import type { ReplicaAck } from "./replica-ack.ts";
import type { RedisLike } from "./scripts.ts";
import { storeFailure } from "./task-journal.ts";

/** A stored config always has its id and task id. */
export type StoredPushConfig = TaskPushNotificationConfig & { id: string; taskId: string };

export class PushConfigLimitError extends Error {}

/** The storage budgets a new config is checked against (0 or absent = none). */
export interface StorageBudgets {
  /** The client's budget when its record sets none (clients.maxStoredBytes). */
  clientMaxStoredBytes?: number;
  /** The profile's budget (quota.maxStoredBytes). */
  profileMaxStoredBytes?: number;
  /** Retry-After of a refusal (s). */
  retryAfterSeconds?: number;
}

export class PushConfigs {
  /** `ack`: confirms create and delete on redis.ackReplicas replicas before they return (absent: none). */
  constructor(
    private readonly redis: RedisLike,
    private readonly keys: KeySpace,
    private readonly ack?: ReplicaAck,
  ) {}

  private async replicated(shard: number, taskId: string): Promise<void> {
    await this.ack?.confirm(this.keys.task(shard, taskId), taskId).catch(storeFailure);
  }

  private async owned(clientId: string, profile: string, taskId: string): Promise<number> {
    const shard = this.keys.shardOf(clientId);
    const [cli, prof] = await this.redis.hmget(this.keys.task(shard, taskId), "cli", "prof").catch(storeFailure);
    if (cli !== clientId || prof !== profile) throw new TaskNotFoundError(taskId);
    return shard;
  }

  /**
   * Creates or replaces a config; throws TaskNotFoundError, PushConfigLimitError, or a CapacityError
   * (CLIENT_STORAGE_LIMIT_EXCEEDED, PROFILE_STORAGE_LIMIT_EXCEEDED) when its bytes would pass a storage budget.
   */
  async create(
    clientId: string,
    profile: string,
    config: StoredPushConfig,
    maxPerTask: number,
    budgets: StorageBudgets = {},
  ): Promise<void> {
    const shard = this.keys.shardOf(clientId);
    const k = this.keys;
    const reply = await PUSH_CONFIG.run(
      this.redis,
      {
        task: k.task(shard, config.taskId),
        pushConfigs: k.pushConfigs(shard, config.taskId),
        client: k.client(shard, clientId),
        bytes: k.bytes(shard),
      },
      {
        clientId,
        profile,
        configId: config.id,
        config: JSON.stringify(config),
        maxPerTask,
        clientMaxStoredBytes: budgets.clientMaxStoredBytes ?? 0,
        profileMaxStoredBytes: budgets.profileMaxStoredBytes ?? 0,
      },
    ).catch(storeFailure);
    if (reply === "taskNotFound") throw new TaskNotFoundError(config.taskId);
    if (reply === "configLimit") throw new PushConfigLimitError(`a task may hold at most ${maxPerTask} push configs`);
    if (reply === "clientStorage" || reply === "profileStorage") {
      throw refusalError(reply, { clientId, profile, retryAfterSeconds: budgets.retryAfterSeconds ?? 5 });
    }
    await this.replicated(shard, config.taskId);
  }

  async get(clientId: string, profile: string, taskId: string, id: string): Promise<StoredPushConfig | undefined> {
    const shard = await this.owned(clientId, profile, taskId);
    const json = await this.redis.hget(this.keys.pushConfigs(shard, taskId), id).catch(storeFailure);
    return json === null ? undefined : (JSON.parse(json) as StoredPushConfig);
  }

  async list(clientId: string, profile: string, taskId: string): Promise<StoredPushConfig[]> {
    const shard = await this.owned(clientId, profile, taskId);
    const all = await this.redis.hgetall(this.keys.pushConfigs(shard, taskId)).catch(storeFailure);
    return Object.keys(all)
      .sort()
      .map((id) => JSON.parse(all[id] as string) as StoredPushConfig);
  }

  /**
   * Deletes a config and gives its bytes back; deleting one that does not exist is not an error (the operation is
   * idempotent). Throws TaskNotFoundError for a task that is not the client's in this profile.
   */
  async delete(clientId: string, profile: string, taskId: string, id: string): Promise<void> {
    const shard = this.keys.shardOf(clientId);
    const k = this.keys;
    const reply = await PUSH_CONFIG_DELETE.run(
      this.redis,
      { task: k.task(shard, taskId), pushConfigs: k.pushConfigs(shard, taskId), bytes: k.bytes(shard) },
      { clientId, profile, configId: id },
    ).catch(storeFailure);
    if (reply === "taskNotFound") throw new TaskNotFoundError(taskId);
    await this.replicated(shard, taskId);
  }
}

// The gateway's side of push notification configs: create, get, list and delete a client's task configs.
// It only stores them; workers alone deliver webhooks (see PushOutbox).

import type { TaskPushNotificationConfig } from "../protocol/index.ts";
import { TaskNotFoundError } from "../protocol/index.ts";
import type { KeySpace } from "./keys.ts";
import { type RedisLike, runScript } from "./scripts.ts";
import { storeFailure } from "./task-journal.ts";

/** A stored config always has its id and task id. */
export type StoredPushConfig = TaskPushNotificationConfig & { id: string; taskId: string };

export class PushConfigLimitError extends Error {}

export class PushConfigs {
  constructor(
    private readonly redis: RedisLike,
    private readonly keys: KeySpace,
  ) {}

  private async owned(clientId: string, profile: string, taskId: string): Promise<number> {
    const shard = this.keys.shardOf(clientId);
    const [cli, prof] = await this.redis.hmget(this.keys.task(shard, taskId), "cli", "prof").catch(storeFailure);
    if (cli !== clientId || prof !== profile) throw new TaskNotFoundError(taskId);
    return shard;
  }

  /** Creates or replaces a config; throws TaskNotFoundError or PushConfigLimitError. */
  async create(clientId: string, profile: string, config: StoredPushConfig, maxPerTask: number): Promise<void> {
    const shard = this.keys.shardOf(clientId);
    const reply = await runScript(
      this.redis,
      "pushConfig",
      [this.keys.task(shard, config.taskId), this.keys.pushConfigs(shard, config.taskId)],
      [clientId, profile, config.id, JSON.stringify(config), maxPerTask],
    ).catch(storeFailure);
    if (reply === -1) throw new TaskNotFoundError(config.taskId);
    if (reply === -2) throw new PushConfigLimitError(`a task may hold at most ${maxPerTask} push configs`);
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

  /** Deletes a config; deleting one that does not exist is not an error (the operation is idempotent). */
  async delete(clientId: string, profile: string, taskId: string, id: string): Promise<void> {
    const shard = await this.owned(clientId, profile, taskId);
    await this.redis.hdel(this.keys.pushConfigs(shard, taskId), id).catch(storeFailure);
  }
}

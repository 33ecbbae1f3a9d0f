// The retention pass's side of the journal: fails interrupted tasks whose input timeout has passed and deletes
// finished tasks whose retention has ended, one script per task, a bounded number per call. Workers run it (nothing
// else deletes a task), so every byte a task stored is given back to its client's and profile's counters.
import { monotonicFactory } from "ulid";
import type { StreamResponse, TaskStatus } from "../protocol/index.ts";
import type { KeySpace } from "./keys.ts";
import { EXPIRE_INPUT } from "./lua/expire-input.ts";
import { PURGE } from "./lua/purge.ts";
import type { RedisLike } from "./scripts.ts";

/** What the retention pass needs to know of a task's profile. */
export interface TaskLifetimes {
  retentionSeconds: number;
  journalRetentionSeconds: number;
  inputTimeoutSeconds: number;
}

export interface PurgeReport {
  /** Tasks deleted with every key of theirs. */
  tasks: number;
  /** Journals deleted ahead of their task (journalRetentionSeconds < retentionSeconds). */
  journals: number;
}

const ulid = monotonicFactory();

/** The status message of a task that waited too long for the client's next message. */
export function inputTimeoutMessage(seconds: number): string {
  return `The task waited longer than its input timeout of ${seconds} s for the client's next message; it has failed`;
}

export class DueTasks {
  constructor(
    private readonly redis: RedisLike,
    readonly keys: KeySpace,
  ) {}

  /** Up to `count` members of a schedule (ZSET scored in ms) whose time has come, by Redis's clock. */
  private async due(key: string, count: number): Promise<string[]> {
    if (count <= 0) return [];
    const [seconds, micros] = (await this.redis.call("TIME")) as [string, string];
    const nowMs = Number(seconds) * 1000 + Math.floor(Number(micros) / 1000);
    return await this.redis.zrangebyscore(key, "-inf", nowMs, "LIMIT", 0, count);
  }

  /** The owner, profile and context of each task (undefined fields for a task that is gone). */
  private async owners(shard: number, ids: readonly string[]): Promise<(string | null)[][]> {
    const pipeline = this.redis.pipeline();
    for (const id of ids) pipeline.hmget(this.keys.task(shard, id), "cli", "prof", "ctx");
    const replies = (await pipeline.exec()) ?? [];
    return ids.map((_, i) => (replies[i]?.[1] as (string | null)[] | undefined) ?? [null, null, null]);
  }

  /** Runs the next deletion step of up to `budget` due tasks of a shard. */
  async purge(shard: number, budget: number): Promise<PurgeReport> {
    const k = this.keys;
    const ids = await this.due(k.purge(shard), budget);
    const owners = await this.owners(shard, ids);
    const replies = await Promise.all(
      ids.map((id, i) => {
        const [client = "", profile = "", contextId = ""] = (owners[i] ?? []).map((value) => value ?? "");
        return PURGE.run(
          this.redis,
          {
            purge: k.purge(shard),
            task: k.task(shard, id),
            run: k.run(shard, id),
            journal: k.journal(shard, id),
            pushConfigs: k.pushConfigs(shard, id),
            pushOutbox: k.pushOutbox(shard, id),
            pushReady: k.pushReady(shard),
            clientTasks: k.clientTasks(shard, client, profile),
            bytes: k.bytes(shard),
            contextTasks: k.contextTasks(shard, client, profile, contextId),
            chunks: k.artifactChunks(shard, id),
            legacyPushQueue: k.legacyPushQueue(shard, id),
          },
          { taskId: id, clientId: client },
        );
      }),
    );
    return {
      tasks: replies.filter((r) => r === "taskDeleted").length,
      journals: replies.filter((r) => r === "journalDeleted").length,
    };
  }

  /**
   * Removes entries of clients' ListTasks indexes whose task is gone, looking at about `budget` entries of a random
   * sample of clients (each client has an index per profile in `profiles`): the oldest entries, the likeliest to have
   * gone, and a random sample that reaches the rest over time. Returns how many entries were removed.
   */
  async dropGoneIndexEntries(profiles: readonly string[], budget: number): Promise<number> {
    const { redis, keys } = this;
    const clients = ((await redis.srandmember(keys.clients(), Math.min(budget, 100))) as string[] | null) ?? [];
    if (clients.length === 0) return 0;
    const perClient = Math.max(5, Math.floor(budget / clients.length));
    let checked = 0;
    let removed = 0;
    for (const [clientId, profile] of clients.flatMap((id) => profiles.map((p) => [id, p] as const))) {
      if (checked >= budget) break;
      const shard = keys.shardOf(clientId);
      const index = keys.clientTasks(shard, clientId, profile);
      const oldest = await redis.zrange(index, 0, perClient - 1);
      const sample = ((await redis.call("ZRANDMEMBER", index, perClient)) as string[] | null) ?? [];
      const ids = [...new Set([...oldest, ...sample])];
      checked += ids.length;
      if (ids.length === 0) continue;
      const pipeline = redis.pipeline();
      for (const id of ids) pipeline.exists(keys.task(shard, id));
      const replies = (await pipeline.exec()) ?? [];
      const gone = ids.filter((_, i) => replies[i]?.[1] === 0);
      if (gone.length > 0) {
        // from the state indexes too, so that they keep counting what the client's index counts (see TaskJournal.list)
        const removal = redis.pipeline().zrem(index, ...gone);
        for (const stateIndex of keys.stateTaskIndexes(shard, clientId, profile)) removal.zrem(stateIndex, ...gone);
        const [[, count] = []] = (await removal.exec()) ?? [];
        removed += Number(count ?? 0);
      }
    }
    return removed;
  }

  /** Fails up to `budget` interrupted tasks of a shard whose input timeout has passed; returns how many failed. */
  async expireInputs(shard: number, budget: number, lifetimes: (profile: string) => TaskLifetimes): Promise<number> {
    const k = this.keys;
    const ids = await this.due(k.inputDue(shard), budget);
    const owners = await this.owners(shard, ids);
    const replies = await Promise.all(
      ids.map((taskId, i) => {
        const [client, profile, contextId] = owners[i] ?? [];
        const life = lifetimes(profile ?? "");
        const timestamp = new Date();
        const status: TaskStatus = {
          state: "TASK_STATE_FAILED",
          message: {
            messageId: ulid(),
            role: "ROLE_AGENT",
            parts: [{ text: inputTimeoutMessage(life.inputTimeoutSeconds) }],
            taskId,
            contextId: contextId ?? "",
          },
          timestamp: timestamp.toISOString(),
        };
        const event: StreamResponse = { statusUpdate: { taskId, contextId: contextId ?? "", status } };
        return EXPIRE_INPUT.run(
          this.redis,
          {
            inputDue: k.inputDue(shard),
            task: k.task(shard, taskId),
            run: k.run(shard, taskId),
            journal: k.journal(shard, taskId),
            clientTasks: k.clientTasks(shard, client ?? "", profile ?? ""),
            clientInterrupted: k.clientInterrupted(shard, client ?? ""),
            purge: k.purge(shard),
            bytes: k.bytes(shard),
            pushConfigs: k.pushConfigs(shard, taskId),
            pushOutbox: k.pushOutbox(shard, taskId),
            pushReady: k.pushReady(shard),
            contextTasks: k.contextTasks(shard, client ?? "", profile ?? "", contextId ?? ""),
            taskStreams: k.taskStreams(shard, taskId),
          },
          {
            taskId,
            clientId: client ?? "",
            status: JSON.stringify(status),
            event: JSON.stringify(event),
            nowMs: timestamp.getTime(),
            retentionSeconds: life.retentionSeconds,
            journalRetentionSeconds: life.journalRetentionSeconds,
            eventsChannel: k.eventsChannel(),
          },
        );
      }),
    );
    return replies.filter((reply) => reply.ok).length;
  }
}

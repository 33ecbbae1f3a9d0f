// The gateway's side of the journal: accept, resume, cancel, snapshot, list and journal reads, each one script or
// one read. It never runs a handler and never writes a task's progress; actors do that through RunLedger.
import { Buffer } from "node:buffer";
import { monotonicFactory } from "ulid";
import type {
  Message,
  StreamResponse,
  Task,
  TaskPushNotificationConfig,
  TaskState,
  TaskStatus,
} from "../protocol/index.ts";
import {
  InvalidParamsError,
  MessageIdReusedError,
  StoreUnavailableError,
  TaskNotCancelableError,
  TaskNotFoundError,
  UnsupportedOperationError,
} from "../protocol/index.ts";
import { contentHash } from "./content-hash.ts";
import type { KeySpace } from "./keys.ts";
import { ACCEPT_REFUSALS, RESUME_REFUSALS, type Refusal, refusalError } from "./refusals.ts";
import { type RedisLike, runScript, type ScriptReply } from "./scripts.ts";
import { decodeTaskFields, type TaskRecord } from "./task-view.ts";

export interface JournalSettings {
  /** A worker heartbeat or sweep tick must be at most this old (Redis clock) for a task to be accepted. */
  livenessSeconds: number;
  /** How long a client's messageId is remembered for dedup. */
  dedupSeconds: number;
  /** Retry-After given with a refusal over capacity or without a worker. */
  retryAfterSeconds: number;
  /** Push notification configs one task may hold (default 10). */
  maxPushConfigsPerTask?: number;
  /** The per-client limits that apply when a client record sets none (the `clients` section; absent = none). */
  clients?: Partial<ClientDefaults>;
}

/** The configured per-client limits (`clients.*`); a client record's own value wins. 0 = none. */
export interface ClientDefaults {
  /** Bytes a client's tasks may hold in Redis (clients.maxStoredBytes). */
  maxStoredBytes: number;
  /** Tasks a client may have in INPUT_REQUIRED or AUTH_REQUIRED (clients.maxInterruptedTasks). */
  maxInterruptedTasks: number;
  /** Runs of a client that actors execute at once (clients.maxRunningTasks). */
  maxRunningTasks: number;
}

export interface AcceptInput {
  clientId: string;
  profile: string;
  /** The profile's limit of queued + running tasks (0 = none). */
  profileQuota: number;
  /** Bytes the profile's tasks may hold in the client's shard (quota.maxStoredBytes; 0 or absent = none). */
  profileMaxStoredBytes?: number | undefined;
  /** The client's message as sent; the stored copy gets the task id and context id. */
  message: Message;
  metadata?: Record<string, unknown> | undefined;
  /**
   * An inline push notification config (`configuration.taskPushNotificationConfig`), stored with the task. Without an
   * `id` (or with an empty one) its id is the task id, as the official SDKs assign it.
   */
  pushConfig?: TaskPushNotificationConfig | undefined;
}

export interface ResumeInput extends AcceptInput {
  taskId: string;
}

export interface Accepted {
  /** false when the messageId was seen before with the same content: the earlier task, nothing written. */
  created: boolean;
  taskId: string;
  /** The task as accept wrote it (revision 1), when it created one: an answer needs no second read. */
  record?: TaskRecord | undefined;
}

export interface Snapshot {
  record: TaskRecord;
  /** The id of the last journal entry at the snapshot's revision; newer entries follow it. */
  cursor: string;
}

export interface JournalEntry {
  id: string;
  rev: number;
  event: StreamResponse;
}

export interface ListQuery {
  contextId?: string | undefined;
  status?: TaskState | undefined;
  pageSize: number;
  pageToken?: string | undefined;
  statusTimestampAfterMs?: number | undefined;
  /** Only tasks created through this profile. */
  profile?: string | undefined;
}

export interface ListPage {
  records: TaskRecord[];
  nextPageToken: string;
  totalSize: number;
}

const STORE_ERRORS =
  /OOM|READONLY|LOADING|MASTERDOWN|CLUSTERDOWN|Connection|ECONNREFUSED|ECONNRESET|ETIMEDOUT|max retries|Stream isn't writeable|closed/i;

/** One id generator per process: `ulid()` would look for a random source on every call. */
const ulid = monotonicFactory();

/** Redis being unreachable or full becomes a refusal that names the store; any other error propagates. */
export function storeFailure(error: unknown): never {
  if (error instanceof Error && STORE_ERRORS.test(error.message)) throw new StoreUnavailableError(error);
  throw error;
}

function encodePageToken(score: number, id: string): string {
  return Buffer.from(JSON.stringify([score, id])).toString("base64url");
}

function decodePageToken(token: string): [number, string] {
  try {
    const value: unknown = JSON.parse(Buffer.from(token, "base64url").toString("utf8"));
    if (Array.isArray(value) && typeof value[0] === "number" && typeof value[1] === "string" && value.length === 2) {
      return [value[0], value[1]];
    }
  } catch {
    // fall through to the error below
  }
  throw new InvalidParamsError("pageToken is not a token this server issued", [
    { field: "pageToken", description: "unknown or malformed page token" },
  ]);
}

export class TaskJournal {
  constructor(
    private readonly redis: RedisLike,
    readonly keys: KeySpace,
    private readonly settings: JournalSettings,
  ) {}

  private refuse(refusal: Refusal | undefined, code: number, clientId: string, profile: string): never {
    if (refusal === undefined) throw new Error(`unexpected script reply ${code}`);
    throw refusalError(refusal, { clientId, profile, retryAfterSeconds: this.settings.retryAfterSeconds });
  }

  /** The keys accept and resume share, in their KEYS order (see accept-11.lua and resume-13.lua). */
  private acceptKeys(shard: number, clientId: string, profile: string, messageId: string, taskId: string): string[] {
    const k = this.keys;
    return [
      k.live(shard),
      k.client(shard, clientId),
      k.clientActive(shard, clientId),
      k.profileActive(shard, profile),
      k.dedup(shard, clientId, messageId),
      k.task(shard, taskId),
      k.run(shard, taskId),
      k.journal(shard, taskId),
      k.clientTasks(shard, clientId),
      k.queue(shard),
      k.pushConfigs(shard, taskId),
    ];
  }

  private get clientDefaults(): ClientDefaults {
    return { maxStoredBytes: 0, maxInterruptedTasks: 0, maxRunningTasks: 0, ...this.settings.clients };
  }

  /** Accepts a new task in one atomic step, or refuses with nothing stored. */
  async accept(input: AcceptInput): Promise<Accepted> {
    const { clientId, profile, message, pushConfig: push } = input;
    const shard = this.keys.shardOf(clientId);
    const taskId = ulid();
    const runId = ulid();
    const contextId = message.contextId ?? ulid();
    const timestamp = new Date();
    const stored: Message = { ...message, taskId, contextId };
    const status: TaskStatus = { state: "TASK_STATE_SUBMITTED", timestamp: timestamp.toISOString() };
    const task: Task = { id: taskId, contextId, status, history: [stored] };
    if (input.metadata) task.metadata = input.metadata;
    let reply: ScriptReply;
    try {
      reply = await runScript(
        this.redis,
        "accept",
        [
          ...this.acceptKeys(shard, clientId, profile, message.messageId, taskId),
          this.keys.clientInterrupted(shard, clientId),
          this.keys.bytes(shard),
        ],
        [
          this.settings.livenessSeconds,
          input.profileQuota,
          contentHash(message),
          taskId,
          runId,
          contextId,
          clientId,
          profile,
          JSON.stringify(status),
          JSON.stringify([stored]),
          JSON.stringify({ task }),
          timestamp.getTime(),
          this.settings.dedupSeconds,
          input.metadata ? JSON.stringify(input.metadata) : "",
          push ? push.id || taskId : "",
          push ? JSON.stringify({ ...push, id: push.id || taskId, taskId }) : "",
          this.clientDefaults.maxStoredBytes,
          input.profileMaxStoredBytes ?? 0,
          this.clientDefaults.maxInterruptedTasks,
        ],
      );
    } catch (error) {
      storeFailure(error);
    }
    if (typeof reply === "number") {
      if (reply === -4) throw new MessageIdReusedError(message.messageId);
      this.refuse(ACCEPT_REFUSALS[reply], reply, clientId, profile);
    }
    const [flag, id] = reply as [number, string];
    if (flag !== 1) return { created: false, taskId: id };
    const record: TaskRecord = {
      id: taskId,
      contextId,
      clientId,
      profile,
      runId,
      state: "TASK_STATE_SUBMITTED",
      rev: 1,
      timestampMs: timestamp.getTime(),
      status,
      history: [stored],
      artifacts: [],
      metadata: input.metadata,
    };
    return { created: true, taskId: id, record };
  }

  /** Resumes an INPUT_REQUIRED or AUTH_REQUIRED task with the client's follow-up; the same run is queued again. */
  async resume(input: ResumeInput): Promise<Accepted> {
    const { clientId, profile, message, taskId, pushConfig: push } = input;
    const shard = this.keys.shardOf(clientId);
    const k = this.keys;
    const timestamp = new Date();
    let contextId = message.contextId;
    if (contextId === undefined) {
      const found = await this.redis.hget(k.task(shard, taskId), "ctx").catch(storeFailure);
      contextId = found ?? "";
    }
    const stored: Message = { ...message, taskId, contextId };
    const status: TaskStatus = { state: "TASK_STATE_SUBMITTED", timestamp: timestamp.toISOString() };
    const event: StreamResponse = { statusUpdate: { taskId, contextId, status } };
    let reply: ScriptReply;
    try {
      reply = await runScript(
        this.redis,
        "resume",
        [
          ...this.acceptKeys(shard, clientId, profile, message.messageId, taskId),
          k.pushQueue(shard, taskId),
          k.pushReady(shard),
          k.clientInterrupted(shard, clientId),
          k.inputDue(shard),
          k.bytes(shard),
        ],
        [
          this.settings.livenessSeconds,
          input.profileQuota,
          contentHash(message),
          taskId,
          clientId,
          JSON.stringify(stored),
          JSON.stringify(status),
          JSON.stringify(event),
          timestamp.getTime(),
          this.settings.dedupSeconds,
          k.eventsChannel(),
          profile,
          push ? push.id || taskId : "",
          push ? JSON.stringify({ ...push, id: push.id || taskId, taskId }) : "",
          this.settings.maxPushConfigsPerTask ?? 10,
          this.clientDefaults.maxStoredBytes,
          input.profileMaxStoredBytes ?? 0,
        ],
      );
    } catch (error) {
      storeFailure(error);
    }
    if (typeof reply === "number") {
      switch (reply) {
        case -4:
          throw new MessageIdReusedError(message.messageId);
        case -6:
          throw new TaskNotFoundError(taskId);
        case -7:
          throw new UnsupportedOperationError("The task is in a terminal state and accepts no further messages", {
            taskId,
          });
        case -8:
          throw new UnsupportedOperationError("The task is not waiting for input; wait for it or cancel it", {
            taskId,
          });
        case -9:
          throw new InvalidParamsError(
            `The task has as many push notification configs as allowed (${this.settings.maxPushConfigsPerTask ?? 10})`,
            [{ field: "configuration.taskPushNotificationConfig", description: "push config limit reached" }],
            "PUSH_CONFIG_LIMIT_EXCEEDED",
          );
        default:
          this.refuse(RESUME_REFUSALS[reply], reply, clientId, profile);
      }
    }
    const [flag, id] = reply as [number, string];
    return { created: flag === 1, taskId: id };
  }

  /** The task and its journal cursor at one revision; undefined when the client has no such task in this profile. */
  async snapshot(clientId: string, taskId: string, profile?: string): Promise<Snapshot | undefined> {
    const shard = this.keys.shardOf(clientId);
    let reply: ScriptReply;
    try {
      reply = await runScript(
        this.redis,
        "snapshot",
        [this.keys.task(shard, taskId), this.keys.journal(shard, taskId), this.keys.artifactChunks(shard, taskId)],
        [],
      );
    } catch (error) {
      storeFailure(error);
    }
    if (!Array.isArray(reply) || reply.length < 2) return undefined;
    const record = decodeTaskFields(reply[0] as string[], reply[2] as string | undefined);
    if (record.clientId !== clientId || (profile !== undefined && record.profile !== profile)) return undefined;
    return { record, cursor: reply[1] as string };
  }

  /**
   * Cancels a client's task: at once when queued, deferred or interrupted; a running task's actor is asked and ends
   * it. Returns whether the task is canceled now (false: the actor was asked and has not answered yet). A task
   * canceled now is deleted after `retentionSeconds` (its journal after `journalRetentionSeconds`).
   */
  async cancel(
    clientId: string,
    taskId: string,
    profile: string,
    retention: { retentionSeconds: number; journalRetentionSeconds: number },
  ): Promise<{ canceledNow: boolean }> {
    const shard = this.keys.shardOf(clientId);
    const k = this.keys;
    const current = await this.snapshot(clientId, taskId, profile);
    if (!current) throw new TaskNotFoundError(taskId);
    const timestamp = new Date();
    const status: TaskStatus = { state: "TASK_STATE_CANCELED", timestamp: timestamp.toISOString() };
    const event: StreamResponse = {
      statusUpdate: { taskId, contextId: current.record.contextId, status },
    };
    let reply: ScriptReply;
    try {
      reply = await runScript(
        this.redis,
        "cancel",
        [
          k.task(shard, taskId),
          k.run(shard, taskId),
          k.journal(shard, taskId),
          k.clientTasks(shard, clientId),
          k.clientActive(shard, clientId),
          k.profileActive(shard, profile),
          k.pushConfigs(shard, taskId),
          k.pushQueue(shard, taskId),
          k.pushReady(shard),
          k.clientRunning(shard, clientId),
          k.clientInterrupted(shard, clientId),
          k.inputDue(shard),
          k.purge(shard),
          k.bytes(shard),
          k.clientDeferred(shard, clientId),
          k.deferredClients(shard),
          k.taskStreams(shard, taskId),
        ],
        [
          clientId,
          JSON.stringify(status),
          JSON.stringify(event),
          timestamp.getTime(),
          retention.retentionSeconds,
          retention.journalRetentionSeconds,
          k.eventsChannel(),
          k.cancelChannel(),
        ],
      );
    } catch (error) {
      storeFailure(error);
    }
    if (reply === -1) throw new TaskNotFoundError(taskId);
    if (reply === -2) throw new TaskNotCancelableError(taskId, current.record.state);
    const [outcome] = reply as [number, number];
    return { canceledNow: outcome !== 2 };
  }

  /** Journal entries after `cursor` (exclusive), oldest first, at most `count`. */
  async readJournal(clientId: string, taskId: string, cursor: string, count = 500): Promise<JournalEntry[]> {
    const shard = this.keys.shardOf(clientId);
    const rows = await this.redis
      .xrange(this.keys.journal(shard, taskId), `(${cursor}`, "+", "COUNT", count)
      .catch(storeFailure);
    return rows.map(([id, fields]) => parseJournalEntry(id, fields));
  }

  /** A client's tasks, newest status first, filtered, one page at a time. */
  async list(clientId: string, query: ListQuery): Promise<ListPage> {
    const shard = this.keys.shardOf(clientId);
    const index = this.keys.clientTasks(shard, clientId);
    const min = query.statusTimestampAfterMs ?? "-inf";
    const rows = await this.redis.zrevrangebyscore(index, "+inf", min, "WITHSCORES").catch(storeFailure);
    const candidates: { id: string; score: number }[] = [];
    for (let i = 0; i + 1 < rows.length; i += 2) candidates.push({ id: rows[i] as string, score: Number(rows[i + 1]) });
    // Equal scores: Redis orders them by member descending in ZREVRANGEBYSCORE, which is what the token relies on.
    const after = query.pageToken === undefined ? undefined : decodePageToken(query.pageToken);
    const filtering = query.contextId !== undefined || query.status !== undefined || query.profile !== undefined;
    let matching = candidates;
    const gone: string[] = [];
    if (filtering && candidates.length > 0) {
      const pipeline = this.redis.pipeline();
      for (const c of candidates) pipeline.hmget(this.keys.task(shard, c.id), "ctx", "state", "prof");
      const replies = (await pipeline.exec().catch(storeFailure)) ?? [];
      matching = candidates.filter((c, i) => {
        const [ctx, state, prof] = (replies[i]?.[1] ?? [null, null, null]) as [
          string | null,
          string | null,
          string | null,
        ];
        if (ctx === null) {
          gone.push(c.id);
          return false;
        }
        return (
          (query.contextId === undefined || ctx === query.contextId) &&
          (query.status === undefined || state === query.status) &&
          (query.profile === undefined || prof === query.profile)
        );
      });
    }
    let start = 0;
    if (after) {
      const [score, id] = after;
      start = matching.findIndex((c) => c.score < score || (c.score === score && c.id < id));
      if (start < 0) start = matching.length;
    }
    const page = matching.slice(start, start + query.pageSize);
    const records: TaskRecord[] = [];
    if (page.length > 0) {
      const pipeline = this.redis.pipeline();
      for (const c of page) pipeline.hgetall(this.keys.task(shard, c.id));
      const replies = (await pipeline.exec().catch(storeFailure)) ?? [];
      page.forEach((c, i) => {
        const fields = replies[i]?.[1] as Record<string, string> | undefined;
        if (fields && Object.keys(fields).length > 0) records.push(decodeTaskFields(fields));
        else gone.push(c.id);
      });
    }
    if (gone.length > 0) await this.redis.zrem(index, ...gone).catch(() => 0);
    const last = page[page.length - 1];
    const more = start + query.pageSize < matching.length;
    return {
      records,
      nextPageToken: more && last ? encodePageToken(last.score, last.id) : "",
      totalSize: matching.length - gone.filter((id) => matching.some((m) => m.id === id)).length,
    };
  }
}

export function parseJournalEntry(id: string, fields: readonly string[]): JournalEntry {
  let rev = 0;
  let event = "{}";
  for (let i = 0; i + 1 < fields.length; i += 2) {
    if (fields[i] === "rev") rev = Number(fields[i + 1]);
    else if (fields[i] === "ev") event = fields[i + 1] as string;
  }
  return { id, rev, event: JSON.parse(event) as StreamResponse };
}

// The gateway's side of the journal: accept, resume, cancel, snapshot, list and journal reads, each one script or
// one read. It never runs a handler and never writes a task's progress; actors do that through RunLedger.
import { Buffer } from "node:buffer";
import { randomUUID } from "node:crypto";
import type { ChainableCommander } from "ioredis";
import { monotonicFactory } from "ulid";
import type { Message, StreamResponse, TaskPushNotificationConfig, TaskState, TaskStatus } from "../protocol/index.ts";
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
import { ACCEPT, type AcceptReply, type ADMISSION_KEYS } from "./lua/accept.ts";
import { CANCEL, type CancelReply } from "./lua/cancel.ts";
import { HEAD } from "./lua/head.ts";
import { RESUME, type ResumeReply } from "./lua/resume.ts";
import { SNAPSHOT } from "./lua/snapshot.ts";
import { WEIGH } from "./lua/weigh.ts";
import { type Refusal, refusalError } from "./refusals.ts";
import { ReplicaAck } from "./replica-ack.ts";
import type { RedisLike } from "./scripts.ts";
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
  /** The largest history (bytes of its messages' JSON) a follow-up may give a task (absent or 0: none). */
  maxHistoryBytes?: number;
  /** The per-client limits that apply when a client record sets none (the `clients` section; absent = none). */
  clients?: Partial<ClientDefaults>;
  /** Replicas that must confirm each acknowledged write, and for how long to wait (redis.ackReplicas; absent = 0). */
  ack?: { replicas: number; timeoutMs: number };
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
   * `id` (or with an empty one) its id is the task id on a new task, as the official SDKs assign it, and a fresh id on
   * a follow-up message.
   */
  pushConfig?: TaskPushNotificationConfig | undefined;
  /** W3C Trace Context of the request, stored with the run so that its worker continues the trace ("" or absent: none). */
  traceContext?: string | undefined;
  /** A blocking request's waiting leases, taken in the same script (accept only; resume ignores it). */
  waiting?: WaitingLeaseRequest | undefined;
}

/**
 * A blocking request's waiting leases, taken by the accept script with the task (one node only: the installation's
 * set is in no shard's slot). The keys and maxima are the gateway's (WaitingLeases).
 */
export interface WaitingLeaseRequest {
  member: string;
  clientKey: string;
  installationKey: string;
  ttlMs: number;
  /** The client's share and the installation's maximum (0 = none). */
  maxClient: number;
  maxInstallation: number;
}

/** The accept refused a blocking request's waiting leases: its client's share, or the installation's, is taken. */
export class WaitingFullError extends Error {
  override readonly name = "WaitingFullError";
  constructor(readonly which: "client" | "installation") {
    super(`the ${which}'s waiting requests are at their maximum`);
  }
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

/** What a journal follower needs after a change: the task's revision and state, and its journal cursor, at one revision. */
export interface TaskHead {
  rev: number;
  state: TaskState;
  /** The id of the last journal entry at this revision ("0-0" when none); newer entries follow it. */
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
  /** The profile whose tasks are listed (each profile has its own index). */
  profile: string;
  /**
   * Read the tasks' artifacts, their streamed chunks included (read with the task in one transaction, as GetTask
   * does). Default false: the records' artifacts are empty and never leave Redis.
   */
  includeArtifacts?: boolean | undefined;
  /**
   * The most stored bytes of the fields that grow with use the page may read (the tasks' history, and with
   * includeArtifacts their artifacts and chunks): the page ends before the task that would pass it, holding at least
   * one task, and its token goes on from there. Unset or 0: no bound but pageSize.
   */
  maxBytes?: number | undefined;
}

/** The task hash fields a record is decoded from, but its artifacts (see decodeTaskFields). */
const FIELDS_BUT_ARTIFACTS = ["ctx", "cli", "prof", "state", "rev", "ts", "st", "hist", "meta"] as const;

export interface ListPage {
  records: TaskRecord[];
  /** "" on the last page. */
  nextPageToken: string;
  /**
   * The matching tasks. Exact without a status filter; with one, the range's count less the tasks the filter excluded
   * on the pages walked so far: exact on the page where the walk reaches the end, an upper bound before.
   */
  totalSize: number;
}

/**
 * Redis full, read-only, loading, unreachable, or a Cluster moving its slots: MOVED, ASK and TRYAGAIN reach the caller
 * when ioredis does not follow them (a pipeline whose commands were redirected to different slots is not retried), a
 * command it does follow fails with "Too many Cluster redirections" when the nodes still disagree after its 16 tries
 * (a failover, before the slot map settles: none of them ran it), and a cluster whose slot map is being refreshed
 * answers with the other messages.
 */
const STORE_ERRORS = new RegExp(
  [
    "OOM",
    "READONLY",
    "LOADING",
    "MASTERDOWN",
    "CLUSTERDOWN",
    "^MOVED \\d",
    "^ASK \\d",
    "^TRYAGAIN",
    "^Too many Cluster redirections",
    "Failed to refresh slots cache",
    "None of startup nodes is available",
    "Cluster isn't ready",
    "Connection",
    "ECONNREFUSED",
    "ECONNRESET",
    "ETIMEDOUT",
    "max retries",
    "Stream isn't writeable",
    "closed",
  ].join("|"),
  "i",
);

/** One id generator per process: `ulid()` would look for a random source on every call. */
const ulid = monotonicFactory();

/** Redis being unreachable or full becomes a refusal that names the store; any other error propagates. */
export function storeFailure(error: unknown): never {
  if (error instanceof Error && STORE_ERRORS.test(error.message)) throw new StoreUnavailableError(error);
  throw error;
}

/** Tasks whose state one status-filtered ListTasks page reads at most; past it the page ends short. */
export const LIST_FILTER_READS = 1000;

/** How many index entries a status-filtered page reads per round trip. */
const LIST_SCAN_BATCH = 250;

/** A place in a ListTasks index: a task id and its score (status timestamp, ms). */
interface Position {
  score: number;
  id: string;
}

type Candidate = Position;

/**
 * A page token: the position of the last task the page showed (or, with a status filter, examined), and how many tasks
 * the status filter has excluded on the pages so far (the total of a filtered list is the range's count less these).
 */
function encodePageToken(score: number, id: string, excluded: number): string {
  return Buffer.from(JSON.stringify([score, id, excluded])).toString("base64url");
}

function decodePageToken(token: string): Position & { excluded: number } {
  try {
    const value: unknown = JSON.parse(Buffer.from(token, "base64url").toString("utf8"));
    // a token of two elements (score, id) comes from a server that counted no exclusions: its pages go on
    if (Array.isArray(value) && (value.length === 2 || value.length === 3)) {
      const [score, id, excluded = 0]: unknown[] = value;
      if (
        typeof score === "number" &&
        typeof id === "string" &&
        typeof excluded === "number" &&
        Number.isSafeInteger(excluded) &&
        excluded >= 0
      ) {
        return { score, id, excluded };
      }
    }
  } catch {
    // fall through to the error below
  }
  throw new InvalidParamsError("pageToken is not a token this server issued", [
    { field: "pageToken", description: "unknown or malformed page token" },
  ]);
}

export class TaskJournal {
  /** Waits for redis.ackReplicas replicas after each write a client is told about (push configs use it too). */
  readonly replicaAck: ReplicaAck;

  constructor(
    private readonly redis: RedisLike,
    readonly keys: KeySpace,
    private readonly settings: JournalSettings,
  ) {
    const { replicas = 0, timeoutMs = 1000 } = settings.ack ?? {};
    this.replicaAck = new ReplicaAck(redis, { replicas, timeoutMs, retryAfterSeconds: settings.retryAfterSeconds });
  }

  /** Resolves once the write about `taskId` is on enough replicas (redis.ackReplicas), else StoreNotReplicatedError. */
  private async replicated(shard: number, taskId: string): Promise<void> {
    await this.replicaAck.confirm(this.keys.task(shard, taskId), taskId).catch(storeFailure);
  }

  private refuse(refusal: Refusal, clientId: string, profile: string): never {
    throw refusalError(refusal, { clientId, profile, retryAfterSeconds: this.settings.retryAfterSeconds });
  }

  /** The keys accept and resume share (see accept-15.lua, which takes them but the journal, and resume-17.lua). */
  private acceptKeys(
    shard: number,
    clientId: string,
    profile: string,
    messageId: string,
    taskId: string,
  ): Record<(typeof ADMISSION_KEYS)[number], string> {
    const k = this.keys;
    return {
      live: k.live(shard),
      client: k.client(shard, clientId),
      clientActive: k.clientActive(shard, clientId),
      profileActive: k.profileActive(shard, profile),
      dedup: k.dedup(shard, clientId, profile, messageId),
      task: k.task(shard, taskId),
      run: k.run(shard, taskId),
      journal: k.journal(shard, taskId),
      clientTasks: k.clientTasks(shard, clientId, profile),
      queue: k.queue(shard),
      pushConfigs: k.pushConfigs(shard, taskId),
    };
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
    const { waiting } = input;
    // without waiting leases the script touches neither set: the client's set stands for both (its shard's slot)
    const clientWaiting = waiting?.clientKey ?? this.keys.clientWaiting(shard, clientId);
    let reply: AcceptReply;
    try {
      reply = await ACCEPT.run(
        this.redis,
        {
          ...this.acceptKeys(shard, clientId, profile, message.messageId, taskId),
          clientInterrupted: this.keys.clientInterrupted(shard, clientId),
          bytes: this.keys.bytes(shard),
          contextTasks: this.keys.contextTasks(shard, clientId, profile, contextId),
          clientWaiting,
          waiting: waiting?.installationKey ?? clientWaiting,
        },
        {
          livenessSeconds: this.settings.livenessSeconds,
          profileQuota: input.profileQuota,
          contentHash: contentHash(message),
          taskId,
          runId,
          contextId,
          clientId,
          profile,
          status: JSON.stringify(status),
          message: JSON.stringify(stored),
          nowMs: timestamp.getTime(),
          dedupSeconds: this.settings.dedupSeconds,
          metadata: input.metadata ? JSON.stringify(input.metadata) : "",
          pushConfigId: push ? push.id || taskId : "",
          pushConfig: push ? JSON.stringify({ ...push, id: push.id || taskId, taskId }) : "",
          clientMaxStoredBytes: this.clientDefaults.maxStoredBytes,
          profileMaxStoredBytes: input.profileMaxStoredBytes ?? 0,
          clientMaxInterruptedTasks: this.clientDefaults.maxInterruptedTasks,
          traceContext: input.traceContext ?? "",
          waitingMember: waiting?.member ?? "",
          waitingTtlMs: waiting?.ttlMs ?? 0,
          clientMaxWaiting: waiting?.maxClient ?? 0,
          maxWaiting: waiting?.maxInstallation ?? 0,
        },
      );
    } catch (error) {
      storeFailure(error);
    }
    if (!reply.ok) {
      if (reply.code === "messageIdReused") throw new MessageIdReusedError(message.messageId);
      if (reply.code === "clientWaiting") throw new WaitingFullError("client");
      if (reply.code === "installationWaiting") throw new WaitingFullError("installation");
      this.refuse(reply.code, clientId, profile);
    }
    // A repeat is confirmed too: the first answer may have been a refusal because its write was not replicated yet.
    await this.replicated(shard, reply.taskId);
    if (!reply.created) return { created: false, taskId: reply.taskId };
    const record: TaskRecord = {
      id: taskId,
      contextId,
      clientId,
      profile,
      state: "TASK_STATE_SUBMITTED",
      rev: 1,
      timestampMs: timestamp.getTime(),
      status,
      history: [stored],
      artifacts: [],
      metadata: input.metadata,
    };
    return { created: true, taskId: reply.taskId, record };
  }

  /**
   * Resumes an INPUT_REQUIRED or AUTH_REQUIRED task with the client's follow-up; the same run is queued again. Every
   * check on the task (found for this client and profile, context, state) is the script's, in the same round trip.
   * With `withTask` the reply carries the task as written (`record`), so that an answer needs no second read.
   */
  async resume(input: ResumeInput, withTask = false): Promise<Accepted> {
    const { clientId, profile, message, taskId, pushConfig: push } = input;
    const shard = this.keys.shardOf(clientId);
    const k = this.keys;
    const timestamp = new Date();
    let contextId = message.contextId;
    if (contextId === undefined) {
      // The context index is a key of the script: a message without a contextId costs one read first.
      const found = await this.redis.hget(k.task(shard, taskId), "ctx").catch(storeFailure);
      contextId = found ?? "";
    }
    const stored: Message = { ...message, taskId, contextId };
    const status: TaskStatus = { state: "TASK_STATE_SUBMITTED", timestamp: timestamp.toISOString() };
    // A follow-up's inline config without an id gets a fresh one: it must not replace a config the task has.
    const pushId = push ? push.id || randomUUID() : undefined;
    let reply: ResumeReply;
    try {
      reply = await RESUME.run(
        this.redis,
        {
          ...this.acceptKeys(shard, clientId, profile, message.messageId, taskId),
          pushOutbox: k.pushOutbox(shard, taskId),
          pushReady: k.pushReady(shard),
          clientInterrupted: k.clientInterrupted(shard, clientId),
          inputDue: k.inputDue(shard),
          bytes: k.bytes(shard),
          contextTasks: k.contextTasks(shard, clientId, profile, contextId),
        },
        {
          livenessSeconds: this.settings.livenessSeconds,
          profileQuota: input.profileQuota,
          contentHash: contentHash(message),
          taskId,
          clientId,
          message: JSON.stringify(stored),
          status: JSON.stringify(status),
          withTask: withTask ? "1" : "0",
          nowMs: timestamp.getTime(),
          dedupSeconds: this.settings.dedupSeconds,
          eventsChannel: k.eventsChannel(),
          profile,
          pushConfigId: pushId ?? "",
          pushConfig: push ? JSON.stringify({ ...push, id: pushId, taskId }) : "",
          maxPushConfigsPerTask: this.settings.maxPushConfigsPerTask ?? 10,
          clientMaxStoredBytes: this.clientDefaults.maxStoredBytes,
          profileMaxStoredBytes: input.profileMaxStoredBytes ?? 0,
          contextId,
          traceContext: input.traceContext ?? "",
          maxHistoryBytes: this.settings.maxHistoryBytes ?? 0,
        },
      );
    } catch (error) {
      storeFailure(error);
    }
    if (!reply.ok) {
      switch (reply.code) {
        case "historyLimit":
          throw new InvalidParamsError(
            `The task's history would pass its limit of ${this.settings.maxHistoryBytes ?? 0} bytes; start a new task ` +
              "(its referenceTaskIds may name this one)",
            [{ field: "message", description: "the task's history is full" }],
            "TASK_HISTORY_LIMIT_EXCEEDED",
          );
        case "messageIdReused":
          throw new MessageIdReusedError(message.messageId);
        case "taskNotFound":
          throw new TaskNotFoundError(taskId);
        case "terminal":
          throw new UnsupportedOperationError("The task is in a terminal state and accepts no further messages", {
            taskId,
          });
        case "notInterrupted":
          throw new UnsupportedOperationError("The task is not waiting for input; wait for it or cancel it", {
            taskId,
          });
        case "pushConfigLimit":
          throw new InvalidParamsError(
            `The task has as many push notification configs as allowed (${this.settings.maxPushConfigsPerTask ?? 10})`,
            [{ field: "configuration.taskPushNotificationConfig", description: "push config limit reached" }],
            "PUSH_CONFIG_LIMIT_EXCEEDED",
          );
        case "otherContext":
          throw new InvalidParamsError("message.contextId is not the context of the task", [
            { field: "message.contextId", description: "does not match the contextId of message.taskId" },
          ]);
        default:
          this.refuse(reply.code, clientId, profile);
      }
    }
    await this.replicated(shard, reply.taskId);
    return {
      created: reply.created,
      taskId: reply.taskId,
      record: reply.fields ? decodeTaskFields(reply.taskId, reply.fields) : undefined,
    };
  }

  /** The task and its journal cursor at one revision; undefined when the client has no such task in this profile. */
  async snapshot(clientId: string, taskId: string, profile?: string): Promise<Snapshot | undefined> {
    const shard = this.keys.shardOf(clientId);
    let found: Awaited<ReturnType<typeof SNAPSHOT.run>>;
    try {
      found = await SNAPSHOT.run(
        this.redis,
        {
          task: this.keys.task(shard, taskId),
          journal: this.keys.journal(shard, taskId),
          chunks: this.keys.artifactChunks(shard, taskId),
        },
        {},
      );
    } catch (error) {
      storeFailure(error);
    }
    if (!found) return undefined;
    const record = decodeTaskFields(taskId, found.stored.fields, found.stored.chunks);
    if (record.clientId !== clientId || (profile !== undefined && record.profile !== profile)) return undefined;
    return { record, cursor: found.cursor };
  }

  /**
   * The client's task's revision, state and journal cursor, read together without its content (the task hash's
   * artifacts, history and chunk store stay in Redis); undefined when there is no such task of this client.
   */
  async head(clientId: string, taskId: string): Promise<TaskHead | undefined> {
    const shard = this.keys.shardOf(clientId);
    let found: Awaited<ReturnType<typeof HEAD.run>>;
    try {
      found = await HEAD.run(
        this.redis,
        { task: this.keys.task(shard, taskId), journal: this.keys.journal(shard, taskId) },
        {},
      );
    } catch (error) {
      storeFailure(error);
    }
    if (!found || found.clientId !== clientId) return undefined;
    return { rev: found.rev, state: found.state as TaskState, cursor: found.cursor };
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
    let reply: CancelReply;
    try {
      reply = await CANCEL.run(
        this.redis,
        {
          task: k.task(shard, taskId),
          run: k.run(shard, taskId),
          journal: k.journal(shard, taskId),
          clientTasks: k.clientTasks(shard, clientId, profile),
          clientActive: k.clientActive(shard, clientId),
          profileActive: k.profileActive(shard, profile),
          pushConfigs: k.pushConfigs(shard, taskId),
          pushOutbox: k.pushOutbox(shard, taskId),
          pushReady: k.pushReady(shard),
          clientRunning: k.clientRunning(shard, clientId),
          clientInterrupted: k.clientInterrupted(shard, clientId),
          inputDue: k.inputDue(shard),
          purge: k.purge(shard),
          bytes: k.bytes(shard),
          clientDeferred: k.clientDeferred(shard, clientId),
          deferred: k.deferredClients(shard),
          contextTasks: k.contextTasks(shard, clientId, profile, current.record.contextId),
          taskStreams: k.taskStreams(shard, taskId),
        },
        {
          clientId,
          status: JSON.stringify(status),
          event: JSON.stringify(event),
          nowMs: timestamp.getTime(),
          retentionSeconds: retention.retentionSeconds,
          journalRetentionSeconds: retention.journalRetentionSeconds,
          eventsChannel: k.eventsChannel(),
          cancelChannel: k.cancelChannel(),
        },
      );
    } catch (error) {
      storeFailure(error);
    }
    if (!reply.ok && reply.code === "notFound") throw new TaskNotFoundError(taskId);
    if (!reply.ok) throw new TaskNotCancelableError(taskId, current.record.state);
    await this.replicated(shard, taskId);
    return { canceledNow: reply.outcome !== "requested" };
  }

  /** A task's revision, undefined when it is gone (one HGET; calls in one tick share a round trip). */
  async revision(clientId: string, taskId: string): Promise<number | undefined> {
    const rev = await this.redis.hget(this.keys.task(this.keys.shardOf(clientId), taskId), "rev");
    return rev === null ? undefined : Number(rev);
  }

  /** Journal entries after `cursor` (exclusive), oldest first, at most `count`. */
  async readJournal(clientId: string, taskId: string, cursor: string, count = 500): Promise<JournalEntry[]> {
    const shard = this.keys.shardOf(clientId);
    const rows = await this.redis
      .xrange(this.keys.journal(shard, taskId), `(${cursor}`, "+", "COUNT", count)
      .catch(storeFailure);
    return rows.map(([id, fields]) => parseJournalEntry(id, fields));
  }

  /**
   * A client's tasks in one profile, newest status first, one page at a time, in O(page): the page is a range of an
   * index after the token's position, and its total a ZCOUNT. The index is the client's tasks, its tasks in a context,
   * or, for a status filter, its tasks in that state. A status filter together with a context, or on a client whose
   * state indexes are incomplete (tasks whose status last changed before they existed), reads each task's state
   * instead: a page then reads the state of at most LIST_FILTER_READS tasks, and when that bound ends the scan before
   * the page is full, the page is short (possibly empty) and its token continues the scan. Every index orders tasks
   * alike (status timestamp, then id), so a token from one path is a valid position on the other.
   */
  async list(clientId: string, query: ListQuery): Promise<ListPage> {
    const shard = this.keys.shardOf(clientId);
    const k = this.keys;
    const clientIndex = k.clientTasks(shard, clientId, query.profile);
    const token = query.pageToken === undefined ? undefined : decodePageToken(query.pageToken);
    const from: PageWalk = {
      index:
        query.contextId === undefined ? clientIndex : k.contextTasks(shard, clientId, query.profile, query.contextId),
      min: query.statusTimestampAfterMs ?? "-inf",
      position: token && { score: token.score, id: token.id },
      excluded: token?.excluded ?? 0,
      pageSize: query.pageSize,
    };
    const { status } = query;
    const stateIndexes = () => k.stateTaskIndexes(shard, clientId, query.profile);
    // the client's stored bytes, asked alongside the walk: a client that stores less than the bound cannot pass it
    const bound = query.maxBytes ?? 0;
    // (never rejects: a failed read counts as over the bound, and the weighing's own call then reports the failure)
    const clientBytes =
      bound > 0
        ? this.redis.hget(k.bytes(shard), `client:${clientId}`).then(
            (value) => Number(value ?? 0),
            () => Number.POSITIVE_INFINITY,
          )
        : undefined;
    let scan: PageScan | undefined;
    if (status === undefined) scan = await this.walkIndex(from);
    else {
      if (query.contextId === undefined) {
        const index = k.stateTasks(shard, clientId, query.profile, status);
        scan = await this.walkStateIndex({ ...from, index }, clientIndex, stateIndexes());
      }
      scan ??= await this.walkFiltered(from, shard, status);
    }
    if (clientBytes !== undefined && scan.page.length > 1 && (await clientBytes) > bound) {
      scan = await this.withinBytes(scan, shard, bound, query.includeArtifacts === true);
    }
    const records: TaskRecord[] = [];
    const gone = scan.gone;
    if (scan.page.length > 0) {
      const read = await this.readPage(shard, scan.page, query.includeArtifacts === true);
      scan.page.forEach((c, i) => {
        const stored = read[i];
        if (!stored) gone.push(c.id);
        // a state index entry of a task that has just changed state: its new state's index lists it
        else if (status === undefined || stored.fields.state === status) {
          records.push(decodeTaskFields(c.id, stored.fields, stored.chunks));
        }
      });
    }
    if (gone.length > 0) {
      // from every index that may hold them, so that the client's index and its state indexes keep counting alike
      const pipeline = this.redis.pipeline();
      for (const index of new Set([scan.index, clientIndex, ...stateIndexes()])) pipeline.zrem(index, ...gone);
      await pipeline.exec().catch(() => undefined);
    }
    return {
      records,
      nextPageToken: scan.more && scan.last ? encodePageToken(scan.last.score, scan.last.id, scan.excluded) : "",
      totalSize: Math.max(records.length, scan.total - scan.excluded - gone.length),
    };
  }

  /**
   * The page cut before the first task whose stored bytes (the lengths of its fields that grow with use, weighed by
   * one script) would take the page's total past `bound`; the first task always stays. A cut page has more after it, and
   * its token goes on from its last task with the exclusions counted up to there.
   */
  private async withinBytes(scan: PageScan, shard: number, bound: number, withArtifacts: boolean): Promise<PageScan> {
    const k = this.keys;
    const keys = scan.page.flatMap((c) =>
      withArtifacts ? [k.task(shard, c.id), k.artifactChunks(shard, c.id)] : [k.task(shard, c.id)],
    );
    const fit = await WEIGH.run(this.redis, {}, { bound, withArtifacts: withArtifacts ? "1" : "" }, keys).catch(
      storeFailure,
    );
    if (fit >= scan.page.length) return scan;
    const page = scan.page.slice(0, Math.max(1, fit));
    return {
      ...scan,
      page,
      more: true,
      last: page.at(-1),
      excluded: scan.excludedAt?.[page.length - 1] ?? scan.excluded,
    };
  }

  /**
   * The stored fields of a page's tasks (undefined: gone). With artifacts, each task's hash and chunk store in one
   * transaction (a run's end compacts the one into the other: read apart, a chunk could count twice or not at all);
   * without, every field but the artifact list, which may be most of a task's bytes.
   */
  private async readPage(
    shard: number,
    page: readonly { id: string }[],
    withArtifacts: boolean,
  ): Promise<({ fields: Record<string, string>; chunks: string | null } | undefined)[]> {
    const k = this.keys;
    if (withArtifacts) {
      const transaction = this.redis.multi();
      for (const c of page) transaction.hgetall(k.task(shard, c.id)).get(k.artifactChunks(shard, c.id));
      const replies = (await transaction.exec().catch(storeFailure)) ?? [];
      return page.map((_, i) => {
        const fields = replies[2 * i]?.[1] as Record<string, string> | undefined;
        const chunks = (replies[2 * i + 1]?.[1] as string | null | undefined) ?? null;
        return fields && Object.keys(fields).length > 0 ? { fields, chunks } : undefined;
      });
    }
    const pipeline = this.redis.pipeline();
    for (const c of page) pipeline.hmget(k.task(shard, c.id), ...FIELDS_BUT_ARTIFACTS);
    const replies = (await pipeline.exec().catch(storeFailure)) ?? [];
    return page.map((_, i) => {
      const values = (replies[i]?.[1] as (string | null)[] | undefined) ?? [];
      const fields: Record<string, string> = {};
      FIELDS_BUT_ARTIFACTS.forEach((name, at) => {
        const value = values[at];
        if (typeof value === "string") fields[name] = value;
      });
      return Object.keys(fields).length > 0 ? { fields, chunks: null } : undefined;
    });
  }

  /** A page of an index: its first `pageSize` entries after the position, and their count. One round trip. */
  private async walkIndex(from: PageWalk): Promise<PageScan> {
    const pipeline = this.redis.pipeline();
    queueRange(pipeline, from, from.pageSize + 1, true);
    return pageOf(from, readRange(await execAll(pipeline), from.position, from.pageSize + 1, true));
  }

  /**
   * A page of a state index, read in one transaction with the cardinality of the client's index and of each of its
   * state indexes: undefined when the state indexes hold fewer tasks than the client's index (some task has not been
   * indexed by state yet), for the caller to scan instead.
   */
  private async walkStateIndex(
    from: PageWalk,
    clientIndex: string,
    stateIndexes: readonly string[],
  ): Promise<PageScan | undefined> {
    const transaction = this.redis.multi();
    transaction.zcard(clientIndex);
    for (const index of stateIndexes) transaction.zcard(index);
    queueRange(transaction, from, from.pageSize + 1, true);
    const values = await execAll(transaction);
    const [all = 0, ...byState] = values.splice(0, 1 + stateIndexes.length).map(Number);
    if (byState.reduce((sum, n) => sum + n, 0) < all) return undefined;
    return pageOf(from, readRange(values, from.position, from.pageSize + 1, true));
  }

  /** A status-filtered page read from an index of every state: at most LIST_FILTER_READS task states per page. */
  private async walkFiltered(from: PageWalk, shard: number, status: TaskState): Promise<PageScan> {
    const page: Candidate[] = [];
    const excludedAt: number[] = [];
    const gone: string[] = [];
    let { position, excluded } = from;
    let total = -1;
    let more = false;
    let examined = 0;
    while (page.length < from.pageSize && examined < LIST_FILTER_READS) {
      const batch = Math.min(LIST_SCAN_BATCH, LIST_FILTER_READS - examined);
      const pipeline = this.redis.pipeline();
      queueRange(pipeline, { ...from, position }, batch, total < 0);
      const [count, candidates] = readRange(await execAll(pipeline), position, batch, total < 0);
      if (total < 0) total = count;
      if (candidates.length === 0) break;
      const states = (await this.statesOf(shard, candidates)) ?? [];
      let taken = 0;
      for (const [i, c] of candidates.entries()) {
        if (page.length === from.pageSize) break;
        taken += 1;
        const state = states[i];
        if (state === undefined) gone.push(c.id);
        else if (state === status) {
          page.push(c);
          excludedAt.push(excluded);
        } else excluded += 1;
      }
      examined += taken;
      position = candidates[taken - 1];
      if (taken < candidates.length || candidates.length === batch) more = true;
      else {
        more = false;
        break;
      }
    }
    return { index: from.index, page, total, more, last: position, excluded, excludedAt, gone };
  }

  /** Each candidate's state, or undefined for a task that is gone. One round trip. */
  private async statesOf(shard: number, candidates: readonly Candidate[]): Promise<(string | undefined)[]> {
    const pipeline = this.redis.pipeline();
    for (const c of candidates) pipeline.hget(this.keys.task(shard, c.id), "state");
    const replies = (await pipeline.exec().catch(storeFailure)) ?? [];
    return candidates.map((_, i) => {
      const state = replies[i]?.[1];
      return typeof state === "string" ? state : undefined;
    });
  }
}

/** Where a ListTasks page starts: the index, its lower score bound, the token's position and exclusions. */
interface PageWalk {
  index: string;
  min: number | string;
  position: Position | undefined;
  excluded: number;
  pageSize: number;
}

/** What a walk found: the tasks to show, the range's count, and what the next token holds. */
interface PageScan {
  /** The index walked: the entries of gone tasks leave it. */
  index: string;
  page: Candidate[];
  /** The range's count (before the filter's exclusions). */
  total: number;
  more: boolean;
  /** The position the next page starts after: the last task shown, or (scanning) the last examined. */
  last: Position | undefined;
  excluded: number;
  /** With a status filter's scan: the exclusions counted when each task of the page was taken (a cut page's token). */
  excludedAt?: number[];
  gone: string[];
}

/**
 * The page in a range read one entry past the page (that entry says whether more follow). Nothing was excluded: the
 * token counts no exclusions, and a scan it continues counts from there.
 */
function pageOf(from: PageWalk, [total, candidates]: [number, Candidate[]]): PageScan {
  const page = candidates.slice(0, from.pageSize);
  const more = candidates.length > from.pageSize;
  return { index: from.index, page, total, more, last: page.at(-1), excluded: 0, gone: [] };
}

/**
 * Queues the ZCOUNT of the index's range (when `counted`) and up to `limit` of its members after the position, newest
 * first. Members with the position's score come first (Redis orders equal scores by member, descending), then older.
 */
function queueRange(commands: ChainableCommander, from: PageWalk, limit: number, counted: boolean): void {
  const { index, min, position } = from;
  if (counted) commands.zcount(index, min, "+inf");
  if (position) {
    commands.zrevrangebyscore(index, position.score, position.score);
    commands.zrevrangebyscore(index, `(${position.score}`, min, "WITHSCORES", "LIMIT", 0, limit);
  } else {
    commands.zrevrangebyscore(index, "+inf", min, "WITHSCORES", "LIMIT", 0, limit);
  }
}

/** Reads what queueRange queued off the front of `values`: the count (0 when not counted) and the candidates. */
function readRange(
  values: unknown[],
  position: Position | undefined,
  limit: number,
  counted: boolean,
): [number, Candidate[]] {
  const count = counted ? Number(values.shift()) : 0;
  const candidates: Candidate[] = [];
  if (position) {
    const ties = (values.shift() as string[]).filter((id) => id < position.id);
    for (const id of ties) candidates.push({ score: position.score, id });
  }
  const rows = values.shift() as string[];
  for (let i = 0; i + 1 < rows.length; i += 2) candidates.push({ id: rows[i] as string, score: Number(rows[i + 1]) });
  return [count, candidates.slice(0, limit)];
}

/** Runs a pipeline or transaction; a Redis error in any reply is a store failure. The replies' values, in order. */
async function execAll(commands: ChainableCommander): Promise<unknown[]> {
  const replies = (await commands.exec().catch(storeFailure)) ?? [];
  for (const [error] of replies) if (error) storeFailure(error);
  return replies.map((reply) => reply[1]);
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

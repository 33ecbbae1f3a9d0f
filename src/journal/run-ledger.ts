// The workers' side of the journal: claim a queued run (or defer it at its client's running-run limit), renew its
// lease, write the task's transitions with the fencing token, hand a run back, queue deferred runs again, dead-letter,
// record heartbeats. The gateway never calls these.

import type { Artifact, Message, StreamResponse, TaskState, TaskStatus } from "../protocol/index.ts";
import type { KeySpace } from "./keys.ts";
import { QUEUE_GROUP } from "./keys.ts";
import { CLAIM, type ClaimCode, type ClaimedRun, type ClaimReply } from "./lua/claim.ts";
import { DEAD_LETTER } from "./lua/dead-letter.ts";
import { HEARTBEAT } from "./lua/heartbeat.ts";
import { PROMOTE } from "./lua/promote.ts";
import { RELEASE } from "./lua/release.ts";
import { RENEW } from "./lua/renew.ts";
import { TRANSITION, type TransitionReply } from "./lua/transition.ts";
import { isCluster } from "./redis-connection.ts";
import type { QueueEntry } from "./run-queue.ts";
import type { RedisLike } from "./scripts.ts";
import { decodeTaskFields, type TaskRecord } from "./task-view.ts";

/** The run an actor holds after a successful claim. `fence` must accompany every write. */
export interface Claim extends Omit<ClaimedRun, "stored"> {
  /** The task as the claim found it, when the claim read it (the run is to run). */
  record?: TaskRecord;
  shard: number;
  taskId: string;
  entryId: string;
}

/**
 * Why a queue entry was not claimed. "deferred": its client runs as many runs as its limit allows; the entry is
 * acknowledged and deleted, the run waits in the client's deferred set (no try counted) until `wakeDeferred` queues it.
 */
export type ClaimRefusal = ClaimCode;

export interface TransitionInput {
  claim: Pick<Claim, "shard" | "taskId" | "fence" | "clientId" | "profile">;
  /** "status": a state change or progress note (`event` is its status update); "artifact": `event` is an artifact update. */
  kind: "status" | "artifact";
  state: TaskState;
  /** The new status (status kind); omitted keeps the stored one. */
  status?: TaskStatus | undefined;
  event: StreamResponse;
  /** Artifact updates journaled before `event` in the same step (chunks coalesced while a write was in flight). */
  artifactEvents?: readonly StreamResponse[] | undefined;
  /**
   * The run's start, written with its first output: a WORKING status whose event is journaled before every other
   * event of the step. The task moves to WORKING with it; an artifact step then stores this status as the task's.
   */
  lead?: { status: TaskStatus; event: StreamResponse } | undefined;
  /**
   * The whole artifact list after this step, which replaces the stored one and empties the chunk store (compaction);
   * omitted, the step's artifact updates are appended to the chunk store (O(update)).
   */
  artifacts?: readonly Artifact[] | undefined;
  /** A message to append to the task's history. */
  historyMessage?: Message | undefined;
  retentionSeconds: number;
  journalRetentionSeconds: number;
  /** How long an interrupted task waits for the client's next message before it fails (default 86,400 s). */
  inputTimeoutSeconds?: number | undefined;
  /** The leg's queue entry, acknowledged and deleted by a step that ends the leg (terminal or interrupted state). */
  ackEntry?: string | undefined;
  /**
   * With `ackEntry`: the step that acknowledges the entry then reads the next new queue entry for this consumer and
   * claims it, with its task (the claim's `read`), so that a run's end starts the next run in the same script. One
   * node only: on a Cluster the ledger never asks (the script derives the entry's keys).
   */
  next?: NextRunRequest | undefined;
}

/** What the claim of the next run needs (claim's own arguments), and the shards to read in order. */
export interface NextRunRequest {
  owner: string;
  leaseMs: number;
  maxAttempts: number;
  shards: readonly number[];
}

/** The next run a run's end claimed: its queue entry and the claim's outcome. */
export interface NextRun {
  entry: QueueEntry;
  claim: Claim | ClaimRefusal;
  /**
   * performance.now() when the step that claimed it was sent: its lease counts from no later than this (a reply held
   * up after the script ran must not make the lease look younger than it is).
   */
  sentAt: number;
}

export interface LedgerSettings {
  /** A client's running-run limit when its record sets none (clients.maxRunningTasks; 0 or absent = none). */
  maxRunningTasks?: number;
  /**
   * A client's interrupted-task limit when its record sets none (clients.maxInterruptedTasks; 0 or absent = none): a
   * step that would interrupt one more task is refused ("interrupted-limit") and the writer fails the task instead.
   */
  maxInterruptedTasks?: number;
  /**
   * The largest a task's stored values may grow to by its agent's output (worker.maxTaskBytes; 0 or absent = no
   * limit): a step whose artifacts or history message would take the task past it is refused ("output-limit") and
   * the writer fails the task instead, keeping what was stored before.
   */
  maxTaskBytes?: number;
}

/**
 * A written step's revision; with `acked`, the step acknowledged and deleted the leg's queue entry and read its
 * client's oldest deferred run (null: none), as `ack` does.
 */
export type TransitionResult =
  | (Omit<Extract<TransitionReply, { ok: true }>, "next"> & { next?: NextRun })
  | Extract<TransitionReply, { ok: false }>;

/** The task's context, as the step's events name it (its key is one of the transition's). */
function contextOf(event: StreamResponse, artifactEvents: readonly StreamResponse[] = []): string {
  for (const one of [event, ...artifactEvents]) {
    const contextId = one.statusUpdate?.contextId ?? one.artifactUpdate?.contextId ?? one.task?.contextId;
    if (contextId !== undefined) return contextId;
  }
  return "";
}

/** A claim's reply as the actor holds it: the claim (its task decoded when the claim read it) or the refusal. */
function claimOf(reply: ClaimReply, shard: number, taskId: string, entryId: string): Claim | ClaimRefusal {
  if (!reply.ok) return reply.code;
  const { ok: _, stored, ...claimed } = reply;
  const started = stored ? { record: decodeTaskFields(taskId, stored.fields, stored.chunks) } : {};
  return { ...claimed, ...started, shard, taskId, entryId };
}

export class RunLedger {
  constructor(
    private readonly redis: RedisLike,
    readonly keys: KeySpace,
    private readonly settings: LedgerSettings = {},
  ) {}

  private get maxRunningTasks(): number {
    return this.settings.maxRunningTasks ?? 0;
  }

  /**
   * Takes the lease of a queued (or lease-expired) run, or defers it when its client is at its running-run limit.
   * `clientId` comes from the queue entry; without it (an entry written before entries named their client) it is read
   * from the task. With `read`, a claim that will run the handler (not exhausted, no cancel requested) also returns the
   * task (`record`) in the same script. The claim does not move the task: the run's first step (the writer's `start`)
   * writes WORKING, with the handler's first output.
   */
  async claim(
    shard: number,
    taskId: string,
    entryId: string,
    owner: string,
    leaseMs: number,
    maxAttempts: number,
    clientId?: string,
    read = false,
  ): Promise<Claim | ClaimRefusal> {
    const k = this.keys;
    // an entry written before entries named their client: one read of the task first
    const client = clientId ?? (await this.redis.hget(k.task(shard, taskId), "cli")) ?? "";
    const reply = await CLAIM.run(
      this.redis,
      {
        run: k.run(shard, taskId),
        task: k.task(shard, taskId),
        client: k.client(shard, client),
        clientRunning: k.clientRunning(shard, client),
        clientDeferred: k.clientDeferred(shard, client),
        deferred: k.deferredClients(shard),
        queue: k.queue(shard),
        chunks: k.artifactChunks(shard, taskId),
      },
      {
        owner,
        leaseMs,
        entryId,
        maxAttempts,
        clientId: client,
        clientMaxRunningTasks: this.maxRunningTasks,
        group: QUEUE_GROUP,
        read: read ? "1" : "",
      },
    );
    return claimOf(reply, shard, taskId, entryId);
  }

  /** Renews the lease; `lost` means another actor holds the run now and this one must stop writing. */
  async renew(claim: Claim, leaseMs: number, consumer: string): Promise<"ok" | "cancel" | "lost"> {
    return await RENEW.run(
      this.redis,
      { run: this.keys.run(claim.shard, claim.taskId), queue: this.keys.queue(claim.shard) },
      { fence: claim.fence, leaseMs, group: QUEUE_GROUP, consumer, entryId: claim.entryId },
    );
  }

  /** Writes one step of the task with the run's fencing token. */
  async transition(input: TransitionInput): Promise<TransitionResult> {
    const { claim } = input;
    const k = this.keys;
    const s = claim.shard;
    const artifactEvents = (input.artifactEvents ?? []).map((event) => JSON.stringify(event));
    if (input.kind === "artifact") artifactEvents.push(JSON.stringify(input.event));
    const statusEvent = input.kind === "status" ? [JSON.stringify(input.event)] : [];
    // an artifact step that carries the run's start stores the start's status
    const status = input.kind === "status" ? input.status : input.lead?.status;
    const clientWaiting = k.clientWaiting(s, claim.clientId);
    // the next claim's keys are derived in the script: never on a Cluster
    const next = input.ackEntry && !isCluster(this.redis) ? input.next : undefined;
    const sentAt = performance.now();
    const reply = await TRANSITION.run(
      this.redis,
      {
        task: k.task(s, claim.taskId),
        run: k.run(s, claim.taskId),
        journal: k.journal(s, claim.taskId),
        clientTasks: k.clientTasks(s, claim.clientId, claim.profile),
        clientActive: k.clientActive(s, claim.clientId),
        profileActive: k.profileActive(s, claim.profile),
        pushConfigs: k.pushConfigs(s, claim.taskId),
        pushOutbox: k.pushOutbox(s, claim.taskId),
        pushReady: k.pushReady(s),
        clientRunning: k.clientRunning(s, claim.clientId),
        clientInterrupted: k.clientInterrupted(s, claim.clientId),
        inputDue: k.inputDue(s),
        purge: k.purge(s),
        bytes: k.bytes(s),
        chunks: k.artifactChunks(s, claim.taskId),
        taskStreams: k.taskStreams(s, claim.taskId),
        queue: k.queue(s),
        clientDeferred: k.clientDeferred(s, claim.clientId),
        contextTasks: k.contextTasks(s, claim.clientId, claim.profile, contextOf(input.event, input.artifactEvents)),
        client: k.client(s, claim.clientId),
        clientWaiting,
        // the installation's set is in no shard's slot: on a Cluster no run has waiting leases (accept takes none)
        waiting: isCluster(this.redis) ? clientWaiting : k.waiting(),
      },
      {
        fence: claim.fence,
        state: input.kind === "status" ? input.state : "",
        status: status ? JSON.stringify(status) : "",
        artifacts: input.artifacts ? JSON.stringify(input.artifacts) : "",
        historyMessage: input.historyMessage ? JSON.stringify(input.historyMessage) : "",
        statusTimestampMs: status ? Date.parse(status.timestamp ?? "") || Date.now() : Date.now(),
        retentionSeconds: input.retentionSeconds,
        journalRetentionSeconds: input.journalRetentionSeconds,
        eventsChannel: k.eventsChannel(),
        inputTimeoutSeconds: input.inputTimeoutSeconds ?? 86_400,
        ackEntry: input.ackEntry ?? "",
        group: QUEUE_GROUP,
        clientMaxInterruptedTasks: this.settings.maxInterruptedTasks ?? 0,
        lead: input.lead ? JSON.stringify(input.lead.event) : "",
        nextOwner: next?.owner ?? "",
        nextLeaseMs: next?.leaseMs ?? "",
        nextMaxAttempts: next?.maxAttempts ?? "",
        clientMaxRunningTasks: next ? this.maxRunningTasks : "",
        keyPrefix: next ? k.prefix : "",
        nextShards: next ? next.shards.join(",") : "",
        maxTaskBytes: this.settings.maxTaskBytes ?? 0,
        artifactCount: artifactEvents.length,
      },
      statusEvent.length === 0 ? artifactEvents : [...artifactEvents, ...statusEvent],
    );
    if (!reply.ok || reply.next === undefined) return reply as TransitionResult;
    const { entry, claim: claimed } = reply.next;
    return { ...reply, next: { entry, claim: claimOf(claimed, entry.shard, entry.taskId, entry.id), sentAt } };
  }

  /** Hands a running run back to the queue without counting the try; false when the token is stale. */
  async release(claim: Claim): Promise<boolean> {
    const k = this.keys;
    const reply = await RELEASE.run(
      this.redis,
      {
        run: k.run(claim.shard, claim.taskId),
        queue: k.queue(claim.shard),
        clientRunning: k.clientRunning(claim.shard, claim.clientId),
      },
      { fence: claim.fence, group: QUEUE_GROUP, entryId: claim.entryId },
    );
    return reply.ok;
  }

  /**
   * Queues a client's deferred runs again, oldest first, while the client has a free running slot: at most `most`
   * (default: as many as its slots free now; unlimited clients get all). Returns how many were queued. Called after a
   * run of the client ends (with the oldest deferred run when `ack` read it already), and by the retention pass for
   * every client with deferred runs.
   */
  async wakeDeferred(shard: number, clientId: string, most?: number, oldestKnown?: string): Promise<number> {
    const k = this.keys;
    const deferred = k.clientDeferred(shard, clientId);
    let budget = most ?? (await this.freeRunningSlots(shard, clientId));
    let woken = 0;
    let known = oldestKnown;
    // Each round removes a member or stops, so the rounds are bounded by the set's size plus `most`.
    for (let rounds = 0; budget > 0 && rounds < 1000; rounds++) {
      const oldest = known ?? (await this.redis.zrange(deferred, 0, 0))[0];
      known = undefined;
      if (oldest === undefined) break;
      const reply = await PROMOTE.run(
        this.redis,
        {
          client: k.client(shard, clientId),
          clientRunning: k.clientRunning(shard, clientId),
          clientDeferred: deferred,
          deferred: k.deferredClients(shard),
          queue: k.queue(shard),
          run: k.run(shard, oldest),
          task: k.task(shard, oldest),
        },
        { taskId: oldest, clientId, clientMaxRunningTasks: this.maxRunningTasks },
      );
      if (!reply.ok && reply.code === "noFreeSlot") break;
      if (reply.ok) {
        woken += 1;
        budget -= 1;
      }
    }
    return woken;
  }

  /** Running slots a client has free now (its record's maxrun, else the default; a large number when unlimited). */
  private async freeRunningSlots(shard: number, clientId: string): Promise<number> {
    const [own, running] = await Promise.all([
      this.redis.hget(this.keys.client(shard, clientId), "maxrun"),
      this.redis.scard(this.keys.clientRunning(shard, clientId)),
    ]);
    const limit = own === null ? this.maxRunningTasks : Number(own);
    return limit === 0 ? Number.MAX_SAFE_INTEGER : Math.max(0, limit - running);
  }

  /** The task as stored (with its chunk store), undefined when it is gone. */
  async readTask(shard: number, taskId: string): Promise<TaskRecord | undefined> {
    const [fields, chunks] = await Promise.all([
      this.redis.hgetall(this.keys.task(shard, taskId)),
      this.redis.get(this.keys.artifactChunks(shard, taskId)),
    ]);
    return Object.keys(fields).length === 0 ? undefined : decodeTaskFields(taskId, fields, chunks);
  }

  /** The W3C Trace Context the run's request stored (JSON carrier), or null. */
  async runTrace(shard: number, taskId: string): Promise<string | null> {
    return await this.redis.hget(this.keys.run(shard, taskId), "trace");
  }

  /** Up to `count` clients of a shard that have deferred runs. */
  async clientsWithDeferredRuns(shard: number, count: number): Promise<string[]> {
    return ((await this.redis.srandmember(this.keys.deferredClients(shard), count)) as string[] | null) ?? [];
  }

  /** Moves a queue entry to the dead-letter stream with its reason. */
  async deadLetter(shard: number, entryId: string, runId: string, taskId: string, reason: string): Promise<void> {
    await DEAD_LETTER.run(
      this.redis,
      { queue: this.keys.queue(shard), dead: this.keys.dead(shard) },
      { group: QUEUE_GROUP, entryId, runId, taskId, reason, maxLength: 10_000 },
    );
  }

  /**
   * Acknowledges and deletes a finished queue entry, so the stream does not grow. With `clientId`, also reads in the
   * same round trip that client's oldest deferred run (undefined when it has none), for `wakeDeferred`.
   */
  async ack(shard: number, entryId: string, clientId?: string): Promise<string | undefined> {
    const queue = this.keys.queue(shard);
    const transaction = this.redis.multi().xack(queue, QUEUE_GROUP, entryId).xdel(queue, entryId);
    if (clientId !== undefined) transaction.zrange(this.keys.clientDeferred(shard, clientId), 0, 0);
    const replies = await transaction.exec();
    return clientId === undefined ? undefined : (replies?.[2]?.[1] as string[] | undefined)?.[0];
  }

  /** Records a liveness beat in a shard, in Redis time; the record lives `ttlSeconds`. */
  async beat(shard: number, ttlSeconds: number): Promise<number> {
    return await HEARTBEAT.run(this.redis, { live: this.keys.live(shard) }, { ttlSeconds });
  }

  /** Creates the consumer group of a shard's queue (and the stream) when missing. */
  async ensureGroup(shard: number): Promise<void> {
    try {
      await this.redis.xgroup("CREATE", this.keys.queue(shard), QUEUE_GROUP, "0", "MKSTREAM");
    } catch (error) {
      if (!(error instanceof Error && error.message.includes("BUSYGROUP"))) throw error;
    }
  }
}

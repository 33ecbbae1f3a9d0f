// The workers' side of the journal: claim a queued run, renew its lease, write the task's transitions with the
// fencing token, hand a run back, dead-letter it, record heartbeats. The gateway never calls these.

import type { Artifact, Message, StreamResponse, TaskState, TaskStatus } from "../protocol/index.ts";
import type { KeySpace } from "./keys.ts";
import { QUEUE_GROUP } from "./keys.ts";
import { type RedisLike, runScript } from "./scripts.ts";

/** The run an actor holds after a successful claim. `fence` must accompany every write. */
export interface Claim {
  shard: number;
  taskId: string;
  entryId: string;
  fence: number;
  tries: number;
  /** tries > maxAttempts: the actor must fail the task and dead-letter the entry instead of running it. */
  exhausted: boolean;
  cancelRequested: boolean;
  state: TaskState;
  clientId: string;
  profile: string;
}

export type ClaimRefusal = "orphan" | "finished" | "stale" | "leased";

const CLAIM_REFUSALS: Record<number, ClaimRefusal> = {
  [-1]: "orphan",
  [-2]: "finished",
  [-3]: "stale",
  [-4]: "leased",
};

export interface TransitionInput {
  claim: Pick<Claim, "shard" | "taskId" | "fence" | "clientId" | "profile">;
  kind: "status" | "artifact";
  state: TaskState;
  /** The new status (status kind); omitted keeps the stored one. */
  status?: TaskStatus | undefined;
  event: StreamResponse;
  /** The whole artifact list after this change; omitted keeps the stored one. */
  artifacts?: Artifact[] | undefined;
  /** A message to append to the task's history. */
  historyMessage?: Message | undefined;
  retentionSeconds: number;
  journalRetentionSeconds: number;
}

export type TransitionResult = { ok: true; rev: number } | { ok: false; reason: "missing" | "stale" | "illegal" };

const TRANSITION_FAILURES = { [-1]: "missing", [-2]: "stale", [-3]: "illegal" } as const;

export class RunLedger {
  constructor(
    private readonly redis: RedisLike,
    readonly keys: KeySpace,
  ) {}

  /** Takes the lease of a queued (or lease-expired) run. */
  async claim(
    shard: number,
    taskId: string,
    entryId: string,
    owner: string,
    leaseMs: number,
    maxAttempts: number,
  ): Promise<Claim | ClaimRefusal> {
    const reply = await runScript(
      this.redis,
      "claim",
      [this.keys.run(shard, taskId), this.keys.task(shard, taskId)],
      [owner, leaseMs, entryId, maxAttempts],
    );
    if (typeof reply === "number") return CLAIM_REFUSALS[reply] ?? "orphan";
    const [fence, tries, exhausted, cancel, state, clientId, profile] = reply as [
      number,
      number,
      number,
      number,
      TaskState,
      string,
      string,
    ];
    return {
      shard,
      taskId,
      entryId,
      fence,
      tries,
      exhausted: exhausted === 1,
      cancelRequested: cancel === 1,
      state,
      clientId,
      profile,
    };
  }

  /** Renews the lease; `lost` means another actor holds the run now and this one must stop writing. */
  async renew(claim: Claim, leaseMs: number, consumer: string): Promise<"ok" | "cancel" | "lost"> {
    const reply = await runScript(
      this.redis,
      "renew",
      [this.keys.run(claim.shard, claim.taskId), this.keys.queue(claim.shard)],
      [claim.fence, leaseMs, QUEUE_GROUP, consumer, claim.entryId],
    );
    return reply === -1 ? "lost" : reply === 1 ? "cancel" : "ok";
  }

  /** Writes one step of the task with the run's fencing token. */
  async transition(input: TransitionInput): Promise<TransitionResult> {
    const { claim } = input;
    const k = this.keys;
    const s = claim.shard;
    const reply = await runScript(
      this.redis,
      "transition",
      [
        k.task(s, claim.taskId),
        k.run(s, claim.taskId),
        k.journal(s, claim.taskId),
        k.clientTasks(s, claim.clientId),
        k.clientActive(s, claim.clientId),
        k.profileActive(s, claim.profile),
        k.pushConfigs(s, claim.taskId),
        k.pushQueue(s, claim.taskId),
        k.pushReady(s),
      ],
      [
        claim.fence,
        input.kind,
        input.state,
        input.status ? JSON.stringify(input.status) : "",
        JSON.stringify(input.event),
        input.artifacts ? JSON.stringify(input.artifacts) : "",
        input.historyMessage ? JSON.stringify(input.historyMessage) : "",
        Date.now(),
        input.retentionSeconds,
        input.journalRetentionSeconds,
        k.eventsChannel(),
      ],
    );
    const code = Number(reply);
    if (code > 0) return { ok: true, rev: code };
    return { ok: false, reason: TRANSITION_FAILURES[code as -1 | -2 | -3] ?? "missing" };
  }

  /** Hands a running run back to the queue without counting the try; false when the token is stale. */
  async release(claim: Claim): Promise<boolean> {
    const reply = await runScript(
      this.redis,
      "release",
      [this.keys.run(claim.shard, claim.taskId), this.keys.queue(claim.shard)],
      [claim.fence, QUEUE_GROUP, claim.entryId],
    );
    return reply !== -1;
  }

  /** Moves a queue entry to the dead-letter stream with its reason. */
  async deadLetter(shard: number, entryId: string, runId: string, taskId: string, reason: string): Promise<void> {
    await runScript(
      this.redis,
      "deadLetter",
      [this.keys.queue(shard), this.keys.dead(shard)],
      [QUEUE_GROUP, entryId, runId, taskId, reason, 10_000],
    );
  }

  /** Acknowledges and deletes a finished queue entry, so the stream does not grow. */
  async ack(shard: number, entryId: string): Promise<void> {
    const queue = this.keys.queue(shard);
    await this.redis.multi().xack(queue, QUEUE_GROUP, entryId).xdel(queue, entryId).exec();
  }

  /** Records a liveness beat in a shard, in Redis time; the record lives `ttlSeconds`. */
  async beat(shard: number, ttlSeconds: number): Promise<number> {
    return Number(await runScript(this.redis, "heartbeat", [this.keys.live(shard)], [ttlSeconds]));
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

// A test stand-in for an actor: beats, reads the run queue with the consumer group, claims runs and moves their tasks
// through RunLedger exactly as a real actor would. Test code only: it never runs a handler.
import type { Redis } from "ioredis";
import { type Claim, KeySpace, QUEUE_GROUP, RunLedger } from "../../src/journal/index.ts";
import type { Artifact, Message, TaskState, TaskStatus } from "../../src/protocol/index.ts";

type QueueReply = [string, [string, string[]][]][] | null;

/** Which queued run to take: a given task's, or any of a client's; unset takes any. */
export interface TakeFilter {
  taskId?: string;
  clientId?: string;
}

export class FakeActor {
  readonly keys: KeySpace;
  readonly ledger: RunLedger;
  private readonly consumer = `fake-${Math.random().toString(36).slice(2, 8)}`;
  /** Entries read from the queue and not taken yet (another filter may want them). */
  private backlog: { entryId: string; taskId: string }[] = [];

  /** `redis` should be a connection of its own: reading the queue blocks it. */
  constructor(
    private readonly redis: Redis,
    prefix: string,
  ) {
    this.keys = new KeySpace(prefix, 1);
    this.ledger = new RunLedger(redis, this.keys);
  }

  /** Creates the queue's consumer group and records a worker beat, so the gateway accepts tasks. */
  async live(): Promise<void> {
    await this.ledger.ensureGroup(0);
    await this.ledger.beat(0, 300);
  }

  private async read(blockMs: number): Promise<void> {
    const reply = (await this.redis.xreadgroup(
      "GROUP",
      QUEUE_GROUP,
      this.consumer,
      "COUNT",
      2000,
      "BLOCK",
      Math.max(1, blockMs),
      "STREAMS",
      this.keys.queue(0),
      ">",
    )) as QueueReply;
    for (const [entryId, fields] of reply?.[0]?.[1] ?? []) {
      this.backlog.push({ entryId, taskId: fields[fields.indexOf("task") + 1] ?? "" });
    }
  }

  private async matches(taskId: string, filter: TakeFilter): Promise<boolean> {
    if (filter.taskId !== undefined && taskId !== filter.taskId) return false;
    if (filter.clientId === undefined) return true;
    return (await this.redis.hget(this.keys.task(0, taskId), "cli")) === filter.clientId;
  }

  /** Claims up to `count` queued runs that match, waiting up to `timeoutMs` for them; oldest first. */
  async take(count: number, filter: TakeFilter = {}, timeoutMs = 3000): Promise<Claim[]> {
    const claims: Claim[] = [];
    const end = Date.now() + timeoutMs;
    for (;;) {
      const kept: { entryId: string; taskId: string }[] = [];
      for (const entry of this.backlog) {
        if (claims.length >= count || !(await this.matches(entry.taskId, filter))) {
          kept.push(entry);
          continue;
        }
        const claim = await this.ledger.claim(0, entry.taskId, entry.entryId, this.consumer, 30_000, 3);
        if (typeof claim !== "string") claims.push(claim);
      }
      this.backlog = kept;
      const left = end - Date.now();
      if (claims.length >= count || left <= 0) return claims;
      await this.read(Math.min(left, 250));
    }
  }

  /** Claims one matching run or fails. */
  async takeOne(filter: TakeFilter = {}, timeoutMs = 3000): Promise<Claim> {
    const [claim] = await this.take(1, filter, timeoutMs);
    if (!claim) throw new Error(`no run was queued for ${JSON.stringify(filter)}`);
    return claim;
  }

  private async contextOf(claim: Claim): Promise<string> {
    return (await this.redis.hget(this.keys.task(0, claim.taskId), "ctx")) ?? "";
  }

  /**
   * Moves the task to `state` with an optional agent message (appended to the history) and artifacts; the journal is
   * kept 600 s after a terminal state unless `journalRetentionSeconds` says otherwise.
   */
  async move(
    claim: Claim,
    state: TaskState,
    options: { text?: string; artifacts?: Artifact[]; journalRetentionSeconds?: number } = {},
  ): Promise<void> {
    const contextId = await this.contextOf(claim);
    const status: TaskStatus = { state, timestamp: new Date().toISOString() };
    let message: Message | undefined;
    if (options.text !== undefined) {
      message = {
        messageId: `agent-${Math.random().toString(36).slice(2)}`,
        role: "ROLE_AGENT",
        parts: [{ text: options.text }],
        taskId: claim.taskId,
        contextId,
      };
      status.message = message;
    }
    const result = await this.ledger.transition({
      claim,
      kind: "status",
      state,
      status,
      event: { statusUpdate: { taskId: claim.taskId, contextId, status } },
      artifacts: options.artifacts,
      historyMessage: message,
      retentionSeconds: 3600,
      journalRetentionSeconds: options.journalRetentionSeconds ?? 600,
    });
    if (!result.ok) throw new Error(`transition to ${state} failed: ${result.reason}`);
  }

  /** One artifact update of a working task, appended to its chunk store as a run's streamed output is. */
  async stream(claim: Claim, artifact: Artifact, append: boolean): Promise<void> {
    const contextId = await this.contextOf(claim);
    const artifactUpdate = { taskId: claim.taskId, contextId, artifact, ...(append ? { append: true } : {}) };
    const result = await this.ledger.transition({
      claim,
      kind: "artifact",
      state: "TASK_STATE_WORKING",
      event: { artifactUpdate },
      retentionSeconds: 3600,
      journalRetentionSeconds: 600,
    });
    if (!result.ok) throw new Error(`artifact update refused: ${result.reason}`);
  }

  /** Completes the task with one text artifact, then acknowledges its queue entry. */
  async complete(claim: Claim, text = "done"): Promise<void> {
    await this.move(claim, "TASK_STATE_COMPLETED", {
      artifacts: [{ artifactId: "result", parts: [{ text }] }],
    });
    await this.ledger.ack(0, claim.entryId);
  }
}

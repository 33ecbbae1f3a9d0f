// The only writer of one claimed run: every status and artifact change goes through the transition script with the
// claim's fencing token, in call order. A write answered "stale" means the lease is lost: nothing more is written.
import { ulid } from "ulid";
import type { Claim, RunLedger } from "../journal/index.ts";
import type { Artifact, Message, StreamResponse, TaskState, TaskStatus } from "../protocol/index.ts";

export class LeaseLostError extends Error {
  override readonly name = "LeaseLostError";
  constructor(reason: string) {
    super(`the run's lease is lost (${reason}); nothing more is written`);
  }
}

export interface RunTask {
  readonly taskId: string;
  readonly contextId: string;
}

export interface Retention {
  readonly retentionSeconds: number;
  readonly journalRetentionSeconds: number;
  /** How long the task may wait for the client's next message once interrupted. */
  readonly inputTimeoutSeconds: number;
}

export interface StatusOptions {
  /** Text of an agent message set as the status message. */
  text?: string | undefined;
  /** Also append that message to the task history. */
  history?: boolean | undefined;
  metadata?: Record<string, unknown> | undefined;
}

/** Applies one artifact event to the stored list: a new artifactId is added, an equal one replaced or appended to. */
export function applyArtifact(list: Artifact[], artifact: Artifact, append: boolean): Artifact[] {
  const index = list.findIndex((item) => item.artifactId === artifact.artifactId);
  const existing = list[index];
  if (!existing) return [...list, artifact];
  let merged = artifact;
  if (append) {
    const parts = [...existing.parts];
    for (const part of artifact.parts) {
      const last = parts[parts.length - 1];
      if (last && "text" in last && "text" in part && typeof last.text === "string" && typeof part.text === "string") {
        parts[parts.length - 1] = { ...last, text: last.text + part.text };
      } else parts.push(part);
    }
    merged = { ...existing, parts };
  }
  return list.map((item, i) => (i === index ? merged : item));
}

export class RunWriter {
  private chain: Promise<void> = Promise.resolve();
  private lostReason: string | undefined;
  /** The task's whole artifact list as this run has written it. */
  artifacts: Artifact[];

  constructor(
    private readonly ledger: RunLedger,
    private readonly claim: Claim,
    private readonly task: RunTask,
    artifacts: readonly Artifact[],
    private readonly retention: Retention,
    private readonly onLost: (reason: string) => void,
  ) {
    this.artifacts = [...artifacts];
  }

  get lost(): boolean {
    return this.lostReason !== undefined;
  }

  agentMessage(text: string, metadata?: Record<string, unknown>): Message {
    const message: Message = {
      messageId: ulid(),
      role: "ROLE_AGENT",
      parts: [{ text }],
      taskId: this.task.taskId,
      contextId: this.task.contextId,
    };
    if (metadata) message.metadata = metadata;
    return message;
  }

  /** A status change (or, with state WORKING, a progress note). */
  status(state: TaskState, options: StatusOptions = {}): Promise<void> {
    const status: TaskStatus = { state, timestamp: new Date().toISOString() };
    const message = options.text === undefined ? undefined : this.agentMessage(options.text, options.metadata);
    if (message) status.message = message;
    const update: NonNullable<StreamResponse["statusUpdate"]> = { ...this.task, status };
    if (options.metadata) update.metadata = options.metadata;
    return this.enqueue(() => ({
      kind: "status",
      state,
      status,
      event: { statusUpdate: update },
      historyMessage: options.history ? message : undefined,
    }));
  }

  /** An artifact event; the stored list is updated the same way a client applies the event. */
  artifact(artifact: Artifact, options: { append?: boolean; lastChunk?: boolean } = {}): Promise<void> {
    return this.enqueue(() => {
      const update: NonNullable<StreamResponse["artifactUpdate"]> = { ...this.task, artifact };
      if (options.append) update.append = true;
      if (options.lastChunk) update.lastChunk = true;
      const artifacts = applyArtifact(this.artifacts, artifact, options.append === true);
      return { kind: "artifact", state: "TASK_STATE_WORKING", event: { artifactUpdate: update }, artifacts };
    });
  }

  /** Waits for every write enqueued so far. */
  async flushed(): Promise<void> {
    await this.chain.catch(() => {});
  }

  private enqueue(
    build: () => {
      kind: "status" | "artifact";
      state: TaskState;
      status?: TaskStatus;
      event: StreamResponse;
      artifacts?: Artifact[];
      historyMessage?: Message | undefined;
    },
  ): Promise<void> {
    const next = this.chain.then(async () => {
      if (this.lostReason !== undefined) throw new LeaseLostError(this.lostReason);
      const input = build();
      const result = await this.ledger.transition({
        claim: this.claim,
        ...input,
        retentionSeconds: this.retention.retentionSeconds,
        journalRetentionSeconds: this.retention.journalRetentionSeconds,
        inputTimeoutSeconds: this.retention.inputTimeoutSeconds,
      });
      if (!result.ok) {
        this.lostReason = result.reason;
        this.onLost(result.reason);
        throw new LeaseLostError(result.reason);
      }
      if (input.artifacts) this.artifacts = input.artifacts;
    });
    // The chain goes on after a failed write; the handler attached here also keeps a caller that does not await
    // the returned promise from causing an unhandled rejection.
    this.chain = next.catch(() => {});
    return next;
  }
}

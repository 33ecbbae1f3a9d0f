// The only writer of one claimed run: every status and artifact change goes through the transition script with the
// claim's fencing token, in call order, one step in flight at a time. What is asked while a step is in flight waits
// and goes in the next step, appends to one artifact merged into one update, so that a streamed answer costs a bounded
// number of round trips and bytes per byte of text. With a step interval, an artifact-only step also waits until the
// interval has passed since the previous one began, so that text arriving at a model's pace shares steps too. A write
// answered "stale" means the lease is lost: nothing more is written.
import { setImmediate } from "node:timers";
import { ulid } from "ulid";
import {
  ArtifactList,
  appendArtifact,
  type Claim,
  type NextRun,
  type NextRunRequest,
  type RunLedger,
  type TransitionInput,
} from "../journal/index.ts";
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

/** Unwritten artifact text (bytes of update JSON) past which `room()` makes a streaming handler wait. */
export const BACKLOG_HIGH_WATER_BYTES = 256 * 1024;

/** Thrown at a write asked for after the task reached worker.maxTaskBytes: its content is not stored. */
export class OutputLimitError extends Error {
  override readonly name = "OutputLimitError";
  constructor() {
    super("the task reached its size limit (worker.maxTaskBytes); this output is not stored");
  }
}

/** The failure of a task whose agent's output would have taken it past worker.maxTaskBytes. */
export function outputLimitFailure(maxTaskBytes: number | undefined): string {
  const limit = maxTaskBytes ? ` of ${maxTaskBytes} bytes` : "";
  return (
    `The agent's output would have taken this task past its size limit${limit}: the task failed and keeps what ` +
    "was stored before"
  );
}

/** The failure of a task that would have waited for input past its client's limit. */
export const INTERRUPTED_LIMIT_FAILURE =
  "The task needed more input, but this client already has as many tasks waiting for input as it may " +
  "(clients.maxInterruptedTasks): answer or cancel one of them, then send this message again as a new task";

const INTERRUPTED: ReadonlySet<TaskState> = new Set(["TASK_STATE_INPUT_REQUIRED", "TASK_STATE_AUTH_REQUIRED"]);
const TERMINAL: ReadonlySet<TaskState> = new Set([
  "TASK_STATE_COMPLETED",
  "TASK_STATE_FAILED",
  "TASK_STATE_CANCELED",
  "TASK_STATE_REJECTED",
]);

type ArtifactUpdate = NonNullable<StreamResponse["artifactUpdate"]>;

export interface RunWriterOptions {
  /**
   * Least time in ms from the start of one artifact-only step to the next (a profile's artifactWriteIntervalMs);
   * 0: a step leaves as soon as the previous one landed. Status steps never wait.
   */
  stepIntervalMs?: number | undefined;
  /** The run's abort signal: once it fires, nothing waits for the interval any more. */
  signal?: AbortSignal | undefined;
  /**
   * Called once when a step's content was refused at the task's size limit (worker.maxTaskBytes): the leg must stop
   * (the executor aborts the handler with reason "output" and fails the task). `maxTaskBytes` names the limit in the
   * failure's message.
   */
  onOutputLimit?: (() => void) | undefined;
  maxTaskBytes?: number | undefined;
}

/** A status change waiting for its step. */
interface StatusWrite {
  readonly state: TaskState;
  readonly status: TaskStatus;
  readonly event: StreamResponse;
  readonly historyMessage: Message | undefined;
  /** At a run's end (terminal or interrupted): the whole artifact list then, which the step compacts into. */
  readonly artifacts: readonly Artifact[] | undefined;
  /** At a run's end with `ackOnEnd`: the step also acknowledges and deletes the leg's queue entry. */
  readonly ack: boolean;
}

/**
 * What waits for the next step: the run's start (WORKING) when it is not written yet, artifact updates (merged where
 * they can be), then at most one status change.
 */
interface Pending {
  start: { status: TaskStatus; event: StreamResponse } | undefined;
  updates: ArtifactUpdate[];
  status: StatusWrite | undefined;
  bytes: number;
  settle: { resolve: () => void; reject: (error: unknown) => void }[];
}

/** An artifact's fields other than its parts, as JSON (two updates merge only when these agree). */
function envelope(artifact: Artifact): string {
  const { parts: _parts, ...rest } = artifact;
  return JSON.stringify(rest);
}

/** The artifacts merged() made: each is held by one pending update only, so later merges extend it in place. */
const mergedArtifacts = new WeakSet<Artifact>();

/** `next` folded into `last` when it appends to the same artifact with the same envelope; else undefined. */
function merged(last: ArtifactUpdate | undefined, next: ArtifactUpdate): ArtifactUpdate | undefined {
  if (!last || next.append !== true || last.artifact.artifactId !== next.artifact.artifactId) return undefined;
  if (envelope(last.artifact) !== envelope(next.artifact)) return undefined;
  const joined: ArtifactUpdate = { ...last, artifact: appendArtifact(last.artifact, next.artifact, mergedArtifacts) };
  if (next.lastChunk) joined.lastChunk = true;
  else delete joined.lastChunk;
  return joined;
}

export class RunWriter {
  private lostReason: string | undefined;
  /**
   * Set once a step's content was refused at the task's size limit: from then on no content is written (artifact
   * updates are refused, a status keeps its text but goes without its history message and without the artifact
   * list), so the leg's end can still be written.
   */
  outputLimited = false;
  /** Set once a step that ends the leg (terminal or interrupted) is written. */
  ended = false;
  private readonly onOutputLimit: (() => void) | undefined;
  private readonly maxTaskBytes: number | undefined;
  private readonly list: ArtifactList;
  private pending: Pending | undefined;
  private inFlight: Promise<void> | undefined;
  private backlog = 0;
  private readonly roomWaiters: (() => void)[] = [];
  /** Whether a pump is due at the end of this turn of the event loop. */
  private scheduled = false;
  /** Whether the status that ends the leg (terminal or interrupted) acknowledges its queue entry in the same step. */
  ackOnEnd = false;
  /**
   * With `ackOnEnd`: `request` is asked, when the step that acknowledges the entry is written, what that step asks for
   * this actor's next queued run (the ledger's `next`; undefined: nothing); `started` is told of the run it claimed as
   * soon as the step's reply is read, whatever the leg does next (a renewal that raced the end may call the leg lost,
   * but the next run is leased to this actor and must run).
   */
  chain: { request: () => NextRunRequest | undefined; started: (next: NextRun) => void } | undefined = undefined;
  /** Set once a step acknowledged the leg's queue entry: the client's oldest deferred run then (null: none). */
  acked: { oldestDeferred: string | null } | undefined;
  private readonly stepIntervalMs: number;
  /** performance.now() when the last artifact-only step was sent. */
  private lastArtifactStepAt: number | undefined;
  /** Due when the interval since the last artifact-only step has passed and an artifact-only step waits for it. */
  private intervalTimer: ReturnType<typeof setTimeout> | undefined;
  /** Set once the leg's end (terminal or interrupted) or the run's abort is asked: nothing waits after it. */
  private hurried = false;

  constructor(
    private readonly ledger: Pick<RunLedger, "transition">,
    private readonly claim: Claim,
    private readonly task: RunTask,
    artifacts: readonly Artifact[],
    private readonly retention: Retention,
    private readonly onLost: (reason: string) => void,
    options: RunWriterOptions = {},
  ) {
    this.list = new ArtifactList(artifacts);
    this.stepIntervalMs = options.stepIntervalMs ?? 0;
    this.onOutputLimit = options.onOutputLimit;
    this.maxTaskBytes = options.maxTaskBytes;
    const { signal } = options;
    if (this.stepIntervalMs > 0 && signal) {
      // a canceled, timed-out, drained or lost run writes its end (or is refused) at once, and leaves no timer behind
      if (signal.aborted) this.hurried = true;
      else signal.addEventListener("abort", () => this.hurry(), { once: true });
    }
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

  /**
   * The run's start: the task moves to WORKING in the run's first step, which also carries what the handler asks for
   * in the same turn of the event loop (a handler that answers at once ends its run in one step: WORKING, its output
   * and its end, each journaled in order as before). Resolves when it is written.
   */
  start(): Promise<void> {
    const status: TaskStatus = { state: "TASK_STATE_WORKING", timestamp: new Date().toISOString() };
    return this.add((pending) => {
      pending.start = { status, event: { statusUpdate: { ...this.task, status } } };
    });
  }

  /** A status change (or, with state WORKING, a progress note). Resolves when it is written. */
  status(state: TaskState, options: StatusOptions = {}): Promise<void> {
    const status: TaskStatus = { state, timestamp: new Date().toISOString() };
    const message = options.text === undefined ? undefined : this.agentMessage(options.text, options.metadata);
    if (message) status.message = message;
    const update: NonNullable<StreamResponse["statusUpdate"]> = { ...this.task, status };
    if (options.metadata) update.metadata = options.metadata;
    const ends = TERMINAL.has(state) || INTERRUPTED.has(state);
    // whatever a handler that ignores its signal asks after its leg's end goes at once, as without an interval
    if (ends) this.hurried = true;
    return this.add((pending) => {
      pending.status = {
        state,
        status,
        event: { statusUpdate: update },
        historyMessage: options.history ? message : undefined,
        // the list as of this step: a status change closes its step, so it holds every update asked for before it
        artifacts: ends && this.list.items.length > 0 ? this.list.items : undefined,
        ack: ends && this.ackOnEnd,
      };
    });
  }

  /** An artifact update, applied to the list the way a client applies it. Resolves when it is written. */
  artifact(artifact: Artifact, options: { append?: boolean; lastChunk?: boolean } = {}): Promise<void> {
    if (this.outputLimited && this.lostReason === undefined) return Promise.reject(new OutputLimitError());
    const update: ArtifactUpdate = { ...this.task, artifact };
    if (options.append) update.append = true;
    if (options.lastChunk) update.lastChunk = true;
    const size = JSON.stringify(artifact.parts).length;
    return this.add((pending) => {
      this.list.apply(artifact, options.append === true);
      const joined = merged(pending.updates.at(-1), update);
      if (joined) pending.updates[pending.updates.length - 1] = joined;
      else pending.updates.push(update);
      pending.bytes += size;
    });
  }

  /** The task's whole artifact list, with every update asked for so far applied. */
  get artifacts(): readonly Artifact[] {
    return this.list.items;
  }

  /**
   * Resolves at once while the unwritten artifact text is under BACKLOG_HIGH_WATER_BYTES, else once it is: a handler
   * that streams deltas awaits this instead of each delta's write, so that its deltas share steps.
   */
  room(): Promise<void> {
    if (this.backlog < BACKLOG_HIGH_WATER_BYTES || this.lostReason !== undefined) return Promise.resolve();
    return new Promise((resolve) => this.roomWaiters.push(resolve));
  }

  /** Waits for every write asked for so far; a step that waits for the step interval is sent at once. */
  async flushed(): Promise<void> {
    while (this.inFlight || this.pending) {
      if (this.inFlight) await this.inFlight.catch(() => {});
      else if (this.pending) {
        const step = this.pending;
        if (this.intervalTimer !== undefined) this.pump(true);
        await this.afterStep(step);
      }
    }
  }

  /**
   * Adds a write to the pending step: after a status change, a new step begins. The step is sent when the one in
   * flight has landed, or, when none is, once the current turn of the event loop is over (setImmediate): what a handler
   * asks for in one turn (deltas it emits one after another without waiting for I/O) goes in one step, and the first
   * token of a streamed answer still leaves before the next I/O callback. With a step interval, an artifact-only step
   * that would leave sooner than the interval after the previous one began waits for it, gathering what comes meanwhile.
   */
  private add(fill: (pending: Pending) => void): Promise<void> {
    if (this.lostReason !== undefined) return Promise.reject(new LeaseLostError(this.lostReason));
    if (this.pending?.status) {
      const before = this.pending;
      // a status change closes its step: what follows waits for the step after it
      return this.afterStep(before).then(() => this.add(fill));
    }
    this.pending ??= { start: undefined, updates: [], status: undefined, bytes: 0, settle: [] };
    const pending = this.pending;
    const before = pending.bytes;
    fill(pending);
    this.backlog += pending.bytes - before;
    const written = new Promise<void>((resolve, reject) => pending.settle.push({ resolve, reject }));
    // an artifact update joins the step that waits for the interval; a status change sends it at the end of the turn
    const waiting = this.intervalTimer !== undefined && !pending.status && !pending.start;
    if (!this.inFlight && !this.scheduled && !waiting) {
      this.scheduled = true;
      setImmediate(() => {
        this.scheduled = false;
        this.pump();
      });
    }
    return written;
  }

  /** Resolves (never rejects) once `step` has been sent and settled. */
  private afterStep(step: Pending): Promise<void> {
    return new Promise((resolve) => step.settle.push({ resolve, reject: () => resolve() }));
  }

  /** Stops waiting for the step interval for good: what is pending goes as soon as no step is in flight. */
  private hurry(): void {
    this.hurried = true;
    if (this.intervalTimer === undefined) return;
    clearTimeout(this.intervalTimer);
    this.intervalTimer = undefined;
    this.pump();
  }

  /** How long the pending step must still wait for the interval (0: it may go now). */
  private intervalLeft(step: Pending): number {
    if (step.status || step.start || this.hurried || this.lostReason !== undefined) return 0;
    if (this.lastArtifactStepAt === undefined) return 0;
    return this.lastArtifactStepAt + this.stepIntervalMs - performance.now();
  }

  /** Sends the pending step unless one is in flight or (unless `now`) it must wait for the step interval. */
  private pump(now = false): void {
    if (this.inFlight || !this.pending) return;
    const step = this.pending;
    if (this.stepIntervalMs > 0) {
      const left = now ? 0 : this.intervalLeft(step);
      if (left > 0) {
        this.intervalTimer ??= setTimeout(() => {
          this.intervalTimer = undefined;
          this.pump();
        }, Math.ceil(left));
        return;
      }
      if (this.intervalTimer !== undefined) {
        clearTimeout(this.intervalTimer);
        this.intervalTimer = undefined;
      }
      if (!step.status) this.lastArtifactStepAt = performance.now();
    }
    this.pending = undefined;
    this.inFlight = this.send(step).finally(() => {
      this.inFlight = undefined;
      this.backlog -= step.bytes;
      if (this.backlog < BACKLOG_HIGH_WATER_BYTES || this.lostReason !== undefined) {
        for (const wake of this.roomWaiters.splice(0)) wake();
      }
      this.pump();
    });
  }

  private async send(step: Pending): Promise<void> {
    try {
      if (this.lostReason !== undefined) throw new LeaseLostError(this.lostReason);
      if (this.outputLimited) this.limitOutput(step);
      // nothing left to write: the step held content only (its promises reject, as every later artifact's does)
      if (this.outputLimited && !step.start && !step.status) throw new OutputLimitError();
      let result = await this.ledger.transition(this.transitionOf(step));
      if (!result.ok && result.reason === "output-limit") {
        this.limitOutput(step);
        if (!step.start && !step.status) throw new OutputLimitError();
        result = await this.ledger.transition(this.transitionOf(step));
      }
      if (!result.ok && result.reason === "interrupted-limit" && step.status) {
        step.status = this.failedInstead(step.status, INTERRUPTED_LIMIT_FAILURE);
        result = await this.ledger.transition(this.transitionOf(step));
      }
      if (!result.ok) {
        this.lostReason = result.reason;
        this.onLost(result.reason);
        throw new LeaseLostError(result.reason);
      }
      if (step.status && (TERMINAL.has(step.status.state) || INTERRUPTED.has(step.status.state))) this.ended = true;
      if (result.acked) {
        this.acked = { oldestDeferred: result.oldestDeferred ?? null };
        if (result.next) this.chain?.started(result.next);
      }
    } catch (error) {
      for (const { reject } of step.settle) reject(error);
      return;
    }
    for (const { resolve } of step.settle) resolve();
  }

  /**
   * The task reached its size limit (worker.maxTaskBytes) with this step: from now on no content is written. The step
   * keeps its start and its status without their content; a status that ends the leg becomes the failure (the
   * handler's result would describe output that was not stored). The executor is told once, and stops the leg.
   */
  private limitOutput(step: Pending): void {
    const first = !this.outputLimited;
    this.outputLimited = true;
    step.updates = [];
    const { status } = step;
    if (status) {
      // (a failure stays as it is: the executor's own, after the limit, says why)
      const ends =
        status.state !== "TASK_STATE_FAILED" && (TERMINAL.has(status.state) || INTERRUPTED.has(status.state));
      const kept = ends ? this.failedInstead(status, outputLimitFailure(this.maxTaskBytes)) : status;
      step.status = { ...kept, historyMessage: undefined, artifacts: undefined };
    }
    if (first) this.onOutputLimit?.();
  }

  /**
   * The task fails with `text` instead of the step's end: the client already has as many tasks waiting for input as
   * its limit allows (clients.maxInterruptedTasks), which it reached after this task was accepted, or the end's
   * content would have passed the task's size limit.
   */
  private failedInstead(write: StatusWrite, text: string): StatusWrite {
    const status: TaskStatus = {
      state: "TASK_STATE_FAILED",
      timestamp: new Date().toISOString(),
      message: this.agentMessage(text),
    };
    return {
      ...write,
      state: "TASK_STATE_FAILED",
      status,
      event: { statusUpdate: { ...this.task, status } },
      historyMessage: undefined,
    };
  }

  /** One transition: the step's artifact updates, then its status change; a run's end compacts the artifact list. */
  private transitionOf(step: Pending): TransitionInput {
    const events: StreamResponse[] = step.updates.map((artifactUpdate) => ({ artifactUpdate }));
    const common = {
      claim: this.claim,
      retentionSeconds: this.retention.retentionSeconds,
      journalRetentionSeconds: this.retention.journalRetentionSeconds,
      inputTimeoutSeconds: this.retention.inputTimeoutSeconds,
    };
    const { status, start } = step;
    if (start && !status && events.length === 0) {
      // the start alone: a WORKING status step
      return { ...common, kind: "status", state: "TASK_STATE_WORKING", status: start.status, event: start.event };
    }
    const lead = start ? { lead: start } : {};
    if (!status) {
      const last = events.pop() as StreamResponse;
      return { ...common, ...lead, kind: "artifact", state: "TASK_STATE_WORKING", event: last, artifactEvents: events };
    }
    return {
      ...common,
      ...lead,
      kind: "status",
      state: status.state,
      status: status.status,
      event: status.event,
      artifactEvents: events,
      historyMessage: status.historyMessage,
      ...(status.artifacts ? { artifacts: status.artifacts } : {}),
      ...(status.ack ? { ackEntry: this.claim.entryId, next: this.chain?.request() } : {}),
    };
  }
}

// Runs queue entries from claim to acknowledgement; the same code serves actors and the sweep. The claim decides
// whether this process may run an entry; every write carries the claim's fence; a lost lease stops all writing.
import { type Config, type Profile, requiresFullTextCheck } from "../config/index.ts";
import type { Guardrail } from "../guardrail/index.ts";
import {
  type Claim,
  type KeySpace,
  type NextRun,
  type NextRunRequest,
  type QueueEntry,
  type RedisLike,
  RunLedger,
  type TaskRecord,
} from "../journal/index.ts";
import { type Logger, lazyChild } from "../log.ts";
import { createOutputSink, type OutputSink } from "./emit-gate.ts";
import { createHandlerContext } from "./handlers/context.ts";
import {
  type AbortReason,
  type Handler,
  HandlerFailure,
  type HandlerRegistry,
  type HandlerResult,
  RunAbortedError,
} from "./handlers/handler-api.ts";
import { type LlmClient, OpenAiCompatibleClient } from "./handlers/llm-client.ts";
import type { ToolRegistry } from "./handlers/tools.ts";
import { Workspace } from "./handlers/workspace.ts";
import { LeaseKeeper } from "./lease-keeper.ts";
import type { RunOutcome } from "./metrics.ts";
import { ContentCheckFailure, profileGuardrails } from "./output-check.ts";
import { RunTrace } from "./run-trace.ts";
import { LeaseLostError, outputLimitFailure, RunWriter } from "./run-writer.ts";

export interface ExecutorOptions {
  /** The connection the executor reads tasks and runs' trace contexts on (the ledger writes on its own). */
  redis: RedisLike;
  ledger: RunLedger;
  keys: KeySpace;
  config: Config;
  handlers: HandlerRegistry;
  tools: ToolRegistry;
  /** Profile name → the API key its `llm.apiKeyEnv` names (resolved by the entry file). */
  apiKeys: ReadonlyMap<string, string>;
  /** The consumer name in the queue group; also the run owner recorded by claims. */
  consumer: string;
  logger: Logger;
  fetch?: typeof fetch;
  /** Where guardrails read the variable named by `guardrails.moderation.apiKeyEnv` (the entry file passes it). */
  env?: Readonly<Record<string, string | undefined>> | undefined;
  /**
   * false: the claim only takes the lease, and the task is read after it (one more round trip, the window in which a
   * lease can lapse before the leg begins). Default true: the claim returns the task.
   */
  startInClaim?: boolean | undefined;
  /** Told how each claimed leg ended; `startedAt` is performance.now() at the claim (metrics). */
  onRun?: ((outcome: RunOutcome, startedAt: number) => void) | undefined;
  /**
   * A leg's end claims this consumer's next queued run in the same script (the ledger's `next`) and runs it in the
   * ended run's place, as long as the queues have runs: the queue reader is needed only when they run dry. One node
   * only (the actor sets it when not on a Cluster); default false (the sweep runs only what it reclaims).
   */
  chainRuns?: boolean | undefined;
  /** Called when an entry's processing is over and its place is free (no next run took it). */
  onSettled?: (() => void) | undefined;
}

/** An entry's identity in this executor: its shard and its queue entry id. */
function entryKey(entry: QueueEntry): string {
  return `${entry.shard}/${entry.id}`;
}

/** The status message of a task whose handler threw an error that is not a HandlerFailure. */
export const GENERIC_FAILURE = "The agent failed while working on this task";

/** The status message of a task whose leg exceeded its profile's runTimeoutSeconds. */
export function timeLimitFailure(seconds: number): string {
  return `The task exceeded its time limit of ${seconds} s`;
}

type Outcome =
  | { kind: "returned"; value: HandlerResult | undefined }
  | { kind: "threw"; error: unknown }
  | { kind: "aborted" };

/** Settles with the handler's outcome, or as soon as the signal fires (a handler that ignores it is not awaited). */
function race(run: () => Promise<HandlerResult | undefined>, signal: AbortSignal): Promise<Outcome> {
  return new Promise((resolve) => {
    const onAbort = () => resolve({ kind: "aborted" });
    if (signal.aborted) return onAbort();
    signal.addEventListener("abort", onAbort, { once: true });
    Promise.resolve()
      .then(run)
      .then(
        (value) => resolve({ kind: "returned", value }),
        (error: unknown) => resolve({ kind: "threw", error }),
      )
      .finally(() => signal.removeEventListener("abort", onAbort));
  });
}

/** The metric outcome of a concluded leg (a lost lease is decided by the caller). */
function outcomeOf(reason: AbortReason | undefined, failure: unknown, outcome: Outcome): RunOutcome {
  if (reason === "drain") return "drained";
  if (reason === "cancel") return "canceled";
  if (reason === "lost") return "lost";
  if (reason === "timeout") return "timeout";
  if (reason === "output") return "output_limit";
  if (failure !== undefined || outcome.kind !== "returned") return "failed";
  const state = outcome.value?.state ?? "TASK_STATE_COMPLETED";
  return state === "TASK_STATE_INPUT_REQUIRED"
    ? "input_required"
    : state === "TASK_STATE_AUTH_REQUIRED"
      ? "auth_required"
      : "completed";
}

/** A claimed leg, and what its end learned of its client's deferred runs (for queueing the oldest one next). */
interface LegEnd {
  readonly entry: QueueEntry;
  readonly claim: Claim;
  /** The oldest deferred run read with the entry's acknowledgement; null: none; undefined: not read (look it up). */
  oldestDeferred: string | null | undefined;
  /** The next run the leg's end claimed for this consumer, which takes the leg's place. */
  next?: NextRun;
  readonly trace: RunTrace;
}

interface RunControl {
  controller: AbortController;
  reason: AbortReason | undefined;
  /** performance.now() at the claim: the leg's time limit counts from it. */
  startedAt: number;
  /** How the leg ended, set when it concludes. */
  outcome?: RunOutcome;
}

export class RunExecutor {
  /** Run legs this executor finished (completed, failed, canceled or interrupted). */
  done = 0;
  private readonly controls = new Map<string, RunControl>();
  private readonly entries = new Set<string>();
  private readonly pending = new Set<Promise<void>>();
  private draining = false;
  private readonly llmClients = new Map<string, LlmClient>();
  private readonly workspaces = new Map<string, Promise<Workspace>>();
  /** Each profile's output guardrail, built once: a profile whose guardrails cannot be built stops the start. */
  private readonly guardrails: ReadonlyMap<string, Guardrail>;

  /** Reads of tasks and runs on `o.redis`. */
  private readonly reads: RunLedger;
  /** The shard a run's end reads first for the next run (rotated, so that no shard's backlog holds the others up). */
  private firstShard = 0;

  constructor(private readonly o: ExecutorOptions) {
    this.reads = new RunLedger(o.redis, o.keys);
    this.guardrails = profileGuardrails(o.config, { env: { ...o.env }, ...(o.fetch ? { fetch: o.fetch } : {}) });
  }

  /** Entries being processed (claimed or about to be). */
  get inflight(): number {
    return this.entries.size;
  }

  /**
   * Processes an entry in the background (`claimed`: a run's end claimed it already); an entry already in progress here
   * is ignored. Never rejects.
   */
  submit(entry: QueueEntry, claimed?: NextRun): Promise<void> {
    const key = entryKey(entry);
    if (this.entries.has(key)) return Promise.resolve();
    this.entries.add(key);
    let chained = false;
    const done: Promise<void> = this.traced(entry, claimed)
      .then((leg) => {
        chained = leg?.next !== undefined;
      })
      .catch((error: unknown) => {
        this.o.logger.error(
          { err: error, taskId: entry.taskId, entry: entry.id },
          "run processing failed; left to reclaim",
        );
      })
      .finally(() => {
        this.entries.delete(key);
        this.pending.delete(done);
        // a next run took this one's place (submitted when the leg's end claimed it): no place was freed
        if (!chained) this.o.onSettled?.();
      });
    this.pending.add(done);
    return done;
  }

  /** Aborts a running run because the client canceled it; false when this executor does not run it. */
  cancel(runId: string): boolean {
    const control = this.controls.get(runId);
    if (!control) return false;
    this.abort(control, "cancel");
    return true;
  }

  /** From now on every entry is handed back to the queue at once instead of being run. */
  stopTaking(): void {
    this.draining = true;
  }

  /** Aborts every running run; with "drain" each is handed back to the queue. */
  abortAll(reason: AbortReason): void {
    for (const control of this.controls.values()) this.abort(control, reason);
  }

  /** Resolves when every submitted entry is processed. */
  async settled(): Promise<void> {
    while (this.pending.size > 0) await Promise.allSettled([...this.pending]);
  }

  private abort(control: RunControl, reason: AbortReason): void {
    if (control.reason !== undefined) return;
    control.reason = reason;
    control.controller.abort(new RunAbortedError(reason));
  }

  /** Processes an entry in the span of its run (continuing the trace of the request that queued it). */
  private async traced(entry: QueueEntry, claimed: NextRun | undefined): Promise<LegEnd | undefined> {
    const trace = await RunTrace.start(this.reads, entry);
    try {
      return await this.process(entry, trace, claimed);
    } finally {
      trace.end();
    }
  }

  /** The request for the next run that a leg's end claims, or undefined (not chaining, or draining). */
  private nextRequest(): NextRunRequest | undefined {
    if (!this.o.chainRuns || this.draining) return undefined;
    const { shards } = this.o.keys;
    const first = this.firstShard;
    this.firstShard = (first + 1) % shards;
    const { worker } = this.o.config;
    return {
      owner: this.o.consumer,
      leaseMs: worker.leaseSeconds * 1000,
      maxAttempts: worker.maxAttempts,
      shards: Array.from({ length: shards }, (_, i) => (first + i) % shards),
    };
  }

  /** Claims (unless `claimed`) and runs the entry; the leg, when one was claimed (its `next` may follow it). */
  private async process(entry: QueueEntry, trace: RunTrace, claimed: NextRun | undefined): Promise<LegEnd | undefined> {
    const { config, ledger, logger } = this.o;
    const log = lazyChild(logger, { taskId: entry.taskId, runId: entry.runId, entry: entry.id });
    const leaseMs = config.worker.leaseSeconds * 1000;
    // the leg's lease and time limit count from when the claim was sent (for a next run, the step that claimed it)
    const startedAt = claimed?.sentAt ?? performance.now();
    let reported = false;
    const ended = (outcome: RunOutcome) => {
      if (!reported) this.o.onRun?.(outcome, startedAt);
      if (!reported) trace.outcome(outcome);
      reported = true;
    };
    const claim = await trace.claim(async () =>
      claimed !== undefined
        ? claimed.claim
        : await ledger.claim(
            entry.shard,
            entry.taskId,
            entry.id,
            this.o.consumer,
            leaseMs,
            config.worker.maxAttempts,
            entry.clientId,
            // a run that is not handed back at once has its task read by the claim, in the same script
            !this.draining && this.o.startInClaim !== false,
          ),
    );
    if (typeof claim === "string") {
      // A deferred entry is acknowledged by the claim itself; its run waits for one of its client's runs to end.
      if (claim !== "leased" && claim !== "deferred") await ledger.ack(entry.shard, entry.id);
      log.debug({ refusal: claim }, "queue entry not claimed");
      return undefined;
    }
    const leg: LegEnd = { entry, claim, oldestDeferred: undefined, trace };
    try {
      await this.processClaimed(leg, startedAt, ended, log);
    } finally {
      // This run no longer holds one of its client's running slots (or another actor holds it now): one deferred
      // run of the client may be queued again. A failure here is repaired by the retention pass.
      if (leg.oldestDeferred !== null) {
        await ledger
          .wakeDeferred(claim.shard, claim.clientId, 1, leg.oldestDeferred)
          .catch((error: unknown) => log.warn({ err: error }, "could not queue a deferred run again"));
      }
    }
    return leg;
  }

  /**
   * Acknowledges the leg's entry and learns, in the same round trip, its client's oldest deferred run; nothing more
   * when the step that ended the leg did both already (the run's end in one script).
   */
  private async ack(leg: LegEnd, writer?: RunWriter): Promise<void> {
    if (writer?.acked) {
      leg.oldestDeferred = writer.acked.oldestDeferred;
      return;
    }
    const { entry, claim } = leg;
    leg.oldestDeferred = (await this.o.ledger.ack(entry.shard, entry.id, claim.clientId)) ?? null;
  }

  private async processClaimed(
    leg: LegEnd,
    startedAt: number,
    ended: (outcome: RunOutcome) => void,
    log: Logger,
  ): Promise<void> {
    const { config, ledger } = this.o;
    const { entry, claim } = leg;
    if (this.draining) {
      await ledger.release(claim);
      log.info("draining: queue entry handed back");
      ended("drained");
      return;
    }
    const record = claim.record ?? (await this.reads.readTask(entry.shard, entry.taskId));
    if (!record) return await this.ack(leg);
    const profile = config.profiles.find((candidate) => candidate.name === claim.profile);
    const control: RunControl = { controller: new AbortController(), reason: undefined, startedAt };
    const writer = new RunWriter(
      ledger,
      claim,
      { taskId: record.id, contextId: record.contextId },
      record.artifacts,
      profile ?? { retentionSeconds: 86_400, journalRetentionSeconds: 0, inputTimeoutSeconds: 86_400 },
      () => this.abort(control, "lost"),
      {
        stepIntervalMs: profile?.artifactWriteIntervalMs ?? 0,
        signal: control.controller.signal,
        onOutputLimit: () => this.abort(control, "output"),
        maxTaskBytes: config.worker.maxTaskBytes,
      },
    );
    // the leg's end acknowledges its queue entry in its own step (and may claim the next run); an exhausted run's entry
    // is dead-lettered instead
    writer.ackOnEnd = !claim.exhausted;
    writer.chain = {
      request: () => this.nextRequest(),
      started: (next) => {
        // (an entry already in progress here is never one a queue read delivers anew; were it, this leg frees its
        // place) The next run starts now, in this leg's place, while this leg finishes its bookkeeping.
        if (this.entries.has(entryKey(next.entry))) return;
        leg.next = next;
        void this.submit(next.entry, next);
      },
    };
    try {
      if (claim.exhausted) {
        const attempts = config.worker.maxAttempts;
        await writer.status("TASK_STATE_FAILED", {
          text: `The task failed: its run was attempted ${attempts} times without finishing (attempts exhausted)`,
        });
        await ledger.deadLetter(entry.shard, entry.id, entry.runId, entry.taskId, `attempts exhausted (${attempts})`);
        log.warn({ attempts }, "attempts exhausted: task failed, entry dead-lettered");
        ended("exhausted");
      } else if (claim.cancelRequested) {
        await writer.status("TASK_STATE_CANCELED", { text: "Canceled at the client's request" });
        await this.ack(leg, writer);
        ended("canceled");
      } else {
        const handler = profile ? this.o.handlers.get(profile.handler) : undefined;
        if (!profile || !handler) {
          log.error({ profile: claim.profile, handler: profile?.handler }, "no such profile or handler on this worker");
          await writer.status("TASK_STATE_FAILED", { text: "This agent is not available on this worker" });
          await this.ack(leg, writer);
          ended("unavailable");
        } else {
          const finished = await this.runLeg(leg, record, profile, handler, writer, control, log);
          ended(control.outcome ?? "lost");
          if (!finished) return;
        }
      }
      this.done += 1;
    } catch (error) {
      if (!(error instanceof LeaseLostError)) throw error;
      ended("lost");
      log.warn({ reason: error.message }, "lease lost: another actor owns the run now; stopped writing");
    }
  }

  /** Runs the handler for one leg; false when the run was left to another owner (lost lease or drained). */
  private async runLeg(
    leg: LegEnd,
    record: TaskRecord,
    profile: Profile,
    handler: Handler,
    writer: RunWriter,
    control: RunControl,
    log: Logger,
  ): Promise<boolean> {
    const { entry, claim } = leg;
    const { ledger, config } = this.o;
    this.controls.set(entry.runId, control);
    // The leg's time limit counts from the claim; it ends when the handler settles (the output check has its own).
    const limitMs = profile.runTimeoutSeconds * 1000 - (performance.now() - control.startedAt);
    const limit = setTimeout(() => this.abort(control, "timeout"), Math.max(0, limitMs));
    const keeper = new LeaseKeeper(
      ledger,
      claim,
      config.worker.leaseSeconds * 1000,
      this.o.consumer,
      { cancel: () => this.abort(control, "cancel"), lost: () => this.abort(control, "lost") },
      log,
    ).start(control.startedAt);
    try {
      // WORKING leaves with the handler's first output (or alone at the end of this turn); a refused step is a lost
      // lease, which the writer reports through onLost and every later write
      writer.start().catch(() => {});
      const legNumber = record.history.filter((message) => message.role === "ROLE_USER").length;
      const signal = control.controller.signal;
      const guardrail = this.guardrails.get(profile.name);
      const sink = createOutputSink(writer, {
        profile,
        artifactId: `response-${legNumber}`,
        guardrail,
        signal,
        logger: log,
      });
      // A held-back profile does not name a refused tool: the model chose the name, so it may carry content.
      const named = !requiresFullTextCheck(profile);
      const outcome = await race(async () => {
        const built = createHandlerContext({
          taskId: record.id,
          contextId: record.contextId,
          history: record.history,
          profile,
          attempt: claim.tries,
          signal,
          sink,
          llm: this.llmFor(profile),
          tools: this.o.tools,
          workspace: await this.workspaceFor(profile),
          recordRefusal: (tool) =>
            writer.status("TASK_STATE_WORKING", {
              text: named
                ? `Tool "${tool}" is not allowed for this agent; the call was refused`
                : "A tool that is not allowed for this agent was called; the call was refused",
              history: true,
              ...(named ? { metadata: { refusedTool: tool } } : {}),
            }),
        });
        const value = (await leg.trace.leg(profile.name, () => handler(built.ctx))) as HandlerResult | undefined;
        return value ?? built.requested();
      }, signal);
      clearTimeout(limit);
      return await leg.trace.transition(() => this.conclude(leg, profile, outcome, control, writer, sink, log));
    } finally {
      clearTimeout(limit);
      keeper.stop();
      this.controls.delete(entry.runId);
    }
  }

  private async conclude(
    leg: LegEnd,
    profile: Profile,
    outcome: Outcome,
    control: RunControl,
    writer: RunWriter,
    sink: OutputSink,
    log: Logger,
  ): Promise<boolean> {
    const { claim } = leg;
    const { ledger } = this.o;
    let failure = outcome.kind === "threw" ? outcome.error : undefined;
    if (control.reason === undefined && outcome.kind === "returned") {
      try {
        await sink.finish(outcome.value || { state: "TASK_STATE_COMPLETED" });
      } catch (error) {
        // An abort during finish (the output check) is handled below like any abort; else only a refusal fails.
        if (control.reason === undefined && !(error instanceof HandlerFailure)) throw error;
        failure = error;
      }
    }
    control.outcome = outcomeOf(control.reason, failure, outcome);
    if (control.reason === "lost" || failure instanceof LeaseLostError) {
      control.outcome = "lost";
      log.warn("lease lost: another actor owns the run now; stopped writing");
      return false;
    }
    if (control.reason === "drain") {
      await writer.status("TASK_STATE_WORKING", { text: "The worker stopped; the run is queued again" });
      await ledger.release(claim);
      log.info("drained: run handed back to the queue");
      return false;
    }
    if (control.reason === "cancel") {
      await writer.status("TASK_STATE_CANCELED", { text: "Canceled at the client's request" });
      log.info("canceled");
    } else if (control.reason === "timeout") {
      // Not retried: a handler that hung once would hang again.
      const seconds = profile.runTimeoutSeconds;
      await writer.status("TASK_STATE_FAILED", { text: timeLimitFailure(seconds) });
      log.warn({ runTimeoutSeconds: seconds }, "time limit exceeded: handler aborted, task failed");
    } else if (control.reason === "output") {
      // the step that reached the limit may have been the leg's end, which the writer then wrote as this failure
      const { maxTaskBytes } = this.o.config.worker;
      if (!writer.ended) await writer.status("TASK_STATE_FAILED", { text: outputLimitFailure(maxTaskBytes) });
      log.warn({ maxTaskBytes }, "size limit reached: the agent's output was refused, task failed");
    } else if (failure !== undefined) {
      await this.fail(failure, writer, sink, log);
    }
    await this.ack(leg, writer);
    return true;
  }

  /** FAILED with the HandlerFailure's message as the sink lets it out, or a generic one (details stay in the log). */
  private async fail(error: unknown, writer: RunWriter, sink: OutputSink, log: Logger): Promise<void> {
    const shown = error instanceof HandlerFailure;
    // a refused output (past maxLength, from an emit the handler passed on) was logged by its sink with the reason
    if (error instanceof ContentCheckFailure) log.debug("handler stopped by its output check");
    else if (shown) log.warn({ err: error }, "handler failed");
    else log.error({ err: error }, "handler failed");
    await writer.status("TASK_STATE_FAILED", {
      text: shown ? await sink.failureMessage(error.message) : GENERIC_FAILURE,
    });
  }

  private llmFor(profile: Profile): LlmClient | undefined {
    if (!profile.llm) return undefined;
    let client = this.llmClients.get(profile.name);
    if (!client) {
      client = new OpenAiCompatibleClient(profile.llm, this.o.apiKeys.get(profile.name), this.o.fetch ?? fetch);
      this.llmClients.set(profile.name, client);
    }
    return client;
  }

  private workspaceFor(profile: Profile): Promise<Workspace | undefined> {
    const path = profile.workspace;
    if (path === undefined) return Promise.resolve(undefined);
    let opened = this.workspaces.get(profile.name);
    if (!opened) {
      opened = Workspace.open(path);
      opened.catch(() => this.workspaces.delete(profile.name));
      this.workspaces.set(profile.name, opened);
    }
    return opened;
  }
}

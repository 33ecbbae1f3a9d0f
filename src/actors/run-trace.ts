// The spans of one queue entry's processing in an actor: the run span continues the trace of the request that queued
// it (the W3C carrier accept and resume keep on the run), with the claim, the handler leg and the final transition
// as its children. With tracing off every method is a no-op and nothing is read from Redis.
import { type Span, SpanKind } from "@opentelemetry/api";
import type { Claim, ClaimRefusal, RunLedger } from "../journal/index.ts";
import {
  attributes as A,
  contextFromCarrier,
  contextOf,
  failSpan,
  inSpan,
  runtimeTracer,
  tracing,
} from "../tracing/index.ts";
import type { RunOutcome } from "./metrics.ts";

/** The task state a leg's outcome leaves (none for a leg handed over: lost or drained). */
const OUTCOME_STATES: Partial<Record<RunOutcome, string>> = {
  completed: "TASK_STATE_COMPLETED",
  input_required: "TASK_STATE_INPUT_REQUIRED",
  auth_required: "TASK_STATE_AUTH_REQUIRED",
  failed: "TASK_STATE_FAILED",
  timeout: "TASK_STATE_FAILED",
  exhausted: "TASK_STATE_FAILED",
  unavailable: "TASK_STATE_FAILED",
  canceled: "TASK_STATE_CANCELED",
};

/** Outcomes of a leg that are a failure of the run (the others are the task's own answer or a hand-over). */
const FAILED_OUTCOMES: ReadonlySet<RunOutcome> = new Set([
  "failed",
  "timeout",
  "output_limit",
  "exhausted",
  "unavailable",
]);

export class RunTrace {
  private constructor(private readonly span: Span | undefined) {}

  static readonly OFF = new RunTrace(undefined);

  /** Reads the run's stored trace context and starts its span (a child of the request's SERVER span). */
  static async start(ledger: RunLedger, entry: { shard: number; taskId: string; runId: string }): Promise<RunTrace> {
    if (!tracing()) return RunTrace.OFF;
    const carrier = await ledger.runTrace(entry.shard, entry.taskId).catch(() => null);
    const span = runtimeTracer().startSpan(
      "a2a.run",
      {
        kind: SpanKind.CONSUMER,
        attributes: { [A.ATTR_A2A_TASK_ID]: entry.taskId, [A.ATTR_A2A_RUN_ID]: entry.runId },
      },
      contextFromCarrier(carrier),
    );
    return new RunTrace(span);
  }

  /** Runs `work` in a child span of the run (active while it runs, so that spans made inside nest under it). */
  async step<T>(name: string, work: () => Promise<T>, attributes: Record<string, string | number> = {}): Promise<T> {
    if (this.span === undefined) return await work();
    return await inSpan(name, { attributes }, work, contextOf(this.span));
  }

  /** The claim, as a child span; the run span learns what it decided. */
  async claim<T extends Claim | ClaimRefusal>(work: () => Promise<T>): Promise<T> {
    const claim = await this.step("a2a.claim", work);
    this.claimed(claim);
    return claim;
  }

  /** The leg's final transition (the task's last state of the leg written, or the run handed back). */
  transition<T>(work: () => Promise<T>): Promise<T> {
    return this.step("a2a.transition", work);
  }

  /** The handler leg: `invoke_agent <profile>`, as the GenAI conventions name an agent's invocation. */
  leg<T>(profile: string, work: () => Promise<T>): Promise<T> {
    return this.step(`invoke_agent ${profile}`, work, {
      [A.ATTR_GEN_AI_OPERATION_NAME]: "invoke_agent",
      [A.ATTR_GEN_AI_AGENT_NAME]: profile,
    });
  }

  /** What the claim decided: the attempt and profile, or why the entry was not run. */
  private claimed(claim: Claim | ClaimRefusal): void {
    if (this.span === undefined) return;
    if (typeof claim === "string") {
      this.span.setAttribute(A.ATTR_A2A_CLAIM_RESULT, claim);
      return;
    }
    this.span.setAttributes({
      [A.ATTR_A2A_CLAIM_RESULT]: "claimed",
      [A.ATTR_A2A_RUN_ATTEMPT]: claim.tries,
      [A.ATTR_GEN_AI_AGENT_NAME]: claim.profile,
    });
  }

  /** How the leg ended (the run span's `a2a.run.outcome`; a failure marks it failed). */
  outcome(outcome: RunOutcome): void {
    if (this.span === undefined) return;
    this.span.setAttribute(A.ATTR_A2A_RUN_OUTCOME, outcome);
    const state = OUTCOME_STATES[outcome];
    if (state !== undefined) this.span.setAttribute(A.ATTR_A2A_TASK_STATE, state);
    if (FAILED_OUTCOMES.has(outcome)) failSpan(this.span, outcome);
  }

  end(): void {
    this.span?.end();
  }
}

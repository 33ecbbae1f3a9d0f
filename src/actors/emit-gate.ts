// The output gate: every piece of a handler's output (text deltas, artifacts, progress, and the closing status with an
// interrupt's question or a failure's message) passes through one OutputSink before it reaches the journal.
// createOutputSink picks the sink: the full-text gate (GuardedSink), the after-the-fact check, or the plain journal.
import { type Profile, requiresFullTextCheck } from "../config/index.ts";
import type { Guardrail } from "../guardrail/index.ts";
import type { Logger } from "../log.ts";
import type { Artifact } from "../protocol/index.ts";
import { CheckedSink } from "./checked-sink.ts";
import { GuardedSink } from "./guarded-sink.ts";
import type { ArtifactChunk, HandlerResult } from "./handlers/handler-api.ts";
import type { RunWriter } from "./run-writer.ts";

/** Where a run's output goes, in call order. */
export interface OutputSink {
  text(delta: string): Promise<void>;
  artifact(artifact: Artifact, chunk?: ArtifactChunk): Promise<void>;
  progress(message: string, metadata?: Record<string, unknown>): Promise<void>;
  /**
   * Called once, after the handler returned normally: flushes what is held, closes the open text artifact, and writes
   * the leg's closing status (COMPLETED, or INPUT_REQUIRED/AUTH_REQUIRED with the handler's question). A sink that
   * refuses the output throws a HandlerFailure instead: the task then fails with that message and without the held
   * output. Never called after a cancel or a failure.
   */
  finish(result: HandlerResult): Promise<void>;
  /**
   * The status message a failed leg shows for a HandlerFailure's `message`: the message itself, or, from a sink that
   * holds content back, a generic one when the message does not pass the check. Called instead of finish.
   */
  failureMessage(message: string): Promise<string>;
}

/**
 * The writes a sink makes: RunWriter in production, a recorder in unit tests. `room`, where present, resolves when the
 * target can take more streamed text (see RunWriter.room); without it a text delta waits for the previous one's write.
 */
export type OutputTarget = Pick<RunWriter, "artifact" | "status"> & Partial<Pick<RunWriter, "room">>;

/** Name of the artifact that collects a leg's text deltas. */
export const TEXT_ARTIFACT_NAME = "response";

/**
 * Settles as `first` and then `second` do. Both are writes already asked for: when `first` rejects (a lost lease, the
 * task's size limit), `second` rejects too, and is marked handled here, since its error reaches the caller as
 * `first`'s (an unhandled rejection ends the process).
 */
function after(first: Promise<void>, second: Promise<void>): Promise<void> {
  second.catch(() => {});
  return first.then(() => second);
}

/**
 * Writes output straight to the journal. Text deltas form one artifact per leg: the first chunk without `append`
 * (so a retried leg replaces its earlier partial text), later chunks with `append: true`, and the final one with
 * `lastChunk: true`. To mark the final chunk, the newest delta is held until the next one arrives or the leg ends.
 * A delta resolves once the writer has room for it, not once it is written: deltas asked for while a write is in
 * flight share the next one (a lost lease aborts the run, which the next emit sees).
 */
export class JournalSink implements OutputSink {
  private held: string | undefined;
  private started = false;

  constructor(
    private readonly writer: OutputTarget,
    private readonly artifactId: string,
  ) {}

  text(delta: string): Promise<void> {
    if (delta === "") return Promise.resolve();
    const previous = this.flushHeld(false);
    this.held = delta;
    if (!this.writer.room) return previous;
    previous.catch(() => {});
    return this.writer.room();
  }

  artifact(artifact: Artifact, chunk?: ArtifactChunk): Promise<void> {
    const previous = this.flushHeld(false);
    const lastChunk = chunk?.lastChunk ?? true;
    const written = this.writer.artifact(
      artifact,
      chunk?.append === true ? { append: true, lastChunk } : { lastChunk },
    );
    return after(previous, written);
  }

  progress(message: string, metadata?: Record<string, unknown>): Promise<void> {
    const previous = this.flushHeld(false);
    const written = this.writer.status("TASK_STATE_WORKING", { text: message, metadata });
    return after(previous, written);
  }

  finish(result: HandlerResult): Promise<void> {
    const closed =
      this.held !== undefined ? this.flushHeld(true) : this.started ? this.chunk("", true) : Promise.resolve();
    const status =
      result.state === "TASK_STATE_COMPLETED"
        ? this.writer.status(result.state)
        : this.writer.status(result.state, { text: result.message, history: true });
    return after(closed, status);
  }

  failureMessage(message: string): Promise<string> {
    return Promise.resolve(message);
  }

  private flushHeld(last: boolean): Promise<void> {
    const held = this.held;
    if (held === undefined) return Promise.resolve();
    this.held = undefined;
    return this.chunk(held, last);
  }

  private chunk(text: string, last: boolean): Promise<void> {
    const append = this.started;
    this.started = true;
    const artifact: Artifact = { artifactId: this.artifactId, name: TEXT_ARTIFACT_NAME, parts: [{ text }] };
    return this.writer.artifact(artifact, { append, lastChunk: last });
  }
}

export interface OutputSinkOptions {
  readonly profile: Profile;
  /** The id of this leg's text artifact. */
  readonly artifactId: string;
  /** The profile's composed output guardrail (see profileGuardrails); undefined when it configures none. */
  readonly guardrail?: Guardrail | undefined;
  /** The run's abort signal: a sink that holds content drops it when the signal fires. */
  readonly signal?: AbortSignal | undefined;
  readonly logger?: Logger | undefined;
}

/**
 * The one place a run's output sink is made. When the profile requires the full-text check (requiresFullTextCheck),
 * a GuardedSink holds all content until the guardrail passed the whole of it; otherwise content goes to the journal
 * as it comes, and a configured guardrail still judges the whole output at the end (CheckedSink).
 */
export function createOutputSink(writer: OutputTarget, options: OutputSinkOptions): OutputSink {
  const { profile, artifactId, guardrail, logger } = options;
  const signal = options.signal ?? new AbortController().signal;
  if (requiresFullTextCheck(profile)) {
    const textArtifact = { artifactId, name: TEXT_ARTIFACT_NAME };
    return new GuardedSink(writer, { profile, textArtifact, guardrail, signal, logger });
  }
  const journal = new JournalSink(writer, artifactId);
  return guardrail ? new CheckedSink(journal, { profile, guardrail, signal, logger }) : journal;
}

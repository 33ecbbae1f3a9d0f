// The full-text gate: holds a leg's text, artifacts and closing question in the actor, writes only progress counts,
// and once the guardrail passed the whole output, writes each artifact in one event. Whatever ends the leg otherwise
// (a failed check, a handler failure, a cancel, a drain, a lost lease) leaves the held output unwritten. Text past the
// profile's guardrails.maxLength is refused as it comes (see TextLengthLimit), so a held output never grows past it.
import type { Profile } from "../config/index.ts";
import type { GuardedOutput, Guardrail } from "../guardrail/index.ts";
import type { Logger } from "../log.ts";
import type { Artifact } from "../protocol/index.ts";
import type { OutputSink, OutputTarget } from "./emit-gate.ts";
import type { ArtifactChunk, HandlerResult } from "./handlers/handler-api.ts";
import {
  CONTENT_CHECK_FAILED,
  ContentCheckFailure,
  chunked,
  judgeOutput,
  messageArtifact,
  TextLengthLimit,
} from "./output-check.ts";

/** The key of a progress event's metadata: `{ "a2a-runtime/progress": { characters, artifacts } }`. */
export const PROGRESS_METADATA_KEY = "a2a-runtime/progress";
/** Least time between two progress events of one leg, in ms. */
export const PROGRESS_INTERVAL_MS = 250;

export interface GuardedSinkOptions {
  readonly profile: Profile;
  /** The leg's text artifact: its id and name. */
  readonly textArtifact: { readonly artifactId: string; readonly name: string };
  /** The profile's guardrail; undefined (fullTextCheck "required" without guardrails) holds and releases unchecked. */
  readonly guardrail: Guardrail | undefined;
  /** The run's signal: once it fires, nothing held is ever written. */
  readonly signal: AbortSignal;
  readonly logger?: Logger | undefined;
  /** Least time between two progress events, ms (default PROGRESS_INTERVAL_MS). */
  readonly progressIntervalMs?: number | undefined;
}

/** The slot of the text artifact in the release order (no artifactId can collide with it: ids are strings). */
const TEXT_SLOT = Symbol("text");

/**
 * Holds all content of a leg until finish(). Meanwhile each emit leads to at most one `TASK_STATE_WORKING` status
 * event per progress interval (a trailing one when output arrives within the interval), carrying only counts:
 * `{ characters, artifacts }` produced so far. A handler's progress notes are never written, their text being content
 * too; they only lead to a progress event.
 */
export class GuardedSink implements OutputSink {
  private heldText = "";
  /** Counts the text; once it passed maxLength, every later emit and finish() fail with its refusal. */
  private readonly limit: TextLengthLimit;
  /** Held artifacts by id in the order first emitted; TEXT_SLOT marks where the text artifact goes. */
  private readonly held = new Map<string | typeof TEXT_SLOT, Artifact | undefined>();
  /** Held artifacts this sink copied, and extends in place as chunks arrive. */
  private readonly own = new WeakSet<Artifact>();
  private closed = false;
  private lastProgressAt = Number.NEGATIVE_INFINITY;
  private timer: ReturnType<typeof setTimeout> | undefined;
  private readonly intervalMs: number;

  constructor(
    private readonly writer: OutputTarget,
    private readonly o: GuardedSinkOptions,
  ) {
    this.intervalMs = o.progressIntervalMs ?? PROGRESS_INTERVAL_MS;
    this.limit = new TextLengthLimit(o.profile.guardrails.maxLength);
    if (o.signal.aborted) this.discard();
    else o.signal.addEventListener("abort", () => this.discard(), { once: true });
  }

  text(delta: string): Promise<void> {
    if (this.limit.refused) return Promise.reject(this.limit.refused);
    if (delta === "" || this.closed) return Promise.resolve();
    const refusal = this.limit.add(delta);
    if (refusal) return Promise.reject(this.refuse(refusal));
    if (!this.held.has(TEXT_SLOT)) this.held.set(TEXT_SLOT, undefined);
    this.heldText += delta;
    return this.activity();
  }

  artifact(artifact: Artifact, chunk?: ArtifactChunk): Promise<void> {
    if (this.limit.refused) return Promise.reject(this.limit.refused);
    if (this.closed) return Promise.resolve();
    this.held.set(artifact.artifactId, chunked(this.held.get(artifact.artifactId), artifact, chunk, this.own));
    return this.activity();
  }

  progress(_message: string, _metadata?: Record<string, unknown>): Promise<void> {
    if (this.limit.refused) return Promise.reject(this.limit.refused);
    return this.closed ? Promise.resolve() : this.activity();
  }

  async finish(result: HandlerResult): Promise<void> {
    this.close();
    if (this.limit.refused) throw this.limit.refused;
    const question = result.state === "TASK_STATE_COMPLETED" ? undefined : result.message;
    const verdict = await judgeOutput(this.o.guardrail, this.output(question), this.o.profile, this.o.signal);
    if (this.o.signal.aborted) throw this.o.signal.reason;
    if (!verdict.pass) {
      this.o.logger?.warn(
        { reason: verdict.reason },
        "the output did not pass the content check; none of it is written",
      );
      throw new ContentCheckFailure(verdict.reason);
    }
    for (const [slot, artifact] of this.held) {
      const whole = slot === TEXT_SLOT ? this.textArtifact() : artifact;
      if (whole) await this.writer.artifact(whole, { lastChunk: true });
    }
    if (question === undefined) await this.writer.status("TASK_STATE_COMPLETED");
    else await this.writer.status(result.state, { text: question, history: true });
  }

  async failureMessage(message: string): Promise<string> {
    this.close();
    if (message === CONTENT_CHECK_FAILED) return message;
    const output = { text: "", artifacts: [messageArtifact(message)] };
    const verdict = await judgeOutput(this.o.guardrail, output, this.o.profile, this.o.signal);
    if (verdict.pass) return message;
    this.o.logger?.warn({ reason: verdict.reason }, "a failure message did not pass the content check; not shown");
    return CONTENT_CHECK_FAILED;
  }

  /** What the guardrail judges: the text, the held artifacts, and an interrupt's question as one more artifact. */
  private output(question: string | undefined): GuardedOutput {
    const artifacts: Artifact[] = [];
    for (const artifact of this.held.values()) if (artifact) artifacts.push(artifact);
    if (question !== undefined) artifacts.push(messageArtifact(question));
    return { text: this.heldText, artifacts };
  }

  private textArtifact(): Artifact | undefined {
    if (this.heldText === "") return undefined;
    const { artifactId, name } = this.o.textArtifact;
    return { artifactId, name, parts: [{ text: this.heldText }] };
  }

  /** Writes a progress event now when the interval has passed, else makes sure one follows when it does. */
  private activity(): Promise<void> {
    const wait = this.lastProgressAt + this.intervalMs - performance.now();
    if (wait <= 0) {
      clearTimeout(this.timer); // a busy event loop may run this emit before the trailing timer: that one is moot
      this.timer = undefined;
      return this.writeProgress();
    }
    this.timer ??= setTimeout(() => {
      this.timer = undefined;
      // A failed write has already aborted the run (lost lease) or will show at the next write.
      if (!this.closed) this.activity().catch(() => {});
    }, wait);
    return Promise.resolve();
  }

  private writeProgress(): Promise<void> {
    this.lastProgressAt = performance.now();
    const counts = {
      characters: this.limit.characters,
      artifacts: this.held.size - (this.held.has(TEXT_SLOT) ? 1 : 0),
    };
    return this.writer.status("TASK_STATE_WORKING", { metadata: { [PROGRESS_METADATA_KEY]: counts } });
  }

  /** The text passed maxLength: what is held is dropped, and the leg can only fail (with CONTENT_CHECK_FAILED). */
  private refuse(refusal: ContentCheckFailure): ContentCheckFailure {
    this.discard();
    this.o.logger?.warn({ reason: refusal.reason }, "the output passed guardrails.maxLength; none of it is written");
    return refusal;
  }

  /** The run was aborted: what is held is dropped, never to be written. */
  private discard(): void {
    this.close();
    this.held.clear();
    this.heldText = "";
  }

  /** No more progress and no more holding: from here on only finish() may write, and only after the check. */
  private close(): void {
    this.closed = true;
    clearTimeout(this.timer);
    this.timer = undefined;
  }
}

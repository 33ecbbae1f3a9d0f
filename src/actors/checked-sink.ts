// The output check of a profile with guardrails and `fullTextCheck: off`: content streams through the journal sink
// as it comes, and the guardrail judges the whole output at the end. A failure can no longer recall what was sent;
// it still keeps the closing text chunk and the interrupt's question unwritten and fails the task. Text past the
// profile's guardrails.maxLength is refused as it comes (see TextLengthLimit): none of it is streamed.
import type { Profile } from "../config/index.ts";
import type { Guardrail } from "../guardrail/index.ts";
import type { Logger } from "../log.ts";
import type { Artifact } from "../protocol/index.ts";
import type { OutputSink } from "./emit-gate.ts";
import type { ArtifactChunk, HandlerResult } from "./handlers/handler-api.ts";
import { ContentCheckFailure, chunked, judgeOutput, messageArtifact, TextLengthLimit } from "./output-check.ts";

export interface CheckedSinkOptions {
  readonly profile: Profile;
  readonly guardrail: Guardrail;
  readonly signal: AbortSignal;
  readonly logger?: Logger | undefined;
}

/** Passes every emit on to `inner` at once and remembers it, to judge the whole output before `inner.finish`. */
export class CheckedSink implements OutputSink {
  private streamed = "";
  private readonly artifacts = new Map<string, Artifact>();
  /** Remembered artifacts this sink copied, and extends in place as chunks arrive. */
  private readonly own = new WeakSet<Artifact>();
  /** Counts the text; once it passed maxLength, every later emit and finish() fail with its refusal. */
  private readonly limit: TextLengthLimit;

  constructor(
    private readonly inner: OutputSink,
    private readonly o: CheckedSinkOptions,
  ) {
    this.limit = new TextLengthLimit(o.profile.guardrails.maxLength);
  }

  text(delta: string): Promise<void> {
    if (this.limit.refused) return Promise.reject(this.limit.refused);
    const refusal = this.limit.add(delta);
    if (refusal) {
      this.o.logger?.warn({ reason: refusal.reason }, "the output passed guardrails.maxLength (fullTextCheck off)");
      return Promise.reject(refusal);
    }
    this.streamed += delta;
    return this.inner.text(delta);
  }

  artifact(artifact: Artifact, chunk?: ArtifactChunk): Promise<void> {
    if (this.limit.refused) return Promise.reject(this.limit.refused);
    const earlier = this.artifacts.get(artifact.artifactId);
    this.artifacts.set(artifact.artifactId, chunked(earlier, artifact, chunk, this.own));
    return this.inner.artifact(artifact, chunk);
  }

  progress(message: string, metadata?: Record<string, unknown>): Promise<void> {
    if (this.limit.refused) return Promise.reject(this.limit.refused);
    return this.inner.progress(message, metadata);
  }

  async finish(result: HandlerResult): Promise<void> {
    if (this.limit.refused) throw this.limit.refused;
    const artifacts = [...this.artifacts.values()];
    if (result.state !== "TASK_STATE_COMPLETED") artifacts.push(messageArtifact(result.message));
    const output = { text: this.streamed, artifacts };
    const verdict = await judgeOutput(this.o.guardrail, output, this.o.profile, this.o.signal);
    if (this.o.signal.aborted) throw this.o.signal.reason;
    if (!verdict.pass) {
      this.o.logger?.warn({ reason: verdict.reason }, "the output did not pass the content check (fullTextCheck off)");
      throw new ContentCheckFailure(verdict.reason);
    }
    await this.inner.finish(result);
  }

  failureMessage(message: string): Promise<string> {
    return this.inner.failureMessage(message);
  }
}

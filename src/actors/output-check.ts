// Runs a profile's output guardrail for the actors' output sinks, fail-closed, and builds every profile's guardrail
// once when an actor or a sweep starts. A verdict's reason goes to the log only; the client sees CONTENT_CHECK_FAILED.
import type { Config, Profile } from "../config/index.ts";
import {
  fail,
  type GuardedOutput,
  type Guardrail,
  type GuardrailDeps,
  guardrailsForProfile,
  PASS,
  type Verdict,
} from "../guardrail/index.ts";
import { appendArtifact } from "../journal/index.ts";
import type { Artifact } from "../protocol/index.ts";
import { type ArtifactChunk, HandlerFailure } from "./handlers/handler-api.ts";

/** The status message of a task whose output did not pass the check (the reason stays in the worker's log). */
export const CONTENT_CHECK_FAILED = "The answer did not pass the content check.";

/** The output was refused: the leg fails with CONTENT_CHECK_FAILED and none of the output is written. */
export class ContentCheckFailure extends HandlerFailure {
  constructor(readonly reason: string) {
    super(CONTENT_CHECK_FAILED);
  }
}

/**
 * Each profile's composed guardrail by profile name; profiles that configure none are absent.
 * Throws GuardrailConfigError (naming the profile) when one cannot be built, so a worker refuses to start.
 */
export function profileGuardrails(config: Config, deps: GuardrailDeps): ReadonlyMap<string, Guardrail> {
  const built = new Map<string, Guardrail>();
  for (const profile of config.profiles) {
    const guardrail = guardrailsForProfile(profile, deps);
    if (guardrail) built.set(profile.name, guardrail);
  }
  return built;
}

/** The pseudo-artifact that carries an interrupt's question or a failure message into the check (never written). */
export function messageArtifact(text: string): Artifact {
  return { artifactId: "status-message", parts: [{ text }] };
}

/** Whether `output` holds anything that would leave: a check of nothing is skipped. */
export function isEmptyOutput(output: GuardedOutput): boolean {
  return output.text === "" && output.artifacts.length === 0;
}

/**
 * The guardrail's verdict on `output`; passes without a guardrail. Fail-closed: a check that throws, rejects or
 * answers anything but `{ pass: true }` fails. Timeouts are the guardrail's own (guardrailsForProfile composes them).
 */
export async function judgeOutput(
  guardrail: Guardrail | undefined,
  output: GuardedOutput,
  profile: Profile,
  signal: AbortSignal,
): Promise<Verdict> {
  if (!guardrail || isEmptyOutput(output)) return PASS;
  let answer: unknown;
  try {
    answer = await guardrail.check(output, { profile, signal });
  } catch (error) {
    return fail(`${guardrail.name}: threw: ${error instanceof Error ? error.name : "a non-Error value"}`);
  }
  if (typeof answer === "object" && answer !== null && (answer as { pass?: unknown }).pass === true) return PASS;
  const reason = (answer as { reason?: unknown } | null | undefined)?.reason;
  return fail(typeof reason === "string" && reason !== "" ? reason : `${guardrail.name}: answered no verdict`);
}

/**
 * Counts a leg's text as the maxLength guardrail does (Unicode code points) while it is emitted. Text only grows within
 * a leg, so text past `guardrails.maxLength` fails the check whatever comes after it: the sinks refuse it at once
 * instead of holding or streaming it to the end. Artifacts are left to the check itself (a later event of the same
 * artifact may replace a long one with a short one).
 */
export class TextLengthLimit {
  /** Code points of the text counted so far. */
  characters = 0;
  /** Set once the text passed the limit: the leg can only fail with it. */
  refused: ContentCheckFailure | undefined;

  /** `maxLength` 0: no limit. */
  constructor(private readonly maxLength: number) {}

  /** Counts `delta`; the refusal once this delta takes the text past the limit (its reason is for the log). */
  add(delta: string): ContentCheckFailure | undefined {
    for (const _ of delta) this.characters += 1;
    if (this.maxLength <= 0 || this.characters <= this.maxLength) return undefined;
    this.refused = new ContentCheckFailure(
      `max-length: the text passed ${this.maxLength} characters while it was produced`,
    );
    return this.refused;
  }
}

/**
 * The artifact a held copy becomes after one more event of its id: replaced, or with `append` the parts added (in
 * place once the holder owns the copy: `own` is the holder's, see appendArtifact).
 */
export function chunked(
  earlier: Artifact | undefined,
  artifact: Artifact,
  chunk: ArtifactChunk | undefined,
  own: WeakSet<Artifact>,
): Artifact {
  if (!earlier || chunk?.append !== true) return artifact;
  return appendArtifact(earlier, artifact, own);
}

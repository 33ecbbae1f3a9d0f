// The guardrail contract: a check of a run's complete output that answers pass or fail with a reason for the log.
// Pure types and helpers; no check lives here and nothing here sends a verdict's reason to a client.
import type { Profile } from "../config/index.ts";
import type { Artifact } from "../protocol/index.ts";

/**
 * The complete output of one run, judged once it is whole.
 * `text` is the run's streamed text (all deltas joined); `artifacts` are the artifacts the run produced besides it.
 * Put each piece of content in one place only: the maximum length counts `text` plus the artifacts' text parts.
 */
export type GuardedOutput = { text: string; artifacts: Artifact[] };

/** What a check may use besides the output. `signal` aborts the check; `fetch` replaces the global one (tests). */
export type GuardrailContext = { profile: Profile; signal: AbortSignal; fetch?: typeof fetch };

/** A check's answer. `reason` is meant for the log, never for the client, and never quotes the output's content. */
export type Verdict = { pass: true } | { pass: false; reason: string };

/**
 * One output check. `check` resolves to a verdict; a check that throws, rejects or does not answer in time counts as
 * failed wherever checks are composed (see composeGuardrails), never as passed.
 */
export interface Guardrail {
  readonly name: string;
  check(output: GuardedOutput, context: GuardrailContext): Promise<Verdict>;
}

/** A guardrail cannot be built from the profile (an unsupported output schema, a missing API key variable). */
export class GuardrailConfigError extends Error {
  override readonly name = "GuardrailConfigError";
}

export const PASS: Verdict = Object.freeze({ pass: true });

export function fail(reason: string): Verdict {
  return { pass: false, reason };
}

/**
 * The text that text-based checks read: `text`, then per artifact part its text, its URL, or the JSON of its data,
 * joined by newlines so that no match spans two parts. Raw (base64) parts are not read.
 */
export function guardedText(output: GuardedOutput): string {
  const pieces = [output.text];
  for (const artifact of output.artifacts) {
    for (const part of artifact.parts) {
      if (part.text !== undefined) pieces.push(part.text);
      else if (part.url !== undefined) pieces.push(part.url);
      else if ("data" in part) pieces.push(JSON.stringify(part.data) ?? "null");
    }
  }
  return pieces.join("\n");
}

/** Unicode code points (not UTF-16 units) of `text` plus the artifacts' text parts: what the maximum length counts. */
export function outputLength(output: GuardedOutput): number {
  let length = codePoints(output.text);
  for (const artifact of output.artifacts) {
    for (const part of artifact.parts) if (part.text !== undefined) length += codePoints(part.text);
  }
  return length;
}

function codePoints(text: string): number {
  let count = 0;
  for (const _ of text) count += 1;
  return count;
}

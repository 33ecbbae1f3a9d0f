// Shared builders for the guardrail tests: a profile with chosen guardrails, outputs, and a check context.
// No network: nothing here fetches; moderation is tested in test/integration/guardrail.
import { expect } from "bun:test";
import { type GuardrailsConfig, loadConfig, type Profile } from "../../../src/config/index.ts";
import type { GuardedOutput, Guardrail, GuardrailContext, Verdict } from "../../../src/guardrail/index.ts";
import type { Artifact, Part } from "../../../src/protocol/index.ts";

const BASE_PROFILE: Profile = loadConfig({ env: {} }).profiles[0] as Profile;

/** The default echo profile with `guardrails` merged over its defaults. */
export function profileWith(guardrails: Partial<GuardrailsConfig> = {}, extra: Partial<Profile> = {}): Profile {
  return { ...BASE_PROFILE, ...extra, guardrails: { ...BASE_PROFILE.guardrails, ...guardrails } };
}

export function textOutput(text: string, ...artifacts: Artifact[]): GuardedOutput {
  return { text, artifacts };
}

let artifactCount = 0;
export function artifact(...parts: Part[]): Artifact {
  artifactCount += 1;
  return { artifactId: `artifact-${artifactCount}`, parts };
}

export function context(
  options: { signal?: AbortSignal; fetch?: typeof fetch; profile?: Profile } = {},
): GuardrailContext {
  return {
    profile: options.profile ?? BASE_PROFILE,
    signal: options.signal ?? new AbortController().signal,
    ...(options.fetch === undefined ? {} : { fetch: options.fetch }),
  };
}

export async function verdict(guardrail: Guardrail, output: GuardedOutput | string): Promise<Verdict> {
  return guardrail.check(typeof output === "string" ? textOutput(output) : output, context());
}

/** The failing reason; fails the test when the verdict passes. */
export function reasonOf(result: Verdict): string {
  expect(result.pass).toBe(false);
  return result.pass ? "" : result.reason;
}

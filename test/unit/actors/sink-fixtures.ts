// Shared builders for the output-sink tests: a profile with chosen guardrail settings, and a recorder of the writes a
// sink makes (artifact events and status changes, with their options) in call order.
import type { OutputTarget } from "../../../src/actors/emit-gate.ts";
import { type GuardrailsConfig, loadConfig, type Profile } from "../../../src/config/index.ts";
import type { Artifact } from "../../../src/protocol/index.ts";

const BASE_PROFILE = loadConfig({ env: {} }).profiles[0] as Profile;

/** The default echo profile with `extra` over it and `guardrails` merged over its defaults. */
export function profileOf(
  extra: Omit<Partial<Profile>, "guardrails"> & { guardrails?: Partial<GuardrailsConfig> } = {},
): Profile {
  return { ...BASE_PROFILE, ...extra, guardrails: { ...BASE_PROFILE.guardrails, ...extra.guardrails } };
}

export type Write =
  | { artifact: Artifact; append?: boolean; lastChunk?: boolean }
  | { status: string; text?: string; history?: boolean; metadata?: Record<string, unknown> };

export function recorder(): { target: OutputTarget; writes: Write[] } {
  const writes: Write[] = [];
  const target: OutputTarget = {
    async artifact(artifact, options = {}) {
      writes.push({ artifact, ...options });
    },
    async status(state, options = {}) {
      writes.push({
        status: state,
        ...(options.text === undefined ? {} : { text: options.text }),
        ...(options.history ? { history: true } : {}),
        ...(options.metadata ? { metadata: options.metadata } : {}),
      });
    },
  };
  return { target, writes };
}

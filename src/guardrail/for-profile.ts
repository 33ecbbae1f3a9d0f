// Builds the output check a profile configures: its built-in guardrails composed under guardrails.timeoutMs.
// Reads the environment only through the `env` it is given (the entry file passes process.env).
import type { Profile } from "../config/index.ts";
import { composeGuardrails } from "./compose.ts";
import { denyPatternsGuardrail } from "./deny-patterns.ts";
import { type Guardrail, GuardrailConfigError } from "./guardrail.ts";
import { maxLengthGuardrail } from "./max-length.ts";
import { moderationGuardrail } from "./moderation.ts";
import { outputSchemaGuardrail } from "./output-schema.ts";
import { personalDataGuardrail } from "./personal-data.ts";

export type GuardrailDeps = {
  /** The fetch the moderation check uses when the check's context carries none. */
  fetch?: typeof fetch;
  /** Where the moderation API key is read, by the variable name in guardrails.moderation.apiKeyEnv. */
  env?: Record<string, string | undefined>;
};

/**
 * The profile's output check, or undefined when it configures none (no deny pattern, personalData off, maxLength 0,
 * no moderation, no outputSchema). Built-ins run in the order deny-patterns, personal-data, max-length,
 * output-schema, moderation, in parallel, each within guardrails.timeoutMs.
 * Throws GuardrailConfigError when a deny pattern does not compile, the outputSchema uses an unsupported keyword, or
 * moderation.apiKeyEnv names a variable that is unset or empty in `env`: better to refuse to start than to fail
 * every task.
 */
export function guardrailsForProfile(profile: Profile, deps: GuardrailDeps = {}): Guardrail | undefined {
  try {
    return build(profile, deps);
  } catch (error) {
    if (!(error instanceof GuardrailConfigError)) throw error;
    throw new GuardrailConfigError(`profile "${profile.name}": ${error.message}`, { cause: error });
  }
}

function build(profile: Profile, deps: GuardrailDeps): Guardrail | undefined {
  const { denyPatterns, personalData, maxLength, moderation, timeoutMs } = profile.guardrails;
  const built: Guardrail[] = [];
  if (denyPatterns.length > 0) built.push(denyPatternsGuardrail(denyPatterns));
  if (personalData) built.push(personalDataGuardrail());
  if (maxLength > 0) built.push(maxLengthGuardrail(maxLength));
  if (profile.outputSchema !== undefined) built.push(outputSchemaGuardrail(profile.outputSchema));
  if (moderation !== undefined) {
    const apiKey = moderationApiKey(moderation.apiKeyEnv, deps.env ?? {});
    built.push(
      moderationGuardrail(moderation, {
        ...(apiKey === undefined ? {} : { apiKey }),
        ...(deps.fetch === undefined ? {} : { fetch: deps.fetch }),
      }),
    );
  }
  return built.length === 0 ? undefined : composeGuardrails(built, { timeoutMs });
}

function moderationApiKey(variable: string | undefined, env: Record<string, string | undefined>): string | undefined {
  if (variable === undefined) return undefined;
  const value = env[variable];
  if (value === undefined || value === "") {
    throw new GuardrailConfigError(`guardrails.moderation.apiKeyEnv names ${variable}, which is not set`);
  }
  return value;
}

// The guardrail area: checks of a run's complete output before any of it leaves. Other areas import only this.
// It imports only the config and the journal's schema types; the gate that holds content back lives in the actors.
export { type ComposeOptions, composeGuardrails } from "./compose.ts";
export { denyPatternsGuardrail, literalPatternRegExp } from "./deny-patterns.ts";
export { type GuardrailDeps, guardrailsForProfile } from "./for-profile.ts";
export {
  fail,
  type GuardedOutput,
  type Guardrail,
  GuardrailConfigError,
  type GuardrailContext,
  guardedText,
  outputLength,
  PASS,
  type Verdict,
} from "./guardrail.ts";
export { maxLengthGuardrail } from "./max-length.ts";
export { type ModerationDeps, moderationGuardrail } from "./moderation.ts";
export { outputSchemaGuardrail } from "./output-schema.ts";
export { containsCardNumber, containsIban, ibanValid, luhnValid } from "./payment-numbers.ts";
export {
  findPersonalData,
  PERSONAL_DATA_KINDS,
  type PersonalDataKind,
  personalDataGuardrail,
} from "./personal-data.ts";
export { containsPhoneNumber } from "./phone-numbers.ts";

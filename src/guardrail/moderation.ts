// The moderation guardrail: asks an OpenAI-compatible POST <baseUrl>/v1/moderations whether the output is flagged.
// Fail-closed: a flagged result, a non-2xx answer, a network error, a malformed body or its own timeout all fail.
import { type Static, Type } from "@sinclair/typebox";
import { TypeCompiler } from "@sinclair/typebox/compiler";
import type { ModerationConfig } from "../config/index.ts";
import { fail, type Guardrail, guardedText, PASS, type Verdict } from "./guardrail.ts";

/** The part of an OpenAI moderation answer that is read; anything else in it is ignored. */
const ModerationResponseSchema = Type.Object({
  results: Type.Array(
    Type.Object({
      flagged: Type.Boolean(),
      categories: Type.Optional(Type.Record(Type.String(), Type.Unknown())),
    }),
    { minItems: 1 },
  ),
});
type ModerationResponse = Static<typeof ModerationResponseSchema>;
const RESPONSE = TypeCompiler.Compile(ModerationResponseSchema);

export type ModerationDeps = {
  /** The API key, sent as `Authorization: Bearer <key>`; never logged and never part of a reason. */
  apiKey?: string;
  /** Used when the check's context carries no fetch; else the global fetch. */
  fetch?: typeof fetch;
};

/**
 * Sends the output's text (see guardedText) as `{ model?, input }` and passes only when every result has
 * `flagged: false`. A flagged result fails with its flagged category names. `config.timeoutMs` bounds the whole
 * exchange, body included; the check's signal aborts it too.
 */
export function moderationGuardrail(config: ModerationConfig, deps: ModerationDeps = {}): Guardrail {
  const url = `${config.baseUrl.replace(/\/+$/, "")}/v1/moderations`;
  const headers: Record<string, string> = { "content-type": "application/json", accept: "application/json" };
  if (deps.apiKey !== undefined) headers.authorization = `Bearer ${deps.apiKey}`;
  return {
    name: "moderation",
    check: async (output, context) => {
      const doFetch = context.fetch ?? deps.fetch ?? fetch;
      const body = JSON.stringify({
        ...(config.model === undefined ? {} : { model: config.model }),
        input: guardedText(output),
      });
      const timeout = AbortSignal.timeout(config.timeoutMs);
      const signal = AbortSignal.any([context.signal, timeout]);
      let answer: unknown;
      try {
        const response = await doFetch(url, { method: "POST", headers, body, signal, redirect: "error" });
        if (!response.ok) {
          await response.body?.cancel().catch(() => undefined);
          return fail(`moderation endpoint answered HTTP ${response.status}`);
        }
        answer = await response.json();
      } catch (error) {
        if (timeout.aborted) return fail(`moderation timed out after ${config.timeoutMs} ms`);
        if (context.signal.aborted) return fail("moderation aborted");
        return fail(`moderation request failed: ${errorName(error)}`);
      }
      return verdictOf(answer);
    },
  };
}

function verdictOf(answer: unknown): Verdict {
  if (!RESPONSE.Check(answer)) return fail("moderation endpoint answered a malformed body");
  const flagged = (answer as ModerationResponse).results.filter((result) => result.flagged);
  if (flagged.length === 0) return PASS;
  const categories = new Set<string>();
  for (const result of flagged) {
    for (const [name, value] of Object.entries(result.categories ?? {})) if (value === true) categories.add(name);
  }
  const named = categories.size === 0 ? "no category named" : [...categories].sort().join(", ");
  return fail(`moderation flagged the output (${named})`);
}

/** The error's class and message, which name no header: a failed fetch never echoes the Authorization value. */
function errorName(error: unknown): string {
  if (error instanceof Error) return `${error.name}: ${error.message}`;
  return "a non-Error value";
}

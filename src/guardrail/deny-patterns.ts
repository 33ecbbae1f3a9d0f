// The deny-pattern guardrail: refuses output containing a configured literal word or matching a regular expression.
// Patterns are read by the config's denyPatternRegExp, exactly as config validation reads them.
import { denyPatternRegExp } from "../config/index.ts";
import { fail, type Guardrail, GuardrailConfigError, guardedText, PASS } from "./guardrail.ts";

/** Not a letter, digit or underscore in any script: what delimits a literal word. */
const BEFORE_WORD = String.raw`(?<![\p{L}\p{N}\p{M}_])`;
const AFTER_WORD = String.raw`(?![\p{L}\p{N}\p{M}_])`;

type CompiledPattern = { regExp: RegExp; kind: "literal" | "regular expression" };

/**
 * A literal pattern matches case-insensitively as a whole word (or words): "secret" matches "Secret!" but not
 * "secretary"; any run of whitespace in it matches any run of whitespace in the text.
 * A "/body/flags" pattern is a regular expression, tested with exactly its own flags.
 */
export function literalPatternRegExp(literal: string): RegExp {
  const words = literal.trim().split(/\s+/u).map(escapeRegExp);
  return new RegExp(`${BEFORE_WORD}${words.join(String.raw`\s+`)}${AFTER_WORD}`, "iu");
}

/**
 * Refuses output whose text (see guardedText) contains one of `patterns`. Throws GuardrailConfigError when a
 * pattern does not compile. The reason names the pattern's index and kind, never the matched text.
 */
export function denyPatternsGuardrail(patterns: readonly string[]): Guardrail {
  const compiled = patterns.map(compile);
  return {
    name: "deny-patterns",
    check: async (output) => {
      const text = guardedText(output);
      const index = compiled.findIndex(({ regExp }) => regExp.test(text));
      if (index < 0) return PASS;
      return fail(`matched deny pattern ${index} (${compiled[index]?.kind})`);
    },
  };
}

function compile(pattern: string, index: number): CompiledPattern {
  let regExp: RegExp | undefined;
  try {
    regExp = denyPatternRegExp(pattern);
  } catch (error) {
    throw new GuardrailConfigError(`deny pattern ${index} is not a valid regular expression`, { cause: error });
  }
  if (regExp !== undefined) return { regExp, kind: "regular expression" };
  if (pattern.trim() === "") throw new GuardrailConfigError(`deny pattern ${index} is blank`);
  return { regExp: literalPatternRegExp(pattern), kind: "literal" };
}

function escapeRegExp(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\/]/g, "\\$&");
}

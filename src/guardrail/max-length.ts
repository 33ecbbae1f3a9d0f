// The maximum-length guardrail: refuses output longer than a configured number of characters.
// Counts Unicode code points of the run's text and its artifacts' text parts (see outputLength); data is not counted.
import { fail, type Guardrail, GuardrailConfigError, outputLength, PASS } from "./guardrail.ts";

/** Passes output of at most `maxLength` characters (code points); `maxLength` must be a positive integer. */
export function maxLengthGuardrail(maxLength: number): Guardrail {
  if (!Number.isSafeInteger(maxLength) || maxLength < 1) {
    throw new GuardrailConfigError(`maxLength must be a positive integer (got ${maxLength})`);
  }
  return {
    name: "max-length",
    check: async (output) => {
      const length = outputLength(output);
      return length <= maxLength ? PASS : fail(`output has ${length} characters, more than maxLength ${maxLength}`);
    },
  };
}

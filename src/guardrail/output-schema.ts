// The output-schema guardrail: every data part of every artifact must satisfy the profile's outputSchema.
// The schema is compiled once when the guardrail is built; text, URL and raw parts are not its concern.
import { compileJsonSchema } from "../config/index.ts";
import { fail, type Guardrail, GuardrailConfigError, PASS } from "./guardrail.ts";

/**
 * Refuses output with a data part that does not satisfy `schema`. Output without data parts passes.
 * Throws GuardrailConfigError when the schema does not compile.
 * The reason names the first failing part and the JSON Pointer of the first failing value, never the value itself:
 * `artifact 0 part 1: /items/2/price: must be number`.
 */
export function outputSchemaGuardrail(schema: Record<string, unknown>): Guardrail {
  let check: ReturnType<typeof compileJsonSchema>;
  try {
    check = compileJsonSchema(schema, 1);
  } catch (error) {
    throw new GuardrailConfigError(`outputSchema does not compile: ${(error as Error).message}`);
  }
  return {
    name: "output-schema",
    check: async (output) => {
      for (const [artifactIndex, artifact] of output.artifacts.entries()) {
        for (const [partIndex, part] of artifact.parts.entries()) {
          if (!("data" in part)) continue;
          const [first] = check(part.data);
          if (first) return fail(`artifact ${artifactIndex} part ${partIndex}: ${first.pointer}: ${first.message}`);
        }
      }
      return PASS;
    },
  };
}

// The output-schema guardrail: every data part of every artifact must satisfy the profile's outputSchema.
// The schema is compiled once when the guardrail is built; text, URL and raw parts are not its concern.
import { Kind } from "@sinclair/typebox";
import type { ValueError } from "@sinclair/typebox/errors";
import { fail, type Guardrail, PASS } from "./guardrail.ts";
import { compileJsonSchema, ENUM_KIND, ONE_OF_KIND } from "./json-schema.ts";

/**
 * Refuses output with a data part that does not satisfy `schema`. Output without data parts passes.
 * Throws GuardrailConfigError when the schema uses something compileJsonSchema does not support.
 * The reason names the first failing part and the JSON Pointer of the first failing value, never the value itself:
 * `artifact 0 part 1: /items/2/price: Expected number`.
 */
export function outputSchemaGuardrail(schema: Record<string, unknown>): Guardrail {
  const checker = compileJsonSchema(schema);
  return {
    name: "output-schema",
    check: async (output) => {
      for (const [artifactIndex, artifact] of output.artifacts.entries()) {
        for (const [partIndex, part] of artifact.parts.entries()) {
          if (!("data" in part) || checker.Check(part.data)) continue;
          const first = checker.Errors(part.data).First();
          const where = first === undefined || first.path === "" ? "/" : first.path;
          return fail(`artifact ${artifactIndex} part ${partIndex}: ${where}: ${describe(first)}`);
        }
      }
      return PASS;
    },
  };
}

function describe(error: ValueError | undefined): string {
  if (error === undefined) return "does not match the output schema";
  const kind: unknown = error.schema[Kind];
  if (kind === ENUM_KIND) return "Expected one of the allowed values (enum or const)";
  if (kind === ONE_OF_KIND) return "Expected exactly one oneOf schema to match";
  return error.message;
}

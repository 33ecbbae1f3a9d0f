// Profiles' input and output JSON Schemas, compiled once with Ajv (JSON Schema draft 2020-12 and draft-07 keywords).
// Used by config loading (a schema that does not compile is a start-up error), the gateway and the guardrails.
import type { ErrorObject, ValidateFunction } from "ajv";
import { Ajv2020 } from "ajv/dist/2020.js";
import draft07 from "ajv/dist/refs/json-schema-draft-07.json" with { type: "json" };

/** One failing value: a JSON Pointer into the checked value and what was expected (never the value itself). */
export interface SchemaViolation {
  pointer: string;
  message: string;
}

export type SchemaCheck = (value: unknown) => SchemaViolation[];

let ajv: Ajv2020 | undefined;

/** Made at the first schema: compiling its meta-schemas is a tenth of a process's start-up, and most have none. */
function compiler(): Ajv2020 {
  if (ajv === undefined) {
    ajv = new Ajv2020({ allErrors: true, strict: false, validateFormats: false });
    ajv.addMetaSchema(draft07);
  }
  return ajv;
}

function describe(error: ErrorObject): SchemaViolation {
  const pointer = error.instancePath === "" ? "/" : error.instancePath;
  if (error.keyword === "required") {
    const missing = (error.params as { missingProperty?: string }).missingProperty ?? "";
    return { pointer: `${error.instancePath}/${missing}`, message: "Required property" };
  }
  if (error.keyword === "additionalProperties") {
    const extra = (error.params as { additionalProperty?: string }).additionalProperty ?? "";
    return { pointer: `${error.instancePath}/${extra}`, message: "Unknown property" };
  }
  return { pointer, message: error.message ?? `fails ${error.keyword}` };
}

/**
 * Compiles a JSON Schema; throws with Ajv's message when it is not a valid schema. The returned check gives at most
 * `limit` violations, an empty list when the value conforms.
 */
export function compileJsonSchema(schema: Record<string, unknown> | boolean, limit = 10): SchemaCheck {
  const validate: ValidateFunction = compiler().compile(schema);
  return (value) => {
    if (validate(value)) return [];
    return (validate.errors ?? []).slice(0, limit).map(describe);
  };
}

// Reads a request as ProtoJSON parsers do, driven by the request's TypeBox schema: a field may be sent under its JSON
// name or its proto name (`taskId` or `task_id`), an enum as its name or its number, an int32 as a number or a decimal
// string; fields the proto does not define are dropped, and an enum's zero value (`*_UNSPECIFIED`) reads as unset.
// The result holds the proto's fields only, so nothing a client adds is ever stored or echoed. It checks nothing.
import { Kind, type TSchema, TypeGuard } from "@sinclair/typebox";

/** The schema option naming a proto enum's values in number order (index 0 is the `*_UNSPECIFIED` value). */
export const PROTO_ENUM = "protoEnum";

/** Reads one value; returns undefined for a value that stands for "unset". */
export type ProtoJsonReader = (value: unknown) => unknown;

const IDENTITY: ProtoJsonReader = (value) => value;
const INT32 = /^-?\d{1,10}$/;

/** `referenceTaskIds` → `reference_task_ids`: the proto field name of a lowerCamelCase JSON name. */
export function protoName(jsonName: string): string {
  return jsonName.replace(/[A-Z]/g, (letter) => `_${letter.toLowerCase()}`);
}

function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

function isNever(schema: TSchema): boolean {
  return schema[Kind] === "Never";
}

type Field = { json: string; proto: string; read: ProtoJsonReader };

function objectReader(fields: readonly Field[]): ProtoJsonReader {
  return (value) => {
    if (!isPlainObject(value)) return value;
    const out: Record<string, unknown> = {};
    for (const { json, proto, read } of fields) {
      const raw = Object.hasOwn(value, json) ? value[json] : Object.hasOwn(value, proto) ? value[proto] : undefined;
      if (raw === undefined) continue;
      const field = read(raw);
      if (field !== undefined) out[json] = field;
    }
    return out;
  };
}

function enumReader(names: readonly string[]): ProtoJsonReader {
  const unspecified = names[0];
  return (value) => {
    const name = typeof value === "number" && Number.isInteger(value) ? (names[value] ?? value) : value;
    return name === unspecified ? undefined : name;
  };
}

const cache = new WeakMap<TSchema, ProtoJsonReader>();

/** The fields of an object schema, or of a union of object schemas (a proto oneof), each member once. */
function fieldsOf(variants: readonly TSchema[]): Field[] {
  const fields = new Map<string, Field>();
  for (const variant of variants) {
    for (const [json, schema] of Object.entries(variant.properties as Record<string, TSchema>)) {
      if (fields.has(json) || isNever(schema)) continue;
      fields.set(json, { json, proto: protoName(json), read: protoJsonReader(schema) });
    }
  }
  return [...fields.values()];
}

/**
 * The ProtoJSON reader of a schema, built once per schema object. Maps and Structs (`Type.Record`) and Values
 * (`Type.Unknown`) are read as they are: their keys are the client's, not proto field names.
 */
export function protoJsonReader(schema: TSchema): ProtoJsonReader {
  const cached = cache.get(schema);
  if (cached) return cached;
  let reader: ProtoJsonReader = IDENTITY;
  if (TypeGuard.IsObject(schema)) {
    reader = objectReader(fieldsOf([schema]));
  } else if (TypeGuard.IsUnion(schema)) {
    const names: unknown = schema[PROTO_ENUM];
    if (Array.isArray(names)) reader = enumReader(names as string[]);
    else if (schema.anyOf.every((variant) => TypeGuard.IsObject(variant)))
      reader = objectReader(fieldsOf(schema.anyOf));
  } else if (TypeGuard.IsArray(schema)) {
    const item = protoJsonReader(schema.items);
    if (item !== IDENTITY) reader = (value) => (Array.isArray(value) ? value.map(item) : value);
  } else if (TypeGuard.IsInteger(schema)) {
    reader = (value) => (typeof value === "string" && INT32.test(value) ? Number(value) : value);
  }
  cache.set(schema, reader);
  return reader;
}

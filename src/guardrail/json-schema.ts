// Compiles a profile's plain JSON Schema into a TypeBox checker. TypeBox checks only its own (Kind-tagged) schemas,
// so the JSON Schema is rebuilt from TypeBox types; a keyword it cannot honour is refused up front, never ignored.
import { Kind, type TSchema, Type, TypeRegistry } from "@sinclair/typebox";
import { type TypeCheck, TypeCompiler } from "@sinclair/typebox/compiler";
import { Value } from "@sinclair/typebox/value";
import { GuardrailConfigError } from "./guardrail.ts";

type JsonObject = Record<string, unknown>;

/** Keywords that only annotate: accepted and not checked (`format` is an annotation by default since 2019-09). */
const ANNOTATIONS = new Set([
  "$schema",
  "$id",
  "$comment",
  "$defs",
  "definitions",
  "title",
  "description",
  "default",
  "examples",
  "deprecated",
  "readOnly",
  "writeOnly",
  "format",
  "contentMediaType",
  "contentEncoding",
]);
const COMBINATORS = ["type", "enum", "const", "allOf", "anyOf", "oneOf", "not", "$ref"] as const;
const BY_TYPE = {
  object: ["properties", "required", "additionalProperties", "minProperties", "maxProperties"],
  array: ["items", "minItems", "maxItems", "uniqueItems", "contains", "minContains", "maxContains"],
  string: ["minLength", "maxLength", "pattern"],
  number: ["minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum", "multipleOf"],
} as const;
const TYPE_KEYWORDS: ReadonlySet<string> = new Set(Object.values(BY_TYPE).flat());
const SUPPORTED: ReadonlySet<string> = new Set([...ANNOTATIONS, ...COMBINATORS, ...TYPE_KEYWORDS]);
const JSON_TYPES = ["object", "array", "string", "number", "integer", "boolean", "null"] as const;
type JsonType = (typeof JSON_TYPES)[number];

/** The kinds TypeBox lacks, registered once: `enum`/`const` by deep equality, and `oneOf` (exactly one matches). */
export const ENUM_KIND = "GuardrailJsonEnum";
export const ONE_OF_KIND = "GuardrailJsonOneOf";
if (!TypeRegistry.Has(ENUM_KIND)) {
  TypeRegistry.Set<{ values: unknown[] }>(ENUM_KIND, (schema, value) =>
    schema.values.some((allowed) => Value.Equal(allowed, value)),
  );
}
if (!TypeRegistry.Has(ONE_OF_KIND)) {
  TypeRegistry.Set<{ oneOf: TSchema[] }>(
    ONE_OF_KIND,
    (schema, value) => schema.oneOf.filter((variant) => Value.Check(variant, value)).length === 1,
  );
}

/**
 * A compiled checker for `schema` (a JSON Schema object, draft 2020-12 wording). Supported: type (one or a list),
 * enum, const, allOf, anyOf, oneOf, not, local non-recursive $ref ("#/$defs/…"), properties, required,
 * additionalProperties, min/maxProperties, items (one schema), min/maxItems, uniqueItems, contains, min/maxContains,
 * min/maxLength, pattern, minimum, maximum, exclusiveMinimum/Maximum (numbers), multipleOf; annotations are ignored.
 * Throws GuardrailConfigError naming the schema path of anything else.
 */
export function compileJsonSchema(schema: unknown): TypeCheck<TSchema> {
  return TypeCompiler.Compile(new Converter(schema).convert(schema, "#", []));
}

class Converter {
  constructor(private readonly root: unknown) {}

  convert(node: unknown, at: string, refs: readonly string[]): TSchema {
    if (node === true) return Type.Unknown();
    if (node === false) return Type.Never();
    const object = asObject(node, at);
    for (const key of Object.keys(object)) {
      if (!SUPPORTED.has(key)) throw refused(at, `keyword "${key}" is not supported`);
    }
    const parts: TSchema[] = [];
    if (object.$ref !== undefined) parts.push(this.ref(object.$ref, `${at}/$ref`, refs));
    const types = typesOf(object, at);
    if (types !== undefined) parts.push(union(types.map((type) => this.typed(type, object, at, refs))));
    if (object.enum !== undefined) parts.push(enumOf(asArray(object.enum, `${at}/enum`)));
    if ("const" in object) parts.push(enumOf([object.const]));
    if (object.allOf !== undefined) parts.push(...this.list(object.allOf, `${at}/allOf`, refs));
    if (object.anyOf !== undefined) parts.push(union(this.list(object.anyOf, `${at}/anyOf`, refs)));
    if (object.oneOf !== undefined) {
      parts.push(Type.Unsafe({ [Kind]: ONE_OF_KIND, oneOf: this.list(object.oneOf, `${at}/oneOf`, refs) }));
    }
    if (object.not !== undefined) parts.push(Type.Not(this.convert(object.not, `${at}/not`, refs)));
    if (parts.length === 0) return Type.Unknown();
    return parts.length === 1 ? (parts[0] as TSchema) : Type.Intersect(parts);
  }

  private list(value: unknown, at: string, refs: readonly string[]): TSchema[] {
    const items = asArray(value, at);
    if (items.length === 0) throw refused(at, "must not be empty");
    return items.map((item, index) => this.convert(item, `${at}/${index}`, refs));
  }

  private ref(value: unknown, at: string, refs: readonly string[]): TSchema {
    if (typeof value !== "string" || !value.startsWith("#"))
      throw refused(at, "only local references (#/…) are supported");
    if (refs.includes(value)) throw refused(at, `recursive reference ${value} is not supported`);
    let target: unknown = this.root;
    for (const segment of value.slice(1).split("/").slice(1)) {
      const key = decodeURIComponent(segment).replaceAll("~1", "/").replaceAll("~0", "~");
      target = typeof target === "object" && target !== null ? (target as JsonObject)[key] : undefined;
    }
    if (target === undefined) throw refused(at, `reference ${value} points nowhere`);
    return this.convert(target, value, [...refs, value]);
  }

  private typed(type: JsonType, node: JsonObject, at: string, refs: readonly string[]): TSchema {
    const limits = (keys: readonly string[]) => numbers(node, keys, at);
    switch (type) {
      case "string": {
        const pattern = node.pattern === undefined ? undefined : checkedPattern(node.pattern, `${at}/pattern`);
        return Type.String({ ...limits(["minLength", "maxLength"]), ...(pattern === undefined ? {} : { pattern }) });
      }
      case "number":
        return Type.Number(limits(BY_TYPE.number));
      case "integer":
        return Type.Integer(limits(BY_TYPE.number));
      case "boolean":
        return Type.Boolean();
      case "null":
        return Type.Null();
      case "array":
        return this.array(node, at, refs, limits(["minItems", "maxItems", "minContains", "maxContains"]));
      case "object":
        return this.object(node, at, refs, limits(["minProperties", "maxProperties"]));
    }
  }

  private array(node: JsonObject, at: string, refs: readonly string[], limits: JsonObject): TSchema {
    if (Array.isArray(node.items)) throw refused(`${at}/items`, "tuple items (an array) are not supported");
    const items = node.items === undefined ? Type.Unknown() : this.convert(node.items, `${at}/items`, refs);
    const options: JsonObject = { ...limits };
    if (node.uniqueItems === true) options.uniqueItems = true;
    if (node.contains !== undefined) options.contains = this.convert(node.contains, `${at}/contains`, refs);
    return Type.Array(items, options);
  }

  private object(node: JsonObject, at: string, refs: readonly string[], limits: JsonObject): TSchema {
    const required = new Set(asArray(node.required ?? [], `${at}/required`).map(String));
    const properties: Record<string, TSchema> = {};
    for (const [key, value] of Object.entries(asObject(node.properties ?? {}, `${at}/properties`))) {
      const property = this.convert(value, `${at}/properties/${key}`, refs);
      properties[key] = required.has(key) ? property : Type.Optional(property);
    }
    for (const key of required) properties[key] ??= Type.Unknown();
    const options: JsonObject = { ...limits };
    const additional = node.additionalProperties;
    if (additional === false) options.additionalProperties = false;
    else if (additional !== undefined && additional !== true) {
      options.additionalProperties = this.convert(additional, `${at}/additionalProperties`, refs);
    }
    return Type.Object(properties, options);
  }
}

function typesOf(node: JsonObject, at: string): readonly JsonType[] | undefined {
  const declared = node.type;
  if (declared === undefined) {
    // Without "type", type keywords constrain only values of their type: every type stays allowed.
    return Object.keys(node).some((key) => TYPE_KEYWORDS.has(key))
      ? JSON_TYPES.filter((t) => t !== "integer")
      : undefined;
  }
  const list = Array.isArray(declared) ? declared : [declared];
  for (const type of list) {
    if (!JSON_TYPES.includes(type as JsonType)) throw refused(`${at}/type`, `unknown type ${JSON.stringify(type)}`);
  }
  if (list.length === 0) throw refused(`${at}/type`, "must not be empty");
  return list as JsonType[];
}

function numbers(node: JsonObject, keys: readonly string[], at: string): JsonObject {
  const picked: JsonObject = {};
  for (const key of keys) {
    const value = node[key];
    if (value === undefined) continue;
    if (typeof value !== "number" || !Number.isFinite(value)) throw refused(`${at}/${key}`, "must be a number");
    picked[key] = value;
  }
  return picked;
}

function checkedPattern(pattern: unknown, at: string): string {
  if (typeof pattern !== "string") throw refused(at, "must be a string");
  try {
    new RegExp(pattern, "u");
  } catch (error) {
    throw refused(at, "is not a valid regular expression", error);
  }
  return pattern;
}

function enumOf(values: readonly unknown[]): TSchema {
  return Type.Unsafe({ [Kind]: ENUM_KIND, values: [...values] });
}

function union(schemas: readonly TSchema[]): TSchema {
  return schemas.length === 1 ? (schemas[0] as TSchema) : Type.Union([...schemas]);
}

function asObject(value: unknown, at: string): JsonObject {
  if (typeof value !== "object" || value === null || Array.isArray(value)) throw refused(at, "must be an object");
  return value as JsonObject;
}

function asArray(value: unknown, at: string): unknown[] {
  if (!Array.isArray(value)) throw refused(at, "must be an array");
  return value;
}

function refused(at: string, problem: string, cause?: unknown): GuardrailConfigError {
  const message = `outputSchema ${at}: ${problem}`;
  return cause === undefined ? new GuardrailConfigError(message) : new GuardrailConfigError(message, { cause });
}

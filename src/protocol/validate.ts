// Validates JSON-RPC envelopes and per-method params against compiled TypeBox checkers, and turns
// TypeBox errors into short `{ field, description }` violations for a -32602 / -32600 answer. Params are read as
// ProtoJSON first (proto names, enum numbers, unknown fields dropped): what passes holds the proto's fields only.

import { type Static, type TSchema, TypeGuard } from "@sinclair/typebox";
import { TypeCompiler, type ValueError, ValueErrorType } from "@sinclair/typebox/compiler";
import { type JsonRpcRequest, JsonRpcRequestSchema } from "./jsonrpc.ts";
import { type ProtoJsonReader, protoJsonReader } from "./proto-json.ts";
import {
  CancelTaskRequestSchema,
  DeleteTaskPushNotificationConfigRequestSchema,
  GetExtendedAgentCardRequestSchema,
  GetTaskPushNotificationConfigRequestSchema,
  GetTaskRequestSchema,
  ListTaskPushNotificationConfigsRequestSchema,
  ListTasksRequestSchema,
  SendMessageRequestSchema,
  SubscribeToTaskRequestSchema,
  TaskPushNotificationConfigSchema,
} from "./schema/index.ts";

/** The eleven A2A 1.0 JSON-RPC method names; any other name is -32601. */
export const A2A_METHODS = [
  "SendMessage",
  "SendStreamingMessage",
  "GetTask",
  "ListTasks",
  "CancelTask",
  "SubscribeToTask",
  "CreateTaskPushNotificationConfig",
  "GetTaskPushNotificationConfig",
  "ListTaskPushNotificationConfigs",
  "DeleteTaskPushNotificationConfig",
  "GetExtendedAgentCard",
] as const;
export type A2aMethod = (typeof A2A_METHODS)[number];

const METHOD_SET: ReadonlySet<string> = new Set(A2A_METHODS);

export function isA2aMethod(name: unknown): name is A2aMethod {
  return typeof name === "string" && METHOD_SET.has(name);
}

/** The params schema of each method. */
export const A2A_PARAMS_SCHEMAS = {
  SendMessage: SendMessageRequestSchema,
  SendStreamingMessage: SendMessageRequestSchema,
  GetTask: GetTaskRequestSchema,
  ListTasks: ListTasksRequestSchema,
  CancelTask: CancelTaskRequestSchema,
  SubscribeToTask: SubscribeToTaskRequestSchema,
  CreateTaskPushNotificationConfig: TaskPushNotificationConfigSchema,
  GetTaskPushNotificationConfig: GetTaskPushNotificationConfigRequestSchema,
  ListTaskPushNotificationConfigs: ListTaskPushNotificationConfigsRequestSchema,
  DeleteTaskPushNotificationConfig: DeleteTaskPushNotificationConfigRequestSchema,
  GetExtendedAgentCard: GetExtendedAgentCardRequestSchema,
} as const satisfies Record<A2aMethod, TSchema>;
export type A2aParams = { [M in A2aMethod]: Static<(typeof A2A_PARAMS_SCHEMAS)[M]> };
/** One method with its checked params, for any method: what a binding hands to the operations. */
export type A2aCall = { [M in A2aMethod]: { method: M; params: A2aParams[M] } }[A2aMethod];

/** One problem, as in a `google.rpc.BadRequest` field violation. `field` is `""` for the value itself. */
export type Violation = { field: string; description: string };
export type CheckResult<T> = { ok: true; value: T } | { ok: false; violations: Violation[] };

/** More violations than this only bury the first one. */
export const MAX_VIOLATIONS = 10;

/** A compiled check of one schema: the value as checked (after `read`), or its violations. */
export type Checker<T> = (value: unknown) => CheckResult<T>;

/** Compiles a checker for `schema`; `read` prepares the value first (default: as it is). */
export function compileChecker<S extends TSchema>(
  schema: S,
  read: ProtoJsonReader = (value) => value,
): Checker<Static<S>> {
  const checker = TypeCompiler.Compile(schema);
  return (value) => {
    const prepared = read(value);
    if (checker.Check(prepared)) return { ok: true, value: prepared };
    return { ok: false, violations: collectViolations(checker.Errors(prepared), prepared) };
  };
}

// Compiled once at load; SendMessage and SendStreamingMessage share one checker.
const compiledBySchema = new Map<TSchema, Checker<unknown>>();
const PARAMS_CHECKERS = new Map<A2aMethod, Checker<unknown>>(
  A2A_METHODS.map((method) => {
    const schema: TSchema = A2A_PARAMS_SCHEMAS[method];
    const checker = compiledBySchema.get(schema) ?? compileChecker(schema, protoJsonReader(schema));
    compiledBySchema.set(schema, checker);
    return [method, checker];
  }),
);
const REQUEST_CHECKER = TypeCompiler.Compile(JsonRpcRequestSchema);

/**
 * Reads `params` for `method` as ProtoJSON and checks them; the value returned holds the proto's fields only, under
 * their JSON names. Omitted params (`undefined`) are checked as `{}`, so a missing required field is reported by name;
 * `GetExtendedAgentCard` may omit params entirely. Every binding calls this on whatever it assembled as the request.
 */
export function checkParams<M extends A2aMethod>(method: M, value: unknown): CheckResult<A2aParams[M]> {
  const checker = PARAMS_CHECKERS.get(method);
  if (checker === undefined) throw new TypeError(`no params checker for ${method}`);
  return checker(value === undefined ? {} : value) as CheckResult<A2aParams[M]>;
}

/** Checks the JSON-RPC 2.0 envelope of a single request (a failure is -32600). */
export function checkJsonRpcRequest(value: unknown): CheckResult<JsonRpcRequest> {
  if (REQUEST_CHECKER.Check(value)) return { ok: true, value };
  return { ok: false, violations: collectViolations(REQUEST_CHECKER.Errors(value), value) };
}

function collectViolations(errors: Iterable<ValueError>, root: unknown): Violation[] {
  const violations: Violation[] = [];
  const seenFields = new Set<string>();
  // Returns false once the cap is reached.
  const visit = (batch: Iterable<ValueError>): boolean => {
    for (const error of batch) {
      const variant = error.type === ValueErrorType.Union ? chosenOneOfVariant(error) : undefined;
      const nested = variant === undefined ? undefined : error.errors[variant];
      if (nested !== undefined) {
        if (!visit(nested)) return false;
        continue;
      }
      const field = toFieldPath(error.path, root);
      // TypeBox reports a missing property twice (required, then wrong type); keep the first.
      if (seenFields.has(field)) continue;
      seenFields.add(field);
      violations.push({ field, description: describe(error) });
      if (violations.length >= MAX_VIOLATIONS) return false;
    }
    return true;
  };
  visit(errors);
  return violations;
}

/**
 * The member keys of a proto oneof modelled as a union of objects that each require exactly one
 * distinct key (Part, StreamResponse, SecurityScheme, …); undefined for any other union.
 */
function oneOfKeys(schema: TSchema): string[] | undefined {
  if (!TypeGuard.IsUnion(schema)) return undefined;
  const keys: string[] = [];
  for (const variant of schema.anyOf) {
    if (!TypeGuard.IsObject(variant) || variant.required?.length !== 1) return undefined;
    const key = variant.required[0];
    if (key === undefined || keys.includes(key)) return undefined;
    keys.push(key);
  }
  return keys;
}

function presentKeys(value: unknown, keys: readonly string[]): string[] {
  if (typeof value !== "object" || value === null || Array.isArray(value)) return [];
  const record = value as Record<string, unknown>;
  return keys.filter((key) => Object.hasOwn(record, key) && record[key] !== undefined);
}

/** When exactly one oneof member is present, the errors worth showing are inside that variant. */
function chosenOneOfVariant(error: ValueError): number | undefined {
  const keys = oneOfKeys(error.schema);
  if (keys === undefined) return undefined;
  const present = presentKeys(error.value, keys);
  return present.length === 1 && present[0] !== undefined ? keys.indexOf(present[0]) : undefined;
}

function describe(error: ValueError): string {
  const schema = error.schema;
  switch (error.type) {
    case ValueErrorType.ObjectRequiredProperty:
      return "Required property";
    case ValueErrorType.Object:
      return "Expected object";
    case ValueErrorType.Array:
      return "Expected array";
    case ValueErrorType.ArrayMinItems:
      return `Expected at least ${schema.minItems} item${schema.minItems === 1 ? "" : "s"}`;
    case ValueErrorType.String:
      return "Expected string";
    case ValueErrorType.StringMinLength:
      return schema.minLength === 1 ? "Expected non-empty string" : `Expected at least ${schema.minLength} characters`;
    case ValueErrorType.StringPattern:
      return typeof schema.description === "string"
        ? `Expected ${schema.description}`
        : `Expected string matching ${schema.pattern}`;
    case ValueErrorType.Boolean:
      return "Expected boolean";
    case ValueErrorType.Number:
      return "Expected number";
    case ValueErrorType.Integer:
      return "Expected integer";
    case ValueErrorType.IntegerMinimum:
    case ValueErrorType.IntegerMaximum:
    case ValueErrorType.NumberMinimum:
    case ValueErrorType.NumberMaximum:
      return describeRange(schema);
    case ValueErrorType.Literal:
      return `Expected ${JSON.stringify(schema.const)}`;
    case ValueErrorType.Union:
      return describeUnion(schema, error.value);
    default:
      return error.message;
  }
}

function describeRange(schema: TSchema): string {
  const kind = schema.type === "integer" ? "integer" : "number";
  const { minimum, maximum } = schema;
  if (typeof minimum === "number" && typeof maximum === "number")
    return `Expected ${kind} from ${minimum} to ${maximum}`;
  if (typeof minimum === "number") return `Expected ${kind} greater than or equal to ${minimum}`;
  return `Expected ${kind} less than or equal to ${maximum}`;
}

function describeUnion(schema: TSchema, value: unknown): string {
  const keys = oneOfKeys(schema);
  if (keys !== undefined) {
    const list = keys.join(", ");
    if (typeof value !== "object" || value === null || Array.isArray(value))
      return `Expected object with one of ${list}`;
    const present = presentKeys(value, keys);
    if (present.length === 0) return `Expected one of ${list}`;
    return `Expected exactly one of ${list}, found ${present.join(" and ")}`;
  }
  const variants: TSchema[] = TypeGuard.IsUnion(schema) ? schema.anyOf : [];
  if (variants.length > 0 && variants.every((variant) => TypeGuard.IsLiteral(variant))) {
    return `Expected one of ${variants.map((variant) => String(variant.const)).join(", ")}`;
  }
  const types = variants.map((variant) => (typeof variant.type === "string" ? variant.type : "other"));
  const last = types.pop();
  if (last === undefined) return "Expected a different value";
  return types.length === 0 ? `Expected ${last}` : `Expected ${types.join(", ")} or ${last}`;
}

/** `/message/parts/0/text` → `message.parts[0].text`; indices only where the value is an array. */
function toFieldPath(pointer: string, root: unknown): string {
  let field = "";
  let current: unknown = root;
  for (const raw of pointer.split("/").slice(1)) {
    const segment = raw.replaceAll("~1", "/").replaceAll("~0", "~");
    if (Array.isArray(current) && /^\d+$/.test(segment)) {
      field += `[${segment}]`;
    } else if (/^[A-Za-z_$@][\w$@]*$/.test(segment)) {
      field += field === "" ? segment : `.${segment}`;
    } else {
      field += `[${JSON.stringify(segment)}]`;
    }
    current =
      typeof current === "object" && current !== null ? (current as Record<string, unknown>)[segment] : undefined;
  }
  return field;
}

// The HTTP+JSON binding's routes (the proto's google.api.http annotations, A2A §11.3): which A2A method an HTTP method
// and a path under a profile's endpoint name, and the request fields the path binds. Pure: no Redis, no body.
import {
  type A2aMethod,
  EndpointNotFoundError,
  HttpMethodNotAllowedError,
  InvalidRequestError,
} from "../../protocol/index.ts";

/** How a route takes its request fields besides the path: from a JSON body (`body: "*"`) or from the query string. */
export type FieldSource = "body" | "query";

interface RouteRow {
  readonly method: A2aMethod;
  readonly http: string;
  readonly fields: FieldSource;
}

/** One path pattern: its literal segments, with `{field}` for a path variable, and the custom verb of its last segment. */
interface PathPattern {
  readonly segments: readonly string[];
  readonly verb?: string;
  readonly rows: readonly RouteRow[];
}

/**
 * Every route. SubscribeToTask answers GET (the proto) and POST (the specification's text and the official clients);
 * a POST whose fields come from the body accepts an empty one.
 */
const PATTERNS: readonly PathPattern[] = [
  { segments: ["message:send"], rows: [{ method: "SendMessage", http: "POST", fields: "body" }] },
  { segments: ["message:stream"], rows: [{ method: "SendStreamingMessage", http: "POST", fields: "body" }] },
  { segments: ["tasks"], rows: [{ method: "ListTasks", http: "GET", fields: "query" }] },
  { segments: ["tasks", "{id}"], verb: "cancel", rows: [{ method: "CancelTask", http: "POST", fields: "body" }] },
  {
    segments: ["tasks", "{id}"],
    verb: "subscribe",
    rows: [
      { method: "SubscribeToTask", http: "GET", fields: "query" },
      { method: "SubscribeToTask", http: "POST", fields: "body" },
    ],
  },
  // After the verbs: a task id may hold a colon (clients that do not percent-encode it send it as is).
  { segments: ["tasks", "{id}"], rows: [{ method: "GetTask", http: "GET", fields: "query" }] },
  {
    segments: ["tasks", "{taskId}", "pushNotificationConfigs"],
    rows: [
      { method: "CreateTaskPushNotificationConfig", http: "POST", fields: "body" },
      { method: "ListTaskPushNotificationConfigs", http: "GET", fields: "query" },
    ],
  },
  {
    segments: ["tasks", "{taskId}", "pushNotificationConfigs", "{id}"],
    rows: [
      { method: "GetTaskPushNotificationConfig", http: "GET", fields: "query" },
      { method: "DeleteTaskPushNotificationConfig", http: "DELETE", fields: "query" },
    ],
  },
  { segments: ["extendedAgentCard"], rows: [{ method: "GetExtendedAgentCard", http: "GET", fields: "query" }] },
];

/** A request's route: its A2A method, where its fields come from, and the fields its path binds (tenant included). */
export interface RestRoute {
  readonly method: A2aMethod;
  readonly fields: FieldSource;
  readonly pathFields: Readonly<Record<string, string>>;
}

function decode(segment: string): string {
  try {
    return decodeURIComponent(segment);
  } catch {
    throw new InvalidRequestError(`The path segment ${segment} is not valid percent-encoding`);
  }
}

/** The path fields when `segments` (still percent-encoded) fit `pattern`, else undefined. */
function fit(pattern: PathPattern, segments: readonly string[]): Record<string, string> | undefined {
  if (segments.length !== pattern.segments.length) return undefined;
  const fields: Record<string, string> = {};
  for (let i = 0; i < segments.length; i++) {
    const want = pattern.segments[i] ?? "";
    let got = segments[i] ?? "";
    // A custom verb ends the whole path (":cancel").
    if (i === segments.length - 1 && pattern.verb !== undefined) {
      if (!got.endsWith(`:${pattern.verb}`)) return undefined;
      got = got.slice(0, -pattern.verb.length - 1);
    }
    if (want.startsWith("{")) {
      if (got === "") return undefined;
      fields[want.slice(1, -1)] = decode(got);
    } else if (got !== want) return undefined;
  }
  return fields;
}

function patternOf(segments: readonly string[]): { pattern: PathPattern; fields: Record<string, string> } | undefined {
  for (const pattern of PATTERNS) {
    const fields = fit(pattern, segments);
    if (fields) return { pattern, fields };
  }
  return undefined;
}

/**
 * The route of `httpMethod` at `segments`, the path below the profile's endpoint split at "/" and not yet decoded.
 * A first segment that fits no route is read as a tenant (the proto's `/{tenant}/…` bindings).
 * Throws EndpointNotFoundError (404) for a path no route has, HttpMethodNotAllowedError (405) for another HTTP method.
 */
export function matchRoute(httpMethod: string, segments: readonly string[], path: string): RestRoute {
  let found = patternOf(segments);
  if (!found && segments.length > 1 && segments[0] !== "") {
    const inner = patternOf(segments.slice(1));
    if (inner) found = { pattern: inner.pattern, fields: { ...inner.fields, tenant: decode(segments[0] ?? "") } };
  }
  if (!found) throw new EndpointNotFoundError(path);
  const row = found.pattern.rows.find((candidate) => candidate.http === httpMethod);
  if (!row) throw new HttpMethodNotAllowedError(httpMethod, path, [...new Set(found.pattern.rows.map((r) => r.http))]);
  return { method: row.method, fields: row.fields, pathFields: found.fields };
}

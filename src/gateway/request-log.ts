// Accounts for one request of any binding once it is answered: the request counter and duration histogram, refusals by
// reason, and one `debug` log line (binding, method, profile, client id, task id, code, duration). Never logs credentials.
import { A2aError, isA2aMethod, RefusalError } from "../protocol/index.ts";
import type { GatewayContext } from "./gateway-context.ts";
import { bindingName } from "./request-span.ts";

/** The bindings a request can come by, as the metrics and the request log name them. */
export type BindingName = "jsonrpc" | "rest" | "grpc";

export interface AnsweredRequest {
  binding: BindingName;
  /** The A2A method: as sent in JSON-RPC ("" before the envelope was read), the route's in HTTP+JSON. */
  method: string;
  profile: string;
  clientId: string | undefined;
  taskId: string | undefined;
  /** 0 on success, else the error's JSON-RPC code (the error table's binding-neutral code). */
  code: number;
  error: unknown;
  /** The failed call's `error.type` (the A2A error's name, `_OTHER` for an unexpected one); undefined on success. */
  errorType?: string | undefined;
  /** performance.now() when the request arrived. */
  startedAt: number;
}

/** The task id a call names or answers with, when there is one. */
export function taskIdOf(params: unknown, result: unknown): string | undefined {
  const read = (value: unknown, ...path: string[]): string | undefined => {
    let at: unknown = value;
    for (const key of path)
      at = typeof at === "object" && at !== null ? (at as Record<string, unknown>)[key] : undefined;
    return typeof at === "string" ? at : undefined;
  };
  return (
    read(params, "id") ??
    read(params, "taskId") ??
    read(params, "message", "taskId") ??
    read(result, "task", "id") ??
    read(result, "id") ??
    read(result, "taskId")
  );
}

export function recordRequest(context: GatewayContext, answered: AnsweredRequest): void {
  const { metrics, logger } = context;
  // Unknown method names are not labels: a client could otherwise grow the series without bound.
  const method = isA2aMethod(answered.method) ? answered.method : "unknown";
  const seconds = (performance.now() - answered.startedAt) / 1000;
  metrics.requests.inc({ binding: answered.binding, method, code: String(answered.code) });
  metrics.requestSeconds.observe({ binding: answered.binding, method }, seconds);
  metrics.operationSeconds.observe(
    {
      a2a_method_name: method,
      a2a_protocol_binding: bindingName(answered.binding),
      error_type: answered.errorType ?? "",
    },
    seconds,
  );
  const { error } = answered;
  if (error instanceof RefusalError) metrics.refusals.inc({ reason: error.reason });
  logger.debug(
    {
      binding: answered.binding,
      method: answered.method,
      profile: answered.profile,
      clientId: answered.clientId,
      taskId: answered.taskId,
      code: answered.code,
      ...(error instanceof A2aError ? { reason: error.reason } : {}),
      durationMs: Math.round(seconds * 10_000) / 10,
    },
    "request",
  );
}

// The SERVER span of one A2A call, whatever binding it came by: started by the shared request steps under the
// caller's `traceparent`, named after the method once it is known, and ended with the convention's attributes when the
// request is answered. With tracing off there is no span and nothing here allocates.
import { type Span, SpanKind } from "@opentelemetry/api";
import { isA2aMethod } from "../protocol/index.ts";
import {
  attributes as A,
  contextFromHeaders,
  errorTypeOf,
  failSpan,
  runtimeTracer,
  startSpan,
  tracing,
} from "../tracing/index.ts";
import type { EventSink } from "./event-sink.ts";

/** The A2A transport names of the bindings (`a2a.protocol.binding`). */
const BINDING_NAMES: Readonly<Record<string, string>> = { jsonrpc: "JSONRPC", rest: "HTTP+JSON", grpc: "GRPC" };

/** A binding's A2A transport name: JSONRPC, HTTP+JSON, GRPC. */
export function bindingName(binding: string): string {
  return BINDING_NAMES[binding] ?? binding;
}

/** Starts the span of a request that arrived at `startedAt` (performance.now()); undefined when tracing is off. */
export function startRequestSpan(
  headers: Headers,
  startedAt: number,
  binding: string,
  profile: string,
): Span | undefined {
  if (!tracing()) return undefined;
  return runtimeTracer().startSpan(
    "a2a",
    {
      kind: SpanKind.SERVER,
      startTime: startedAt,
      attributes: {
        [A.ATTR_A2A_PROTOCOL_BINDING]: bindingName(binding),
        [A.ATTR_GEN_AI_AGENT_NAME]: profile,
      },
    },
    contextFromHeaders(headers),
  );
}

function field(value: unknown, ...path: string[]): unknown {
  let at = value;
  for (const key of path) at = typeof at === "object" && at !== null ? (at as Record<string, unknown>)[key] : undefined;
  return at;
}

function text(value: unknown): string | undefined {
  return typeof value === "string" && value !== "" ? value : undefined;
}

export interface AnsweredCall {
  method: string;
  version: string | undefined;
  params: unknown;
  result: unknown;
  /** `error.type` of a failed call: the A2A error's name, or `_OTHER` for an unexpected one. */
  errorType: string | undefined;
}

/** Names the span after the method, sets what the call named or answered, and ends it. */
export function endRequestSpan(span: Span, call: AnsweredCall): void {
  const { params, result } = call;
  const task = field(result, "task") ?? result;
  const set = (name: string, value: string | undefined) => {
    if (value !== undefined) span.setAttribute(name, value);
  };
  // A method name the client made up is no span name: names must stay few.
  const method = isA2aMethod(call.method) ? call.method : "_OTHER";
  span.updateName(method);
  span.setAttribute(A.ATTR_A2A_METHOD_NAME, method);
  set(A.ATTR_A2A_PROTOCOL_VERSION, call.version);
  set(A.ATTR_A2A_MESSAGE_ID, text(field(params, "message", "messageId")));
  set(
    A.ATTR_A2A_TASK_ID,
    text(field(result, "taskId")) ??
      text(field(task, "id")) ??
      text(field(params, "message", "taskId")) ??
      text(field(params, "id")) ??
      text(field(params, "taskId")),
  );
  set(A.ATTR_A2A_TASK_STATE, text(field(task, "status", "state")));
  set(
    A.ATTR_GEN_AI_CONVERSATION_ID,
    text(field(task, "contextId")) ?? text(field(result, "contextId")) ?? text(field(params, "message", "contextId")),
  );
  if (call.errorType !== undefined) failSpan(span, call.errorType);
  span.end();
}

/** A stream's own span, under the call's: from the stream's opening to its end (`a2a.stream.end` says how). */
export function traceStream(parent: Span | undefined, sink: EventSink, taskId: string): void {
  if (parent === undefined) return;
  const span = startSpan("a2a.stream", parent, { attributes: { [A.ATTR_A2A_TASK_ID]: taskId } });
  sink.onEnd((how) => {
    span.setAttribute(A.ATTR_A2A_STREAM_END, how);
    span.end();
  });
}

/** Runs a blocking wait in a span of its own, under the call's; `a2a.wait.outcome` says how it ended. */
export async function traceWait<T extends { kind: string }>(
  parent: Span | undefined,
  taskId: string,
  wait: () => Promise<T>,
): Promise<T> {
  if (parent === undefined) return await wait();
  const span = startSpan("a2a.wait", parent, { attributes: { [A.ATTR_A2A_TASK_ID]: taskId } });
  try {
    const outcome = await wait();
    span.setAttribute(A.ATTR_A2A_WAIT_OUTCOME, outcome.kind);
    return outcome;
  } catch (error) {
    failSpan(span, errorTypeOf(error));
    throw error;
  } finally {
    span.end();
  }
}

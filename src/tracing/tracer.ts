// The runtime's tracer and the few span helpers every area shares. Without a registered provider (tracing off) the
// API hands out no-op spans: `tracing()` is false and callers skip the work that only feeds a span.
import {
  type Attributes,
  type Context,
  context,
  ROOT_CONTEXT,
  type Span,
  type SpanKind,
  type SpanOptions,
  SpanStatusCode,
  type Tracer,
  trace,
} from "@opentelemetry/api";
import { ATTR_ERROR_TYPE, TRACER_NAME } from "./attributes.ts";

let enabled = false;

/** Marks this process as exporting spans (set by startTracing once its provider is registered). */
export function setTracing(on: boolean): void {
  enabled = on;
}

/** True when this process registered a tracer provider: spans are real and may be recorded. */
export function tracing(): boolean {
  return enabled;
}

/** Made once: with tracing off, asking the API for a tracer would allocate a proxy on every call. */
const IDLE_TRACER = trace.getTracer(TRACER_NAME);

/** The runtime's tracer: the registered provider's, or the API's no-op one while tracing is off. */
export function runtimeTracer(): Tracer {
  return enabled ? trace.getTracer(TRACER_NAME) : IDLE_TRACER;
}

/** The context whose active span is `span` (a root context when there is none). */
export function contextOf(span: Span | undefined): Context {
  return span === undefined ? ROOT_CONTEXT : trace.setSpan(ROOT_CONTEXT, span);
}

/** Starts a span under `parent` (a span, or a context such as one read from a stored carrier). */
export function startSpan(
  name: string,
  parent: Span | Context | undefined,
  options: { kind?: SpanKind; attributes?: Attributes; startTime?: number } = {},
): Span {
  const parentContext = parent === undefined || "spanContext" in parent ? contextOf(parent) : parent;
  return runtimeTracer().startSpan(name, options, parentContext);
}

/** Marks the span failed: `error.type` (a low-cardinality name) and an ERROR status; the message stays out. */
export function failSpan(span: Span, errorType: string): void {
  span.setAttribute(ATTR_ERROR_TYPE, errorType);
  span.setStatus({ code: SpanStatusCode.ERROR });
}

/** The error's class name, or `_OTHER`: what `error.type` names for an exception. */
export function errorTypeOf(error: unknown): string {
  return error instanceof Error && error.name !== "" && error.name !== "Error" ? error.name : "_OTHER";
}

/**
 * Runs `work` in a new span, active while it runs (spans made inside become its children), under `parent` (default:
 * the active context). A throw marks the span failed and is rethrown; the span ends either way.
 */
export async function inSpan<T>(
  name: string,
  options: SpanOptions,
  work: (span: Span) => Promise<T>,
  parent: Context = context.active(),
): Promise<T> {
  const span = runtimeTracer().startSpan(name, options, parent);
  try {
    return await context.with(trace.setSpan(parent, span), () => work(span));
  } catch (error) {
    failSpan(span, errorTypeOf(error));
    throw error;
  } finally {
    span.end();
  }
}

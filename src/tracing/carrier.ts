// W3C Trace Context in and out of the runtime: read from a request's headers, written to a webhook's, and kept with a
// run in Redis as a small JSON carrier ({"traceparent":…,"tracestate":…}) so that a worker continues the trace.
import { type Context, propagation, ROOT_CONTEXT, type Span, type TextMapGetter, trace } from "@opentelemetry/api";
import { tracing } from "./tracer.ts";

const HEADERS_GETTER: TextMapGetter<Headers> = {
  keys: (headers) => [...headers.keys()],
  get: (headers, key) => headers.get(key) ?? undefined,
};

/** The context a request's `traceparent`/`tracestate` name (the root context when tracing is off or none is sent). */
export function contextFromHeaders(headers: Headers): Context {
  if (!tracing()) return ROOT_CONTEXT;
  return propagation.extract(ROOT_CONTEXT, headers, HEADERS_GETTER);
}

/** Adds `traceparent` (and `tracestate`) naming `span` to `headers`; nothing when tracing is off. */
export function injectHeaders(span: Span, headers: Record<string, string>): void {
  if (!tracing()) return;
  propagation.inject(trace.setSpan(ROOT_CONTEXT, span), headers);
}

/** The carrier stored with a run: `span` as W3C Trace Context in JSON, or "" when tracing is off. */
export function carrierOf(span: Span | undefined): string {
  if (span === undefined || !tracing()) return "";
  const carrier: Record<string, string> = {};
  propagation.inject(trace.setSpan(ROOT_CONTEXT, span), carrier);
  return carrier.traceparent === undefined ? "" : JSON.stringify(carrier);
}

/** The context a stored carrier names; the root context for "", null or anything malformed (read from Redis). */
export function contextFromCarrier(text: string | null | undefined): Context {
  if (!text || !tracing()) return ROOT_CONTEXT;
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    return ROOT_CONTEXT;
  }
  if (typeof value !== "object" || value === null) return ROOT_CONTEXT;
  const carrier: Record<string, string> = {};
  for (const key of ["traceparent", "tracestate"]) {
    const field = (value as Record<string, unknown>)[key];
    if (typeof field === "string") carrier[key] = field;
  }
  return propagation.extract(ROOT_CONTEXT, carrier);
}

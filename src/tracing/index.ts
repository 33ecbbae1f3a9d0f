// The tracing area's public surface: OpenTelemetry set-up, the span names and attributes of the conventions, W3C
// Trace Context carriers. It imports only the OpenTelemetry packages and config types; every other area may use it.
export * as attributes from "./attributes.ts";
export { carrierOf, contextFromCarrier, contextFromHeaders, injectHeaders } from "./carrier.ts";
export { startTracing, type TracingHandle } from "./setup.ts";
export { contextOf, errorTypeOf, failSpan, inSpan, runtimeTracer, startSpan, tracing } from "./tracer.ts";

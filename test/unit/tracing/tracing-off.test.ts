// Tracing off (the default) registers nothing: no provider, no propagator, no carrier stored with a run, and the
// spans the runtime asks for are the API's non-recording no-ops.
import { expect, test } from "bun:test";
import { propagation, trace } from "@opentelemetry/api";
import { loadConfig } from "../../../src/config/index.ts";
import { startRequestSpan } from "../../../src/gateway/request-span.ts";
import {
  carrierOf,
  contextFromCarrier,
  contextFromHeaders,
  runtimeTracer,
  startTracing,
  tracing,
} from "../../../src/tracing/index.ts";

const TRACEPARENT = "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01";

test("the default configuration leaves tracing off and registers no provider", async () => {
  const config = loadConfig({ env: {} });
  expect(config.tracing).toEqual({ enabled: false, endpoint: "", samplingRatio: 1, serviceName: "a2a-runtime" });
  const handle = await startTracing(config.tracing);
  expect(handle.enabled).toBe(false);
  expect(tracing()).toBe(false);
  // The global provider is still the API's proxy without a delegate: its tracers make non-recording spans.
  const span = trace.getTracer("probe").startSpan("probe");
  expect(span.isRecording()).toBe(false);
  expect(runtimeTracer().startSpan("probe").isRecording()).toBe(false);
  expect(propagation.fields()).toEqual([]);
});

test("with tracing off a request gets no span and a run no stored trace context, whatever the client sends", () => {
  const headers = new Headers({ traceparent: TRACEPARENT });
  expect(startRequestSpan(headers, performance.now(), "jsonrpc", "echo")).toBeUndefined();
  expect(carrierOf(undefined)).toBe("");
  expect(trace.getSpanContext(contextFromHeaders(headers))).toBeUndefined();
  expect(trace.getSpanContext(contextFromCarrier(JSON.stringify({ traceparent: TRACEPARENT })))).toBeUndefined();
});

test("OTEL_SERVICE_NAME names the service unless A2A_TRACING_SERVICE_NAME does", () => {
  expect(loadConfig({ env: { OTEL_SERVICE_NAME: "agents" } }).tracing.serviceName).toBe("agents");
  const both = { OTEL_SERVICE_NAME: "agents", A2A_TRACING_SERVICE_NAME: "gateway-eu" };
  expect(loadConfig({ env: both }).tracing.serviceName).toBe("gateway-eu");
});
